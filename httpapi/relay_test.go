package httpapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestNodesFieldsAndQueryNodes: every connection lists its nodes without edges, read in the same
// round trips as edges.node, and Query.nodes loads many ids at once, in order, null for none.
func TestNodesFieldsAndQueryNodes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		counted, rt := b.Counted(t)
		a := newAPI(t, counted, store.Options{})
		viewer, viewerID := a.signUp("viewer")
		var ids []string
		for i := range 30 {
			tok, _ := a.signUp(fmt.Sprintf("writer%02d", i))
			ids = append(ids, a.createPost(tok, fmt.Sprint("post ", i)))
		}
		const viaEdges = `query($n: Int!) { posts(sort: NEW, first: $n) { edges { node { id title author { name } } } } }`
		const viaNodes = `query($n: Int!) { posts(sort: NEW, first: $n) { nodes { id title author { name } } } }`
		trips := map[string]int64{}
		var titles [2][]string
		for i, q := range []string{viaEdges, viaNodes} {
			a.do(viewer, q, map[string]any{"n": 30})
			rt.Reset()
			var d struct {
				Posts struct {
					Edges []struct{ Node struct{ Title string } }
					Nodes []struct{ Title string }
				}
			}
			a.do(viewer, q, map[string]any{"n": 30}).decode(t, &d)
			trips[q] = rt.Count()
			for _, e := range d.Posts.Edges {
				titles[i] = append(titles[i], e.Node.Title)
			}
			for _, n := range d.Posts.Nodes {
				titles[i] = append(titles[i], n.Title)
			}
		}
		if !slices.Equal(titles[0], titles[1]) || len(titles[0]) != 30 {
			t.Fatalf("nodes %v, edges %v", titles[1], titles[0])
		}
		if trips[viaNodes] > trips[viaEdges] {
			t.Fatalf("round trips: nodes %d, edges %d", trips[viaNodes], trips[viaEdges])
		}
		var lb struct {
			Leaderboard struct{ Nodes []struct{ Name string } }
		}
		a.do(viewer, `{ leaderboard(first: 5) { nodes { name } } }`, nil).decode(t, &lb)
		if len(lb.Leaderboard.Nodes) != 5 {
			t.Fatalf("leaderboard nodes %+v", lb)
		}

		// Query.nodes: in order, null for what does not exist, any kinds.
		want := []string{ids[3], "post:99999", viewerID, ids[0]}
		var d struct {
			Nodes []*struct {
				ID    string
				Title string
				Name  string
			}
		}
		q := `query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Post { title } ... on User { name } } }`
		rt.Reset()
		a.do(viewer, q, map[string]any{"ids": want}).decode(t, &d)
		if len(d.Nodes) != 4 || d.Nodes[0].ID != ids[3] || d.Nodes[1] != nil || d.Nodes[2].Name != "viewer" || d.Nodes[3].Title != "post 0" {
			t.Fatalf("nodes %+v", d.Nodes)
		}
		few := rt.Count()
		many := append([]string{}, ids...)
		rt.Reset()
		a.do(viewer, q, map[string]any{"ids": many}).decode(t, &d)
		if rt.Count() > few+1 {
			t.Fatalf("round trips grew with the ids: %d for 4, %d for 30", few, rt.Count())
		}
		tooMany := make([]string, 101)
		for i := range tooMany {
			tooMany[i] = ids[0]
		}
		if r := a.do(viewer, q, map[string]any{"ids": tooMany}); r.code() != "BAD_USER_INPUT" {
			t.Fatalf("101 ids: %+v", r.Errors)
		}
	})
}

