package resolvers

import (
	"context"
	"reflect"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/agora/agora/store"
)

// TestNeedsCache checks that the Needs of a field are derived once per document when its
// selection names no variable and no viewer field, and per request otherwise: each request gets
// the Needs it would get without the cache, whatever its variables and viewer, and a field
// selected twice under one key (merged by gqlgen) is not taken for its first node.
func TestNeedsCache(t *testing.T) {
	type request struct {
		viewer store.UserKey
		vars   map[string]any
	}
	for _, tc := range []struct {
		name     string
		query    string
		requests []request
		shared   bool // the requests share one Needs
	}{
		{
			name:     "no variable, no viewer field",
			query:    `{ post(id: "p") { id author { name } comments(sort: TOP, first: 3) { edges { node { id body author { id name } } } } } }`,
			requests: []request{{}, {viewer: "u:a"}},
			shared:   true,
		},
		{
			name:     "a fragment without variables",
			query:    `{ post(id: "p") { ...P } } fragment P on Post { comments(first: 2) { edges { node { id } } } }`,
			requests: []request{{}, {}},
			shared:   true,
		},
		{
			name:     "a page size from a variable",
			query:    `query($n: Int) { post(id: "p") { comments(first: $n) { edges { node { id } } } } }`,
			requests: []request{{vars: map[string]any{"n": 3}}, {vars: map[string]any{"n": 7}}},
		},
		{
			name:     "a directive's variable in a fragment",
			query:    `query($s: Boolean!) { post(id: "p") { ...P } } fragment P on Post { comments(first: 2) @include(if: $s) { edges { node { id } } } }`,
			requests: []request{{vars: map[string]any{"s": true}}, {vars: map[string]any{"s": false}}},
		},
		{
			name:     "a viewer field",
			query:    `{ post(id: "p") { viewerVote comments(first: 2) { edges { node { viewerVote } } } } }`,
			requests: []request{{viewer: "u:a"}, {viewer: "u:b"}, {}},
		},
		{
			name:     "a field selected twice",
			query:    `{ post(id: "p") { id } post(id: "p") { author { karma } } }`,
			requests: []request{{}, {}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
			if err != nil {
				t.Fatal(err)
			}
			cache := newNeedsCache()
			var got []*store.Needs
			for _, rq := range tc.requests {
				needs := func(cache *needsCache) *store.Needs {
					oc := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: rq.vars}
					ctx := graphql.WithOperationContext(context.Background(), oc)
					ctx = WithRequest(ctx, &Request{Viewer: rq.viewer, needs: cache, shown: &shownMemo{}})
					root := graphql.CollectFields(oc, oc.Operation.SelectionSet, nil)[0]
					ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Object: "Query", Field: root})
					return fieldNeeds(ctx, "Post", false)()
				}
				n, want := needs(cache), needs(nil)
				if !reflect.DeepEqual(n, want) {
					t.Fatalf("request %+v: %+v, want %+v", rq, n, want)
				}
				got = append(got, n)
			}
			for i := 1; i < len(got); i++ {
				if shared := got[i] == got[0]; shared != tc.shared {
					t.Errorf("request %d shares the first's Needs: %v, want %v", i, shared, tc.shared)
				}
			}
		})
	}
}

// TestUnshownCache checks that what a connection's selection leaves out of its page is kept
// across requests only when no variable decides it: each request gets what it would without the
// cache.
func TestUnshownCache(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		vars  []map[string]any
	}{
		{"fixed", `{ posts(first: 2) { totalCount edges { node { id } } } }`, []map[string]any{nil, nil}},
		{"cursors", `{ posts(first: 2) { pageInfo { endCursor } edges { node { id } } } }`, []map[string]any{nil, nil}},
		{"a directive's variable", `query($t: Boolean!) { posts(first: 2) { totalCount @include(if: $t) edges { cursor @skip(if: $t) node { id } } } }`,
			[]map[string]any{{"t": true}, {"t": false}, {"t": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
			if err != nil {
				t.Fatal(err)
			}
			cache := newNeedsCache()
			for _, vars := range tc.vars {
				oc := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: vars}
				f := graphql.CollectFields(oc, oc.Operation.SelectionSet, nil)[0]
				noTotal, noCursors := cache.unshown(&shownMemo{}, oc, f)
				wantTotal, wantCursors := unshown(oc, f.Selections)
				if noTotal != wantTotal || noCursors != wantCursors {
					t.Errorf("vars %v: noTotal %v, noCursors %v; want %v, %v", vars, noTotal, noCursors, wantTotal, wantCursors)
				}
			}
		})
	}
}
