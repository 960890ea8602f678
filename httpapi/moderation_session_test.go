package httpapi_test

import (
	"slices"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestModerationSession runs a whole moderation session through the API, as a community would
// live it, on every backend and through the response cache: a group with moderators, members and
// a feed; a report, a removal, a ban, a lock, a pin; an admin stepping in; the public log.
func TestModerationSession(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		root, _ := a.signUp("root")
		a.grantAdmin("root")
		mia, miaID := a.signUp("mia")
		cat, catID := a.signUp("cat")
		ben, benID := a.signUp("ben")
		dan, _ := a.signUp("dan")
		zed, _ := a.signUp("zed")

		ok := func(token, q string, vars map[string]any, v any) {
			t.Helper()
			a.do(token, q, vars).decode(t, v)
		}
		refused := func(token, q string, vars map[string]any, code string) response {
			t.Helper()
			r := a.do(token, q, vars)
			if r.code() != code {
				t.Fatalf("%s: got %+v, want %s", q, r.Errors, code)
			}
			return r
		}
		var none struct{}

		// mia makes a group and is its first moderator; she adds cat.
		var g struct {
			CreateGroup struct {
				Name, Description string
				Moderators        []struct{ Name string }
				ViewerIsModerator bool
			}
		}
		ok(mia, `mutation{createGroup(name:"Meta",description:"About this site"){name description moderators{name} viewerIsModerator}}`, nil, &g)
		if g.CreateGroup.Name != "meta" || g.CreateGroup.Description != "About this site" || !g.CreateGroup.ViewerIsModerator ||
			len(g.CreateGroup.Moderators) != 1 || g.CreateGroup.Moderators[0].Name != "mia" {
			t.Fatalf("createGroup: %+v", g.CreateGroup)
		}
		refused(zed, `mutation{createGroup(name:"meta"){name}}`, nil, "CONFLICT")
		ok(zed, `mutation{createGroup(name:"other"){name}}`, nil, &none)
		ok(mia, `mutation($u:ID!){addModerator(group:"meta",userId:$u){name}}`, map[string]any{"u": catID}, &none)

		// ben joins and posts; dan reports the post.
		ok(ben, `mutation{joinGroup(name:"meta"){memberCount viewerIsMember}}`, nil, &none)
		spam := a.createPost(ben, "Buy now", "meta")
		keep := a.createPost(ben, "A fair question", "meta")
		var rep struct{ ReportPost struct{ ID string } }
		ok(dan, `mutation($id:ID!){reportPost(id:$id,reason:"spam"){id}}`, map[string]any{"id": spam}, &rep)

		reportCount := func(token string) *int {
			t.Helper()
			var d struct{ Post *struct{ ReportCount *int } }
			ok(token, `query($id:ID!){post(id:$id){reportCount}}`, map[string]any{"id": spam}, &d)
			if d.Post == nil {
				return nil
			}
			return d.Post.ReportCount
		}
		if n := reportCount(cat); n == nil || *n != 1 {
			t.Fatalf("a moderator sees reportCount %v, want 1", n)
		}
		if n := reportCount(dan); n != nil {
			t.Fatalf("the reporter sees reportCount %v, want null", *n)
		}
		var reports struct {
			Reports struct {
				TotalCount int
				Nodes      []struct{ ID string }
			}
		}
		ok(cat, `{reports(group:"meta"){totalCount nodes{id}}}`, nil, &reports)
		if reports.Reports.TotalCount != 1 || reports.Reports.Nodes[0].ID != rep.ReportPost.ID {
			t.Fatalf("reports: %+v", reports.Reports)
		}
		refused(zed, `{reports(group:"meta"){totalCount}}`, nil, "FORBIDDEN")

		// A moderator of another group cannot act here; cat can.
		removePost := `mutation($id:ID!,$why:String!){removePost(id:$id,reason:$why){id removed}}`
		refused(zed, removePost, map[string]any{"id": spam, "why": "mine now"}, "FORBIDDEN")
		for range 2 { // a retried request logs once
			var d struct{ RemovePost struct{ Removed bool } }
			ok(cat, removePost, map[string]any{"id": spam, "why": "spam"}, &d)
			if !d.RemovePost.Removed {
				t.Fatal("removePost: not removed")
			}
		}
		ok(cat, `mutation($id:ID!){resolveReport(id:$id){resolved}}`, map[string]any{"id": rep.ReportPost.ID}, &none)

		// The removed post left the group's listing and count; its author still sees it.
		titles := func(token string) ([]string, int) {
			t.Helper()
			var d struct {
				Group struct {
					PostCount int
					Posts     struct{ Nodes []struct{ Title string } }
				}
			}
			ok(token, `{group(name:"meta"){postCount posts(sort:NEW){nodes{title}}}}`, nil, &d)
			var out []string
			for _, n := range d.Group.Posts.Nodes {
				out = append(out, n.Title)
			}
			return out, d.Group.PostCount
		}
		if got, n := titles(dan); !slices.Equal(got, []string{"A fair question"}) || n != 1 {
			t.Fatalf("after the removal dan sees %v (%d posts)", got, n)
		}
		seen := func(token string) *bool {
			t.Helper()
			var d struct{ Post *struct{ Removed bool } }
			ok(token, `query($id:ID!){post(id:$id){removed}}`, map[string]any{"id": spam}, &d)
			if d.Post == nil {
				return nil
			}
			return &d.Post.Removed
		}
		var feed struct {
			GroupFeed struct{ Nodes []struct{ Title string } }
		}
		ok(ben, `{groupFeed(sort:NEW){nodes{title}}}`, nil, &feed)
		if len(feed.GroupFeed.Nodes) != 1 || feed.GroupFeed.Nodes[0].Title != "A fair question" {
			t.Fatalf("ben's group feed after the removal: %+v", feed.GroupFeed.Nodes)
		}
		if r := seen(ben); r == nil || !*r {
			t.Fatal("the author no longer sees the removed post")
		}
		if r := seen(dan); r != nil {
			t.Fatal("another user still sees the removed post")
		}

		// A timed ban from the group: ben's writes there are refused with its end; elsewhere not.
		until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		var ban struct{ BanUser struct{ Until time.Time } }
		ok(mia, `mutation($u:ID!,$until:Time){banUser(userId:$u,group:"meta",until:$until,reason:"spam"){until}}`,
			map[string]any{"u": benID, "until": until.Format(time.RFC3339)}, &ban)
		r := refused(ben, `mutation{createPost(input:{title:"Again",groups:["meta"]}){id}}`, nil, "BANNED")
		if got, _ := r.Errors[0].Extensions["until"].(string); got != until.Format(time.RFC3339) {
			t.Fatalf("BANNED until %q, want %s", got, until.Format(time.RFC3339))
		}
		refused(ben, `mutation($id:ID!){createComment(postId:$id,body:"hm"){id}}`, map[string]any{"id": keep}, "BANNED")
		a.createPost(ben, "Elsewhere", "other")
		var bans struct {
			Group struct{ Bans struct{ TotalCount int } }
		}
		ok(cat, `{group(name:"meta"){bans{totalCount}}}`, nil, &bans)
		if bans.Group.Bans.TotalCount != 1 {
			t.Fatalf("bans: %+v", bans.Group.Bans)
		}
		refused(dan, `{group(name:"meta"){bans{totalCount}}}`, nil, "FORBIDDEN")
		refused(mia, `mutation($u:ID!){banUser(userId:$u,reason:"site"){until}}`, map[string]any{"u": benID}, "FORBIDDEN")

		// A lock and a pin.
		ok(mia, `mutation($id:ID!){lockPost(id:$id,locked:true,reason:"heated"){locked}}`, map[string]any{"id": keep}, &none)
		refused(dan, `mutation($id:ID!){createComment(postId:$id,body:"one more"){id}}`, map[string]any{"id": keep}, "LOCKED")
		refused(dan, `mutation($id:ID!){votePost(postId:$id,direction:UP){id}}`, map[string]any{"id": keep}, "LOCKED")
		newer := a.createPost(dan, "Newest", "meta")
		ok(mia, `mutation($id:ID!){pinPost(id:$id,group:"meta",pinned:true){pinnedIn{name}}}`, map[string]any{"id": keep}, &none)
		if got, _ := titles(dan); len(got) != 2 || got[0] != "A fair question" {
			t.Fatalf("the pinned post is not first: %v (newer %s)", got, newer)
		}

		// The admin steps in: restores the post and lifts the ban.
		var restored struct{ RestorePost struct{ Removed bool } }
		ok(root, `mutation($id:ID!){restorePost(id:$id){removed}}`, map[string]any{"id": spam}, &restored)
		if restored.RestorePost.Removed {
			t.Fatal("restorePost: still removed")
		}
		if got, n := titles(dan); len(got) != 3 || n != 3 {
			t.Fatalf("after the restore dan sees %v (%d posts)", got, n)
		}
		var lifted struct{ UnbanUser struct{ ID, Until string } }
		ok(root, `mutation($u:ID!){unbanUser(userId:$u,group:"meta"){id until}}`, map[string]any{"u": benID}, &lifted)
		if lifted.UnbanUser.ID != "ban:g:meta:ben" || lifted.UnbanUser.Until == "" {
			t.Fatalf("unbanUser: %+v, want the ended ban", lifted.UnbanUser)
		}
		a.createPost(ben, "Back", "meta")

		// mia steps cat down; the log shows every action once, newest first.
		ok(mia, `mutation($u:ID!){removeModerator(group:"meta",userId:$u){name}}`, map[string]any{"u": catID}, &none)
		refused(cat, `mutation($id:ID!){lockPost(id:$id,locked:false){locked}}`, map[string]any{"id": keep}, "FORBIDDEN")
		var log struct {
			ModLog struct {
				Nodes []struct {
					Action    string
					Moderator struct{ Name string }
					Reason    *string
				}
			}
		}
		ok(dan, `{modLog(group:"meta",first:50){nodes{action moderator{name} reason}}}`, nil, &log)
		var got []string
		for _, n := range log.ModLog.Nodes {
			got = append(got, n.Action+" by "+n.Moderator.Name)
		}
		want := []string{"REMOVE_MODERATOR by mia", "UNBAN_USER by root", "RESTORE_POST by root", "PIN_POST by mia",
			"LOCK_POST by mia", "BAN_USER by mia", "RESOLVE_REPORT by cat", "REMOVE_POST by cat", "ADD_MODERATOR by mia"}
		if !slices.Equal(got, want) {
			t.Fatalf("mod log\n got %v\nwant %v", got, want)
		}
		_ = miaID
	})
}
