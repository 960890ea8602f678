package readexec_test

import (
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/agora/agora/graph"
	"github.com/agora/agora/readexec"
)

// TestRuns pins Runs, the decision Exec makes (and the limits check charges by): readexec runs
// a query whose every field its tables list, after the directives of its variables, and hands
// anything else to gqlgen.
func TestRuns(t *testing.T) {
	es := graph.NewExecutableSchema(graph.Config{})
	rx := readexec.Wrap(es, nil)
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		runs        bool
	}{
		{"a page of posts", `{ posts(first: 2) { nodes { title author { name } } } }`, nil, true},
		{"a thread", `query($id: ID!) { post(id: $id) { title comments(first: 50) { nodes { body replies { nodes { body } } } } } }`, map[string]any{"id": "p"}, true},
		{"one field it does not list", `{ posts(first: 2) { nodes { title } } groups { nodes { name } } }`, nil, false},
		{"a list of a user it does not list", `{ user(name: "a") { name posts { nodes { title } } } }`, nil, false},
		{"introspection", `{ __schema { types { name } } }`, nil, false},
		{"a mutation", `mutation { logOut }`, nil, false},
		{"a subscription", `subscription { postChanged(postId: "p") { score } }`, nil, false},
		{"a field it does not list left out", `query($x: Boolean!) { posts { nodes { title } } groups @include(if: $x) { nodes { name } } }`, map[string]any{"x": false}, true},
		{"a field it does not list included", `query($x: Boolean!) { posts { nodes { title } } groups @include(if: $x) { nodes { name } } }`, map[string]any{"x": true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQuery(es.Schema(), tc.query)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			op := doc.Operations[0]
			vars, err := validator.VariableValues(es.Schema(), op, tc.vars)
			if err != nil {
				t.Fatal(err)
			}
			oc := &graphql.OperationContext{RawQuery: tc.query, Doc: doc, Operation: op, Variables: vars}
			if got := rx.Runs(oc); got != tc.runs {
				t.Errorf("Runs = %v, want %v", got, tc.runs)
			}
		})
	}
}
