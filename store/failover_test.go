package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSentinelFailover promotes the replica of a Sentinel-managed master while writers create
// posts and vote, through a client configured as the server configures its own, with
// WaitReplicas 1. Writes may fail while the master changes, but none that was acknowledged may be
// lost, and writes must resume on the promoted replica without a new client. It runs twice: a
// planned failover (SENTINEL FAILOVER) and a master that stops answering (DEBUG SLEEP), which the
// Sentinels must detect themselves.
func TestSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis deployments and disrupts them: not with -short")
	}
	// A private deployment, never the shared one of REDIS_SENTINEL_ADDRS: the failovers below
	// leave it unable to confirm writes for up to half a minute, which would fail the tests of
	// other packages running beside this one against the shared deployment.
	d := storetest.StartDeployment(t, "redis-sentinel.sh")
	addrs, name := strings.Split(d.Env["REDIS_SENTINEL_ADDRS"], ","), d.Env["REDIS_SENTINEL_MASTER"]
	ctx := context.Background()
	rc, err := rdb.NewClient(rdb.ClientConfig{SentinelAddrs: addrs, SentinelMaster: name})
	if err != nil {
		t.Fatal(err)
	}
	rc.AddHook(storetest.SlotCheck{})
	defer rc.Close()
	sentinels := make([]*rdb.SentinelClient, len(addrs))
	for i, a := range addrs {
		sentinels[i] = rdb.NewSentinelClient(&rdb.Options{Addr: a})
		defer sentinels[i].Close()
	}
	planned := func(t *testing.T, master string) error { return sentinels[0].Failover(ctx, name).Err() }
	for _, c := range []struct {
		name    string
		wait    int // Options.WaitReplicas
		trigger func(t *testing.T, master string) error
	}{
		// Without WAIT an acknowledged write can be lost (replication is asynchronous), so only
		// the resumption of writes is checked.
		{"SENTINEL FAILOVER without WAIT", 0, planned},
		{"SENTINEL FAILOVER", 1, planned},
		{"master stops answering", 1, func(t *testing.T, master string) error {
			m := rdb.NewPlainClient(&rdb.Options{Addr: master, ReadTimeout: 30 * time.Second})
			// The Sentinels declare the master down after 1s, agree, and promote the replica
			// while it sleeps; when it wakes they turn it into a replica of the new master. The
			// sleep outlasts a failed first attempt and the Sentinels' retry (2 × failover-timeout
			// in scripts/redis-sentinel.sh), which a loaded machine can need.
			err := m.Do(ctx, "debug", "sleep", 0).Err()
			if err != nil {
				m.Close()
				t.Skipf("DEBUG is not allowed on this deployment: %v", err)
			}
			go func() {
				defer m.Close()
				_ = m.Do(ctx, "debug", "sleep", 15).Err()
			}()
			return nil
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			master := waitHealthy(t, sentinels, name)
			s, err := store.New(ctx, rc, store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords,
				WriteLimit: -1, WaitReplicas: c.wait, WaitTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			old := rdb.NewPlainClient(&rdb.Options{Addr: master, ReadTimeout: 300 * time.Millisecond, MaxRetries: -1})
			defer old.Close()
			runFailover(t, s, rc, c.wait > 0, func() error { return c.trigger(t, master) }, func() bool {
				// The Sentinels name a new master, and the old one has stopped taking writes: it
				// is a replica now, or does not answer. Until then, clients that have not yet
				// learned of the switch still write to it.
				addr, err := sentinels[0].GetMasterAddrByName(ctx, name).Result()
				if err != nil || strings.Join(addr, ":") == master {
					return false
				}
				info, err := old.Info(ctx, "replication").Result()
				return err != nil || !strings.Contains(info, "role:master")
			})
		})
	}
	waitHealthy(t, sentinels, name) // leave the deployment as it was found: a master with a synced replica
}

