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

// TestAnyDirective checks that every directive of a selection is found — on a field at any depth,
// on an inline fragment, on a spread, on a fragment's definition and inside it — and each fragment
// walked once, also when fragments spread each other.
func TestAnyDirective(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		want  bool
	}{
		{"none", `{ posts { nodes { id } } }`, false},
		{"another directive", `{ posts { nodes { id @deprecated } } }`, false},
		{"on a nested field", `{ posts { nodes { id @skip(if: true) } } }`, true},
		{"on an inline fragment", `{ posts { ... @skip(if: true) { totalCount } } }`, true},
		{"on a spread", `{ posts { ...F @skip(if: true) } } fragment F on PostConnection { totalCount }`, true},
		{"on a fragment's definition", `{ posts { ...F } } fragment F on PostConnection @skip(if: true) { totalCount }`, true},
		{"inside a spread fragment", `{ posts { ...F } } fragment F on PostConnection { totalCount @skip(if: true) }`, true},
		{"in a fragment not spread", `{ posts { totalCount } } fragment F on PostConnection { totalCount @skip(if: true) }`, false},
		{"fragments spreading each other", `{ posts { ...F } } fragment F on PostConnection { ...G } fragment G on PostConnection { ...F totalCount }`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			got := gqlvar.AnyDirective(doc, doc.Operations[0].SelectionSet, func(d *ast.Directive) bool {
				seen++
				return d.Name == "skip"
			})
			if got != tc.want {
				t.Errorf("AnyDirective = %v, want %v (%d directives seen)", got, tc.want, seen)
			}
		})
	}
}
