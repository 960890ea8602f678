package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// clientUsers are the functions that may use the Store's go-redis client (its rdb field) directly,
// as "file:Func" or "file:Type.Method"; commands.go says why each must.
var clientUsers = map[string]bool{
	"store.go:New":                   true, // sets the client up, loads the scripts, makes the runner
	"store.go:Store.Ping":            true, // the health check
	"ranking.go:Store.scanKeys":      true, // SCAN on each master's own client
	"redischeck.go:Store.eachMaster": true, // start-up checks of every master
}

// TestOnlyTheRunnerUsesTheClient holds the boundary of commands.go: outside the functions of
// clientUsers, no non-test file of package store names the rdb field (a direct client call would
// escape the runner's retries, round-trip count and tracing), and no command sent through the
// runner is walked with go-redis's Iterator, whose further pages would go to a spent pipeline.
func TestOnlyTheRunnerUsesTheClient(t *testing.T) {
	seen := map[string]bool{}
	storeDecls(t, func(fset *token.FileSet, name string, d ast.Decl) {
		where := name + ":" + declName(d)
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if n.Sel.Name != "rdb" {
					return true
				}
				if !clientUsers[where] {
					t.Errorf("%s: %s uses the client directly; send the command through the runner (s.cmd(), s.pipeline)", fset.Position(n.Pos()), where)
				}
				seen[where] = true
			case *ast.KeyValueExpr: // Store{rdb: …}
				if id, ok := n.Key.(*ast.Ident); ok && id.Name == "rdb" {
					if !clientUsers[where] {
						t.Errorf("%s: %s sets up a client outside New", fset.Position(n.Pos()), where)
					}
					seen[where] = true
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Iterator" && throughRunner(sel.X) {
					t.Errorf("%s: %s walks a command of the runner with Iterator; use s.cmd().ZScanIterator or HScanIterator", fset.Position(n.Pos()), where)
				}
			}
			return true
		})
	})
	var stale []string
	for w := range clientUsers {
		if !seen[w] {
			stale = append(stale, w)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("clientUsers names functions that no longer use the client (take them off): %v", stale)
	}
}

// storeDecls parses the non-test files of package store and calls fn with each top-level
// declaration, for the scans that hold the package to its rules.
func storeDecls(t *testing.T, fn func(fset *token.FileSet, file string, d ast.Decl)) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn(fset, name, d)
		}
	}
}

// declName names a top-level declaration: "Func", "Type.Method", or "" for any other.
func declName(d ast.Decl) string {
	fd, ok := d.(*ast.FuncDecl)
	if !ok {
		return ""
	}
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// throughRunner reports whether e is a chain of calls that starts with cmd() (s.cmd().ZScan(…)).
func throughRunner(e ast.Expr) bool {
	for {
		call, ok := e.(*ast.CallExpr)
		if !ok {
			return false
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if sel.Sel.Name == "cmd" {
			return true
		}
		e = sel.X
	}
}
