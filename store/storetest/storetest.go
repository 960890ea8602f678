// Package storetest runs tests against every Redis backend available: an in-process miniredis
// always, a real redis-server that it starts on a free port whenever the binary is on PATH, and a
// Redis Cluster when REDIS_CLUSTER_ADDRS names one (scripts/redis-cluster.sh starts one). Each
// test gets its own key prefix, so tests share a server safely and run in parallel. Every
// backend's client carries SlotCheck, so a script or transaction spanning hash slots fails on
// every backend as it would on a cluster.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
)

// Backend is one Redis to test against.
type Backend struct {
	Name   string
	Client rdb.UniversalClient
	// Mini is the miniredis behind the backend, nil for real servers. Tests that need it (to
	// move its clock, say) skip other backends and say so in their names.
	Mini *miniredis.Miniredis
}

// Server is a redis-server process started for the tests of one package.
type Server struct {
	Addr   string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
}

// real is the package's real redis-server, started by Main.
var real struct {
	once sync.Once
	srv  *Server
	err  error
}

// Main runs a package's tests with a real redis-server started beside them (when the binary is on
// PATH) and stopped after. With REQUIRE_REAL_REDIS=1 a missing binary fails the run. Call it from
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if real.srv != nil {
		real.srv.Stop()
	}
	os.Exit(code)
}

// RealServer returns the package's real redis-server, starting it on first use. It skips the
// test when redis-server is not installed, or fails it when REQUIRE_REAL_REDIS=1; it skips it too
// when BackendsEnv leaves out "redis".
func RealServer(t testing.TB) *Server {
	t.Helper()
	SkipUnless(t, "redis")
	real.once.Do(func() { real.srv, real.err = StartServer() })
	if real.err != nil {
		if os.Getenv("REQUIRE_REAL_REDIS") == "1" {
			t.Fatalf("REQUIRE_REAL_REDIS=1 but no real redis: %v", real.err)
		}
		t.Skipf("no real redis: %v", real.err)
	}
	return real.srv
}

// StartServer starts a redis-server without persistence on a free port. A port is only free until
// someone takes it, so it checks that the server answering is the one it started (by its process
// id) and tries another port when that server exited or another answers.
func StartServer(extra ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not on PATH: %w", err)
	}
	var last error
	for attempt := 0; attempt < 5; attempt++ {
		s, err := startOn(bin, extra)
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, last
}

// StartServerOn starts a redis-server without persistence on port, as StartServer does, for a
// server that must come back on the address it had (a Cluster's node, whose peers know it by its
// address). It fails when another process answers on port.
func StartServerOn(port int, extra ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not on PATH: %w", err)
	}
	return startOnPort(bin, port, extra)
}

func startOn(bin string, extra []string) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return startOnPort(bin, port, extra)
}

