package gqlvar_test

import (
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/agora/agora/internal/gqlvar"
)

// TestInSelection checks where a variable is found in an operation's selection: in a field's
// argument, nested in a list or an object, in a directive, in a fragment spread (once, however
// often or however cyclically it is spread) and in the fragment's own directives; and that a
// selection without one, or with a variable only outside it, names none.
func TestInSelection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		want  bool
	}{
		{"literals only", `{ post(id: "1") { comments(first: 2, sort: TOP) { edges { node { id } } } } }`, false},
		{"an argument", `query($n: Int) { post(id: "1") { comments(first: $n) { totalCount } } }`, true},
		{"in a list", `query($s: String) { post(id: "1") { f(in: ["a", $s]) } }`, true},
		{"in an object", `query($s: String) { post(id: "1") { f(in: {a: {b: $s}}) } }`, true},
		{"a field's directive", `query($b: Boolean!) { post(id: "1") { id @include(if: $b) } }`, true},
		{"an inline fragment's directive", `query($b: Boolean!) { post(id: "1") { ... @skip(if: $b) { id } } }`, true},
		{"a spread fragment", `query($n: Int) { post(id: "1") { ...P } } fragment P on Post { comments(first: $n) { totalCount } }`, true},
		{"a spread's directive", `query($b: Boolean!) { post(id: "1") { ...P @include(if: $b) } } fragment P on Post { id }`, true},
		{"a fragment's own directive", `query($b: Boolean!) { post(id: "1") { ...P } } fragment P on Post @include(if: $b) { id }`, true},
		{"a fragment spread twice", `{ post(id: "1") { ...P ...P } } fragment P on Post { id }`, false},
		{"fragments spreading each other", `{ post(id: "1") { ...P } } fragment P on Post { ...Q } fragment Q on Post { ...P id }`, false},
		{"a missing fragment", `{ post(id: "1") { ...Gone } }`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
			if err != nil {
				t.Fatal(err)
			}
			// The root field's selection: its own argument (id) is outside it.
			root := doc.Operations[0].SelectionSet[0].(*ast.Field)
			if got := gqlvar.InSelection(doc, root.SelectionSet); got != tc.want {
				t.Errorf("InSelection = %v, want %v", got, tc.want)
			}
		})
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: `query($p: ID!) { post(id: $p) { id } }`})
	if err != nil {
		t.Fatal(err)
	}
	root := doc.Operations[0].SelectionSet[0].(*ast.Field)
	if gqlvar.InSelection(doc, root.SelectionSet) || !gqlvar.InArguments(root.Arguments) {
		t.Errorf("post(id: $p) { id }: the variable is the field's argument, not in its selection")
	}
}
