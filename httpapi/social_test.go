package httpapi_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// nameEdges is a connection of named nodes (users).
type nameEdges struct {
	Edges []struct {
		Cursor string
		Node   struct{ Name string }
	}
	TotalCount int
	PageInfo   struct {
		HasNextPage bool
		EndCursor   string
	}
}

func (c nameEdges) names() []string {
	var out []string
	for _, e := range c.Edges {
		out = append(out, e.Node.Name)
	}
	return out
}

func TestAPIFollow(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		annTok, annID := a.signUp("Ann")
		benTok, benID := a.signUp("ben")
		_, catID := a.signUp("cat")

		follow := `mutation($id:ID!){follow(userId:$id){id name followerCount viewerFollows followsViewer}}`
		var d struct {
			Follow struct {
				ID            string
				Name          string
				FollowerCount int
				ViewerFollows bool
				FollowsViewer bool
			}
		}
		for range 2 { // idempotent
			a.do(annTok, follow, map[string]any{"id": benID}).decode(t, &d)
			if d.Follow.ID != benID || d.Follow.Name != "ben" || d.Follow.FollowerCount != 1 || !d.Follow.ViewerFollows || d.Follow.FollowsViewer {
				t.Fatalf("follow ben: %+v", d.Follow)
			}
		}
		a.do(annTok, follow, map[string]any{"id": catID}).decode(t, &d)
		a.do(benTok, follow, map[string]any{"id": annID}).decode(t, &d)

		errCases := []struct {
			name, token, id, code string
		}{
			{"yourself", annTok, annID, "BAD_USER_INPUT"},
			{"unknown user", annTok, "user:nobody", "NOT_FOUND"},
			{"malformed id", annTok, "post:1", "BAD_USER_INPUT"},
			{"anonymous", "", benID, "UNAUTHENTICATED"},
		}
		for _, tc := range errCases {
			for _, m := range []string{"follow", "unfollow"} {
				q := fmt.Sprintf(`mutation($id:ID!){%s(userId:$id){id}}`, m)
				if r := a.do(tc.token, q, map[string]any{"id": tc.id}); r.code() != tc.code {
					t.Errorf("%s %s: %+v, want %s", m, tc.name, r.Errors, tc.code)
				}
			}
		}

		q := `query($n:String!){user(name:$n){followerCount followingCount viewerFollows followsViewer
			followers{totalCount edges{cursor node{name}}} following(first:1){totalCount pageInfo{hasNextPage endCursor} edges{node{name}}}}}`
		var u struct {
			User struct {
				FollowerCount, FollowingCount int
				ViewerFollows, FollowsViewer  bool
				Followers, Following          nameEdges
			}
		}
		a.do(benTok, q, map[string]any{"n": "ANN"}).decode(t, &u)
		if u.User.FollowerCount != 1 || u.User.FollowingCount != 2 || !u.User.ViewerFollows || !u.User.FollowsViewer {
			t.Errorf("ann seen by ben: %+v", u.User)
		}
		if got := u.User.Followers.names(); !slices.Equal(got, []string{"ben"}) {
			t.Errorf("ann's followers %v", got)
		}
		if got := u.User.Following.names(); !slices.Equal(got, []string{"cat"}) || !u.User.Following.PageInfo.HasNextPage || u.User.Following.TotalCount != 2 {
			t.Errorf("ann's first followee %v %+v, want [cat] with more", got, u.User.Following.PageInfo)
		}
		a.do("", q, map[string]any{"n": "ann"}).decode(t, &u)
		if u.User.ViewerFollows || u.User.FollowsViewer {
			t.Errorf("anonymous viewer: %+v", u.User)
		}

		var un struct{ Unfollow struct{ FollowerCount int } }
		for range 2 {
			a.do(annTok, `mutation($id:ID!){unfollow(userId:$id){followerCount}}`, map[string]any{"id": benID}).decode(t, &un)
			if un.Unfollow.FollowerCount != 0 {
				t.Errorf("ben's followers after unfollow: %d", un.Unfollow.FollowerCount)
			}
		}
	})
}

