package httpapi_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestNodesFieldsAndQueryNodes: every connection lists its nodes without edges, read in the same
// round trips as edges.node, and Query.nodes loads many ids at once, in order, null for none.
func TestNodesFieldsAndQueryNodes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		rt := &storetest.RoundTrips{}
		counted := b
		counted.Client = b.NewClient(t)
		counted.Client.AddHook(rt)
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
