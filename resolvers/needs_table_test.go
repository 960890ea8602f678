package resolvers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"testing"

	gqlast "github.com/vektah/gqlparser/v2/ast"

	"github.com/agora/agora/graph"
)

// typeField matches the "Type.field" names of the needs table's cases.
var typeField = regexp.MustCompile(`^([A-Z][A-Za-z]*)\.([a-z][A-Za-z]*)$`)

// TestNeedsTableNamesSchemaFields holds the table that turns selections into store.Needs
// (needs.go, a switch on "Type.field") to the schema: a case naming a field the schema does not
// have — renamed or removed — would silently stop prefetching it, so it fails here.
func TestNeedsTableNamesSchemaFields(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	f, err := parser.ParseFile(token.NewFileSet(), "needs.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	ast.Inspect(f, func(n ast.Node) bool {
		cc, ok := n.(*ast.CaseClause)
		if !ok {
			return true
		}
		for _, e := range cc.List {
			lit, ok := e.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			s, _ := strconv.Unquote(lit.Value)
			m := typeField.FindStringSubmatch(s)
			if m == nil {
				continue
			}
			cases++
			def := schema.Types[m[1]]
			if def == nil || (def.Kind != gqlast.Object && def.Kind != gqlast.Interface) {
				t.Errorf("needs.go names %s: the schema has no type %s", s, m[1])
				continue
			}
			if def.Fields.ForName(m[2]) == nil {
				t.Errorf("needs.go names %s: the schema has no field %s on %s", s, m[2], m[1])
			}
		}
		return true
	})
	if cases < 20 {
		t.Fatalf("found %d Type.field cases in needs.go: the table moved, so this test reads nothing", cases)
	}
}