// TestPagingBothWaysAPI pages every connection of the schema forwards with first and after and
// then backwards with last and before from the end cursor, through GraphQL, with the variables a
// client that pages both ways sends (the ones it does not use left out), and checks the argument
// rules: first and last together, or last out of 1..100, are BAD_USER_INPUT.
func TestPagingBothWaysAPI(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		reader, readerID := a.signUp("reader")
		var post, comment string
		for i := range 6 {
			tok, id := a.signUp(fmt.Sprintf("writer%d", i))
			a.do(reader, `mutation($u:ID!){follow(userId:$u){id}}`, map[string]any{"u": id}).decode(t, &struct{}{})
			a.do(tok, `mutation($u:ID!){follow(userId:$u){id}}`, map[string]any{"u": readerID}).decode(t, &struct{}{})
			a.createPost(tok, fmt.Sprint("in go ", i), "go")
			p := a.createPost(reader, fmt.Sprint("by reader ", i))
			if i == 0 {
				post = p
			}
			var c struct{ CreateComment struct{ ID string } }
			a.do(tok, `mutation($p:ID!,$parent:ID){createComment(postId:$p,parentId:$parent,body:"hi"){id}}`,
				map[string]any{"p": post}).decode(t, &c)
			if i == 0 {
				comment = c.CreateComment.ID
			}
			a.do(tok, `mutation($p:ID!,$parent:ID){createComment(postId:$p,parentId:$parent,body:"re"){id}}`,
				map[string]any{"p": post, "parent": comment}).decode(t, &struct{}{})
			a.do(reader, `mutation($t:String!,$at:Time){createPost(input:{title:$t,publishAt:$at}){id}}`,
				map[string]any{"t": "later", "at": time.Now().Add(time.Hour + time.Duration(i/2)*time.Minute)}).decode(t, &struct{}{})
		}
		a.settle() // feeds and notifications

		const conn = `{ totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id } } }`
		const args = `first: $first, after: $after, last: $last, before: $before`
		for _, tc := range []struct {
			name  string
			field string // the connection, with %s for its paging arguments and %s for its selection
			path  []string
		}{
			{"posts", `posts(sort: NEW, %s) %s`, []string{"posts"}},
			{"group posts", `group(name: "go") { posts(sort: TOP, %s) %s }`, []string{"group", "posts"}},
			{"user posts", `viewer { posts(%s) %s }`, []string{"viewer", "posts"}},
			{"feed", `feed(%s) %s`, []string{"feed"}},
			{"comments", `post(id: "POST") { comments(sort: OLD, %s) %s }`, []string{"post", "comments"}},
			{"replies", `comment(id: "COMMENT") { replies(%s) %s }`, []string{"comment", "replies"}},
			{"followers", `viewer { followers(%s) %s }`, []string{"viewer", "followers"}},
			{"following", `viewer { following(%s) %s }`, []string{"viewer", "following"}},
			{"leaderboard", `leaderboard(%s) %s`, []string{"leaderboard"}},
			{"notifications", `notifications(%s) %s`, []string{"notifications"}},
			{"scheduled posts", `scheduledPosts(%s) %s`, []string{"scheduledPosts"}},
		} {
			field := strings.NewReplacer("POST", post, "COMMENT", comment).Replace(tc.field)
			query := `query($first: Int, $after: String, $last: Int, $before: String) { ` + fmt.Sprintf(field, args, conn) + ` }`
			run := func(vars map[string]any) (apiConnection, response) {
				t.Helper()
				r := a.do(reader, query, vars)
				var c apiConnection
				if len(r.Errors) > 0 {
					return c, r
				}
				var d map[string]json.RawMessage
				r.decode(t, &d)
				raw := d[tc.path[0]]
				for _, p := range tc.path[1:] {
					var m map[string]json.RawMessage
					if err := json.Unmarshal(raw, &m); err != nil {
						t.Fatalf("%s: %s: %v", tc.name, raw, err)
					}
					raw = m[p]
				}
				if err := json.Unmarshal(raw, &c); err != nil {
					t.Fatalf("%s: %s: %v", tc.name, raw, err)
				}
				return c, r
			}
			read := func(vars map[string]any) apiConnection {
				t.Helper()
				c, r := run(vars)
				if len(r.Errors) > 0 {
					t.Fatalf("%s %v: %+v", tc.name, vars, r.Errors)
				}
				return c
			}
			all := read(map[string]any{"first": 100})
			want := all.ids()
			n := len(want)
			if n < 6 || all.TotalCount < n {
				t.Fatalf("%s: %d items of %d: %v", tc.name, n, all.TotalCount, want)
			}
			var fwd []string
			var page apiConnection
			for vars := map[string]any{"first": 4}; ; {
				page = read(vars)
				if page.PageInfo.HasPreviousPage != (len(fwd) > 0) {
					t.Errorf("%s: forward page after %d items: hasPreviousPage %v", tc.name, len(fwd), page.PageInfo.HasPreviousPage)
				}
				fwd = append(fwd, page.ids()...)
				if !page.PageInfo.HasNextPage {
					break
				}
				vars = map[string]any{"first": 4, "after": *page.PageInfo.EndCursor}
			}
			back := []string{want[n-1]}
			for vars := map[string]any{"last": 4, "before": *page.PageInfo.EndCursor}; ; {
				p := read(vars)
				if !p.PageInfo.HasNextPage {
					t.Errorf("%s: a backward page before the end says nothing follows", tc.name)
				}
				back = append(p.ids(), back...)
				if !p.PageInfo.HasPreviousPage {
					break
				}
				vars = map[string]any{"last": 4, "before": *p.PageInfo.StartCursor}
			}
			if !slices.Equal(fwd, want) || !slices.Equal(back, want) {
				t.Errorf("%s: forwards %v, backwards %v, want %v", tc.name, fwd, back, want)
			}
			tail := read(map[string]any{"last": 2})
			if !slices.Equal(tail.ids(), want[n-2:]) || !tail.PageInfo.HasPreviousPage || tail.PageInfo.HasNextPage ||
				tail.Edges[0].Cursor != all.Edges[n-2].Cursor {
				t.Errorf("%s: last 2: %v %+v, want %v", tc.name, tail.ids(), tail.PageInfo, want[n-2:])
			}
			mid := read(map[string]any{"first": 100, "after": all.Edges[0].Cursor, "before": all.Edges[n-1].Cursor})
			if !slices.Equal(mid.ids(), want[1:n-1]) {
				t.Errorf("%s: between the ends: %v, want %v", tc.name, mid.ids(), want[1:n-1])
			}
			for _, vars := range []map[string]any{{"first": 2, "last": 2}, {"last": 0}, {"last": 101}, {"last": 2, "before": "nope"}} {
				if _, r := run(vars); r.code() != "BAD_USER_INPUT" {
					t.Errorf("%s %v: %+v, want BAD_USER_INPUT", tc.name, vars, r.Errors)
				}
			}
		}

		// Literal arguments, and what the query cost counts: last, not first's default.
		var d struct {
			Posts struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		a.do(reader, `{ posts(sort: NEW, last: 3) { edges { node { id } } } }`, nil).decode(t, &d)
		if len(d.Posts.Edges) != 3 {
			t.Errorf("posts(last: 3): %+v", d)
		}
		if r := a.do(reader, `{ posts(first: 3, last: 3) { totalCount } }`, nil); r.code() != "BAD_USER_INPUT" {
			t.Errorf("first and last: %+v", r.Errors)
		}
		deep := `{ posts(%s: 100) { edges { node { comments(%s: 100) { edges { node { replies(%s: 100) { totalCount } } } } } } } }`
		for _, arg := range []string{"first", "last"} {
			if r := a.do(reader, fmt.Sprintf(deep, arg, arg, arg), nil); r.code() != "QUERY_TOO_COMPLEX" {
				t.Errorf("%s: 100 × 100 × 100: %+v, want QUERY_TOO_COMPLEX", arg, r.Errors)
			}
		}
		r := a.do(reader, `query($l: Int) { posts(first: 100, last: $l) { edges { node { comments(first: 100) { totalCount } } } } }`, nil)
		if len(r.Errors) > 0 {
			t.Errorf("a null last: %+v", r.Errors)
		}
	})
}

