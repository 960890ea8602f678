package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestAPISendPasswordReset: a site admin's sendPasswordReset mails the user a reset link that
// works; anyone else is FORBIDDEN (and anonymous UNAUTHENTICATED), and nothing is sent; an unknown
// or deleted user is NOT_FOUND, a user with no address BAD_USER_INPUT.
func TestAPISendPasswordReset(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		box := &mailbox{}
		a := newAPI(t, b, store.Options{WriteLimit: -1, Mail: store.MailOptions{Sender: box}})
		root, _ := a.signUp("root")
		a.grantAdmin("root")
		ann, annID := a.signUp("ann")
		_, bobID := a.signUp("bob")
		_, goneID := a.signUp("gone")
		if r := a.do(ann, `mutation{setEmail(email:"ann@example.org",password:"password1"){id}}`, nil); len(r.Errors) > 0 {
			t.Fatalf("setEmail: %+v", r.Errors)
		}
		if err := a.store.DeleteUser(context.Background(), "root", "gone", false); err != nil {
			t.Fatal(err)
		}
		sent := func() int {
			t.Helper()
			if _, err := a.store.Jobs().RunDue(context.Background()); err != nil {
				t.Fatal(err)
			}
			box.mu.Lock()
			defer box.mu.Unlock()
			return len(box.sent)
		}
		before := sent() // the verification
		const send = `mutation($u:ID!){sendPasswordReset(userId:$u)}`
		for _, tc := range []struct{ who, token, user, code string }{
			{"ann herself", ann, annID, "FORBIDDEN"},
			{"anonymous", "", annID, "UNAUTHENTICATED"},
			{"an admin, an unknown user", root, "user:nobody", "NOT_FOUND"},
			{"an admin, a deleted user", root, goneID, "NOT_FOUND"},
			{"an admin, a user with no address", root, bobID, "BAD_USER_INPUT"},
		} {
			if r := a.do(tc.token, send, map[string]any{"u": tc.user}); r.code() != tc.code {
				t.Errorf("%s: %s %+v, want %s", tc.who, r.Data, r.Errors, tc.code)
			}
		}
		if n := sent(); n != before {
			t.Fatalf("%d mails sent by refused requests", n-before)
		}
		if r := a.do(root, send, map[string]any{"u": annID}); string(r.Data) != `{"sendPasswordReset":true}` {
			t.Fatalf("an admin's sendPasswordReset: %s %+v", r.Data, r.Errors)
		}
		token := box.lastToken(t, a)
		box.mu.Lock()
		last := box.sent[len(box.sent)-1]
		n := len(box.sent)
		box.mu.Unlock()
		if n != before+1 || !strings.EqualFold(last.To, "ann@example.org") {
			t.Fatalf("%d mails, the last to %q; want one more, to ann", n-before, last.To)
		}
		var d struct {
			ResetPassword struct{ User struct{ Name string } }
		}
		a.do("", `mutation($t:String!){resetPassword(token:$t,newPassword:"password2"){user{name}}}`,
			map[string]any{"t": token}).decode(t, &d)
		if d.ResetPassword.User.Name != "ann" {
			t.Errorf("the link signed in as %q, want ann", d.ResetPassword.User.Name)
		}
	})
}
