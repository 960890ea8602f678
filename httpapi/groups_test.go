package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"net/http/httptest"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// groupView is what the group tests read of a group.
type groupView struct {
	ID                string
	Name              string
	Description       *string
	CreatedAt         time.Time
	PostCount         int
	MemberCount       int
	ViewerIsMember    bool
	ViewerIsModerator bool
	Moderators        []struct{ Name string }
}

const groupFields = `id name description createdAt postCount memberCount viewerIsMember viewerIsModerator moderators { name }`

func (g groupView) mods() []string {
	var out []string
	for _, m := range g.Moderators {
		out = append(out, m.Name)
	}
	return out
}

// group reads a group as the holder of token; nil when it does not exist.
func (a *api) group(token, name string) *groupView {
	a.t.Helper()
	var d struct{ Group *groupView }
	a.do(token, `query($n:String!){group(name:$n){`+groupFields+`}}`, map[string]any{"n": name}).decode(a.t, &d)
	return d.Group
}

// modLog reads the actions of a group's moderation log, oldest first, as "ACTION target by".
func (a *api) modLog(group string) []string {
	a.t.Helper()
	var d struct {
		ModLog struct {
			Nodes []struct {
				Action    string
				TargetID  string
				Moderator struct{ Name string }
			}
		}
	}
	a.do("", `query($g:String){modLog(group:$g,first:100){nodes{action targetId moderator{name}}}}`,
		map[string]any{"g": group}).decode(a.t, &d)
	var out []string
	for _, n := range d.ModLog.Nodes {
		out = append(out, n.Action+" "+n.TargetID+" by "+n.Moderator.Name)
	}
	slices.Reverse(out)
	return out
}

