package readexec_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/99designs/gqlgen/codegen/templates"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/agora/agora/graph"
	"github.com/agora/agora/readexec"
)

// argSets names the schema arguments of each kind of readexec's tables.
var argSets = map[string][]string{
	"":            nil,
	"id":          {"id"},
	"name":        {"name"},
	"postList":    {"after", "before", "first", "group", "hideRead", "last", "sort"},
	"commentList": {"after", "before", "first", "last", "sort"},
	"reveal":      {"revealSpoiler"},
}

// TestTablesMatchSchema holds readexec's tables (readexec/fields.go) to the schema and to
// gqlgen.yml, so that a field is described in one place and the tables follow it: every field
// they list exists with the type they say it shows, takes the arguments they coerce (a list
// field may lack "group" or "hideRead", which are then never set), and has a resolver exactly when gqlgen's
// resolver interface of its type has a method for it — a field that becomes a resolver in
// gqlgen.yml and stays written from the model's struct fails here.
func TestTablesMatchSchema(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	root := reflect.TypeFor[graph.ResolverRoot]()
	for typ, fields := range readexec.Tables() {
		def := schema.Types[typ]
		if def == nil || def.Kind != ast.Object {
			t.Errorf("readexec writes %s, which is not an object type of the schema", typ)
			continue
		}
		var resolvers reflect.Type // gqlgen's <Type>Resolver interface, if the type has one
		if m, ok := root.MethodByName(typ); ok {
			resolvers = m.Type.Out(0)
		}
		for _, f := range fields {
			t.Run(typ+"."+f.Name, func(t *testing.T) {
				fd := def.Fields.ForName(f.Name)
				if fd == nil {
					t.Fatalf("the schema has no field %s.%s", typ, f.Name)
				}
				child := ""
				if named := schema.Types[fd.Type.Name()]; named != nil && named.Kind == ast.Object {
					child = named.Name
				}
				if child != f.Child {
					t.Errorf("readexec says it shows %q, the schema %q", f.Child, child)
				}
				var args []string
				for _, a := range fd.Arguments {
					args = append(args, a.Name)
				}
				slices.Sort(args)
				want := argSets[f.Args]
				if f.Args == "postList" { // group and hideRead are optional: coerced when the field has them
					want = slices.DeleteFunc(slices.Clone(want), func(s string) bool {
						return (s == "group" || s == "hideRead") && !slices.Contains(args, s)
					})
				}
				if !slices.Equal(args, want) {
					t.Errorf("arguments: the schema has %v, readexec coerces %v (%q)", args, want, f.Args)
				}
				hasResolver := false
				if resolvers != nil {
					_, hasResolver = resolvers.MethodByName(templates.ToGo(f.Name))
				}
				if hasResolver != f.Resolver {
					t.Errorf("gqlgen runs a resolver: %v; readexec's table says %v", hasResolver, f.Resolver)
				}
			})
		}
	}
}
