package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// postRaw POSTs a query and returns the decoded response with the HTTP response.
func (a *api) postRaw(t *testing.T, query string, vars map[string]any) (response, *http.Response) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	res, err := a.srv.Client().Post(a.srv.URL+"/query", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var r response
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r, res
}

// TestPasswordGuessingIsLimited checks the limits on log-ins and sign-ups: one per request,
// failed log-ins per account and per address, sign-ups per address, each refused with
// RATE_LIMITED, retryAfter and a Retry-After header.
func TestPasswordGuessingIsLimited(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: 120, Auth: store.AuthLimits{
			FailedLoginsPerAccount: 3, FailedLoginsPerAddress: 5, LoginWindow: time.Minute,
			SignUpsPerAddress: 4, SignUpWindow: time.Minute,
		}})
		logIn := `mutation($n:String!,$p:String!){logIn(name:$n,password:$p){token}}`
		limited := func(what string, r response, res *http.Response) {
			t.Helper()
			if r.code() != "RATE_LIMITED" {
				t.Fatalf("%s: %+v, want RATE_LIMITED", what, r.Errors)
			}
			secs, _ := r.Errors[0].Extensions["retryAfter"].(float64)
			if h, _ := strconv.Atoi(res.Header.Get("Retry-After")); secs < 1 || h != int(secs) {
				t.Fatalf("%s: retryAfter %v, Retry-After header %q", what, secs, res.Header.Get("Retry-After"))
			}
		}

		// One request, one password.
		r, _ := a.postRaw(t, `mutation{a:logIn(name:"x",password:"12345678"){token} b:logIn(name:"x",password:"87654321"){token}}`, nil)
		if r.code() != "BAD_USER_INPUT" {
			t.Fatalf("two log-ins in one request: %+v", r.Errors)
		}
		r, _ = a.postRaw(t, `mutation{...F} fragment F on Mutation{signUp(name:"x1x",password:"12345678"){token} logIn(name:"x",password:"12345678"){token}}`, nil)
		if r.code() != "BAD_USER_INPUT" {
			t.Fatalf("a sign-up and a log-in through a fragment: %+v", r.Errors)
		}

		// Sign-ups per address: 4, then refused.
		for i := range 4 {
			if r, _ := a.postRaw(t, `mutation($n:String!){signUp(name:$n,password:"password1"){token}}`, map[string]any{"n": fmt.Sprint("victim", i)}); len(r.Errors) > 0 {
				t.Fatalf("sign-up %d: %+v", i, r.Errors)
			}
		}
		r, res := a.postRaw(t, `mutation{signUp(name:"victim9",password:"password1"){token}}`, nil)
		limited("fifth sign-up", r, res)

		// Failed log-ins per account: 3 wrong passwords, then even the right one waits.
		for i := range 3 {
			if r, _ := a.postRaw(t, logIn, map[string]any{"n": "victim0", "p": fmt.Sprint("wrong-", i)}); r.code() != "UNAUTHENTICATED" {
				t.Fatalf("wrong password %d: %+v", i, r.Errors)
			}
		}
		r, res = a.postRaw(t, logIn, map[string]any{"n": "victim0", "p": "password1"})
		limited("the right password after 3 failures", r, res)

		// Failed log-ins per address, over several accounts: 5 in all (3 already), then refused.
		for i := range 2 {
			if r, _ := a.postRaw(t, logIn, map[string]any{"n": "victim1", "p": fmt.Sprint("wrong-", i)}); r.code() != "UNAUTHENTICATED" {
				t.Fatalf("address failure %d: %+v", i, r.Errors)
			}
		}
		r, res = a.postRaw(t, logIn, map[string]any{"n": "victim2", "p": "password1"})
		limited("a log-in after 5 failures from this address", r, res)
	})
}