// TestAPIFollowStorm sends concurrent follows and unfollows through the API and checks afterwards
// that every user's followers and following lists agree with each other and with the counts.
func TestAPIFollowStorm(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{Feed: store.FeedOptions{FanoutLimit: 1}})
		names := []string{"usr0", "usr1", "usr2", "usr3"}
		tokens, ids := make([]string, len(names)), make([]string, len(names))
		for i, n := range names {
			tokens[i], ids[i] = a.signUp(n)
		}
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), 11))
				for range 30 {
					x, y := r.IntN(len(names)), r.IntN(len(names))
					if x == y {
						continue
					}
					m := []string{"follow", "unfollow"}[r.IntN(2)]
					res := a.do(tokens[x], fmt.Sprintf(`mutation($id:ID!){%s(userId:$id){id}}`, m), map[string]any{"id": ids[y]})
					if len(res.Errors) > 0 {
						t.Errorf("%s: %+v", m, res.Errors)
						return
					}
				}
			}()
		}
		wg.Wait()

		following := map[string][]string{}
		followers := map[string][]string{}
		for _, n := range names {
			var d struct {
				User struct {
					FollowerCount, FollowingCount int
					Followers, Following          nameEdges
				}
			}
			a.do("", `query($n:String!){user(name:$n){followerCount followingCount
				followers(first:100){totalCount edges{node{name}}} following(first:100){totalCount edges{node{name}}}}}`,
				map[string]any{"n": n}).decode(t, &d)
			u := d.User
			if u.FollowerCount != len(u.Followers.Edges) || u.FollowerCount != u.Followers.TotalCount ||
				u.FollowingCount != len(u.Following.Edges) || u.FollowingCount != u.Following.TotalCount {
				t.Errorf("%s: counts disagree with lists: %+v", n, u)
			}
			following[n], followers[n] = u.Following.names(), u.Followers.names()
		}
		for _, x := range names {
			for _, y := range names {
				if slices.Contains(following[x], y) != slices.Contains(followers[y], x) {
					t.Errorf("%s → %s: following lists %v, followers lists %v", x, y, following[x], followers[y])
				}
			}
		}
	})
}

// feedTitles reads the viewer's feed in pages of size and returns the titles.
func (a *api) feedTitles(token string, size int) []string {
	a.t.Helper()
	a.settle()
	var out []string
	after := any(nil)
	for range 50 {
		var d struct {
			Feed struct {
				Edges []struct {
					Node struct{ Title string }
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   string
				}
			}
		}
		a.do(token, `query($f:Int,$a:String){feed(first:$f,after:$a){edges{node{title}} pageInfo{hasNextPage endCursor}}}`,
			map[string]any{"f": size, "a": after}).decode(a.t, &d)
		for _, e := range d.Feed.Edges {
			out = append(out, e.Node.Title)
		}
		if !d.Feed.PageInfo.HasNextPage {
			return out
		}
		after = d.Feed.PageInfo.EndCursor
	}
	a.t.Fatal("feed does not end")
	return nil
}

