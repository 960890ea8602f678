package httpapi_test

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// userPostsQuery reads a user's posts in the order $s (left out: the default).
const userPostsQuery = `query($s: PostSort) { user(name: "alice") { posts(sort: $s, first: 10) {
	totalCount edges { cursor node { id } } } } }`

// userPostIDs decodes the ids of a userPostsQuery answer.
func userPostIDs(t *testing.T, body []byte) []string {
	t.Helper()
	var d struct {
		User struct {
			Posts struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	mustData(t, body, &d)
	var out []string
	for _, e := range d.User.Posts.Edges {
		out = append(out, e.Node.ID)
	}
	return out
}

// User.posts answers in every order, its default is NEW, and the response cache keeps one entry
// per order, never serving a TOP window's answer again: a post leaves the window with no write.
func TestUserPostsSortsAndTheCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		a := newAPI(t, b, store.Options{Now: clk.Now, WriteLimit: -1})
		alice, _ := a.signUp("alice")
		var voters []string
		for i := range 3 {
			tok, _ := a.signUp(fmt.Sprint("voter", i))
			voters = append(voters, tok)
		}
		vote := func(post string, n int) {
			for _, v := range voters[:n] {
				a.do(v, `mutation($p:ID!){votePost(postId:$p,direction:UP){id}}`, map[string]any{"p": post}).decode(t, &struct{}{})
			}
		}
		old := a.createPost(alice, "old", "g")
		vote(old, 3)
		clk.Add(30 * time.Minute)
		mid := a.createPost(alice, "mid", "g")
		vote(mid, 1)
		clk.Add(time.Minute)
		young := a.createPost(alice, "young")
		vote(young, 2)
		clk.Add(29 * time.Minute) // old is exactly an hour old

		for _, tc := range []struct {
			sort   any
			want   []string
			cached bool
		}{
			{nil, []string{young, mid, old}, true},
			{"NEW", []string{young, mid, old}, true},
			{"TOP", []string{old, young, mid}, true},
			{"CONTROVERSIAL", []string{young, mid, old}, true}, // all 0: ties by id, the newest first
			{"TOP_HOUR", []string{old, young, mid}, false},
		} {
			vars := map[string]any{"s": tc.sort}
			first, _ := rawCached(t, a.h, "", userPostsQuery, vars)
			again, how := rawCached(t, a.h, "", userPostsQuery, vars)
			if got := userPostIDs(t, first); !slices.Equal(got, tc.want) || string(first) != string(again) {
				t.Fatalf("sort %v: %v, want %v; again %s", tc.sort, got, tc.want, again)
			}
			if (how == "hit") != tc.cached {
				t.Fatalf("sort %v: the second read was a %s", tc.sort, how)
			}
		}
		// A vote reorders TOP at once: the entry that read the ranking is stale.
		vote(mid, 3)
		if got := userPostIDs(t, raw(t, a.h, "", userPostsQuery, map[string]any{"s": "TOP"})); !slices.Equal(got, []string{mid, old, young}) {
			t.Fatalf("TOP after a vote: %v", got)
		}
		// The site's and a group's TOP_HOUR are not kept either (they were, and stayed stale).
		site := `{ posts(sort: TOP_HOUR) { totalCount edges { node { id } } } }`
		group := `{ group(name: "g") { posts(sort: TOP_HOUR) { totalCount } } }`
		for _, q := range []string{site, group} {
			rawCached(t, a.h, "", q, nil)
			if _, how := rawCached(t, a.h, "", q, nil); how == "hit" {
				t.Fatalf("%s was served from the cache", q)
			}
		}
		clk.Add(time.Millisecond) // old leaves the hour, with no write
		var d struct{ Posts struct{ TotalCount int } }
		if mustData(t, raw(t, a.h, "", site, nil), &d); d.Posts.TotalCount != 2 {
			t.Fatalf("the site's TOP_HOUR past old's hour: %d posts", d.Posts.TotalCount)
		}
		if got := userPostIDs(t, raw(t, a.h, "", userPostsQuery, map[string]any{"s": "TOP_HOUR"})); !slices.Equal(got, []string{mid, young}) {
			t.Fatalf("TOP_HOUR past old's hour: %v", got)
		}
		if r := a.do("", userPostsQuery, map[string]any{"s": "SIDEWAYS"}); r.code() != "BAD_USER_INPUT" && r.code() != "GRAPHQL_VALIDATION_FAILED" {
			t.Fatalf("an unknown order: %+v", r.Errors)
		}
	})
}

// A user's posts in an order other than NEW cost one round trip more than NEW (the scores, read
// once the ids are known), whatever the page size; below a list of posts, the authors' ranked
// posts cost the same round trips for 2 authors as for 10.
func TestUserPostsRoundTrips(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		counted, rt := b.Counted(t)
		st := counted.NewStore(t, store.Options{WriteLimit: -1})
		hub := newHub(t, st)
		h := httpapi.New(httpapi.Config{Store: st, Hub: hub, ResponseCacheMiB: -1}) // every read runs
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		a := &api{t: t, srv: srv, h: h, store: st, hub: hub}
		var tokens []string
		for i := range 10 {
			tok, _ := a.signUp(fmt.Sprintf("author%02d", i))
			tokens = append(tokens, tok)
		}
		for range 45 {
			a.createPost(tokens[0], "more")
		}
		for j := range 5 { // the newest 10 posts are by 10 authors
			for i, tok := range tokens {
				a.createPost(tok, fmt.Sprintf("post %d of %d", j, i))
			}
		}
		trips := func(q string, vars map[string]any) int64 {
			t.Helper()
			a.do("", q, vars).decode(t, &struct{}{}) // warm the connection pool
			rt.Reset()
			a.do("", q, vars).decode(t, &struct{}{})
			return rt.Count()
		}
		one := `query($s: PostSort, $n: Int) { user(name: "author00") { posts(sort: $s, first: $n) {
			totalCount edges { cursor node { id title author { name } } } } } }`
		for _, n := range []int{5, 50} {
			plain := trips(one, map[string]any{"s": "NEW", "n": n})
			for _, s := range []string{"TOP", "HOT", "TOP_DAY"} {
				if got := trips(one, map[string]any{"s": s, "n": n}); got != plain+1 {
					t.Errorf("user posts by %s, %d: %d round trips, want NEW's %d + 1", s, n, got, plain)
				}
			}
			t.Logf("user posts, %d: NEW %d round trips", n, plain)
		}
		below := `query($k: Int) { posts(sort: NEW, first: $k) { edges { node { author {
			posts(sort: TOP, first: 3) { edges { node { id title } } } } } } } }`
		two, ten := trips(below, map[string]any{"k": 2}), trips(below, map[string]any{"k": 10})
		if two != ten {
			t.Errorf("ranked posts below 2 authors: %d round trips, below 10: %d", two, ten)
		}
		t.Logf("ranked posts below a list of posts: %d round trips", ten)
	})
}
