package rdb_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goRedis is the import path prefix of the Redis client library that only this package may
// import.
const goRedis = "github.com/redis/go-redis"

// TestOnlyRdbImportsGoRedis holds the boundary of package rdb: no other package of the module,
// in its code or its tests (internal or external), imports go-redis. It asks the go tool for
// every package's imports, so a file added anywhere is checked without a list to keep.
func TestOnlyRdbImportsGoRedis(t *testing.T) {
	mod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	cmd := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(mod)))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/agora/agora/internal/rdb"
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		checked++
		if fields[0] == self {
			continue
		}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, goRedis) {
				t.Errorf("package %s imports %s: only %s may (use its types instead)", fields[0], imp, self)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("go list named %d packages, want the whole module:\n%s", checked, out)
	}
}