func TestAPIGroupModeration(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		ann, annID := a.signUp("ann")
		ben, benID := a.signUp("ben")
		cat, catID := a.signUp("cat")
		root, _ := a.signUp("root")
		a.grantAdmin("root")

		create := `mutation($n:String!,$d:String){createGroup(name:$n,description:$d){` + groupFields + `}}`
		var c struct{ CreateGroup groupView }
		for range 2 { // a repeat of one's own creation returns the group
			a.do(ann, create, map[string]any{"n": "GoLang", "d": "All about Go"}).decode(t, &c)
			g := c.CreateGroup
			if g.ID != "group:golang" || g.Name != "golang" || g.Description == nil || *g.Description != "All about Go" ||
				!g.ViewerIsModerator || g.PostCount != 0 || g.MemberCount != 0 || !slices.Equal(g.mods(), []string{"ann"}) ||
				time.Since(g.CreatedAt) > time.Minute {
				t.Fatalf("createGroup: %+v", g)
			}
		}
		a.do(ben, create, map[string]any{"n": "rust"}).decode(t, &c)
		if c.CreateGroup.Description != nil {
			t.Fatalf("a group made without a description has one: %+v", c.CreateGroup)
		}
		a.createPost(cat, "a post makes a group", "python")

		for _, tc := range []struct {
			name, token, group, code string
			desc                     any
		}{
			{"taken by another", ben, "golang", "CONFLICT", nil},
			{"taken ignoring case", ben, "GOLANG", "CONFLICT", nil},
			{"made by a post", ann, "python", "CONFLICT", nil},
			{"bad name", ann, "no spaces", "BAD_USER_INPUT", nil},
			{"long description", ann, "long", "BAD_USER_INPUT", strings.Repeat("é", store.MaxGroupDescription+1)},
			{"anonymous", "", "anon", "UNAUTHENTICATED", nil},
		} {
			if r := a.do(tc.token, create, map[string]any{"n": tc.group, "d": tc.desc}); r.code() != tc.code {
				t.Errorf("createGroup %s: %+v, want %s", tc.name, r.Errors, tc.code)
			}
		}
		// A description of exactly the longest length is fine.
		a.do(ann, create, map[string]any{"n": "long", "d": strings.Repeat("é", store.MaxGroupDescription)}).decode(t, &c)

		// The new groups are found by name, by id and by prefix, without posts.
		var s struct {
			SuggestGroups []struct {
				Name        string
				Description *string
			}
			Node *struct{ Name string }
		}
		a.do("", `{suggestGroups(prefix:"go"){name description} node(id:"group:golang"){... on Group{name}}}`, nil).decode(t, &s)
		if len(s.SuggestGroups) != 1 || s.SuggestGroups[0].Name != "golang" || s.Node == nil || s.Node.Name != "golang" {
			t.Fatalf("suggest and node: %+v", s)
		}

		update := `mutation($n:String!,$d:String){updateGroup(name:$n,description:$d){description}}`
		addMod := `mutation($g:String!,$u:ID!){addModerator(group:$g,userId:$u){moderators{name} viewerIsModerator}}`
		remMod := `mutation($g:String!,$u:ID!){removeModerator(group:$g,userId:$u){moderators{name} viewerIsModerator}}`
		for _, tc := range []struct {
			name, token, query string
			vars               map[string]any
			code               string
		}{
			{"a moderator of another group updates", ben, update, map[string]any{"n": "golang", "d": "mine"}, "FORBIDDEN"},
			{"a moderator of another group adds", ben, addMod, map[string]any{"g": "golang", "u": benID}, "FORBIDDEN"},
			{"a moderator of another group removes", ben, remMod, map[string]any{"g": "golang", "u": annID}, "FORBIDDEN"},
			{"a user moderates a group made by a post", cat, update, map[string]any{"n": "python", "d": "x"}, "FORBIDDEN"},
			{"unknown group", ann, update, map[string]any{"n": "nothere", "d": "x"}, "NOT_FOUND"},
			{"unknown user", ann, addMod, map[string]any{"g": "golang", "u": "user:nobody"}, "NOT_FOUND"},
			{"not a user id", ann, addMod, map[string]any{"g": "golang", "u": "post:1"}, "BAD_USER_INPUT"},
			{"anonymous", "", update, map[string]any{"n": "golang", "d": "x"}, "UNAUTHENTICATED"},
		} {
			if r := a.do(tc.token, tc.query, tc.vars); r.code() != tc.code {
				t.Errorf("%s: %+v, want %s", tc.name, r.Errors, tc.code)
			}
		}

		var u struct{ UpdateGroup struct{ Description *string } }
		for range 2 { // idempotent: logged once
			a.do(ann, update, map[string]any{"n": "golang", "d": "Go, the language"}).decode(t, &u)
			if u.UpdateGroup.Description == nil || *u.UpdateGroup.Description != "Go, the language" {
				t.Fatalf("updateGroup: %+v", u.UpdateGroup)
			}
		}
		var m struct {
			AddModerator, RemoveModerator struct {
				Moderators        []struct{ Name string }
				ViewerIsModerator bool
			}
		}
		for range 2 {
			a.do(ann, addMod, map[string]any{"g": "golang", "u": benID}).decode(t, &m)
		}
		if len(m.AddModerator.Moderators) != 2 || m.AddModerator.Moderators[1].Name != "ben" {
			t.Fatalf("addModerator: %+v", m.AddModerator)
		}
		// Ben moderates golang now; he steps down, twice.
		a.do(ben, update, map[string]any{"n": "golang", "d": nil}).decode(t, &u)
		if u.UpdateGroup.Description != nil {
			t.Fatalf("a null description is not cleared: %+v", u.UpdateGroup)
		}
		for range 2 {
			a.do(ben, remMod, map[string]any{"g": "golang", "u": benID}).decode(t, &m)
		}
		if m.RemoveModerator.ViewerIsModerator || len(m.RemoveModerator.Moderators) != 1 {
			t.Fatalf("step down: %+v", m.RemoveModerator)
		}
		if r := a.do(ben, update, map[string]any{"n": "golang", "d": "back"}); r.code() != "FORBIDDEN" {
			t.Fatalf("a moderator who stepped down still updates: %+v", r.Errors)
		}

		// An admin acts anywhere: in a group with moderators and in one made by a post.
		a.do(root, addMod, map[string]any{"g": "rust", "u": catID}).decode(t, &m)
		a.do(root, addMod, map[string]any{"g": "python", "u": catID}).decode(t, &m)
		if !m.AddModerator.ViewerIsModerator || len(m.AddModerator.Moderators) != 1 {
			t.Fatalf("admin adds to python: %+v", m.AddModerator)
		}
		a.do(cat, update, map[string]any{"n": "python", "d": "snakes"}).decode(t, &u)

		wantLog := []string{
			"UPDATE_GROUP group:golang by ann",
			"ADD_MODERATOR " + benID + " by ann",
			"UPDATE_GROUP group:golang by ben",
			"REMOVE_MODERATOR " + benID + " by ben",
		}
		if got := a.modLog("golang"); !slices.Equal(got, wantLog) {
			t.Errorf("golang's mod log:\n%q\nwant\n%q", got, wantLog)
		}
		if got := a.modLog("python"); !slices.Equal(got, []string{"ADD_MODERATOR " + catID + " by root", "UPDATE_GROUP group:python by cat"}) {
			t.Errorf("python's mod log: %q", got)
		}

		// Admins moderate every group; isAdmin says who they are.
		var v struct {
			Viewer struct{ IsAdmin bool }
			Group  struct{ ViewerIsModerator bool }
		}
		for _, tc := range []struct {
			token       string
			admin, mods bool
		}{{root, true, true}, {ann, false, false}, {cat, false, true}} {
			a.do(tc.token, `{viewer{isAdmin} group(name:"python"){viewerIsModerator}}`, nil).decode(t, &v)
			if v.Viewer.IsAdmin != tc.admin || v.Group.ViewerIsModerator != tc.mods {
				t.Errorf("viewer %v: %+v", tc, v)
			}
		}
		// The python group was made by cat's post: it is as old as the post.
		if g := a.group("", "python"); g == nil || g.CreatedAt.IsZero() || time.Since(g.CreatedAt) > time.Minute {
			t.Errorf("python: %+v", g)
		}
	})
}