func TestAPIFeed(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		// FanoutLimit 1: ben pushes to cat, and rita pulls ben's posts; amy pushes to rita.
		a := newAPI(t, b, store.Options{Feed: store.FeedOptions{FanoutLimit: 1}})
		rita, _ := a.signUp("rita")
		amy, amyID := a.signUp("amy")
		ben, benID := a.signUp("ben")
		cat, _ := a.signUp("cat")

		if r := a.do("", `{feed{totalCount}}`, nil); r.code() != "UNAUTHENTICATED" {
			t.Errorf("anonymous feed: %+v", r.Errors)
		}
		if r := a.do(rita, `{feed(first:0){totalCount}}`, nil); r.code() != "BAD_USER_INPUT" {
			t.Errorf("first 0: %+v", r.Errors)
		}
		if r := a.do(rita, `{feed(after:"nonsense"){totalCount}}`, nil); r.code() != "BAD_USER_INPUT" {
			t.Errorf("bad cursor: %+v", r.Errors)
		}

		a.createPost(amy, "a1")
		followQ := `mutation($id:ID!){follow(userId:$id){id}}`
		a.do(cat, followQ, map[string]any{"id": benID}).decode(t, &struct{}{})
		a.do(rita, followQ, map[string]any{"id": amyID}).decode(t, &struct{}{})
		a.do(rita, followQ, map[string]any{"id": benID}).decode(t, &struct{}{})
		b1 := a.createPost(ben, "b1")
		a.createPost(amy, "a2")
		a.createPost(ben, "b2")
		a.createPost(cat, "c1") // rita does not follow cat

		want := []string{"b2", "a2", "b1", "a1"}
		for _, size := range []int{1, 3, 20} {
			if got := a.feedTitles(rita, size); !slices.Equal(got, want) {
				t.Errorf("rita's feed in pages of %d: %v, want %v", size, got, want)
			}
		}
		var d struct{ Feed struct{ TotalCount int } }
		a.settle()
		a.do(rita, `{feed{totalCount}}`, nil).decode(t, &d)
		if d.Feed.TotalCount != 4 {
			t.Errorf("totalCount %d, want 4", d.Feed.TotalCount)
		}

		a.do(ben, `mutation($id:ID!){deletePost(id:$id)}`, map[string]any{"id": b1}).decode(t, &struct{}{})
		if got := a.feedTitles(rita, 20); !slices.Equal(got, []string{"b2", "a2", "a1"}) {
			t.Errorf("after deleting b1: %v", got)
		}
		if got := a.feedTitles(cat, 20); !slices.Equal(got, []string{"b2"}) {
			t.Errorf("cat's feed after deleting b1: %v", got)
		}
		a.do(rita, `mutation($id:ID!){unfollow(userId:$id){id}}`, map[string]any{"id": amyID}).decode(t, &struct{}{})
		if got := a.feedTitles(rita, 20); !slices.Equal(got, []string{"b2"}) {
			t.Errorf("after unfollowing amy: %v", got)
		}
		a.do(rita, `mutation($id:ID!){unfollow(userId:$id){id}}`, map[string]any{"id": benID}).decode(t, &struct{}{})
		if got := a.feedTitles(rita, 20); len(got) != 0 {
			t.Errorf("after unfollowing everyone: %v", got)
		}
	})
}

type leaderboardEdge struct {
	Cursor string
	Rank   int
	Karma  int
	Node   struct {
		Name  string
		Karma int
		Rank  *int
	}
}

func render(edges []leaderboardEdge) []string {
	var out []string
	for _, e := range edges {
		out = append(out, fmt.Sprintf("%s:%d:%d", e.Node.Name, e.Rank, e.Karma))
		if e.Node.Karma != e.Karma || e.Node.Rank == nil || *e.Node.Rank != e.Rank {
			out = append(out, fmt.Sprintf("(user fields disagree: %+v)", e.Node))
		}
	}
	return out
}

