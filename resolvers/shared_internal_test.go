package resolvers

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"

	"github.com/agora/agora/graph"
)

// TestViewerFieldsAreNamedSo holds the schema to the convention viewerFields relies on: a field
// whose value depends on who asks is named for the viewer, and every such field is listed.
func TestViewerFieldsAreNamedSo(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &Resolver{}}).Schema()
	for _, typ := range schema.Types {
		if typ.BuiltIn || strings.HasPrefix(typ.Name, "__") {
			continue
		}
		for _, f := range typ.Fields {
			if strings.Contains(strings.ToLower(f.Name), "viewer") && !viewerFields[f.Name] {
				t.Errorf("%s.%s reads the viewer but is not in viewerFields", typ.Name, f.Name)
			}
		}
	}
	for name := range viewerFields {
		found := false
		for _, typ := range schema.Types {
			if typ.Fields.ForName(name) != nil {
				found = true
			}
		}
		if !found {
			t.Errorf("viewerFields lists %q, which no type has", name)
		}
	}
}

// TestReadsViewer checks the walk that decides whether a subscription's run is per viewer.
func TestReadsViewer(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &Resolver{}}).Schema()
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{`subscription { postChanged(postId: "post:1") { upvotes author { name } } }`, false},
		{`subscription { postChanged(postId: "post:1") { upvotes viewerVote } }`, true},
		{`subscription { postChanged(postId: "post:1") { v: viewerVote } }`, true},
		{`subscription { postChanged(postId: "post:1") { ...P } } fragment P on Post { author { ...U } } fragment U on User { viewerFollows }`, true},
		{`subscription { commentAdded(postId: "post:1") { ... on Comment { author { followsViewer } } } }`, true},
		{`subscription { feed { id } }`, true},
		{`subscription { postPublished { ...P ...P } } fragment P on Post { title }`, false},
		// A report's reporter is hidden from the moderator whose content it is about, wherever
		// the report is read: through the mod log's targets, or node(id:).
		{`query { modLog { nodes { target { ... on Report { reporter { name } } } } } }`, true},
		{`query { node(id: "report:1") { ... on Report { reason reporter { name } } } }`, true},
		{`query { node(id: "report:1") { ... on Report { reason } } }`, false},
		// A user's email shows to themselves only; a group's bans to its moderators; a mod
		// action's target to those who may see it: a shared run would answer each as anonymous.
		{`subscription { postChanged(postId: "post:1") { author { email } } }`, true},
		{`subscription { postChanged(postId: "post:1") { author { emailVerified } } }`, true},
		{`subscription { postPublished { groups { bans { totalCount } } } }`, true},
		// Removed content shows to its author and moderators only, and a shared run shows what
		// anyone may see: reading a comment's post or a post's comments stays shared.
		{`subscription { commentAdded(postId: "post:1") { post { title comments { totalCount } } } }`, false},
	} {
		doc, errs := gqlparser.LoadQuery(schema, tc.query)
		if errs != nil {
			t.Fatalf("%s: %v", tc.query, errs)
		}
		if got := readsViewer(doc, doc.Operations[0].SelectionSet, map[string]bool{}); got != tc.want {
			t.Errorf("readsViewer(%s) = %v, want %v", tc.query, got, tc.want)
		}
	}
}