func TestAPIGroupMembership(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		ann, _ := a.signUp("ann")
		ben, _ := a.signUp("ben")
		for _, g := range []string{"a1", "a2", "a3", "a4", "a5"} {
			a.do(ann, `mutation($n:String!){createGroup(name:$n){id}}`, map[string]any{"n": g}).decode(t, &struct{}{})
		}
		a.createPost(ann, "by post", "bypost")

		join := `mutation($n:String!){joinGroup(name:$n){name memberCount viewerIsMember}}`
		leave := `mutation($n:String!){leaveGroup(name:$n){name memberCount viewerIsMember}}`
		var j struct {
			JoinGroup, LeaveGroup struct {
				Name           string
				MemberCount    int
				ViewerIsMember bool
			}
		}
		for _, g := range []string{"a1", "A2", "a3", "a4", "a5", "bypost"} {
			for range 2 {
				a.do(ben, join, map[string]any{"n": g}).decode(t, &j)
			}
			if !j.JoinGroup.ViewerIsMember || j.JoinGroup.MemberCount != 1 {
				t.Fatalf("join %s: %+v", g, j.JoinGroup)
			}
		}
		a.do(ann, join, map[string]any{"n": "a1"}).decode(t, &j)
		if j.JoinGroup.MemberCount != 2 {
			t.Fatalf("ann joins a1: %+v", j.JoinGroup)
		}
		for range 2 {
			a.do(ben, leave, map[string]any{"n": "a3"}).decode(t, &j)
		}
		if j.LeaveGroup.ViewerIsMember || j.LeaveGroup.MemberCount != 0 {
			t.Fatalf("leave a3: %+v", j.LeaveGroup)
		}
		for _, tc := range []struct{ name, token, query, group, code string }{
			{"join unknown", ben, join, "nothere", "NOT_FOUND"},
			{"leave unknown", ben, leave, "nothere", "NOT_FOUND"},
			{"bad name", ben, join, "a b", "BAD_USER_INPUT"},
			{"anonymous", "", join, "a1", "UNAUTHENTICATED"},
		} {
			if r := a.do(tc.token, tc.query, map[string]any{"n": tc.group}); r.code() != tc.code {
				t.Errorf("%s: %+v, want %s", tc.name, r.Errors, tc.code)
			}
		}
		// Anonymous viewers are members of nothing.
		if g := a.group("", "a1"); g == nil || g.ViewerIsMember || g.MemberCount != 2 {
			t.Errorf("a1 anonymously: %+v", g)
		}

		// User.groups pages most recently joined first, both ways.
		want := []string{"bypost", "a5", "a4", "a2", "a1"}
		q := `query($f:Int,$a:String,$l:Int,$b:String){user(name:"ben"){groups(first:$f,after:$a,last:$l,before:$b){
			totalCount pageInfo{hasNextPage hasPreviousPage endCursor startCursor} edges{cursor node{name viewerIsMember memberCount}}}}}`
		type page struct {
			User struct {
				Groups struct {
					TotalCount int
					PageInfo   struct {
						HasNextPage, HasPreviousPage bool
						EndCursor, StartCursor       string
					}
					Edges []struct {
						Node struct {
							Name           string
							ViewerIsMember bool
						}
					}
				}
			}
		}
		var got []string
		after := ""
		for {
			var p page
			a.do(ben, q, map[string]any{"f": 2, "a": after}).decode(t, &p)
			gs := p.User.Groups
			if gs.TotalCount != 5 {
				t.Fatalf("totalCount: %+v", gs)
			}
			for _, e := range gs.Edges {
				if !e.Node.ViewerIsMember {
					t.Errorf("ben is not a member of %s", e.Node.Name)
				}
				got = append(got, e.Node.Name)
			}
			if !gs.PageInfo.HasNextPage {
				break
			}
			after = gs.PageInfo.EndCursor
		}
		if !slices.Equal(got, want) {
			t.Fatalf("ben's groups forwards: %v, want %v", got, want)
		}
		var p page
		a.do(ben, q, map[string]any{"l": 2}).decode(t, &p)
		if len(p.User.Groups.Edges) != 2 || p.User.Groups.Edges[0].Node.Name != "a2" || !p.User.Groups.PageInfo.HasPreviousPage {
			t.Fatalf("ben's last 2 groups: %+v", p.User.Groups)
		}
		// Seen by ann, ben's groups are not hers.
		a.do(ann, q, map[string]any{"f": 1}).decode(t, &p)
		if p.User.Groups.Edges[0].Node.ViewerIsMember {
			t.Errorf("ann is a member of bypost: %+v", p.User.Groups)
		}

		// A group made by a post ends with it, its memberships too: there is nothing left to leave.
		var d struct{ CreatePost struct{ ID string } }
		a.do(ann, `mutation{createPost(input:{title:"only",groups:["fleeting"]}){id}}`, nil).decode(t, &d)
		a.do(ben, join, map[string]any{"n": "fleeting"}).decode(t, &j)
		a.do(ann, `mutation($id:ID!){deletePost(id:$id)}`, map[string]any{"id": d.CreatePost.ID}).decode(t, &struct{}{})
		if g := a.group("", "fleeting"); g != nil {
			t.Fatalf("a group made by a post outlives it: %+v", g)
		}
		if r := a.do(ben, leave, map[string]any{"n": "fleeting"}); r.code() != "NOT_FOUND" {
			t.Fatalf("leave a gone group: %+v", r.Errors)
		}
	})
}

