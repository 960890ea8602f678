package resolvers

import (
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/agora/agora/store"
)

// TestWindow checks how a connection's paging arguments become a store.Window: first counts only
// when the query sets it, so that a backward page may leave it to its default.
func TestWindow(t *testing.T) {
	n := func(v int) *int { return &v }
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name          string
		first, last   *int
		after, before *string
		firstGiven    bool
		want          store.Window
		invalid       bool
	}{
		{name: "the default", want: store.Window{First: 20}},
		{name: "first and after", first: n(5), after: s("a"), firstGiven: true, want: store.Window{First: 5, After: "a"}},
		{name: "first's default", first: n(20), want: store.Window{First: 20}},
		{name: "last and before", first: n(20), last: n(3), before: s("b"), want: store.Window{Last: 3, Before: "b"}},
		{name: "last between cursors", first: n(20), last: n(3), after: s("a"), before: s("b"), want: store.Window{Last: 3, After: "a", Before: "b"}},
		{name: "first given with last", first: n(20), last: n(3), firstGiven: true, want: store.Window{First: 20, Last: 3}},
		{name: "last 0", last: n(0), invalid: true},
		{name: "last 101", last: n(101), invalid: true},
	} {
		got, err := window(tc.first, tc.after, tc.last, tc.before, tc.firstGiven)
		if tc.invalid {
			if !store.IsKind(err, store.KindInvalid) {
				t.Errorf("%s: %+v %v, want invalid", tc.name, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.name, got, err, tc.want)
		}
	}
}

// TestArgGiven checks when a query sets an argument: a value or a variable with one does; a null,
// a variable that is null or left out, or no argument at all does not.
func TestArgGiven(t *testing.T) {
	field := func(v *ast.Value) *ast.Field {
		if v == nil {
			return &ast.Field{}
		}
		return &ast.Field{Arguments: ast.ArgumentList{{Name: "first", Value: v}}}
	}
	vars := map[string]any{"set": 5, "null": nil}
	for _, tc := range []struct {
		name  string
		value *ast.Value
		want  bool
	}{
		{"absent", nil, false},
		{"a literal", &ast.Value{Kind: ast.IntValue, Raw: "5"}, true},
		{"null", &ast.Value{Kind: ast.NullValue}, false},
		{"a variable with a value", &ast.Value{Kind: ast.Variable, Raw: "set"}, true},
		{"a null variable", &ast.Value{Kind: ast.Variable, Raw: "null"}, false},
		{"a variable left out", &ast.Value{Kind: ast.Variable, Raw: "missing"}, false},
	} {
		if got := argGiven(field(tc.value), vars, "first"); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
