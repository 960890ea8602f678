//go:build unix

package store_test

import (
	"cmp"
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// redisTimeout is the deadline of the tests below, short to keep them quick. A call must fail
// within a few of it: a bound on behaviour, generous for a loaded machine, not a benchmark. The
// calls that wait for Redis more than once in a row get slowWithin: a scan of a cluster. (Live
// subscriptions have the same tests in package live.)
const (
	redisTimeout = 300 * time.Millisecond
	failWithin   = 5 * redisTimeout
	slowWithin   = 10 * redisTimeout
)

// TestFrozenRedisFailsEveryCallQuickly freezes Redis under a store and checks that each way the
// store talks to Redis fails within a few timeouts with KindUnavailable — loader reads, a page
// walk, a write script behind its rate limit, a single command, a ping and a maintenance scan —
// and that each works again once Redis is back.
func TestFrozenRedisFailsEveryCallQuickly(t *testing.T) {
	for _, fr := range storetest.Freezables() {
		t.Run(fr.Name, func(t *testing.T) {
			t.Parallel()
			c, freeze := fr.Start(t)
			st := storetest.NewBoundedStore(t, c, redisTimeout)
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
					_, err := st.NewLoader().Posts(ctx, store.SortHot, "go", store.Window{First: 10}, nil)
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
