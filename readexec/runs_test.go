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

// TestPlannedOncePerRequest pins how often an operation is planned: once per operation while its
// directives name no variable, and otherwise once per request — the plan Runs made for the
// limits check is the one Exec uses, and another request's variables get a plan of their own.
func TestPlannedOncePerRequest(t *testing.T) {
	es := graph.NewExecutableSchema(graph.Config{})
	for _, tc := range []struct {
		name, query  string
		sharedAcross bool // two requests of the operation share one plan
	}{
		{"no directive variables", `query($id: ID!) { post(id: $id) { title } }`, true},
		{"a directive variable", `query($x: Boolean!) { posts { nodes { title body @include(if: $x) } } }`, false},
		{"a directive variable in a fragment", `query($x: Boolean!) { posts { nodes { ...F } } } fragment F on Post { title @skip(if: $x) }`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rx := readexec.Wrap(es, nil)
			doc, errs := gqlparser.LoadQuery(es.Schema(), tc.query)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			op := doc.Operations[0]
			request := func(raw map[string]any) *graphql.OperationContext {
				vars, err := validator.VariableValues(es.Schema(), op, raw)
				if err != nil {
					t.Fatal(err)
				}
				return &graphql.OperationContext{RawQuery: tc.query, Doc: doc, Operation: op, Variables: vars}
			}
			first := request(map[string]any{"id": "p", "x": true})
			if !rx.Runs(first) {
				t.Fatal("Runs = false, want true")
			}
			pl := readexec.PlanOf(rx, first)
			if again := readexec.PlanOf(rx, first); again != pl {
				t.Error("the request's operation was planned again after Runs")
			}
			second := request(map[string]any{"id": "q", "x": false})
			if shared := readexec.PlanOf(rx, second) == pl; shared != tc.sharedAcross {
				t.Errorf("two requests share a plan: %v, want %v", shared, tc.sharedAcross)
			}
		})
	}
}
