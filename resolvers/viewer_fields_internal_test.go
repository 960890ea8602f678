package resolvers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agora/agora/graph"
)

// viewerFieldExceptions are the resolvers that read the viewer (viewerFrom, requireViewer) for a
// field not in viewerFields, each with why that is safe: viewerFields decides whether a
// subscription's run is shared between viewers (readsViewer), so a field left out must answer
// every viewer alike wherever a shared run could reach it.
var viewerFieldExceptions = map[string]string{
	// These read the viewer only to show removed content to its author and the group's
	// moderators (visiblePost, maskComment): a shared run executes as an anonymous viewer, so it
	// shows every subscriber what anyone may see, never more. Listing their names (post,
	// comment, comments, replies, parent) would make every subscription that reads a comment's
	// post or a post's comments run once per viewer.
	"Post.comments":        "removed comments: the anonymous view",
	"Comment.replies":      "removed replies: the anonymous view",
	"Comment.parent":       "a removed parent: the anonymous view",
	"Notification.post":    "a removed post: the anonymous view; notificationAdded is per viewer anyway",
	"Notification.comment": "a removed comment: the anonymous view; notificationAdded is per viewer anyway",
	"Report.post":          "a removed post: the anonymous view; reports are read by moderators (reports, reportCount)",
	"Report.comment":       "a removed comment: the anonymous view; reports are read by moderators (reports, reportCount)",
}

// viewerDeferred are the functions that do not read the viewer themselves but return a function
// that does, with why what calls them is not a read of the viewer.
var viewerDeferred = map[string]string{
	// The needs of a selection (needs.go) call it only to prefetch the viewer fields the selection
	// reads below (viewerVote, viewerFollows, ...), each listed in viewerFields itself.
	"viewerKey": "prefetches the viewer fields below",
}

// TestResolversReadingTheViewerAreViewerFields holds resolvers/*.go to what viewerFields says:
// every resolver method that reads the viewer, itself or through the package's functions it
// calls, is for a field listed in viewerFields, a mutation's (a mutation is never shared), or an
// exception in viewerFieldExceptions, which says why.
func TestResolversReadingTheViewerAreViewerFields(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &Resolver{}}).Schema()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	type fn struct {
		recv, name string
		calls      map[string]bool // package functions ("f") and unexported methods (".m") it calls
	}
	var fns []*fn
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			x := &fn{name: fd.Name.Name, calls: map[string]bool{}}
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				typ := fd.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					x.recv = id.Name
				}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch f := c.Fun.(type) {
				case *ast.Ident:
					x.calls[f.Name] = true
				case *ast.SelectorExpr:
					// An unexported method is the package's; an exported one is another package's
					// (or a resolver's, which its own field answers for).
					if !ast.IsExported(f.Sel.Name) {
						x.calls["."+f.Sel.Name] = true
					}
				}
				return true
			})
			fns = append(fns, x)
		}
	}
	// reads holds the functions ("f") and unexported methods (".m") that read the viewer.
	reads := map[string]bool{"viewerFrom": true, "requireViewer": true}
	for _, x := range fns {
		if _, ok := viewerDeferred[x.name]; ok && x.recv == "" {
			x.calls = nil
		}
	}
	key := func(x *fn) string {
		if x.recv != "" && !ast.IsExported(x.name) {
			return "." + x.name
		}
		if x.recv == "" {
			return x.name
		}
		return x.recv + "." + x.name
	}
	for changed := true; changed; {
		changed = false
		for _, x := range fns {
			k := key(x)
			if reads[k] {
				continue
			}
			for c := range x.calls {
				if reads[c] {
					reads[k], changed = true, true
					break
				}
			}
		}
	}
	// shareable holds the types a subscription's selection reaches: the types of the fields of
	// Subscription, then of their fields, interfaces and unions included.
	shareable := map[string]bool{}
	var reach func(name string)
	reach = func(name string) {
		typ := schema.Types[name]
		if typ == nil || shareable[name] {
			return
		}
		shareable[name] = true
		for _, f := range typ.Fields {
			reach(f.Type.Name())
		}
		for _, impl := range schema.GetPossibleTypes(typ) {
			reach(impl.Name)
		}
	}
	for _, f := range schema.Subscription.Fields {
		reach(f.Type.Name())
	}
	shareable["Subscription"] = true
	used := map[string]bool{}
	var bad []string
	for _, x := range fns {
		if !reads[key(x)] || !ast.IsExported(x.name) || !strings.HasSuffix(x.recv, "Resolver") || x.recv == "Resolver" {
			continue
		}
		typeName := strings.TrimSuffix(x.recv, "Resolver")
		var field string
		for _, typ := range schema.Types {
			if !strings.EqualFold(typ.Name, typeName) {
				continue
			}
			typeName = typ.Name
			for _, f := range typ.Fields {
				if strings.EqualFold(f.Name, x.name) {
					field = f.Name
				}
			}
		}
		if field == "" {
			t.Errorf("%s.%s reads the viewer, and no field of the schema is its", x.recv, x.name)
			continue
		}
		name := typeName + "." + field
		switch {
		case typeName == "Mutation" || viewerFields[field]:
		case !shareable[typeName]:
			// No subscription's selection reaches the type: no shared run executes the field.
		case viewerFieldExceptions[name] != "":
			used[name] = true
		default:
			bad = append(bad, name)
			var via []string
			for c := range x.calls {
				if reads[c] {
					via = append(via, c)
				}
			}
			t.Logf("%s reads the viewer through %v", name, via)
		}
	}
	sort.Strings(bad)
	for _, name := range bad {
		t.Errorf("%s reads the viewer, but %q is not in viewerFields: list it, or make it an exception that says why", name, name[strings.IndexByte(name, '.')+1:])
	}
	for name := range viewerFieldExceptions {
		if !used[name] {
			t.Errorf("viewerFieldExceptions names %s, which does not read the viewer (take it off)", name)
		}
	}
}
