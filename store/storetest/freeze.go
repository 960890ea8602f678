//go:build unix

package storetest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
)

// PrivateServer starts a redis-server for one test alone and stops it when the test ends, for
// tests that disrupt their server (see Freeze). Like RealServer it skips the test when
// redis-server is not on PATH, or fails it under REQUIRE_REAL_REDIS=1, and skips it when
// BackendsEnv leaves out "redis".
func PrivateServer(t testing.TB, extra ...string) *Server {
	t.Helper()
	SkipUnless(t, "redis")
	s, err := StartServer(extra...)
	if err != nil {
		if os.Getenv("REQUIRE_REAL_REDIS") == "1" {
			t.Fatalf("REQUIRE_REAL_REDIS=1 but no real redis: %v", err)
		}
		t.Skipf("no real redis: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Freeze stops the server's process (SIGSTOP): its connections stay open and the kernel still
// accepts new ones, but nothing is answered, as when the machine under Redis stalls. thaw resumes
// it (SIGCONT); the test's cleanup thaws it too, so a failing test never leaves it stopped.
func (s *Server) Freeze(t testing.TB) (thaw func()) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("freeze redis-server: %v", err)
	}
	thaw = func() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }
	t.Cleanup(thaw)
	return thaw
}

// Freezable is a Redis deployment a test can freeze: Start returns how to reach it and freeze,
// which stops it answering until thaw.
type Freezable struct {
	Name  string
	Start func(t *testing.T) (c rdb.ClientConfig, freeze func(t *testing.T) (thaw func()))
}

// Freezables returns the Redis deployments a freeze can be simulated on: miniredis behind a proxy
// that stops forwarding, a redis-server of the test's own stopped with SIGSTOP, and a Redis
// Cluster of the test's own (not the shared one, which other tests use) whose every node is
// stopped so. BackendsEnv narrows them as it narrows Backends, the last two being real servers
// ("redis": see SkipUnless).
func Freezables() []Freezable {
	return []Freezable{
		{Name: "miniredis", Start: func(t *testing.T) (rdb.ClientConfig, func(*testing.T) func()) {
			SkipUnless(t, "miniredis")
			p := NewProxy(t, miniredis.RunT(t).Addr())
			return rdb.ClientConfig{URL: p.Addr()}, func(t *testing.T) func() { return p.Stall(t) }
		}},
		{Name: "redis", Start: func(t *testing.T) (rdb.ClientConfig, func(*testing.T) func()) {
			srv := PrivateServer(t)
			return rdb.ClientConfig{URL: srv.Addr}, func(t *testing.T) func() { return srv.Freeze(t) }
		}},
		{Name: "cluster", Start: func(t *testing.T) (rdb.ClientConfig, func(*testing.T) func()) {
			if testing.Short() {
				t.Skip("starts a Redis Cluster: not with -short")
			}
			d := StartDeployment(t, "redis-cluster.sh")
			return rdb.ClientConfig{ClusterAddrs: strings.Split(d.Env["REDIS_CLUSTER_ADDRS"], ",")},
				func(t *testing.T) func() { return signalAll(t, d.Dir) }
		}},
	}
}

// signalAll stops every redis-server whose pid file is in dir (SIGSTOP) and returns thaw, which
// resumes them (SIGCONT) and which the test's cleanup calls too.
func signalAll(t *testing.T, dir string) (thaw func()) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.pid"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no pid files in %s: %v", dir, err)
	}
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("pid file %s: %v", f, err)
		}
		pids = append(pids, pid)
	}
	thaw = func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(thaw)
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatalf("freeze redis-server %d: %v", pid, err)
		}
	}
	return thaw
}

// NewBoundedStore returns a store on the Redis of c, with a fresh prefix, through a client made
// as the server makes its own, both bounded by timeout (ClientConfig.Timeout,
// Options.RedisTimeout). The client is closed when the test ends.
func NewBoundedStore(t *testing.T, c rdb.ClientConfig, timeout time.Duration) *store.Store {
	t.Helper()
	c.Timeout = timeout
	rdb, err := rdb.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	opts := store.Options{Prefix: Prefix(), Password: FastPasswords, WriteLimit: 1000, RedisTimeout: timeout}
	// The start (loading the scripts) is not what such a test bounds: on a loaded machine a freshly
	// started server may take longer than timeout to answer it, which is an UNAVAILABLE the caller
	// would retry, and so does this.
	for attempt := 1; ; attempt++ {
		st, err := store.New(context.Background(), rdb, opts)
		if err == nil {
			return st
		}
		if attempt == 5 || !store.IsKind(err, store.KindUnavailable) {
			t.Fatal(err)
		}
		time.Sleep(timeout)
	}
}