// feedPage is one page of groupFeed.
type feedPage struct {
	GroupFeed struct {
		TotalCount int
		PageInfo   struct {
			HasNextPage, HasPreviousPage bool
			StartCursor, EndCursor       string
		}
		Edges []struct {
			Node struct {
				Title  string
				Groups []struct{ Name string }
			}
		}
	}
}

func (p feedPage) titles() []string {
	var out []string
	for _, e := range p.GroupFeed.Edges {
		out = append(out, e.Node.Title)
	}
	return out
}

const groupFeedQuery = `query($s:PostSort,$f:Int,$a:String,$l:Int,$b:String){groupFeed(sort:$s,first:$f,after:$a,last:$l,before:$b){
	totalCount pageInfo{hasNextPage hasPreviousPage startCursor endCursor} edges{node{title groups{name}}}}}`

func TestAPIGroupFeed(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		reader, _ := a.signUp("reader")
		ann, _ := a.signUp("ann")
		ben, _ := a.signUp("ben")
		feed := func(vars map[string]any) feedPage {
			t.Helper()
			var p feedPage
			a.do(reader, groupFeedQuery, vars).decode(t, &p)
			return p
		}
		if r := a.do("", groupFeedQuery, nil); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("anonymous groupFeed: %+v", r.Errors)
		}
		if p := feed(nil); len(p.GroupFeed.Edges) != 0 || p.GroupFeed.TotalCount != 0 || p.GroupFeed.PageInfo.HasNextPage {
			t.Fatalf("feed of no groups: %+v", p)
		}

		// p0..p9 alternate between go and rust; p4 is in both; p5 is in a group the reader did
		// not join; p3 is in no group.
		ids := map[string]string{}
		for i := range 10 {
			title := fmt.Sprintf("p%d", i)
			var groups []string
			switch {
			case i == 4:
				groups = []string{"go", "rust"}
			case i == 5:
				groups = []string{"other"}
			case i == 3:
			case i%2 == 0:
				groups = []string{"go"}
			default:
				groups = []string{"rust"}
			}
			tok := ann
			if i%3 == 0 {
				tok = ben
			}
			ids[title] = a.createPost(tok, title, groups...)
			time.Sleep(2 * time.Millisecond) // distinct publish times: NEW order is known
		}
		for _, g := range []string{"go", "rust"} {
			a.do(reader, `mutation($n:String!){joinGroup(name:$n){id}}`, map[string]any{"n": g}).decode(t, &struct{}{})
		}
		// Votes make the TOP order: p1 +2, p8 +1, p4 -1 (and ties broken by id).
		vote := func(tok, title, dir string) {
			a.do(tok, `mutation($id:ID!,$d:VoteDirection!){votePost(postId:$id,direction:$d){id}}`,
				map[string]any{"id": ids[title], "d": dir}).decode(t, &struct{}{})
		}
		vote(reader, "p1", "UP")
		vote(ben, "p1", "UP")
		vote(reader, "p8", "UP")
		vote(reader, "p4", "DOWN")
		vote(ben, "p4", "DOWN")

		newest := []string{"p9", "p8", "p7", "p6", "p4", "p2", "p1", "p0"}
		if got := feed(map[string]any{"s": "NEW", "f": 20}).titles(); !slices.Equal(got, newest) {
			t.Fatalf("NEW: %v, want %v", got, newest)
		}
		// totalCount counts p4 once per group that holds it.
		if p := feed(map[string]any{"s": "NEW"}); p.GroupFeed.TotalCount != 9 {
			t.Errorf("totalCount: %d", p.GroupFeed.TotalCount)
		}

		// Every order matches the group rankings' order, as posts(group:) lists them.
		for _, sort := range []string{"HOT", "NEW", "TOP"} {
			var site struct {
				Posts struct{ Nodes []struct{ Title string } }
			}
			a.do(reader, `query($s:PostSort){posts(sort:$s,first:20){nodes{title}}}`, map[string]any{"s": sort}).decode(t, &site)
			var want []string
			for _, n := range site.Posts.Nodes {
				if slices.Contains(newest, n.Title) {
					want = append(want, n.Title)
				}
			}
			got := feed(map[string]any{"s": sort, "f": 20}).titles()
			if !slices.Equal(got, want) {
				t.Fatalf("%s: %v, want the site ranking's order %v", sort, got, want)
			}
			// Paging by 3 from either end gives the same list.
			var fwd []string
			after := ""
			for {
				p := feed(map[string]any{"s": sort, "f": 3, "a": after})
				fwd = append(fwd, p.titles()...)
				if !p.GroupFeed.PageInfo.HasNextPage {
					break
				}
				after = p.GroupFeed.PageInfo.EndCursor
			}
			var bwd []string
			before := ""
			for {
				p := feed(map[string]any{"s": sort, "l": 3, "b": before})
				bwd = append(p.titles(), bwd...)
				if !p.GroupFeed.PageInfo.HasPreviousPage {
					break
				}
				before = p.GroupFeed.PageInfo.StartCursor
			}
			if !slices.Equal(fwd, got) || !slices.Equal(bwd, got) {
				t.Fatalf("%s: paged forwards %v, backwards %v, want %v", sort, fwd, bwd, got)
			}
		}
		top := feed(map[string]any{"s": "TOP", "f": 20}).titles()
		if top[0] != "p1" || top[1] != "p8" || top[len(top)-1] != "p4" {
			t.Fatalf("TOP: %v", top)
		}

		// Paging NEW while posts arrive and leave: the cursor is a position, so the pages neither
		// repeat nor skip what was there, a post deleted before its page is not on it, and the
		// new post shows only on a fresh first page.
		p := feed(map[string]any{"s": "NEW", "f": 3})
		seen := p.titles()
		a.createPost(ann, "fresh", "go")
		for p.GroupFeed.PageInfo.HasNextPage {
			p = feed(map[string]any{"s": "NEW", "f": 3, "a": p.GroupFeed.PageInfo.EndCursor})
			seen = append(seen, p.titles()...)
			if len(seen) == 6 { // a post in the middle leaves
				a.do(ann, `mutation($id:ID!){deletePost(id:$id)}`, map[string]any{"id": ids["p1"]}).decode(t, &struct{}{})
			}
		}
		if want := slices.DeleteFunc(slices.Clone(newest), func(s string) bool { return s == "p1" }); !slices.Equal(seen, want) {
			t.Fatalf("NEW across pages while posts come and go: %v, want %v", seen, want)
		}
		if got := feed(map[string]any{"s": "NEW", "f": 1}).titles(); !slices.Equal(got, []string{"fresh"}) {
			t.Fatalf("fresh first page: %v", got)
		}

		// Leaving a group takes its posts out.
		a.do(reader, `mutation{leaveGroup(name:"rust"){id}}`, nil).decode(t, &struct{}{})
		if got := feed(map[string]any{"s": "NEW"}).titles(); !slices.Equal(got, []string{"fresh", "p8", "p6", "p4", "p2", "p0"}) {
			t.Fatalf("after leaving rust: %v", got)
		}
		// A cursor of one order is refused in another.
		end := feed(map[string]any{"s": "NEW", "f": 1}).GroupFeed.PageInfo.EndCursor
		if r := a.do(reader, groupFeedQuery, map[string]any{"s": "TOP", "a": end}); r.code() != "BAD_USER_INPUT" {
			t.Fatalf("a NEW cursor on TOP: %+v", r.Errors)
		}
	})
}

