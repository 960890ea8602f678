package httpapi_test

import (
	"encoding/json"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestAliasedPagesShowWhatEachAsks reads one list twice under two aliases, one showing its total
// and the other its cursors: each gets what it asks for, though the walk reads each page once,
// without the total or cursors the other one left out.
func TestAliasedPagesShowWhatEachAsks(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		tok, _ := a.signUp("alice")
		p := a.createPost(tok, "hello")
		c := a.comment(tok, p, "", "top")
		for range 3 {
			a.comment(tok, p, c.ID, "reply")
		}
		for _, q := range []string{
			`query($p: ID!) { post(id: $p) { comments(first: 5) { edges { node {
				x: replies(first: 2) { totalCount }
				y: replies(first: 2) { edges { cursor } pageInfo { endCursor } } } } } } }`,
			`query($p: ID!) { post(id: $p) { x: comments(first: 2) { totalCount } y: comments(first: 2) { edges { cursor } } } }`,
		} {
			r := a.do("", q, map[string]any{"p": p})
			if len(r.Errors) > 0 {
				t.Fatalf("%s: %v", q, r.Errors)
			}
			var d struct {
				Post struct {
					Comments struct {
						Edges []struct {
							Node struct {
								X struct{ TotalCount int }
								Y struct {
									Edges    []struct{ Cursor string }
									PageInfo struct{ EndCursor string }
								}
							}
						}
					}
					X struct{ TotalCount int }
					Y struct{ Edges []struct{ Cursor string } }
				}
			}
			if err := json.Unmarshal(r.Data, &d); err != nil {
				t.Fatal(err)
			}
			if es := d.Post.Comments.Edges; len(es) > 0 {
				n := es[0].Node
				if n.X.TotalCount != 3 || len(n.Y.Edges) != 2 || n.Y.Edges[0].Cursor == "" || n.Y.PageInfo.EndCursor == "" {
					t.Errorf("replies: total %d, cursors %+v / %q: %s", n.X.TotalCount, n.Y.Edges, n.Y.PageInfo.EndCursor, r.Data)
				}
				continue
			}
			if d.Post.X.TotalCount != 1 || len(d.Post.Y.Edges) != 1 || d.Post.Y.Edges[0].Cursor == "" {
				t.Errorf("comments: total %d, cursors %+v: %s", d.Post.X.TotalCount, d.Post.Y.Edges, r.Data)
			}
		}
	})
}

// TestAliasedPagesShowTheirFields reads one list under aliases that show different comment fields:
// each shows its own, though the walk reads each comment with the fields of one selection.
func TestAliasedPagesShowTheirFields(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		tok, _ := a.signUp("alice")
		p := a.createPost(tok, "hello")
		a.comment(tok, p, "", "top one")
		r := a.do("", `query($p: ID!) { post(id: $p) {
			x: comments(first: 4) { nodes { id } } y: comments(first: 4) { nodes { body depth } }
			z: comments(first: 4) { nodes { id } } w: comments(first: 4) { nodes { body upvotes } }
			v: comments(first: 4) { nodes { replyCount } } } }`, map[string]any{"p": p})
		want := `{"post":{"x":{"nodes":[{"id":"comment:1:1"}]},"y":{"nodes":[{"body":"top one","depth":0}]},` +
			`"z":{"nodes":[{"id":"comment:1:1"}]},"w":{"nodes":[{"body":"top one","upvotes":0}]},"v":{"nodes":[{"replyCount":0}]}}}`
		if len(r.Errors) > 0 || string(r.Data) != want {
			t.Errorf("got %s %v\nwant %s", r.Data, r.Errors, want)
		}
	})
}
