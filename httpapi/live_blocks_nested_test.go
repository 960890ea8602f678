package httpapi_test

import (
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestLiveEventsCollapseBlockedNested: a subscriber who blocks a user gets that user's comments
// collapsed wherever an event's response shows them — a reply's parent, a post's thread —
// as a query shows them, even when the subscription shares one execution with subscribers who
// block nobody.
func TestLiveEventsCollapseBlockedNested(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		ann, _ := a.signUp("ann")
		ben, benID := a.signUp("ben")
		cat, _ := a.signUp("cat")
		a.do(ann, `mutation($id:ID!){blockUser(userId:$id){id}}`, map[string]any{"id": benID}).decode(t, &struct{}{})
		thread := a.createPost(cat, "a thread")
		bens := a.comment(ben, thread, "", "ben's secret")
		const replies = `subscription($p:ID!){commentAdded(postId:$p){body parent{body author{name}}}}`
		const changes = `subscription($p:ID!){postChanged(postId:$p){comments{nodes{body author{name}}}}}`
		for _, proto := range protos {
			t.Run(proto, func(t *testing.T) {
				vars := map[string]any{"p": thread}
				catReplies := subscribe(t, a.srv.URL, proto, cat, replies, vars) // blocks nobody: starts the run
				annReplies := subscribe(t, a.srv.URL, proto, ann, replies, vars)
				catChanges := subscribe(t, a.srv.URL, proto, cat, changes, vars)
				annChanges := subscribe(t, a.srv.URL, proto, ann, changes, vars)
				all := []sub{catReplies, annReplies, catChanges, annChanges}
				defer func() {
					for _, s := range all {
						s.close()
					}
					waitSubscribers(t, a, 0)
				}()
				waitSubscribers(t, a, len(all))
				a.comment(cat, thread, bens.ID, "cat answers ben "+proto)

				type author struct{ Name string }
				type comment struct {
					Body   *string
					Author *author
				}
				var r struct {
					CommentAdded struct {
						Body   string
						Parent comment
					}
				}
				next(t, catReplies, &r)
				if p := r.CommentAdded.Parent; p.Body == nil || *p.Body != "ben's secret" {
					t.Errorf("cat's reply event: parent %+v, want ben's comment whole", p)
				}
				next(t, annReplies, &r)
				if p := r.CommentAdded.Parent; p.Body != nil || p.Author != nil {
					t.Errorf("ann's reply event: parent body %v, author %v; want ben's comment collapsed", deref(p.Body), p.Author)
				}
				var c struct {
					PostChanged struct{ Comments struct{ Nodes []comment } }
				}
				next(t, annChanges, &c)
				for _, n := range c.PostChanged.Comments.Nodes {
					if n.Body != nil && *n.Body == "ben's secret" || n.Author != nil && n.Author.Name == "ben" {
						t.Errorf("ann's postChanged event shows ben's comment: body %v, author %v", deref(n.Body), n.Author)
					}
				}
			})
		}
	})
}
