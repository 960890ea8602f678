package httpapi_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestAPIGroupDirectory pages Query.groups both ways over HTTP, edits a group's page with
// updateGroup (an argument left out stays, null clears), refuses posts into a restricted group,
// counts active users, and reads a user's comments and counts.
func TestAPIGroupDirectory(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		// A driven clock: groups made in one millisecond would tie in NEW and ACTIVE.
		clk := storetest.NewClock()
		a := newAPI(t, b, store.Options{WriteLimit: -1, Now: clk.Now})
		ann, _ := a.signUp("ann")
		ben, _ := a.signUp("ben")
		for _, g := range []string{"a1", "a2", "a3"} {
			clk.Add(time.Second)
			a.do(ann, `mutation($n:String!){createGroup(name:$n){id}}`, map[string]any{"n": g}).decode(t, &struct{}{})
		}
		for _, g := range []string{"a2", "a3"} {
			a.do(ben, `mutation($n:String!){joinGroup(name:$n){id}}`, map[string]any{"n": g}).decode(t, &struct{}{})
		}
		a.do(ann, `mutation{joinGroup(name:"a3"){id}}`, nil).decode(t, &struct{}{})

		type page struct {
			Groups struct {
				Nodes    []struct{ Name string }
				PageInfo struct {
					HasNextPage, HasPreviousPage bool
					StartCursor, EndCursor       string
				}
				TotalCount int
			}
		}
		read := func(sort string, backward bool) []string {
			t.Helper()
			var out []string
			cursor := ""
			for range 10 {
				q := `query($s:GroupSort,$c:String){groups(sort:$s,first:2,after:$c){nodes{name} pageInfo{hasNextPage hasPreviousPage startCursor endCursor} totalCount}}`
				if backward {
					q = `query($s:GroupSort,$c:String){groups(sort:$s,last:2,before:$c){nodes{name} pageInfo{hasNextPage hasPreviousPage startCursor endCursor} totalCount}}`
				}
				vars := map[string]any{"s": sort}
				if cursor != "" {
					vars["c"] = cursor
				}
				var p page
				a.do("", q, vars).decode(t, &p)
				if p.Groups.TotalCount != 3 {
					t.Fatalf("totalCount %d", p.Groups.TotalCount)
				}
				var names []string
				for _, n := range p.Groups.Nodes {
					names = append(names, n.Name)
				}
				if backward {
					out = append(names, out...)
					if !p.Groups.PageInfo.HasPreviousPage {
						return out
					}
					cursor = p.Groups.PageInfo.StartCursor
				} else {
					out = append(out, names...)
					if !p.Groups.PageInfo.HasNextPage {
						return out
					}
					cursor = p.Groups.PageInfo.EndCursor
				}
			}
			t.Fatal("too many pages")
			return nil
		}
		for sort, want := range map[string][]string{
			"POPULAR": {"a3", "a2", "a1"}, "NEW": {"a3", "a2", "a1"}, "NAME": {"a1", "a2", "a3"}, "ACTIVE": {"a3", "a2", "a1"},
		} {
			for _, backward := range []bool{false, true} {
				if got := read(sort, backward); !slices.Equal(got, want) {
					t.Errorf("groups(sort:%s) backward %v = %v, want %v", sort, backward, got, want)
				}
			}
		}

		// The page of a group.
		type pageView struct {
			Description, Title, IconURL, BannerURL, Rules *string
			PostingRestricted                             bool
		}
		var u struct{ UpdateGroup pageView }
		fields := `{description title iconUrl bannerUrl rules postingRestricted}`
		a.do(ann, `mutation{updateGroup(name:"a1",description:"d",title:"A one",iconUrl:"https://x.test/i.png",bannerUrl:"https://x.test/b.png",rules:"be kind",postingRestricted:true)`+fields+`}`, nil).decode(t, &u)
		if v := u.UpdateGroup; v.Title == nil || *v.Title != "A one" || v.IconURL == nil || v.Rules == nil || v.Description == nil || !v.PostingRestricted {
			t.Fatalf("updateGroup: %+v", v)
		}
		// Left out: unchanged; null: cleared, by a literal or a variable.
		a.do(ann, `mutation($b:String){updateGroup(name:"a1",title:null,bannerUrl:$b)`+fields+`}`, map[string]any{"b": nil}).decode(t, &u)
		if v := u.UpdateGroup; v.Title != nil || v.BannerURL != nil || v.IconURL == nil || v.Description == nil || v.Rules == nil || !v.PostingRestricted {
			t.Fatalf("updateGroup with nulls: %+v", v)
		}
		if r := a.do(ann, `mutation{updateGroup(name:"a1",iconUrl:"http://x.test/i.png"){name}}`, nil); r.code() != "BAD_USER_INPUT" {
			t.Errorf("an http icon: %+v, want BAD_USER_INPUT", r.Errors)
		}
		if r := a.do(ben, `mutation{createPost(input:{title:"hi",groups:["a1"]}){id}}`, nil); r.code() != "FORBIDDEN" {
			t.Errorf("a member posts into a restricted group: %+v, want FORBIDDEN", r.Errors)
		}

		// Activity and a person's history.
		pid := a.createPost(ann, "news", "a2")
		a.do(ben, `mutation($p:ID!){createComment(postId:$p,body:"first"){id}}`, map[string]any{"p": pid}).decode(t, &struct{}{})
		a.do(ben, `mutation($p:ID!){createComment(postId:$p,body:"second"){id}}`, map[string]any{"p": pid}).decode(t, &struct{}{})
		var g struct {
			Group struct{ ActiveUsers, Week int }
			User  struct {
				PostCount, CommentCount int
				Comments                struct {
					Nodes      []struct{ Body string }
					TotalCount int
				}
			}
		}
		a.do("", `{group(name:"a2"){activeUsers week:activeUsers(window:WEEK)} user(name:"ben"){postCount commentCount comments(first:5){nodes{body} totalCount}}}`, nil).decode(t, &g)
		if g.Group.ActiveUsers != 2 || g.Group.Week != 2 {
			t.Errorf("activeUsers = %+v, want 2", g.Group)
		}
		if u := g.User; u.PostCount != 0 || u.CommentCount != 2 || u.Comments.TotalCount != 2 || len(u.Comments.Nodes) != 2 || u.Comments.Nodes[0].Body != "second" {
			t.Errorf("ben's history = %+v", u)
		}
		var p struct{ User struct{ PostCount int } }
		a.do("", `{user(name:"ann"){postCount}}`, nil).decode(t, &p)
		if p.User.PostCount != 1 {
			t.Errorf("ann's postCount = %d, want 1", p.User.PostCount)
		}
	})
}