func TestAPILeaderboard(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		tokens := map[string]string{}
		ids := map[string]string{}
		for _, n := range []string{"dan", "Ann", "bob", "eve"} {
			tokens[n], ids[n] = a.signUp(n)
		}
		vote := func(voter, post, dir string) {
			t.Helper()
			a.do(tokens[voter], `mutation($p:ID!,$d:VoteDirection!){votePost(postId:$p,direction:$d){id}}`,
				map[string]any{"p": post, "d": dir}).decode(t, &struct{}{})
		}
		annPost := a.createPost(tokens["Ann"], "ann's")
		bobPost := a.createPost(tokens["bob"], "bob's")
		evePost := a.createPost(tokens["eve"], "eve's")
		vote("dan", annPost, "UP")
		vote("bob", annPost, "UP")
		vote("dan", bobPost, "DOWN")
		vote("dan", bobPost, "UP") // switching moves by the exact difference
		vote("eve", bobPost, "UP")
		vote("dan", evePost, "DOWN")
		vote("bob", evePost, "UP")
		vote("bob", evePost, "NONE")
		// Ann 2, bob 2 (tie, by name), dan 0, eve −1.
		want := []string{"Ann:1:2", "bob:2:2", "dan:3:0", "eve:4:-1"}

		q := `query($a:String){leaderboard(first:3,after:$a){totalCount pageInfo{hasNextPage endCursor}
			edges{cursor rank karma node{name karma rank}}}}`
		var got []string
		var after any
		for {
			var d struct {
				Leaderboard struct {
					TotalCount int
					PageInfo   struct {
						HasNextPage bool
						EndCursor   string
					}
					Edges []leaderboardEdge
				}
			}
			a.do("", q, map[string]any{"a": after}).decode(t, &d)
			if d.Leaderboard.TotalCount != 4 {
				t.Errorf("totalCount %d", d.Leaderboard.TotalCount)
			}
			got = append(got, render(d.Leaderboard.Edges)...)
			if !d.Leaderboard.PageInfo.HasNextPage {
				break
			}
			after = d.Leaderboard.PageInfo.EndCursor
		}
		if !slices.Equal(got, want) {
			t.Errorf("leaderboard %v, want %v", got, want)
		}

		aroundQ := `query($u:ID!,$r:Int){leaderboardAround(userId:$u,radius:$r){rank karma node{name karma rank}}}`
		var ar struct{ LeaderboardAround []leaderboardEdge }
		a.do("", `query($u:ID!){leaderboardAround(userId:$u){rank karma node{name karma rank}}}`,
			map[string]any{"u": ids["eve"]}).decode(t, &ar)
		if got := render(ar.LeaderboardAround); !slices.Equal(got, want[1:]) {
			t.Errorf("around eve (radius 2): %v", got)
		}
		a.do("", aroundQ, map[string]any{"u": ids["bob"], "r": 0}).decode(t, &ar)
		if got := render(ar.LeaderboardAround); !slices.Equal(got, want[1:2]) {
			t.Errorf("around bob (radius 0): %v", got)
		}
		for _, tc := range []struct {
			id   string
			r    int
			code string
		}{{ids["bob"], 51, "BAD_USER_INPUT"}, {ids["bob"], -1, "BAD_USER_INPUT"}, {"user:zed", 1, "NOT_FOUND"}, {"zzz", 1, "BAD_USER_INPUT"}} {
			if r := a.do("", aroundQ, map[string]any{"u": tc.id, "r": tc.r}); r.code() != tc.code {
				t.Errorf("around %s ±%d: %+v, want %s", tc.id, tc.r, r.Errors, tc.code)
			}
		}

		// Deleting a post keeps the karma it earned.
		a.do(tokens["Ann"], `mutation($id:ID!){deletePost(id:$id)}`, map[string]any{"id": annPost}).decode(t, &struct{}{})
		var u struct{ User struct{ Karma, Rank int } }
		a.do("", `{user(name:"ann"){karma rank}}`, nil).decode(t, &u)
		if u.User.Karma != 2 || u.User.Rank != 1 {
			t.Errorf("ann after deleting her post: %+v", u.User)
		}
	})
}

// TestAPIKarmaUnderConcurrentVotes has voters vote concurrently through the API and checks that
// the author's karma equals the net votes of their posts.
func TestAPIKarmaUnderConcurrentVotes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		amy, _ := a.signUp("amy")
		posts := []string{a.createPost(amy, "one"), a.createPost(amy, "two")}
		voters := make([]string, 10)
		for i := range voters {
			voters[i], _ = a.signUp(fmt.Sprintf("voter%d", i))
		}
		var wg sync.WaitGroup
		for i, tok := range voters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(i), 5))
				for range 12 {
					res := a.do(tok, `mutation($p:ID!,$d:VoteDirection!){votePost(postId:$p,direction:$d){id}}`,
						map[string]any{"p": posts[r.IntN(2)], "d": []string{"UP", "DOWN", "NONE"}[r.IntN(3)]})
					if len(res.Errors) > 0 {
						t.Errorf("vote: %+v", res.Errors)
						return
					}
				}
			}()
		}
		wg.Wait()
		var d struct {
			User struct {
				Karma int
				Posts struct {
					Edges []struct {
						Node struct{ Upvotes, Downvotes int }
					}
				}
			}
		}
		a.do("", `{user(name:"amy"){karma posts{edges{node{upvotes downvotes}}}}}`, nil).decode(t, &d)
		net := 0
		for _, e := range d.User.Posts.Edges {
			net += e.Node.Upvotes - e.Node.Downvotes
		}
		if d.User.Karma != net || len(d.User.Posts.Edges) != 2 {
			t.Errorf("karma %d, net votes of the posts %d", d.User.Karma, net)
		}
	})
}