func startOnPort(bin string, port int, extra []string) (*Server, error) {
	args := append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--loglevel", "warning", "--daemonize", "no"}, extra...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	c := rdb.NewPlainClient(&rdb.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	want := fmt.Sprintf("process_id:%d", cmd.Process.Pid)
	for i := 0; ; i++ {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("redis-server on port %d exited at start (port taken?)", port)
		default:
		}
		if info, err := c.Info(context.Background(), "server").Result(); err == nil {
			if strings.Contains(info, want+"\r\n") || strings.Contains(info, want+"\n") {
				return s, nil
			}
			s.Stop()
			return nil, fmt.Errorf("another redis-server answers on port %d", port)
		}
		if i > 100 {
			s.Stop()
			return nil, fmt.Errorf("redis-server on %s did not answer", s.Addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop kills the server and waits for it to exit.
func (s *Server) Stop() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// FreePort returns a TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// BackendsEnv names the environment variable that narrows the backends a test runs on: a
// comma-separated list of backend names (miniredis, redis, cluster). Unset or empty, a test runs on
// every backend available. CI runs the suite twice side by side with it: under the race detector
// on the real redis-server, and without it on miniredis and the cluster (the detector checks
// agora's code, which runs the same on every backend; see .ci/run).
const BackendsEnv = "AGORA_TEST_BACKENDS"

// SkipUnless skips the test when BackendsEnv is set and does not name the backend name: the
// helpers that start or reach a real server of their own (RealServer, PrivateServer,
// StartDeployment: "redis"; ClusterAddrs: "cluster") call it, so that a run narrowed to miniredis
// leaves their tests to the run of the real servers.
func SkipUnless(t testing.TB, name string) {
	t.Helper()
	if !wanted(name) {
		t.Skipf("%s=%q leaves out the %s backend", BackendsEnv, os.Getenv(BackendsEnv), name)
	}
}

// wanted reports whether the backend named name is among those BackendsEnv names.
func wanted(name string) bool {
	list := strings.TrimSpace(os.Getenv(BackendsEnv))
	if list == "" {
		return true
	}
	for _, n := range strings.Split(list, ",") {
		if strings.TrimSpace(n) == name {
			return true
		}
	}
	return false
}

// Backends returns the backends to run a test on, closing their clients when it ends: miniredis,
// the package's real redis-server and the cluster of REDIS_CLUSTER_ADDRS, those BackendsEnv
// names when it is set. A test none of whose backends is available is skipped.
func Backends(t testing.TB) []Backend {
	t.Helper()
	var out []Backend
	if wanted("miniredis") {
		m := miniredis.RunT(t)
		mc := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
		mc.AddHook(SlotCheck{})
		t.Cleanup(func() { _ = mc.Close() })
		out = append(out, Backend{Name: "miniredis", Client: mc, Mini: m})
	}
	if wanted("redis") {
		real.once.Do(func() { real.srv, real.err = StartServer() })
		switch {
		case real.err == nil:
			rc := rdb.NewPlainClient(&rdb.Options{Addr: real.srv.Addr})
			rc.AddHook(SlotCheck{})
			t.Cleanup(func() { _ = rc.Close() })
			out = append(out, Backend{Name: "redis", Client: rc})
		case os.Getenv("REQUIRE_REAL_REDIS") == "1":
			t.Fatalf("REQUIRE_REAL_REDIS=1 but no real redis: %v", real.err)
		}
	}
	if wanted("cluster") {
		if addrs := os.Getenv("REDIS_CLUSTER_ADDRS"); addrs != "" {
			out = append(out, Backend{Name: "cluster", Client: NewClusterClient(t, strings.Split(addrs, ","))})
		} else if os.Getenv("REQUIRE_REDIS_CLUSTER") == "1" {
			t.Fatal("REQUIRE_REDIS_CLUSTER=1 but REDIS_CLUSTER_ADDRS is not set")
		}
	}
	if len(out) == 0 {
		t.Skipf("none of the backends %s=%q names is available", BackendsEnv, os.Getenv(BackendsEnv))
	}
	return out
}

// NewClient returns a new client to the same Redis as b.Client (closed when the test ends), for
// tests that add hooks without seeing the commands of tests running beside them.
func (b Backend) NewClient(t testing.TB) rdb.UniversalClient {
	t.Helper()
	var c rdb.UniversalClient
	switch bc := b.Client.(type) {
	case *rdb.Client:
		o := *bc.Options()
		// The copy would share b.Client's push-notification processor, on which go-redis then
		// fails to register its handlers again (a "failed to initialize maintnotifications" line
		// in every test's log): the new client makes its own.
		o.PushNotificationProcessor = nil
		c = rdb.NewPlainClient(&o)
	case *rdb.ClusterClient:
		o := *bc.Options()
		c = rdb.NewPlainClusterClient(&o)
	default:
		t.Fatalf("storetest: unknown client type %T", b.Client)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Counted returns b on a client of its own whose round trips the returned RoundTrips counts.
func (b Backend) Counted(t testing.TB) (Backend, *RoundTrips) {
	t.Helper()
	rt := &RoundTrips{}
	b.Client = b.NewClient(t)
	b.Client.AddHook(rt)
	return b, rt
}

// Hooked returns b on a client of its own carrying h (the backend's other clients do not).
func (b Backend) Hooked(t testing.TB, h *Hook) Backend {
	t.Helper()
	b.Client = b.NewClient(t)
	b.Client.AddHook(h)
	return b
}

// RoundTrips counts the round trips a client makes: each command sent alone and each pipeline
// counts one. It also counts the commands they carry. Add it with client.AddHook, or get a
// backend counted by it with Backend.Counted.
type RoundTrips struct{ n, cmds atomic.Int64 }

// Count returns the round trips so far.
func (r *RoundTrips) Count() int64 { return r.n.Load() }

// Commands returns the commands sent so far, those in pipelines included.
func (r *RoundTrips) Commands() int64 { return r.cmds.Load() }

// Reset sets the count to zero.
func (r *RoundTrips) Reset() { r.n.Store(0); r.cmds.Store(0) }

// DialHook passes dials through.
func (r *RoundTrips) DialHook(next rdb.DialHook) rdb.DialHook { return next }

// ProcessHook counts a single command.
func (r *RoundTrips) ProcessHook(next rdb.ProcessHook) rdb.ProcessHook {
	return func(ctx context.Context, cmd rdb.Cmder) error {
		r.n.Add(1)
		r.cmds.Add(1)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook counts a pipeline.
func (r *RoundTrips) ProcessPipelineHook(next rdb.ProcessPipelineHook) rdb.ProcessPipelineHook {
	return func(ctx context.Context, cmds []rdb.Cmder) error {
		r.n.Add(1)
		r.cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// Run runs f as a parallel subtest on every backend.
func Run(t *testing.T, f func(t *testing.T, b Backend)) {
	t.Helper()
	for _, b := range Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			f(t, b)
		})
	}
}

// Prefix returns a key prefix unique to one test.
func Prefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "t" + hex.EncodeToString(b) + ":"
}

// FastPasswords is a cheap argon2id cost for tests that sign up many users.
var FastPasswords = store.PasswordParams{Memory: 64, Time: 1, Threads: 1}

// NewStore returns a Store on b with a fresh prefix. Unset options get test-friendly values: cheap
// password hashing and no write rate limit.
func (b Backend) NewStore(t testing.TB, opts store.Options) *store.Store {
	t.Helper()
	if opts.Prefix == "" {
		opts.Prefix = Prefix()
	}
	if opts.Password == (store.PasswordParams{}) {
		opts.Password = FastPasswords
	}
	if opts.WriteLimit == 0 {
		opts.WriteLimit = -1
	}
	s, err := store.New(context.Background(), b.Client, opts)
	if err != nil {
		t.Fatalf("new store: %v", err)
	}
	return s
}