// TestAPIGroupFeedCap checks that the feed merges the MaxGroupFeedGroups groups joined most
// recently.
func TestAPIGroupFeedCap(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		reader, _ := a.signUp("reader")
		ann, _ := a.signUp("ann")
		n := store.MaxGroupFeedGroups + 1
		for i := range n {
			g := fmt.Sprintf("g%03d", i)
			a.createPost(ann, g, g)
			a.do(reader, `mutation($n:String!){joinGroup(name:$n){id}}`, map[string]any{"n": g}).decode(t, &struct{}{})
			time.Sleep(time.Millisecond) // distinct join times
		}
		var got []string
		after := ""
		for {
			var p feedPage
			a.do(reader, groupFeedQuery, map[string]any{"s": "NEW", "f": 100, "a": after}).decode(t, &p)
			got = append(got, p.titles()...)
			if !p.GroupFeed.PageInfo.HasNextPage {
				break
			}
			after = p.GroupFeed.PageInfo.EndCursor
		}
		if len(got) != store.MaxGroupFeedGroups || slices.Contains(got, "g000") || got[0] != fmt.Sprintf("g%03d", n-1) {
			t.Fatalf("the feed of %d groups holds %d posts: first %v, g000 in it: %v", n, len(got), got[:3], slices.Contains(got, "g000"))
		}
	})
}