func TestAPISuggest(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		var tok string
		for _, n := range []string{"Alice", "ALBERT", "alfred", "bob", "kim"} {
			tok, _ = a.signUp(n)
		}
		a.createPost(tok, "go", "GoLang", "gophers")
		gone := a.createPost(tok, "gone", "gossip")

		users := func(prefix string, first int) []string {
			t.Helper()
			var d struct{ SuggestUsers []struct{ Name string } }
			a.do("", `query($p:String!,$f:Int){suggestUsers(prefix:$p,first:$f){name}}`, map[string]any{"p": prefix, "f": first}).decode(t, &d)
			var out []string
			for _, u := range d.SuggestUsers {
				out = append(out, u.Name)
			}
			return out
		}
		groups := func(prefix string) []string {
			t.Helper()
			var d struct{ SuggestGroups []struct{ Name string } }
			a.do("", `query($p:String!){suggestGroups(prefix:$p){name}}`, map[string]any{"p": prefix}).decode(t, &d)
			var out []string
			for _, g := range d.SuggestGroups {
				out = append(out, g.Name)
			}
			return out
		}
		for _, tc := range []struct {
			prefix string
			first  int
			want   []string
		}{
			{"al", 10, []string{"ALBERT", "alfred", "Alice"}},
			{"AL", 2, []string{"ALBERT", "alfred"}},
			{"aLi", 10, []string{"Alice"}},
			{"Älice", 10, nil},
			{"\u212aim", 10, nil},
			{"日本", 10, nil},
		} {
			if got := users(tc.prefix, tc.first); !slices.Equal(got, tc.want) {
				t.Errorf("suggestUsers %q: %v, want %v", tc.prefix, got, tc.want)
			}
		}
		if got := groups("GO"); !slices.Equal(got, []string{"golang", "gophers", "gossip"}) {
			t.Errorf("suggestGroups GO: %v", got)
		}
		a.do(tok, `mutation($id:ID!){deletePost(id:$id)}`, map[string]any{"id": gone}).decode(t, &struct{}{})
		if got := groups("go"); !slices.Equal(got, []string{"golang", "gophers"}) {
			t.Errorf("suggestGroups after deleting gossip's only post: %v", got)
		}
		for _, q := range []string{`{suggestUsers(prefix:""){name}}`, `{suggestGroups(prefix:"go",first:101){name}}`,
			`{suggestUsers(prefix:"a",first:0){name}}`} {
			if r := a.do("", q, nil); r.code() != "BAD_USER_INPUT" {
				t.Errorf("%s: %+v", q, r.Errors)
			}
		}
	})
}

func TestAPIUserPosts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		tok, _ := a.signUp("amy")
		other, _ := a.signUp("ben")
		var ids []string
		for i := range 5 {
			ids = append(ids, a.createPost(tok, fmt.Sprintf("p%d", i)))
		}
		a.createPost(other, "not amy's")
		a.do(tok, `mutation($id:ID!){deletePost(id:$id)}`, map[string]any{"id": ids[2]}).decode(t, &struct{}{})
		var got []string
		var after any
		for {
			var d struct {
				User struct {
					Posts struct {
						TotalCount int
						Edges      []struct{ Node struct{ Title string } }
						PageInfo   struct {
							HasNextPage bool
							EndCursor   string
						}
					}
				}
			}
			a.do("", `query($a:String){user(name:"AMY"){posts(first:2,after:$a){totalCount edges{node{title}} pageInfo{hasNextPage endCursor}}}}`,
				map[string]any{"a": after}).decode(t, &d)
			if d.User.Posts.TotalCount != 4 {
				t.Errorf("totalCount %d, want 4", d.User.Posts.TotalCount)
			}
			for _, e := range d.User.Posts.Edges {
				got = append(got, e.Node.Title)
			}
			if !d.User.Posts.PageInfo.HasNextPage {
				break
			}
			after = d.User.Posts.PageInfo.EndCursor
		}
		if want := []string{"p4", "p3", "p1", "p0"}; !slices.Equal(got, want) {
			t.Errorf("amy's posts %v, want %v", got, want)
		}
	})
}
