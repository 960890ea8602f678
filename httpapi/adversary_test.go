package httpapi_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
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

// TestOnlyTheGroupOfAnActionUndoesIt: anyone can make a group and moderate it, and a post can be
// in several groups, so a removal or a lock done in one group is undone only by that group's
// moderators and the admins — not by the moderators of another of the post's groups, such as
// one its author made to undo it; and an admin's only by the admins.
func TestOnlyTheGroupOfAnActionUndoesIt(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newModAPI(t, b, "ann", "gil")
		var mia struct{ User struct{ ID string } }
		a.as("", `{user(name:"mia"){id}}`, nil).decode(t, &mia)
		z := rdb.Z{Score: float64(time.Now().UnixMilli()), Member: "gil"} // gil moderates go too
		if err := b.Client.ZAdd(context.Background(), a.store.Options().Prefix+"{g:go}:mods", z).Err(); err != nil {
			t.Fatal(err)
		}
		a.as("ann", `mutation{createGroup(name:"annsplace"){name}}`, nil).decode(t, &struct{}{})
		ok := func(user, q string, vars map[string]any) {
			t.Helper()
			a.as(user, q, vars).decode(t, &struct{}{})
		}
		const (
			restore = `mutation($id:ID!){restorePost(id:$id){id}}`
			lock    = `mutation($id:ID!,$l:Boolean!){lockPost(id:$id,locked:$l){id}}`
		)

		// A removal in go, of a post also in the author's own group.
		p := a.createPost(a.tokens["ann"], "spam", "go", "annsplace")
		ok("mia", removePostMutation, map[string]any{"id": p})
		wantCode(t, "the author restoring as a moderator of their own group", a.as("ann", restore, map[string]any{"id": p}), "FORBIDDEN")
		if seen := a.postSeen("", p); seen != nil {
			t.Fatalf("a refused restoration restored the post: %v", seen)
		}
		ok("gil", restore, map[string]any{"id": p}) // another moderator of go may

		// A lock in go, dodged by adding the post to the author's own group.
		q := a.createPost(a.tokens["ann"], "flame war", "go")
		ok("mia", lock, map[string]any{"id": q, "l": true})
		ok("ann", `mutation($id:ID!){setPostGroups(postId:$id,add:["annsplace"]){id}}`, map[string]any{"id": q})
		wantCode(t, "the author unlocking as a moderator of their own group", a.as("ann", lock, map[string]any{"id": q, "l": false}), "FORBIDDEN")
		if seen := a.postSeen("", q); seen["locked"] != true {
			t.Fatalf("a refused unlock unlocked the post: %v", seen)
		}
		ok("gil", lock, map[string]any{"id": q, "l": false})

		// A comment removed in go.
		c := a.commentOn("ann", p, "more spam")
		ok("mia", `mutation($id:ID!){removeComment(id:$id,reason:"spam"){id}}`, map[string]any{"id": c})
		restoreComment := `mutation($id:ID!){restoreComment(id:$id){removed}}`
		wantCode(t, "the author restoring a comment as a moderator of their own group", a.as("ann", restoreComment, map[string]any{"id": c}), "FORBIDDEN")
		ok("gil", restoreComment, map[string]any{"id": c})

		// An admin's removal: only an admin restores it.
		ok("root", removePostMutation, map[string]any{"id": p})
		wantCode(t, "a moderator restoring an admin's removal", a.as("mia", restore, map[string]any{"id": p}), "FORBIDDEN")
		ok("root", restore, map[string]any{"id": p})

		// A moderator of both groups restores a removal done in go, whatever the groups' order.
		ok("ann", `mutation($u:ID!){addModerator(group:"annsplace",userId:$u){name}}`, map[string]any{"u": mia.User.ID})
		r := a.createPost(a.tokens["ann"], "again", "annsplace", "go")
		ok("gil", removePostMutation, map[string]any{"id": r})
		ok("mia", restore, map[string]any{"id": r})
		if seen := a.postSeen("", r); seen == nil {
			t.Fatal("the restoration by a moderator of both groups did not restore the post")
		}
	})
}

// TestNoSessionOfTheOldPasswordOutlivesItsChange: whoever logs in with the old password while the
// password changes, however the two interleave, holds no live session once the change is done.
func TestNoSessionOfTheOldPasswordOutlivesItsChange(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		owner, _ := a.signUp("ann")
		var mu sync.Mutex
		var stolen []string
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					r := a.do("", `mutation{logIn(name:"ann",password:"password1"){token}}`, nil)
					var d struct{ LogIn struct{ Token string } }
					if len(r.Errors) > 0 || json.Unmarshal(r.Data, &d) != nil {
						continue // the new password is set: refused
					}
					mu.Lock()
					stolen = append(stolen, d.LogIn.Token)
					mu.Unlock()
				}
			}()
		}
		time.Sleep(20 * time.Millisecond)
		var d struct{ ChangePassword bool }
		a.do(owner, `mutation{changePassword(current:"password1",new:"new password")}`, nil).decode(t, &d)
		time.Sleep(20 * time.Millisecond)
		close(stop)
		wg.Wait()
		alive := 0
		for _, tok := range stolen {
			if a.signedIn(tok) {
				alive++
			}
		}
		if alive > 0 {
			t.Fatalf("%d of %d sessions started with the old password outlived its change", alive, len(stolen))
		}
	})
}

