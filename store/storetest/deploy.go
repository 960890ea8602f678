package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// ClusterAddrs returns the seed addresses of the shared test cluster named by
// REDIS_CLUSTER_ADDRS (comma-separated host:port), the one the "cluster" backend of Backends
// uses. Without it the test is skipped, or fails when REQUIRE_REDIS_CLUSTER=1 (as in CI); it is
// skipped too when BackendsEnv leaves out "cluster".
func ClusterAddrs(t testing.TB) []string {
	t.Helper()
	SkipUnless(t, "cluster")
	addrs := os.Getenv("REDIS_CLUSTER_ADDRS")
	if addrs == "" {
		if os.Getenv("REQUIRE_REDIS_CLUSTER") == "1" {
			t.Fatal("REQUIRE_REDIS_CLUSTER=1 but REDIS_CLUSTER_ADDRS is not set")
		}
		t.Skip("no Redis Cluster: set REDIS_CLUSTER_ADDRS (scripts/redis-cluster.sh starts one)")
	}
	return strings.Split(addrs, ",")
}

// NewClusterClient returns a cluster client on addrs configured as the server configures its own
// (rdb.NewClient), carrying SlotCheck, closed when the test ends.
func NewClusterClient(t testing.TB, addrs []string) *rdb.ClusterClient {
	t.Helper()
	c, err := rdb.NewClient(rdb.ClientConfig{ClusterAddrs: addrs})
	if err != nil {
		t.Fatal(err)
	}
	cc := c.(*rdb.ClusterClient)
	cc.AddHook(SlotCheck{})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// Deployment is a set of local Redis processes started by one of the repository's
// scripts/redis-*.sh scripts in a temporary directory.
type Deployment struct {
	// Env holds the variables the script exported, such as REDIS_CLUSTER_ADDRS.
	Env    map[string]string
	Dir    string
	script string
}

// StartDeployment runs `scripts/<script> start DIR args...` and stops the processes when the test
// ends. It needs bash, redis-server and redis-cli on PATH: without them the test is skipped, or
// fails under REQUIRE_REAL_REDIS=1; it is skipped when BackendsEnv leaves out "redis".
func StartDeployment(t testing.TB, script string, args ...string) *Deployment {
	t.Helper()
	SkipUnless(t, "redis")
	for _, bin := range []string{"bash", "redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("REQUIRE_REAL_REDIS") == "1" {
				t.Fatalf("REQUIRE_REAL_REDIS=1 but %s is not on PATH", bin)
			}
			t.Skipf("%s is not on PATH", bin)
		}
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	d := &Deployment{Env: map[string]string{}, Dir: t.TempDir(), script: filepath.Join(root, "scripts", script)}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", append([]string{d.script, "start", d.Dir}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t.Cleanup(d.Stop) // registered before the start, so a half-started deployment is stopped too
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s start: %v\n%s", script, err, stderr.String())
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok {
			d.Env[k] = v
		}
	}
	return d
}

// Stop stops the deployment's processes, by the process ids its script recorded in Dir, and waits
// until they have exited. It is called when the test ends; a test may call it before.
func (d *Deployment) Stop() {
	_ = exec.Command("bash", d.script, "stop", d.Dir).Run()
}

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find module root: no go.mod above the working directory")
		}
		dir = parent
	}
}
