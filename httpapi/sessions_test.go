package httpapi_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// logIn logs in as name with password and returns the token.
func (a *api) logIn(name, password string) string {
	a.t.Helper()
	var d struct{ LogIn struct{ Token string } }
	a.do("", `mutation($n:String!,$p:String!){logIn(name:$n,password:$p){token}}`, map[string]any{"n": name, "p": password}).decode(a.t, &d)
	return d.LogIn.Token
}

// signedIn reports whether token is a live session, failing on anything but a yes or an
// UNAUTHENTICATED no.
func (a *api) signedIn(token string) bool {
	a.t.Helper()
	r := a.do(token, `{viewer{name}}`, nil)
	switch {
	case len(r.Errors) == 0:
		return true
	case r.code() == "UNAUTHENTICATED" && r.Status == http.StatusUnauthorized:
		return false
	}
	a.t.Fatalf("viewer: %d %+v", r.Status, r.Errors)
	return false
}

func TestAPIChangePassword(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: 120, Auth: store.AuthLimits{FailedLoginsPerAccount: 3}})
		first, _ := a.signUp("ann")
		second, third := a.logIn("ann", "password1"), a.logIn("ann", "password1")
		if !strings.HasPrefix(first, "ann.") {
			t.Errorf("token %q does not name its user", first)
		}
		change := `mutation($c:String!,$n:String!){changePassword(current:$c,new:$n)}`
		for _, tc := range []struct{ name, token, current, next, code string }{
			{"anonymous", "", "password1", "new password", "UNAUTHENTICATED"},
			{"wrong current password", first, "password2", "new password", "FORBIDDEN"},
			{"new password too short", first, "password1", "short", "BAD_USER_INPUT"},
		} {
			if r := a.do(tc.token, change, map[string]any{"c": tc.current, "n": tc.next}); r.code() != tc.code {
				t.Errorf("%s: %+v, want %s", tc.name, r.Errors, tc.code)
			}
		}
		var d struct{ ChangePassword bool }
		a.do(first, change, map[string]any{"c": "password1", "n": "new password"}).decode(t, &d)
		if !d.ChangePassword {
			t.Fatal("changePassword = false")
		}
		if !a.signedIn(first) {
			t.Error("the session that changed the password ended")
		}
		if a.signedIn(second) || a.signedIn(third) {
			t.Error("another session survived the password change")
		}
		if r := a.do("", `mutation{logIn(name:"ann",password:"password1"){token}}`, nil); r.code() != "UNAUTHENTICATED" {
			t.Errorf("log in with the old password: %+v", r.Errors)
		}
		if !a.signedIn(a.logIn("ann", "new password")) {
			t.Error("the new password does not sign in")
		}
		// A wrong current password counts as a failed log-in: it cannot be guessed at will.
		a.do(first, change, map[string]any{"c": "guess 2", "n": "another one"})
		a.do(first, change, map[string]any{"c": "guess 3", "n": "another one"})
		if r := a.do(first, change, map[string]any{"c": "new password", "n": "another one"}); r.code() != "RATE_LIMITED" {
			t.Errorf("after 3 wrong passwords: %+v, want RATE_LIMITED", r.Errors)
		}
		if r := a.do("", `mutation{logIn(name:"ann",password:"new password"){token}}`, nil); r.code() != "RATE_LIMITED" {
			t.Errorf("log in after 3 wrong passwords: %+v, want RATE_LIMITED", r.Errors)
		}
	})
}

func TestAPILogOutEverywhere(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		tokens := []string{}
		tok, _ := a.signUp("ann")
		tokens = append(tokens, tok, a.logIn("ann", "password1"), a.logIn("ann", "password1"))
		ben, _ := a.signUp("ben")
		if r := a.do("", `mutation{logOutEverywhere}`, nil); r.code() != "UNAUTHENTICATED" {
			t.Errorf("anonymous logOutEverywhere: %+v", r.Errors)
		}
		var d struct{ LogOutEverywhere bool }
		a.do(tokens[1], `mutation{logOutEverywhere}`, nil).decode(t, &d)
		if !d.LogOutEverywhere {
			t.Fatal("logOutEverywhere = false")
		}
		for i, tok := range tokens {
			if a.signedIn(tok) {
				t.Errorf("session %d survived logOutEverywhere", i)
			}
		}
		if !a.signedIn(ben) {
			t.Error("another user's session ended")
		}
		if !a.signedIn(a.logIn("ann", "password1")) {
			t.Error("cannot sign in again")
		}
	})
}

func TestAPILogOutEndsOneSession(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		one, _ := a.signUp("ann")
		two := a.logIn("ann", "password1")
		var d struct{ LogOut bool }
		a.do(one, `mutation{logOut}`, nil).decode(t, &d)
		if a.signedIn(one) || !a.signedIn(two) {
			t.Error("logOut should end its own session only")
		}
	})
}

// TestAPIOldTokensAreRefused: tokens from before sessions moved into their user's slot (a bare
// random string) are refused, even while their old session key is still in Redis.
func TestAPIOldTokensAreRefused(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		a := newAPI(t, b, store.Options{Prefix: prefix})
		tok, _ := a.signUp("ann")
		old := base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
		sum := sha256.Sum256([]byte(old))
		if err := b.Client.Set(t.Context(), prefix+"sess:"+hex.EncodeToString(sum[:]), "ann", 0).Err(); err != nil {
			t.Fatal(err)
		}
		_, rnd, _ := strings.Cut(tok, ".")
		for name, bad := range map[string]string{
			"old format":        old,
			"another user's":    "ben." + rnd,
			"random part short": "ann." + rnd[1:],
			"not base64url":     "ann." + strings.Repeat("*", 43),
			"upper-case user":   "ANN." + rnd,
		} {
			if a.signedIn(bad) {
				t.Errorf("%s token accepted", name)
			}
		}
		if !a.signedIn(tok) {
			t.Error("the real token is refused")
		}
	})
}
