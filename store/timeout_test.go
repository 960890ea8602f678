//go:build unix

package store_test

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// frozenRedis is a Redis deployment a test can freeze: start returns how to reach it and freeze,
// which stops it answering until thaw.
type frozenRedis struct {
	name  string
	start func(t *testing.T) (c store.ClientConfig, freeze func(t *testing.T) (thaw func()))
}

// frozenRedises are the Redis deployments a freeze can be simulated on: miniredis behind a proxy
// that stops forwarding, a redis-server of the test's own stopped with SIGSTOP, and a Redis
// Cluster of the test's own (not the shared one, which other tests use) whose every node is
// stopped so.
var frozenRedises = []frozenRedis{
	{name: "miniredis", start: func(t *testing.T) (store.ClientConfig, func(*testing.T) func()) {
		p := storetest.NewProxy(t, miniredis.RunT(t).Addr())
		return store.ClientConfig{URL: p.Addr()}, func(t *testing.T) func() { return p.Stall(t) }
	}},
	{name: "redis", start: func(t *testing.T) (store.ClientConfig, func(*testing.T) func()) {
		srv := storetest.PrivateServer(t)
		return store.ClientConfig{URL: srv.Addr}, func(t *testing.T) func() { return srv.Freeze(t) }
	}},
	{name: "cluster", start: func(t *testing.T) (store.ClientConfig, func(*testing.T) func()) {
		if testing.Short() {
			t.Skip("starts a Redis Cluster: not with -short")
		}
		d := storetest.StartDeployment(t, "redis-cluster.sh")
		return store.ClientConfig{ClusterAddrs: strings.Split(d.Env["REDIS_CLUSTER_ADDRS"], ",")},
			func(t *testing.T) func() { return signalAll(t, d.Dir) }
	}},
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

// redisTimeout is the deadline of the tests below, short to keep them quick. A call must fail
// within a few of it: a bound on behaviour, generous for a loaded machine, not a benchmark. The
// calls that wait for Redis more than once in a row get slowWithin: a new live subscription (its
// SUBSCRIBE, and the UNSUBSCRIBE the hub sends after it fails, each wait for the shared pub/sub
// connection, which go-redis keeps trying to reconnect while holding it) and a scan of a cluster.
const (
	redisTimeout = 300 * time.Millisecond
	failWithin   = 5 * redisTimeout
	slowWithin   = 10 * redisTimeout
)

// newBoundedStore returns a store on the Redis of c through a client made as the server makes its
// own, both bounded by redisTimeout.
func newBoundedStore(t *testing.T, c store.ClientConfig) *store.Store {
	t.Helper()
	c.Timeout = redisTimeout
	rdb, err := store.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := store.New(context.Background(), rdb, store.Options{Prefix: storetest.Prefix(),
		Password: storetest.FastPasswords, WriteLimit: 1000, RedisTimeout: redisTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestFrozenRedisFailsEveryCallQuickly freezes Redis under a store and checks that each way the
// store talks to Redis fails within a few timeouts with KindUnavailable — loader reads, a page
// walk, a write script behind its rate limit, a single command, a ping, a live subscription and a
// maintenance scan — and that each works again once Redis is back.
func TestFrozenRedisFailsEveryCallQuickly(t *testing.T) {
	for _, fr := range frozenRedises {
		t.Run(fr.name, func(t *testing.T) {
			t.Parallel()
			c, freeze := fr.start(t)
			st := newBoundedStore(t, c)
			ctx := context.Background()
			sess, err := st.SignUp(ctx, "alice", "password1")
			if err != nil {
				t.Fatal(err)
			}
			alice := sess.User.Key()
			post, err := st.CreatePost(ctx, alice, store.NewPost{Title: "before the freeze", Groups: []string{"go"}})
			if err != nil {
				t.Fatal(err)
			}
			bob, err := st.SignUp(ctx, "bob", "password1")
			if err != nil {
				t.Fatal(err)
			}
			calls := []struct {
				name   string
				call   func(ctx context.Context) error
				within time.Duration // 0: failWithin
			}{
				{name: "loader read", call: func(ctx context.Context) error {
					_, err := st.NewLoader().Post(ctx, post.ID)
					return err
				}},
				{name: "page walk", call: func(ctx context.Context) error {
					_, err := st.NewLoader().Posts(ctx, store.SortHot, "go", 10, "", nil)
					return err
				}},
				{name: "write script after its rate limit", call: func(ctx context.Context) error {
					_, err := st.VotePost(ctx, bob.User.Key(), post.ID, 1)
					return err
				}},
				{name: "single command", call: func(ctx context.Context) error {
					_, err := st.Authenticate(ctx, sess.Token)
					return err
				}},
				{name: "ping", call: st.Ping},
				{name: "live subscription", call: func(ctx context.Context) error {
					sub, err := st.SubscribePostPublished(ctx, "go")
					if err == nil {
						sub.Close()
					}
					return err
				}, within: slowWithin},
				// On a cluster the scan first asks each node in turn for the slot map, each with
				// its own timeout.
				{name: "maintenance scan", call: func(ctx context.Context) error {
					_, err := st.Rebuild(ctx)
					return err
				}, within: slowWithin},
			}

			thaw := freeze(t)
			for _, c := range calls {
				start := time.Now()
				err := c.call(ctx)
				took := time.Since(start)
				if !store.IsKind(err, store.KindUnavailable) {
					t.Errorf("%s on a frozen Redis: err = %v, want KindUnavailable", c.name, err)
				}
				within := cmp.Or(c.within, failWithin)
				if took > within {
					t.Errorf("%s on a frozen Redis took %s, want under %s", c.name, took, within)
				}
				t.Logf("%s on a frozen Redis: %s after %s", c.name, err, took.Round(time.Millisecond))
			}
			thaw()
			for _, c := range calls {
				// The first calls after the thaw may still meet a connection that timed out.
				var err error
				for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
					if err = c.call(ctx); err == nil {
						break
					}
				}
				if err != nil {
					t.Errorf("%s after the thaw: %v", c.name, err)
				}
			}
		})
	}
}

// TestQuietSubscriptionOutlivesTheTimeout checks that the deadline bounds what the store asks of
// Redis, not the wait for live events: a subscription that hears nothing for several timeouts
// still delivers the next event.
func TestQuietSubscriptionOutlivesTheTimeout(t *testing.T) {
	for _, fr := range frozenRedises {
		t.Run(fr.name, func(t *testing.T) {
			t.Parallel()
			c, _ := fr.start(t)
			st := newBoundedStore(t, c)
			ctx := context.Background()
			sess, err := st.SignUp(ctx, "carol", "password1")
			if err != nil {
				t.Fatal(err)
			}
			sub, err := st.SubscribePostPublished(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			time.Sleep(4 * redisTimeout)
			post, err := st.CreatePost(ctx, sess.User.Key(), store.NewPost{Title: "after a quiet while"})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case ev, ok := <-sub.Events():
				if !ok {
					t.Fatalf("the subscription ended: %v", sub.Err())
				}
				if ev.Post != post.ID {
					t.Fatalf("event %+v, want post %s", ev, post.ID)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no event")
			}
		})
	}
}
