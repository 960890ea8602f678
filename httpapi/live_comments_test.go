package httpapi_test

import (
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestCommentsReachAnotherServer subscribes on one server process to a post's new comments and
// to its changes, and comments through another, over each transport.
func TestCommentsReachAnotherServer(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		w := peerOf(t, a, addrOf(t, b))
		alice, _ := w.signUp("alice")
		bob, _ := w.signUp("bob")
		post := w.createPost(alice, "a thread")
		comment := func(token, parent, body string) string {
			var d struct{ CreateComment struct{ ID string } }
			vars := map[string]any{"p": post, "b": body}
			if parent != "" {
				vars["r"] = parent
			}
			w.do(token, `mutation($p:ID!,$r:ID,$b:String!){createComment(postId:$p,parentId:$r,body:$b){id}}`, vars).decode(t, &d)
			return d.CreateComment.ID
		}
		count := 0
		for _, proto := range protos {
			t.Run(proto, func(t *testing.T) {
				s := subscribe(t, a.srv.URL, proto, bob,
					`subscription($p:ID!){commentAdded(postId:$p){id body depth viewerVote author{name} parent{id} post{id commentCount}}}`,
					map[string]any{"p": post})
				defer func() { s.close(); waitSubscribers(t, a, 0) }()
				waitSubscribers(t, a, 1)
				type added struct {
					ID, Body, ViewerVote string
					Depth                int
					Author               struct{ Name string }
					Parent               *struct{ ID string }
					Post                 struct {
						ID           string
						CommentCount int
					}
				}
				top := comment(alice, "", "top "+proto)
				count++
				var d struct{ CommentAdded added }
				next(t, s, &d)
				got := d.CommentAdded
				if got.ID != top || got.Body != "top "+proto || got.Depth != 0 || got.Parent != nil ||
					got.Author.Name != "alice" || got.ViewerVote != "NONE" || got.Post.ID != post || got.Post.CommentCount != count {
					t.Errorf("commentAdded = %+v, want alice's top-level comment %s, comment count %d", got, top, count)
				}
				reply := comment(bob, top, "reply "+proto)
				count++
				next(t, s, &d)
				got = d.CommentAdded
				if got.ID != reply || got.Depth != 1 || got.Parent == nil || got.Parent.ID != top ||
					got.Author.Name != "bob" || got.ViewerVote != "UP" || got.Post.CommentCount != count {
					t.Errorf("commentAdded = %+v, want bob's reply %s to %s (his own: viewerVote UP), comment count %d", got, reply, top, count)
				}
			})
			t.Run(proto+"/postChanged", func(t *testing.T) {
				s := subscribe(t, a.srv.URL, proto, "", `subscription($p:ID!){postChanged(postId:$p){commentCount}}`, map[string]any{"p": post})
				defer func() { s.close(); waitSubscribers(t, a, 0) }()
				waitSubscribers(t, a, 1)
				id := comment(bob, "", "counted")
				count++
				var d struct{ PostChanged struct{ CommentCount int } }
				next(t, s, &d)
				if d.PostChanged.CommentCount != count {
					t.Errorf("after a comment: commentCount %d, want %d", d.PostChanged.CommentCount, count)
				}
				w.do(bob, `mutation($c:ID!){deleteComment(id:$c)}`, map[string]any{"c": id}).decode(t, &struct{}{})
				count--
				next(t, s, &d)
				if d.PostChanged.CommentCount != count {
					t.Errorf("after a delete: commentCount %d, want %d", d.PostChanged.CommentCount, count)
				}
			})
		}
	})
}
