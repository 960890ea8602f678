package httpapi_test

import (
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestOnePasswordHashPerRequest: a mutation carries at most one field that hashes a password —
// signUp, logIn, changePassword, setEmail, resetPassword, deleteAccount — whether aliased, mixed
// or spread from fragments; a second is refused with BAD_USER_INPUT before anything runs. A hundred
// aliased changePasswords with the right password were two hundred argon2id hashes, seconds of
// the shared hashing workers, for one request of 7 KB.
func TestOnePasswordHashPerRequest(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		token, _ := a.signUp("ann")
		const change = `changePassword(current: "password1", new: "password2")`
		for _, tc := range []struct{ name, query string }{
			{"two changePasswords", `mutation { a: ` + change + ` b: ` + change + ` }`},
			{"changePassword and setEmail", `mutation { a: ` + change + ` setEmail(email: "ann@example.org", password: "password1") { id } }`},
			{"logIn and deleteAccount", `mutation { logIn(name: "ann", password: "password1") { token } deleteAccount(password: "password1", eraseContent: false) }`},
			{"signUp and resetPassword", `mutation { signUp(name: "bob", password: "password1") { token } resetPassword(token: "x", newPassword: "password3") { token } }`},
			{"through fragments", `mutation { ...A ...B } fragment A on Mutation { a: ` + change + ` } fragment B on Mutation { ... on Mutation { b: ` + change + ` } }`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := a.do(token, tc.query, nil)
				if r.code() != "BAD_USER_INPUT" || len(r.Data) > 0 && string(r.Data) != "null" {
					t.Fatalf("code %q, data %s (%+v); want BAD_USER_INPUT and no data", r.code(), r.Data, r.Errors)
				}
			})
		}
		// Nothing ran: the password is the first, and one field alone still runs.
		var d struct{ ChangePassword bool }
		a.do(token, `mutation { `+change+` }`, nil).decode(t, &d)
		if !d.ChangePassword {
			t.Fatal("one changePassword alone was not answered true")
		}
		if r := a.do("", `mutation { logIn(name: "ann", password: "password2") { token } }`, nil); r.code() != "" {
			t.Fatalf("log-in with the new password: %+v", r.Errors)
		}
	})
}
