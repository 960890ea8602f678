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

// TestWalkedPageEndCursorPagesOn reads a page of replies that the walk keeps, showing its end
// cursor in pageInfo alone (no edges.cursor) beside an alias that shows no cursor at all, in
// every sort (TOP, BEST and CONTROVERSIAL rank these few replies in the reader): the cursor is
// the list's, and the page after it holds the replies that follow, none repeated.
func TestWalkedPageEndCursorPagesOn(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		tok, _ := a.signUp("alice")
		p := a.createPost(tok, "hello")
		c := a.comment(tok, p, "", "top")
		for range 4 {
			a.comment(tok, p, c.ID, "reply")
		}
		for _, sort := range []string{"NEW", "OLD", "TOP", "BEST", "CONTROVERSIAL"} {
			q := `query($p: ID!, $s: CommentSort) { post(id: $p) { comments(first: 5) { edges { node {
				x: replies(first: 2, sort: $s) { edges { node { id } } }
				y: replies(first: 2, sort: $s) { edges { node { id } } pageInfo { endCursor hasNextPage } } } } } } }`
			var d struct {
				Post struct {
					Comments struct {
						Edges []struct {
							Node struct {
								X, Y struct {
									Edges    []struct{ Node struct{ ID string } }
									PageInfo struct {
										EndCursor   string
										HasNextPage bool
									}
								}
							}
						}
					}
				}
			}
			a.do("", q, map[string]any{"p": p, "s": sort}).decode(t, &d)
			if len(d.Post.Comments.Edges) != 1 {
				t.Fatalf("%s: %d top-level comments", sort, len(d.Post.Comments.Edges))
			}
			y := d.Post.Comments.Edges[0].Node.Y
			if len(y.Edges) != 2 || y.PageInfo.EndCursor == "" || !y.PageInfo.HasNextPage {
				t.Fatalf("%s: first page %+v", sort, y)
			}
			var next struct {
				Comment struct {
					Replies struct {
						Edges []struct{ Node struct{ ID string } }
					}
				}
			}
			a.do("", `query($c: ID!, $s: CommentSort, $a: String) { comment(id: $c) { replies(first: 5, sort: $s, after: $a) {
				edges { node { id } } } } }`, map[string]any{"c": c.ID, "s": sort, "a": y.PageInfo.EndCursor}).decode(t, &next)
			seen := map[string]bool{y.Edges[0].Node.ID: true, y.Edges[1].Node.ID: true}
			for _, e := range next.Comment.Replies.Edges {
				if seen[e.Node.ID] {
					t.Errorf("%s: %s on both pages", sort, e.Node.ID)
				}
				seen[e.Node.ID] = true
			}
			if len(seen) != 4 {
				t.Errorf("%s: %d replies over both pages, want 4", sort, len(seen))
			}
		}
	})
}