// waitHealthy waits until every Sentinel names the same master, the master has a replica in sync,
// and the Sentinels can authorize a failover; it returns the master's address.
func waitHealthy(t *testing.T, sentinels []*rdb.SentinelClient, name string) string {
	t.Helper()
	ctx := context.Background()
	var why string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var master string
		agree := true
		for _, s := range sentinels {
			addr, err := s.GetMasterAddrByName(ctx, name).Result()
			if err != nil {
				agree, why = false, err.Error()
				break
			}
			if a := strings.Join(addr, ":"); master == "" {
				master = a
			} else if a != master {
				agree, why = false, "sentinels disagree on the master"
			}
		}
		if !agree {
			continue
		}
		m := rdb.NewPlainClient(&rdb.Options{Addr: master})
		info, err := m.Info(ctx, "replication").Result()
		m.Close()
		if err != nil || !strings.Contains(info, "role:master") || !strings.Contains(info, "state=online") {
			why = fmt.Sprintf("master %s not ready: %v %q", master, err, info)
			continue
		}
		if err := sentinels[0].CkQuorum(ctx, name).Err(); err != nil {
			why = err.Error()
			continue
		}
		return master
	}
	t.Fatalf("sentinel deployment not healthy after 60s: %s", why)
	return ""
}

// runFailover runs writers on s, calls trigger, waits until switched reports the new master, and
// then until every writer has made writes on it; then, when durable, it checks that every
// acknowledged write survived.
func runFailover(t *testing.T, s *store.Store, rc rdb.UniversalClient, durable bool, trigger func() error, switched func() bool) {
	ctx := context.Background()
	const writers = 4
	w := newWorld(t, s, rc, writers*2, 8)
	type pair struct{ user, post string }
	var (
		stop       atomic.Bool
		after      atomic.Bool // the Sentinels named the new master
		mu         sync.Mutex
		created    = map[string]string{} // acknowledged posts: id → title
		votes      = map[pair]int{}      // last acknowledged vote of each pair
		uncertain  = map[pair]bool{}     // a vote failed after the last acknowledged one
		failed     atomic.Int64
		firstErr   atomic.Value
		resumed    [writers]atomic.Int64 // writes acknowledged after the switch, per writer
		posts      = append([]*store.Post(nil), w.posts...)
		requests   atomic.Int64
		lastFailed atomic.Int64 // unix ms of the last failed write
	)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 3))
			mine := []string{w.users[2*g], w.users[2*g+1]}
			for n := 0; !stop.Load(); n++ {
				uid := mine[n%2]
				requests.Add(1)
				var err error
				if n%2 == 0 {
					title := fmt.Sprintf("w%d-%d", g, n)
					var p *store.Post
					if p, err = s.CreatePost(ctx, uk(uid), store.NewPost{Title: title}); err == nil {
						mu.Lock()
						created[p.ID], posts = title, append(posts, p)
						mu.Unlock()
					}
				} else {
					mu.Lock()
					p := posts[r.IntN(len(posts))]
					mu.Unlock()
					if p.Author.ID() == "user:"+uid {
						continue
					}
					dir := r.IntN(3) - 1
					_, err = s.VotePost(ctx, uk(uid), p.ID, dir)
					mu.Lock()
					if err == nil {
						votes[pair{uid, p.ID}] = dir
						delete(uncertain, pair{uid, p.ID})
					} else {
						uncertain[pair{uid, p.ID}] = true
					}
					mu.Unlock()
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					lastFailed.Store(time.Now().UnixMilli())
					time.Sleep(20 * time.Millisecond)
					continue
				}
				if after.Load() {
					resumed[g].Add(1)
				}
				time.Sleep(5 * time.Millisecond) // a steady load, not a flood: the checks read every write back
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()

	// A live-event subscription made on the old master must keep delivering after the switch.
	sub := rdb.NewSubscription(ctx, s.Runner())
	defer sub.Close()
	channel := s.Options().Prefix + "{r:all}:failover-test"
	if err := sub.Subscribe(ctx, channel); err != nil {
		t.Fatal(err)
	}

	time.Sleep(200 * time.Millisecond) // let the writers get going on the old master
	start := time.Now()
	for err := trigger(); err != nil; err = trigger() {
		// A Sentinel refuses while it still considers an earlier failover in progress.
		if time.Since(start) > 30*time.Second {
			t.Fatalf("trigger failover: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A Sentinel may abort a failover it accepted (a replica found out of date, a vote lost on a
	// loaded machine) and does not retry a requested one by itself: ask again every 20s.
	for retry := time.Now().Add(20 * time.Second); !switched(); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 90*time.Second {
			t.Fatal("timed out after 90s waiting for the Sentinels to name a new master and demote the old one")
		}
		if time.Now().After(retry) {
			t.Logf("no switch %s after the trigger: asking again", time.Since(start).Round(time.Second))
			_ = trigger()
			retry = time.Now().Add(20 * time.Second)
		}
	}
	promoted := time.Since(start)
	after.Store(true)
	waitUntilFor(t, 60*time.Second, "writes to resume on the new master", func() bool {
		for g := range writers {
			if resumed[g].Load() < 10 {
				return false
			}
		}
		return true
	})
	resumedIn := time.Since(start)
	stop.Store(true)
	wg.Wait()
	// Publish until the subscription delivers: it may be reconnecting to the new master.
	for i, deadline := 0, time.Now().Add(30*time.Second); ; i++ {
		if time.Now().After(deadline) {
			t.Fatal("the subscription made before the failover delivers nothing after it")
		}
		if err := s.Publish(ctx, channel, fmt.Sprint(i)); err != nil {
			t.Logf("publish: %v", err)
		}
		select {
		case m := <-sub.Messages():
			if m.Channel != channel {
				t.Fatalf("message on %s", m.Channel)
			}
		case <-time.After(200 * time.Millisecond):
			continue
		}
		break
	}
	var window time.Duration
	if ms := lastFailed.Load(); ms > 0 {
		window = time.UnixMilli(ms).Sub(start)
	}
	t.Logf("new master named and old one demoted %s after the trigger; every writer acknowledged 10 writes on the new one after %s; "+
		"%d of %d writes failed, the last %s after the trigger (first error: %v)",
		promoted.Round(time.Millisecond), resumedIn.Round(time.Millisecond), failed.Load(), requests.Load(),
		window.Round(time.Millisecond), firstErr.Load())

	// Every acknowledged write survived the failover (with WAIT; without it, losses are counted).
	l := s.NewLoader()
	lost := 0
	loss := func(format string, args ...any) {
		t.Helper()
		if durable {
			t.Fatalf(format, args...)
		}
		lost++
	}
	for id, title := range created {
		if p, err := l.Post(ctx, id); err != nil {
			t.Fatal(err)
		} else if p == nil || p.Title != title {
			loss("acknowledged post %s (%q) lost: %+v", id, title, p)
		}
	}
	checked := 0
	for v, dir := range votes {
		if uncertain[v] {
			continue // a later, failed vote may or may not have replaced it
		}
		p, err := l.Post(ctx, v.post)
		if err != nil {
			t.Fatal(err)
		}
		if p == nil {
			loss("post %s of an acknowledged vote lost", v.post)
			continue
		}
		got, err := l.PostVote(ctx, p, uk(v.user))
		if err != nil {
			t.Fatal(err)
		}
		if got != dir {
			loss("acknowledged vote %d of %s on %s reads as %d", dir, v.user, v.post, got)
		}
		checked++
	}
	if len(created) == 0 || checked == 0 {
		t.Fatalf("nothing acknowledged: %d posts, %d votes", len(created), checked)
	}
	t.Logf("%d acknowledged posts and %d acknowledged votes checked, %d lost", len(created), checked, lost)
	// Derived writes of failed requests may be missing; a rebuild restores them. The posts of
	// failed creations may exist too: check against every post there is.
	if _, err := s.Rebuild(ctx); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	seq, err := rc.Get(ctx, s.PostSeqKeyForTest()).Int()
	if err != nil {
		t.Fatal(err)
	}
	w.posts = nil
	for i := 1; i <= seq; i++ {
		if p, err := l.Post(ctx, fmt.Sprintf("post:%d", i)); err != nil {
			t.Fatal(err)
		} else if p != nil {
			w.posts = append(w.posts, p)
		}
	}
	w.checkDerived(t)
}

// waitUntilFor polls cond every 10ms until it holds or d passes.
func waitUntilFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
	}
}