// TestGroupFeedRoundTripsDoNotGrow reads the group feed with its posts' authors and groups and
// counts Redis round trips: the same for 5 posts of 2 groups as for 40 posts of 30 groups. It
// counts round trips, not CPU, so its server's -max-complexity is raised: 40 posts, with every
// group's moderators at their bound, are estimated at 24,261 with a field at 1, and charged
// 113,705 as gqlgen executes the feed (httpapi.GqlgenFieldCost).
func TestGroupFeedRoundTripsDoNotGrow(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		counted, rt := b.Counted(t)
		st := counted.NewStore(t, store.Options{WriteLimit: -1})
		hub := newHub(t, st)
		h := httpapi.New(httpapi.Config{Store: st, Hub: hub, ResponseCacheMiB: -1, // every read is counted
			Limits: httpapi.Limits{MaxComplexity: 125000}})
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		a := &api{t: t, srv: srv, h: h, store: st, hub: hub}
		reader, _ := a.signUp("reader")
		ann, _ := a.signUp("ann")
		query := `query($n:Int!){groupFeed(sort:TOP,first:$n){totalCount edges{cursor node{title viewerVote author{name}
			groups{name postCount memberCount viewerIsMember moderators{name}}}}}}`
		trips := map[int]int64{}
		joined := 0
		for _, size := range []struct{ groups, posts int }{{2, 5}, {30, 40}} {
			for ; joined < size.groups; joined++ {
				g := fmt.Sprintf("g%d", joined)
				a.do(ann, `mutation($n:String!){createGroup(name:$n){id}}`, map[string]any{"n": g}).decode(t, &struct{}{})
				a.do(reader, `mutation($n:String!){joinGroup(name:$n){id}}`, map[string]any{"n": g}).decode(t, &struct{}{})
			}
			for i := 0; i < size.posts; i++ {
				a.createPost(ann, fmt.Sprint("post ", i), fmt.Sprintf("g%d", i%size.groups), fmt.Sprintf("g%d", (i+1)%size.groups))
			}
			vars := map[string]any{"n": size.posts}
			a.do(reader, query, vars) // warm the connection pool
			rt.Reset()
			var p feedPage
			a.do(reader, query, vars).decode(t, &p)
			trips[size.posts] = rt.Count()
			if len(p.GroupFeed.Edges) != size.posts {
				t.Fatalf("groupFeed of %d: %d posts", size.posts, len(p.GroupFeed.Edges))
			}
		}
		t.Logf("groupFeed round trips: %v", trips)
		if trips[40] > trips[5] {
			t.Fatalf("groupFeed round trips grew with the sizes: %v", trips)
		}
	})
}
