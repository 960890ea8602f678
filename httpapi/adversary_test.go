package httpapi_test

import (
	"testing"

	"github.com/agora/agora/store/storetest"
)

// Holes found by an adversarial pass over moderation (issue 14), each closed and kept closed.

// commentOn creates a comment as user on post p and returns its id.
func (a *modAPI) commentOn(user, p, body string) string {
	a.t.Helper()
	var d struct{ CreateComment struct{ ID string } }
	a.as(user, `mutation($id:ID!,$b:String!){createComment(postId:$id,body:$b){id}}`, map[string]any{"id": p, "b": body}).decode(a.t, &d)
	return d.CreateComment.ID
}

// TestReporterSeesRemovedContentAsOthersDo: the reporter of a comment reads their report (node),
// but a removed comment comes to them as a tombstone, and a comment on a removed post not at all.
func TestReporterSeesRemovedContentAsOthersDo(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newModAPI(t, b, "ann", "bob")
		p := a.createPost(a.tokens["ann"], "topic", "go")
		c := a.commentOn("ann", p, "a slur")
		var rep struct{ ReportComment struct{ ID string } }
		a.as("bob", `mutation($id:ID!){reportComment(id:$id,reason:"slur"){id}}`, map[string]any{"id": c}).decode(t, &rep)
		q := `query($id:ID!){node(id:$id){... on Report{comment{body removed post{title}}}}}`
		seen := func(user string) map[string]any {
			t.Helper()
			var d struct {
				Node struct{ Comment map[string]any }
			}
			a.as(user, q, map[string]any{"id": rep.ReportComment.ID}).decode(t, &d)
			return d.Node.Comment
		}
		if got := seen("bob"); got["body"] != "a slur" {
			t.Fatalf("the reporter sees the reported comment as %v", got)
		}
		a.as("mia", `mutation($id:ID!){removeComment(id:$id,reason:"slur"){id}}`, map[string]any{"id": c}).decode(t, &struct{}{})
		for _, u := range []string{"mia", "bob", "mia", "bob"} { // twice: through the response cache
			got := seen(u)
			if u == "mia" && got["body"] != "a slur" || u == "bob" && (got["body"] != nil || got["removed"] != true) {
				t.Fatalf("%s sees the removed comment through the report as %v", u, got)
			}
		}
		a.as("mia", removePostMutation, map[string]any{"id": p}).decode(t, &struct{}{})
		if got := seen("bob"); got != nil {
			t.Fatalf("the reporter sees a comment of a removed post through the report: %v", got)
		}
	})
}

// TestCommentsOfARemovedPostCannotBeEdited: the commenters of a removed post no longer see it, so
// editing their comment there (which would answer the post with it) is NOT_FOUND, like voting.
func TestCommentsOfARemovedPostCannotBeEdited(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newModAPI(t, b, "ann", "bob")
		p := a.createPost(a.tokens["ann"], "topic", "go")
		c := a.commentOn("bob", p, "hi")
		a.as("mia", removePostMutation, map[string]any{"id": p}).decode(t, &struct{}{})
		r := a.as("bob", `mutation($id:ID!){editComment(id:$id,body:"ho"){body post{title removed}}}`, map[string]any{"id": c})
		wantCode(t, "editComment on a removed post", r, "NOT_FOUND")
		a.as("mia", `mutation($id:ID!){restorePost(id:$id){id}}`, map[string]any{"id": p}).decode(t, &struct{}{})
		a.as("bob", `mutation($id:ID!){editComment(id:$id,body:"ho"){body}}`, map[string]any{"id": c}).decode(t, &struct{}{})
	})
}
