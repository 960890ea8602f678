package httpapi_test

import (
	"fmt"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestErasedAuthorLeavesLiveFeeds: once an account is deleted with eraseContent, its posts and
// comments reach no subscriber of commentAdded, postPublished or feed: the streams that were open
// across the deletion go on with the next writer's events, and a stream resumed from a cursor
// before the erased content (its events are still in the channels' logs) skips them, on every
// transport.
func TestErasedAuthorLeavesLiveFeeds(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{WriteLimit: -1}), httpapi.Live{})
		bob, _ := a.signUp("bob")
		cat, catID := a.signUp("cat")
		follow := func(id string) {
			t.Helper()
			if r := a.do(bob, `mutation($u:ID!){follow(userId:$u){name}}`, map[string]any{"u": id}); len(r.Errors) > 0 {
				t.Fatalf("follow %s: %+v", id, r.Errors)
			}
		}
		follow(catID)
		thread := a.createPost(cat, "the thread")
		const (
			comments  = `subscription($p: ID!, $after: String) { commentAdded(postId: $p, after: $after) { body } }`
			published = `subscription($after: String) { postPublished(after: $after) { title } }`
			feed      = `subscription($after: String) { feed(after: $after) { title } }`
		)
		for n, proto := range protos {
			t.Run(proto, func(t *testing.T) {
				subs := []sub{
					subscribe(t, a.srv.URL, proto, bob, comments, map[string]any{"p": thread}),
					subscribe(t, a.srv.URL, proto, bob, published, nil),
					subscribe(t, a.srv.URL, proto, bob, feed, nil),
				}
				defer func() {
					for _, s := range subs {
						s.close()
					}
				}()
				waitSubscribers(t, a, 3)
				// Before: cat's first writes, whose cursors the resumed streams start from.
				a.comment(cat, thread, "", "cat before")
				a.createPost(cat, "cat's post before")
				cursors := make([]string, len(subs))
				for i, want := range []string{`{"commentAdded":{"body":"cat before"}}`, `{"postPublished":{"title":"cat's post before"}}`,
					`{"feed":{"title":"cat's post before"}}`} {
					r := event(t, subs[i])
					if string(r.Data) != want {
						t.Fatalf("before: %s, want %s", r.Data, want)
					}
					cursors[i] = r.Extensions.Cursor
				}
				// The erased author's content, delivered live while the account exists.
				erased, erasedID := a.signUp(fmt.Sprintf("ann%d", n))
				follow(erasedID)
				a.comment(erased, thread, "", "erased comment")
				a.createPost(erased, "erased post")
				for i, want := range []string{`{"commentAdded":{"body":"erased comment"}}`, `{"postPublished":{"title":"erased post"}}`,
					`{"feed":{"title":"erased post"}}`} {
					if r := event(t, subs[i]); string(r.Data) != want {
						t.Fatalf("live: %s, want %s", r.Data, want)
					}
				}
				if r := a.do(erased, `mutation{deleteAccount(password:"password1",eraseContent:true)}`, nil); string(r.Data) != `{"deleteAccount":"`+erasedID+`"}` {
					t.Fatalf("deleteAccount: %s %+v", r.Data, r.Errors)
				}
				a.settle()
				// After: the next events of the open streams and of the resumed ones are cat's.
				a.comment(cat, thread, "", "cat after")
				a.createPost(cat, "cat's post after")
				wants := []string{`{"commentAdded":{"body":"cat after"}}`, `{"postPublished":{"title":"cat's post after"}}`,
					`{"feed":{"title":"cat's post after"}}`}
				for i, want := range wants {
					if r := event(t, subs[i]); string(r.Data) != want {
						t.Errorf("open stream %d after the erasure: %s, want %s", i, r.Data, want)
					}
				}
				queries := []string{comments, published, feed}
				for i, want := range wants {
					vars := map[string]any{"after": cursors[i]}
					if i == 0 {
						vars["p"] = thread
					}
					s := subscribe(t, a.srv.URL, proto, bob, queries[i], vars)
					if r := event(t, s); string(r.Data) != want {
						t.Errorf("stream %d resumed from before the erased content: %s, want %s", i, r.Data, want)
					}
					s.close()
				}
			})
		}
	})
}

// TestResumedCommentAddedSkipsCommentsDeletedSince: a stream of commentAdded resumed from before
// a comment that was deleted since — by its author, or erased with the author's account — skips
// it, also when the comment stays in the thread as a tombstone because it has a reply: it
// delivers the reply, and no tombstone of what it no longer has to show.
func TestResumedCommentAddedSkipsCommentsDeletedSince(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{WriteLimit: -1}), httpapi.Live{})
		bob, _ := a.signUp("bob")
		cat, _ := a.signUp("cat")
		const q = `subscription($p: ID!, $after: String) { commentAdded(postId: $p, after: $after) { body deleted } }`
		for i, tc := range []struct {
			name   string
			delete func(token, id string)
		}{
			{"deleted by its author", func(token, id string) {
				if r := a.do(token, `mutation($c:ID!){deleteComment(id:$c)}`, map[string]any{"c": id}); len(r.Errors) > 0 {
					t.Fatalf("deleteComment: %+v", r.Errors)
				}
			}},
			{"erased with its author's account", func(token, _ string) {
				if r := a.do(token, `mutation{deleteAccount(password:"password1",eraseContent:true)}`, nil); len(r.Errors) > 0 {
					t.Fatalf("deleteAccount: %+v", r.Errors)
				}
				a.settle()
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				author, _ := a.signUp(fmt.Sprintf("ann%d", i))
				thread := a.createPost(cat, "thread "+tc.name)
				s := subscribe(t, a.srv.URL, protoTransportWS, bob, q, map[string]any{"p": thread})
				waitSubscribers(t, a, 1)
				a.comment(cat, thread, "", "before")
				from := event(t, s)
				s.close()
				waitSubscribers(t, a, 0)
				gone := a.comment(author, thread, "", "gone")
				a.comment(cat, thread, gone.ID, "the reply")
				tc.delete(author, gone.ID)
				s = subscribe(t, a.srv.URL, protoTransportWS, bob, q, map[string]any{"p": thread, "after": from.Extensions.Cursor})
				defer s.close()
				if r := event(t, s); string(r.Data) != `{"commentAdded":{"body":"the reply","deleted":false}}` {
					t.Errorf("the resumed stream: %s, want the reply alone", r.Data)
				}
			})
		}
	})
}