// TestABannedModeratorCannotResolveReports: a moderator an admin banned from their group can no
// longer act in it, resolving its reports included (BANNED), like removing its posts.
func TestABannedModeratorCannotResolveReports(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newModAPI(t, b, "ann", "bob")
		p := a.createPost(a.tokens["ann"], "spam", "go")
		var rep struct{ ReportPost struct{ ID string } }
		a.as("bob", `mutation($id:ID!){reportPost(id:$id,reason:"spam"){id}}`, map[string]any{"id": p}).decode(t, &rep)
		var mia struct{ User struct{ ID string } }
		a.as("", `{user(name:"mia"){id}}`, nil).decode(t, &mia)
		a.as("root", `mutation($u:ID!){banUser(userId:$u,group:"go",reason:"rogue"){until}}`, map[string]any{"u": mia.User.ID}).decode(t, &struct{}{})
		resolve := `mutation($id:ID!){resolveReport(id:$id){resolved}}`
		wantCode(t, "a banned moderator resolving", a.as("mia", resolve, map[string]any{"id": rep.ReportPost.ID}), "BANNED")
		wantCode(t, "a banned moderator removing", a.as("mia", removePostMutation, map[string]any{"id": p}), "BANNED")
		var d struct{ Reports struct{ TotalCount int } }
		a.as("root", `{reports(group:"go"){totalCount}}`, nil).decode(t, &d)
		if d.Reports.TotalCount != 1 {
			t.Fatalf("the report left the open reports: %d open", d.Reports.TotalCount)
		}
		a.as("root", resolve, map[string]any{"id": rep.ReportPost.ID}).decode(t, &struct{}{})
	})
}

// TestAnAuthorsOwnGroupCannotCloseReportsForOthers: an author who cross-posts into a group they
// moderate cannot close the reports the moderators of the post's other group have to see; a
// moderator of every group of the report, or an admin, can.
func TestAnAuthorsOwnGroupCannotCloseReportsForOthers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newModAPI(t, b, "ben", "dan")
		a.as("ben", `mutation{createGroup(name:"bens"){name}}`, nil).decode(t, &struct{}{})
		p := a.createPost(a.tokens["ben"], "spam", "go", "bens")
		var rep struct{ ReportPost struct{ ID string } }
		a.as("dan", `mutation($id:ID!){reportPost(id:$id,reason:"spam"){id}}`, map[string]any{"id": p}).decode(t, &rep)
		resolve := `mutation($id:ID!){resolveReport(id:$id){resolved}}`
		for _, u := range []string{"ben", "mia"} {
			if r := a.as(u, resolve, map[string]any{"id": rep.ReportPost.ID}); r.code() != "FORBIDDEN" {
				t.Fatalf("%s, a moderator of one of the report's groups, resolved it: %+v", u, r)
			}
		}
		var open struct {
			Post struct{ ReportCount *int }
		}
		a.as("mia", `query($id:ID!){post(id:$id){reportCount}}`, map[string]any{"id": p}).decode(t, &open)
		if open.Post.ReportCount == nil || *open.Post.ReportCount != 1 {
			t.Fatalf("the report is no longer open to go's moderators: %v", open.Post.ReportCount)
		}
		var done struct{ ResolveReport struct{ Resolved bool } }
		a.as("root", resolve, map[string]any{"id": rep.ReportPost.ID}).decode(t, &done)
		if !done.ResolveReport.Resolved {
			t.Fatal("an admin could not resolve the report")
		}
	})
}

// TestAModeratedGroupCannotBeTakenOver: a group made by posts, whose only post an admin removed
// (and whose spammer the admin banned), does not vanish and cannot be made anew by someone else,
// who would own its bans and get the post back into their group on restore.
func TestAModeratedGroupCannotBeTakenOver(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newModAPI(t, b, "ben", "dan")
		p := a.createPost(a.tokens["ben"], "spam", "orphans")
		a.as("root", removePostMutation, map[string]any{"id": p}).decode(t, &struct{}{})
		if r := a.as("dan", `mutation{createGroup(name:"orphans"){name}}`, nil); r.code() != "CONFLICT" {
			t.Fatalf("a group emptied by a removal was made anew by another user: %+v", r)
		}
		var d struct{ Group *struct{ Name string } }
		a.as("dan", `{group(name:"orphans"){name}}`, nil).decode(t, &d)
		if d.Group == nil {
			t.Fatal("the moderated group vanished with its last post")
		}
		until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		a.as("root", `mutation($u:ID!,$until:Time){banUser(userId:$u,group:"bangroup",until:$until,reason:"spam"){until}}`,
			map[string]any{"u": "user:ben", "until": until}).decode(t, &struct{}{})
		if r := a.as("dan", `mutation{createGroup(name:"bangroup"){name}}`, nil); r.code() != "CONFLICT" {
			t.Fatalf("a group with bans was made anew by another user: %+v", r)
		}
	})
}
