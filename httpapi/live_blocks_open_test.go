package httpapi_test

import (
	"fmt"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestBlockAppliesToOpenStreams: a block applies to the live streams the blocker already has
// open, on every transport: once alice blocks bob, her open commentAdded stream stops delivering
// his comments and goes on with everyone else's, without being opened again; once she unblocks
// him, his comments come again.
func TestBlockAppliesToOpenStreams(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{WriteLimit: -1}), httpapi.Live{})
		alice, _ := a.signUp("alice")
		bob, bobID := a.signUp("bob")
		carol, _ := a.signUp("carol")
		thread := a.createPost(carol, "the thread")
		const comments = `subscription($p: ID!) { commentAdded(postId: $p) { body } }`
		setBlock := func(mutation string) {
			t.Helper()
			if r := a.do(alice, `mutation($u:ID!){`+mutation+`(userId:$u){name}}`, map[string]any{"u": bobID}); len(r.Errors) > 0 {
				t.Fatalf("%s: %+v", mutation, r.Errors)
			}
		}
		for n, proto := range protos {
			t.Run(proto, func(t *testing.T) {
				s := subscribe(t, a.srv.URL, proto, alice, comments, map[string]any{"p": thread})
				defer s.close()
				waitSubscribers(t, a, 1)
				body := func() string {
					t.Helper()
					var d struct{ CommentAdded struct{ Body string } }
					next(t, s, &d)
					return d.CommentAdded.Body
				}
				// round writes a comment of bob's, then one of carol's, and reports whether bob's
				// reached the stream before carol's.
				round := 0
				bobCame := func() bool {
					t.Helper()
					round++
					bobs, carols := fmt.Sprintf("bob %d.%d", n, round), fmt.Sprintf("carol %d.%d", n, round)
					a.comment(bob, thread, "", bobs)
					a.comment(carol, thread, "", carols)
					got := body()
					switch {
					case got == carols:
						return false
					case got != bobs:
						t.Fatalf("round %d: got %q, want %q or %q", round, got, bobs, carols)
					}
					if got := body(); got != carols {
						t.Fatalf("round %d: got %q after bob's, want %q", round, got, carols)
					}
					return true
				}
				if !bobCame() {
					t.Fatal("bob's comment did not reach alice before any block")
				}
				// The block reaches the open stream through its session's watch, a moment after
				// the mutation returns: rounds until bob's comments stop, then one more to see
				// that they stay out.
				setBlock("blockUser")
				for bobCame() {
					if round > 50 {
						t.Fatal("bob's comments still reach alice's open stream 50 rounds after she blocked him")
					}
				}
				if bobCame() {
					t.Fatal("a comment of bob's reached alice's open stream after the block had applied")
				}
				setBlock("unblockUser")
				for start := round; !bobCame(); {
					if round-start > 50 {
						t.Fatal("bob's comments do not reach alice's open stream 50 rounds after she unblocked him")
					}
				}
				if !bobCame() {
					t.Fatal("a comment of bob's missed alice's open stream after the unblock had applied")
				}
			})
		}
	})
}
