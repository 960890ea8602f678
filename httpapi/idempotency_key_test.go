package httpapi_test

import (
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestEmptyIdempotencyKeyIsRefused: an idempotencyKey is 1–64 characters, as the schema says. An
// empty one is BAD_USER_INPUT: it was taken as no key, so a client that retried with it got a
// second post, comment or message. Left out or null, there is no key.
func TestEmptyIdempotencyKeyIsRefused(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		alice, _ := a.signUp("alice")
		_, bob := a.signUp("bobby")
		post := a.createPost(alice, "p")
		for _, tc := range []struct{ name, query string }{
			{"createPost", `mutation($k:String){createPost(input:{title:"t", idempotencyKey:$k}){id}}`},
			{"createComment", `mutation($k:String,$p:ID!){createComment(postId:$p, body:"b", idempotencyKey:$k){id}}`},
			{"sendMessage", `mutation($k:String,$u:ID!){sendMessage(toUserId:$u, body:"b", idempotencyKey:$k){id}}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, k := range []any{"", nil} {
					r := a.do(alice, tc.query, map[string]any{"k": k, "p": post, "u": bob})
					if want := map[bool]string{true: "BAD_USER_INPUT", false: ""}[k == ""]; r.code() != want {
						t.Errorf("idempotencyKey %#v: %s %+v, want code %q", k, r.Data, r.Errors, want)
					}
				}
			})
		}
	})
}
