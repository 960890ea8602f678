package httpapi_test

import (
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestLiveEventsRespectBlocks: a subscriber does not get the new posts (postPublished, feed) or
// comments (commentAdded) of a user they block, while a subscriber of the same shared execution
// who blocks nobody gets them all.
func TestLiveEventsRespectBlocks(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		ann, _ := a.signUp("ann")
		ben, benID := a.signUp("ben")
		cat, catID := a.signUp("cat")
		for _, id := range []string{benID, catID} {
			a.do(ann, `mutation($id:ID!){follow(userId:$id){id}}`, map[string]any{"id": id}).decode(t, &struct{}{})
		}
		a.do(ann, `mutation($id:ID!){blockUser(userId:$id){id}}`, map[string]any{"id": benID}).decode(t, &struct{}{})
		thread := a.createPost(cat, "a thread")
		comment := func(tok, body string) {
			a.do(tok, `mutation($p:ID!,$b:String!){createComment(postId:$p,body:$b){id}}`,
				map[string]any{"p": thread, "b": body}).decode(t, &struct{}{})
		}
		published := `subscription{postPublished{title}}`
		comments := `subscription($p:ID!){commentAdded(postId:$p){body author{name}}}`
		for _, proto := range protos {
			t.Run(proto, func(t *testing.T) {
				annPosts := subscribe(t, a.srv.URL, proto, ann, published, nil)
				catPosts := subscribe(t, a.srv.URL, proto, cat, published, nil)
				annFeed := subscribe(t, a.srv.URL, proto, ann, `subscription{feed{title}}`, nil)
				annComments := subscribe(t, a.srv.URL, proto, ann, comments, map[string]any{"p": thread})
				catComments := subscribe(t, a.srv.URL, proto, cat, comments, map[string]any{"p": thread})
				all := []sub{annPosts, catPosts, annFeed, annComments, catComments}
				defer func() {
					for _, s := range all {
						s.close()
					}
					waitSubscribers(t, a, 0)
				}()
				waitSubscribers(t, a, len(all))

				a.createPost(ben, "ben "+proto)
				a.createPost(cat, "cat "+proto)
				comment(ben, "ben says "+proto)
				comment(cat, "cat says "+proto)
				title := func(s sub, field string) string {
					t.Helper()
					var d map[string]struct{ Title string }
					next(t, s, &d)
					return d[field].Title
				}
				body := func(s sub) string {
					t.Helper()
					var d struct{ CommentAdded struct{ Body string } }
					next(t, s, &d)
					return d.CommentAdded.Body
				}
				for _, tc := range []struct{ who, got, want string }{
					{"cat's postPublished", title(catPosts, "postPublished"), "ben " + proto},
					{"cat's postPublished", title(catPosts, "postPublished"), "cat " + proto},
					{"ann's postPublished", title(annPosts, "postPublished"), "cat " + proto},
					{"ann's feed", title(annFeed, "feed"), "cat " + proto},
					{"cat's commentAdded", body(catComments), "ben says " + proto},
					{"cat's commentAdded", body(catComments), "cat says " + proto},
					{"ann's commentAdded", body(annComments), "cat says " + proto},
				} {
					if tc.got != tc.want {
						t.Errorf("%s: %q, want %q", tc.who, tc.got, tc.want)
					}
				}
			})
		}
	})
}