// TestActiveUsersReadWithTheirGroups lists groups with their active users in two windows and
// counts Redis round trips: the counts are read with the groups' other reads, so 20 groups take
// as many round trips as 2, and each count is the right one.
func TestActiveUsersReadWithTheirGroups(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		counted, rt := b.Counted(t)
		a := newAPI(t, counted, store.Options{WriteLimit: -1})
		users := make([]string, 3)
		for i := range users {
			users[i], _ = a.signUp(fmt.Sprintf("user%d", i))
		}
		query := `query($n:Int!){groups(sort:NEW,first:$n){nodes{name activeUsers hour:activeUsers(window:HOUR) memberCount}}}`
		trips := map[int]int64{}
		made := 0
		for _, size := range []int{2, 20} {
			for ; made < size; made++ {
				g := fmt.Sprintf("grp%d", made)
				a.do(users[0], `mutation($n:String!){createGroup(name:$n){id}}`, map[string]any{"n": g}).decode(t, &struct{}{})
				// Group i has i%3+1 active users: each posts into it.
				for u := 0; u <= made%3; u++ {
					a.createPost(users[u], "hello", g)
				}
			}
			vars := map[string]any{"n": size}
			a.do("", query, vars) // warm the connection pool
			rt.Reset()
			var p struct {
				Groups struct {
					Nodes []struct {
						Name              string
						ActiveUsers, Hour int
					}
				}
			}
			a.do("", query, vars).decode(t, &p)
			trips[size] = rt.Count()
			if len(p.Groups.Nodes) != size {
				t.Fatalf("groups(first:%d): %d groups", size, len(p.Groups.Nodes))
			}
			for _, g := range p.Groups.Nodes {
				var i int
				fmt.Sscanf(g.Name, "grp%d", &i)
				if want := i%3 + 1; g.ActiveUsers != want || g.Hour != want {
					t.Errorf("%s: activeUsers %d, hour %d; want %d", g.Name, g.ActiveUsers, g.Hour, want)
				}
			}
		}
		t.Logf("round trips: %v", trips)
		if trips[20] > trips[2] {
			t.Fatalf("round trips grew with the groups listed: %v", trips)
		}
	})
}