// TestConnectionsShowWhatTheirSelectionShows: what a connection's selection leaves out (its total,
// its cursors) is worked out once per selection of the operation, and a connection field that a
// fragment selects in two places, merged with more fields in one of them, shows in each place
// what its selection there asks for.
func TestConnectionsShowWhatTheirSelectionShows(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		tok, _ := a.signUp("writer")
		p1, p2 := a.createPost(tok, "one"), a.createPost(tok, "two")
		for _, p := range []string{p1, p2} {
			for i := range 3 {
				a.comment(tok, p, "", fmt.Sprint("comment ", i))
			}
		}
		type conn struct {
			TotalCount *int
			Edges      []struct{ Cursor string }
			Nodes      []struct{ ID string }
		}
		for _, order := range []string{"merged first", "plain first"} {
			merged := `m: post(id: $m) { ...F comments(first: 2) { edges { cursor } } }`
			plain := `p: post(id: $p) { ...F }`
			sel := merged + " " + plain
			if order == "plain first" {
				sel = plain + " " + merged
			}
			q := `query($m: ID!, $p: ID!) { ` + sel + ` } fragment F on Post { comments(first: 2) { totalCount nodes { id } } }`
			var d struct {
				M, P struct{ Comments conn }
			}
			a.do(tok, q, map[string]any{"m": p1, "p": p2}).decode(t, &d)
			m, p := d.M.Comments, d.P.Comments
			if m.TotalCount == nil || *m.TotalCount != 3 || len(m.Edges) != 2 || m.Edges[0].Cursor == "" || m.Edges[1].Cursor == "" {
				t.Fatalf("%s: the merged connection: %+v", order, m)
			}
			if p.TotalCount == nil || *p.TotalCount != 3 || len(p.Nodes) != 2 || p.Edges != nil {
				t.Fatalf("%s: the fragment's connection: %+v", order, p)
			}
		}
	})
}
