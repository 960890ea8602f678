package httpapi_test

import (
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestAPIPasswordResetNoEnumeration: requestPasswordReset answers a known address and an unknown
// one with the same status and body; the email of a user shows to them and to nobody else.
func TestAPIPasswordResetNoEnumeration(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		ann, _ := a.signUp("ann")
		bob, _ := a.signUp("bob")
		if r := a.do(ann, `mutation{setEmail(email:"ann@example.org",password:"password1"){email emailVerified}}`, nil); len(r.Errors) > 0 {
			t.Fatalf("setEmail: %+v", r.Errors)
		}
		req := `mutation($e:String!){requestPasswordReset(email:$e)}`
		known := a.do("", req, map[string]any{"e": "ann@example.org"})
		unknown := a.do("", req, map[string]any{"e": "nobody@example.org"})
		if known.Status != unknown.Status || string(known.Data) != string(unknown.Data) || len(known.Errors)+len(unknown.Errors) > 0 {
			t.Errorf("known: %d %s %+v; unknown: %d %s %+v", known.Status, known.Data, known.Errors,
				unknown.Status, unknown.Data, unknown.Errors)
		}
		for _, tc := range []struct{ who, token, want string }{
			{"ann", ann, `{"user":{"email":"ann@example.org","emailVerified":false}}`},
			{"bob", bob, `{"user":{"email":null,"emailVerified":false}}`},
			{"anonymous", "", `{"user":{"email":null,"emailVerified":false}}`},
		} {
			if r := a.do(tc.token, `{user(name:"ann"){email emailVerified}}`, nil); string(r.Data) != tc.want {
				t.Errorf("%s reads %s %+v, want %s", tc.who, r.Data, r.Errors, tc.want)
			}
		}
	})
}
