package store_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestClusterOperations runs what operators do to a live cluster — flushing a node's script
// cache (as a restart or a new node does), and moving slots between masters — on a private
// 3-master cluster that scripts/redis-cluster.sh starts for it, so the shared test cluster and the
// tests on it are not disturbed.
func TestClusterOperations(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis deployments and disrupts them: not with -short")
	}
	d := storetest.StartDeployment(t, "redis-cluster.sh")
	addrs := strings.Split(d.Env["REDIS_CLUSTER_ADDRS"], ",")
	cc := storetest.NewClusterClient(t, addrs)
	ctx := context.Background()
	if err := cc.ForEachShard(ctx, func(ctx context.Context, c *rdb.Client) error { return c.Ping(ctx).Err() }); err != nil {
		t.Fatal(err)
	}
	t.Run("script cache lost", func(t *testing.T) { testScriptCacheLost(t, cc) })
	t.Run("half-migrated slots", func(t *testing.T) { testHalfMigratedSlots(t, addrs) })
	t.Run("half-migrated comment thread", func(t *testing.T) { testHalfMigratedThread(t, addrs) })
	t.Run("resharding under load", func(t *testing.T) { testReshardingUnderLoad(t, addrs) })
	t.Run("half-migrated search dictionary", func(t *testing.T) { testHalfMigratedSearchDict(t, addrs) })
	t.Run("full", func(t *testing.T) { testFullCluster(t, cc) })
}

// testFullCluster fills every master of the cluster (maxmemory 1, noeviction) under a community
// written with room: each of the community's next writes is refused with KindStorageFull, no
// master's data changes (DEBUG DIGEST of each), and the site reads as before — TestFullRedis's
// first part on a Cluster, where a write's atomic step and derived writes run on other masters.
func testFullCluster(t *testing.T, cc *rdb.ClusterClient) {
	ctx := context.Background()
	clock := newStepClock()
	c := newMoreCommunity()
	s := c.newStore(t, storetest.Backend{Name: "cluster", Client: cc}, store.Options{Prefix: storetest.Prefix(), Now: clock.Now, WriteLimit: 120})
	c.run(t, s, clock, c.first())
	settle(t, s)
	before := c.render(t, s)
	setMaxMemory := func(v string) {
		t.Helper()
		if err := cc.ForEachMaster(ctx, func(ctx context.Context, m *rdb.Client) error {
			return m.ConfigSet(ctx, "maxmemory", v).Err()
		}); err != nil {
			t.Fatal(err)
		}
	}
	digests := func() map[string]string {
		t.Helper()
		var mu sync.Mutex
		out := map[string]string{}
		if err := cc.ForEachMaster(ctx, func(ctx context.Context, m *rdb.Client) error {
			d, err := m.Do(ctx, "debug", "digest").Text()
			mu.Lock()
			defer mu.Unlock()
			out[m.Options().Addr] = d
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	setMaxMemory("1")
	defer setMaxMemory("0")
	d0 := digests()
	for i, w := range newCommunityAfter(c).then() {
		if err := w(ctx, s); !store.IsKind(err, store.KindStorageFull) {
			t.Errorf("write %d on a full cluster: %v, want KindStorageFull", i, err)
		}
	}
	if d := digests(); !maps.Equal(d, d0) {
		t.Errorf("writes refused for OOM changed the data: digests %v, before %v", d, d0)
	}
	if got := c.render(t, s); got != before {
		t.Errorf("reads on a full cluster differ:\n%s", lineDiff(got, before))
	}
}

// testHalfMigratedSearchDict expands a prefix while its dictionary's slot is half migrated: the
// root node (the read's only key) on the importing master, its child (which the read finds by its
// mark) still on the other. Redis runs the read on the importing master (ASK) and, the child
// missing there, reads it as empty: the read must wait for the migration (TRYAGAIN), not answer
// without the child's words.
func testHalfMigratedSearchDict(t *testing.T, addrs []string) {
	ctx := context.Background()
	var seen redirects
	cc := newCountingClusterClient(t, addrs, &seen)
	prefix := storetest.Prefix()
	s, err := store.New(ctx, cc, store.Options{Prefix: prefix, Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for i := range 200 {
		words = append(words, fmt.Sprintf("ab%d", i)) // more than a node holds: ab1… moves down
	}
	if _, err := s.SearchDictAddForTest(ctx, 0, words...); err != nil {
		t.Fatal(err)
	}
	root, child := prefix+"{sx:c:0}:d:ab", prefix+"{sx:c:0}:d:ab1"
	if n, err := cc.Exists(ctx, child).Result(); err != nil || n != 1 {
		t.Fatalf("child node %s: %d, %v; want it split off", child, n, err)
	}
	want, err := s.SearchDictExpandForTest(ctx, 0, "ab")
	if err != nil || len(want) != 32 {
		t.Fatalf("expand ab: %q, %v", want, err)
	}
	var got []string
	acrossMigration(t, &seen, "the expansion of ab", beginMigration(t, cc, root, root), func() error {
		var err error
		got, err = s.SearchDictExpandForTest(ctx, 0, "ab")
		return err
	})
	if !slices.Equal(got, want) {
		t.Fatalf("expand ab across the migration: %q, want %q", got, want)
	}
}

// acrossMigration runs do while m's slot is half migrated and completes the migration once do
// has met TRYAGAIN in the slot (seen counts it): do must wait for the migration, and then succeed.
func acrossMigration(t *testing.T, seen *redirects, what string, m *migration, do func() error) {
	t.Helper()
	before := seen.tryAgainIn(m.slot)
	done := make(chan error, 1)
	go func() { done <- do() }()
	var early error
	finished := false
	waitUntil(t, what+" to meet TRYAGAIN", func() bool {
		select {
		case early = <-done:
			finished = true
			return true
		default:
			return seen.tryAgainIn(m.slot) > before
		}
	})
	if finished {
		m.finish(t)
		t.Fatalf("%s finished while the slot was half migrated, with error %v; it must wait for the migration", what, early)
	}
	m.finish(t)
	if err := <-done; err != nil {
		t.Fatalf("%s across the migration: %v", what, err)
	}
}

// newCountingClusterClient returns a cluster client like the server's whose nodes count the
// redirects they see in r.
func newCountingClusterClient(t *testing.T, addrs []string, r *redirects) *rdb.ClusterClient {
	c, err := rdb.NewClient(rdb.ClientConfig{ClusterAddrs: addrs})
	if err != nil {
		t.Fatal(err)
	}
	cc := c.(*rdb.ClusterClient)
	cc.OnNewNode(func(c *rdb.Client) { c.AddHook(storetest.After(r.count)) })
	cc.AddHook(storetest.SlotCheck{})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// redirects counts the MOVED, ASK and TRYAGAIN replies the nodes of a cluster client see, and
// the slots of the scripts that got TRYAGAIN.
type redirects struct {
	moved, ask, tryAgain atomic.Int64
	mu                   sync.Mutex
	tryAgainSlots        map[int]int
}

// count counts the redirects the replies of cmds carry.
func (r *redirects) count(cmds []rdb.Cmder) {
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			switch msg := err.Error(); {
			case strings.HasPrefix(msg, "MOVED "):
				r.moved.Add(1)
			case strings.HasPrefix(msg, "ASK "):
				r.ask.Add(1)
			case strings.HasPrefix(msg, "TRYAGAIN "):
				r.tryAgain.Add(1)
				if args := c.Args(); len(args) > 3 && strings.HasPrefix(c.Name(), "eval") {
					r.mu.Lock()
					if r.tryAgainSlots == nil {
						r.tryAgainSlots = map[int]int{}
					}
					r.tryAgainSlots[storetest.Slot(fmt.Sprint(args[3]))]++
					r.mu.Unlock()
				}
			}
		}
	}
}

// tryAgainIn reports how many scripts on slot got TRYAGAIN.
func (r *redirects) tryAgainIn(slot int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tryAgainSlots[slot]
}

// migration is one slot being moved by hand, the way redis-cli --cluster reshard does it.
type migration struct {
	slot         int
	src, dst     *rdb.Client
	srcID, dstID string
	masters      []*rdb.Client
}

// beginMigration marks the slot of key as migrating from its master to another and moves the
// keys in move (and only those) to the importing master.
func beginMigration(t *testing.T, cc *rdb.ClusterClient, key string, move ...string) *migration {
	t.Helper()
	ctx := context.Background()
	m := &migration{slot: storetest.Slot(key)}
	owner := slotOwners(t, cc)[m.slot] // asked afresh: the client's slot map may lag a migration
	var mu sync.Mutex
	if err := cc.ForEachMaster(ctx, func(ctx context.Context, c *rdb.Client) error {
		mu.Lock()
		defer mu.Unlock()
		m.masters = append(m.masters, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range m.masters {
		if c.Options().Addr == owner {
			m.src = c
		} else if m.dst == nil {
			m.dst = c
		}
	}
	if m.src == nil || m.dst == nil {
		t.Fatalf("slot %d: owner %s not among the masters", m.slot, owner)
	}
	m.srcID = m.src.Do(ctx, "cluster", "myid").Val().(string)
	m.dstID = m.dst.Do(ctx, "cluster", "myid").Val().(string)
	must(t, m.dst.Do(ctx, "cluster", "setslot", m.slot, "importing", m.srcID).Err())
	must(t, m.src.Do(ctx, "cluster", "setslot", m.slot, "migrating", m.dstID).Err())
	m.migrate(t, move...)
	return m
}

// migrate moves keys from the source to the destination with MIGRATE.
func (m *migration) migrate(t *testing.T, keys ...string) {
	t.Helper()
	if len(keys) == 0 {
		return
	}
	host, port, _ := strings.Cut(m.dst.Options().Addr, ":")
	args := []any{"migrate", host, port, "", 0, 5000, "keys"}
	for _, k := range keys {
		args = append(args, k)
	}
	must(t, m.src.Do(context.Background(), args...).Err())
}

// finish moves the slot's remaining keys and gives the slot to the destination on every master.
func (m *migration) finish(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for {
		keys, err := m.src.Do(ctx, "cluster", "getkeysinslot", m.slot, 100).StringSlice()
		must(t, err)
		if len(keys) == 0 {
			break
		}
		m.migrate(t, keys...)
	}
	must(t, m.dst.Do(ctx, "cluster", "setslot", m.slot, "node", m.dstID).Err())
	must(t, m.src.Do(ctx, "cluster", "setslot", m.slot, "node", m.dstID).Err())
	for _, c := range m.masters {
		must(t, c.Do(ctx, "cluster", "setslot", m.slot, "node", m.dstID).Err())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitUntil polls cond every few milliseconds for up to 10s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// testHalfMigratedSlots holds two slots half migrated, as resharding does for a moment, while a
// vote runs: the post's votes hash has moved but not the post, and the site's HOT ranking has
// moved but not its other rankings. A read of the votes is redirected (ASK); the vote script finds
// its keys split (TRYAGAIN) and so do the derived writes in their pipeline; each is retried until
// the migration completes, and the vote then succeeds with everything consistent.
func testHalfMigratedSlots(t *testing.T, addrs []string) {
	ctx := context.Background()
	var seen redirects
	cc := newCountingClusterClient(t, addrs, &seen)
	s, err := store.New(ctx, cc, store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, s, cc, 3, 1)
	post := w.posts[0]
	if _, err := s.VotePost(ctx, uk(w.users[1]), post.ID, 1); err != nil {
		t.Fatal(err)
	}
	hot, _, _, _ := s.RankingKeysForTest("")
	votes := s.PostVotesKeyForTest(post.Key())
	mp := beginMigration(t, cc, votes, votes)
	mr := beginMigration(t, cc, hot, hot)

	if v, err := s.NewLoader().PostVote(ctx, post, uk(w.users[1])); err != nil || v != 1 {
		t.Fatalf("vote read from the half-moved slot = %d, %v; want 1", v, err)
	}
	if seen.ask.Load() == 0 {
		t.Fatal("reading the moved votes hash was not redirected with ASK")
	}

	done := make(chan error, 1)
	go func() {
		_, err := s.VotePost(ctx, uk(w.users[2]), post.ID, -1)
		done <- err
	}()
	waitUntil(t, "the vote script to meet TRYAGAIN", func() bool { return seen.tryAgainIn(mp.slot) > 0 })
	mp.finish(t)
	waitUntil(t, "the derived writes to meet TRYAGAIN", func() bool { return seen.tryAgainIn(mr.slot) > 0 })
	mr.finish(t)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("vote across the migration: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the vote did not finish")
	}
	t.Logf("ASK %d, TRYAGAIN %d (vote script %d, derived writes %d)", seen.ask.Load(), seen.tryAgain.Load(),
		seen.tryAgainIn(mp.slot), seen.tryAgainIn(mr.slot))
	p, err := s.NewLoader().Post(ctx, post.ID)
	if err != nil || p.Upvotes != 1 || p.Downvotes != 1 {
		t.Fatalf("post after the votes: %+v, %v", p, err)
	}
	w.checkDerived(t)
}

// testScriptCacheLost flushes the script cache of every master before each kind of script use —
// a single script call, a pipeline of script calls across slots, and a loader's pipelined reads —
// and checks that each reloads the scripts and succeeds.
func testScriptCacheLost(t *testing.T, cc *rdb.ClusterClient) {
	ctx := context.Background()
	s, err := store.New(ctx, cc, store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, s, cc, 3, 6)
	flush := func() {
		t.Helper()
		if err := cc.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	flush()
	page, err := s.NewLoader().Posts(ctx, store.SortHot, "", store.Window{First: 10}, nil) // page.lua in a pipeline
	if err != nil || len(page.Items) != 6 {
		t.Fatalf("posts after SCRIPT FLUSH: %v items, %v", page, err)
	}
	flush()
	if _, err := s.VotePost(ctx, uk(w.users[1]), w.posts[0].ID, 1); err != nil { // EVALSHA, then runMany
		t.Fatalf("vote after SCRIPT FLUSH: %v", err)
	}
	flush()
	p, err := s.CreatePost(ctx, uk(w.users[0]), store.NewPost{Title: "after flush", Groups: []string{"go", "ops"}})
	if err != nil {
		t.Fatalf("create after SCRIPT FLUSH: %v", err)
	}
	w.posts = append(w.posts, p)
	// runMany alone meets the empty cache too: a vote that changes nothing still re-indexes.
	flush()
	if _, err := s.VotePost(ctx, uk(w.users[1]), w.posts[0].ID, 1); err != nil {
		t.Fatalf("repeated vote after SCRIPT FLUSH: %v", err)
	}
	w.checkDerived(t)
}

// clusterMasters returns the node id of every master, by address.
func clusterMasters(t *testing.T, cc *rdb.ClusterClient) map[string]string {
	t.Helper()
	var mu sync.Mutex
	out := map[string]string{}
	err := cc.ForEachMaster(context.Background(), func(ctx context.Context, c *rdb.Client) error {
		id, err := c.Do(ctx, "cluster", "myid").Text()
		mu.Lock()
		out[c.Options().Addr] = id
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// slotOwners maps every slot to the address of its master.
func slotOwners(t *testing.T, cc *rdb.ClusterClient) [16384]string {
	t.Helper()
	var owners [16384]string
	slots, err := cc.ClusterSlots(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range slots {
		for s := r.Start; s <= r.End; s++ {
			owners[s] = r.Nodes[0].Addr
		}
	}
	return owners
}

// testReshardingUnderLoad moves slots between the masters with redis-cli --cluster reshard
// (which migrates keys with MIGRATE while clients get MOVED and ASK redirects and, for scripts
// whose keys are half moved, TRYAGAIN) while writers create posts and vote and readers page
// through rankings. No request may fail, no acknowledged write may be lost, the derived data must
// match the posts afterwards, and sharded subscriptions must follow their slots to the new owners.
func testReshardingUnderLoad(t *testing.T, addrs []string) {
	ctx := context.Background()
	var seen redirects
	cc := newCountingClusterClient(t, addrs, &seen)
	s, err := store.New(ctx, cc, store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 4
	w := newWorld(t, s, cc, writers*3, 60)

	// Sharded subscriptions on channels all over the keyspace.
	sub := rdb.NewSubscription(ctx, s.Runner())
	defer sub.Close()
	var chans []string
	for i := range 64 {
		chans = append(chans, fmt.Sprintf("%sev:{p:%d}", s.Options().Prefix, i))
	}
	if err := sub.Subscribe(ctx, chans...); err != nil {
		t.Fatal(err)
	}
	before := slotOwners(t, cc)

	// The load: each writer owns some users, so the last vote a writer saw acknowledged for a
	// (user, post) pair is that pair's final vote.
	type vote struct{ user, post string }
	var (
		stop        atomic.Bool
		failures    atomic.Int64
		mu          sync.Mutex
		created     = map[string]string{} // post id → title
		votes       = map[vote]int{}
		comments    = map[string]string{} // comment id → body
		lastComment = map[string]string{} // post id → the last comment made on it
		errs        []string
		requests    atomic.Int64
	)
	fail := func(err error) {
		failures.Add(1)
		mu.Lock()
		if len(errs) < 10 {
			errs = append(errs, err.Error())
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 11))
			mine := []string{}
			for i := g; i < len(w.users); i += writers {
				mine = append(mine, w.users[i])
			}
			for n := 0; !stop.Load(); n++ {
				uid := mine[r.IntN(len(mine))]
				requests.Add(1)
				kind := n % 4
				mu.Lock()
				if kind == 0 && len(created) >= 300 {
					kind = 1 // enough posts: vote instead
				}
				mu.Unlock()
				switch kind {
				case 0:
					title := fmt.Sprintf("w%d-%d", g, n)
					p, err := s.CreatePost(ctx, uk(uid), store.NewPost{Title: title, Groups: w.groups[:1+r.IntN(3)]})
					if err != nil {
						fail(fmt.Errorf("create: %w", err))
						continue
					}
					mu.Lock()
					created[p.ID] = title
					w.posts = append(w.posts, p)
					mu.Unlock()
				case 1:
					mu.Lock()
					p := w.posts[r.IntN(len(w.posts))]
					mu.Unlock()
					if p.Author.ID() == "user:"+uid {
						continue
					}
					dir := r.IntN(3) - 1
					if _, err := s.VotePost(ctx, uk(uid), p.ID, dir); err != nil {
						fail(fmt.Errorf("vote: %w", err))
						continue
					}
					mu.Lock()
					votes[vote{uid, p.ID}] = dir
					mu.Unlock()
				case 2:
					// A comment, a reply to the writer's last comment on the post, or a vote.
					mu.Lock()
					p := w.posts[r.IntN(len(w.posts))]
					prev := lastComment[p.ID]
					mu.Unlock()
					switch {
					case prev != "" && r.IntN(3) == 0:
						if _, err := s.VoteComment(ctx, uk(uid), prev, 1); err != nil && !store.IsKind(err, store.KindForbidden) {
							fail(fmt.Errorf("vote comment: %w", err))
						}
					default:
						body := fmt.Sprintf("c%d-%d", g, n)
						c, err := s.CreateComment(ctx, uk(uid), store.NewComment{PostID: p.ID, ParentID: prev, Body: body})
						if err != nil {
							fail(fmt.Errorf("comment: %w", err))
							continue
						}
						mu.Lock()
						comments[c.ID] = body
						lastComment[p.ID] = c.ID
						mu.Unlock()
					}
				default:
					l := s.NewLoader()
					if _, err := l.Posts(ctx, store.SortHot, w.groups[r.IntN(3)], store.Window{First: 20}, nil); err != nil {
						fail(fmt.Errorf("read group: %w", err))
					}
					if _, err := l.UserPosts(ctx, uk(uid), store.SortNew, store.Window{First: 20}, nil); err != nil {
						fail(fmt.Errorf("read user posts: %w", err))
					}
				}
			}
		}()
	}

	// Move slots from the first master to the second, then from the third to the first (a move
	// from the second would take back the slots it just received: redis-cli moves the lowest).
	const slots = 1000
	ids := clusterMasters(t, cc)
	started := time.Now()
	for _, m := range [][2]string{{addrs[0], addrs[1]}, {addrs[2], addrs[0]}} {
		out, err := exec.Command("redis-cli", "--cluster", "reshard", addrs[0], "--cluster-from", ids[m[0]], "--cluster-to", ids[m[1]],
			"--cluster-slots", fmt.Sprint(slots), "--cluster-yes", "--cluster-pipeline", "20").CombinedOutput()
		if err != nil {
			t.Fatalf("reshard %s → %s: %v\n%s", m[0], m[1], err, tail(out))
		}
	}
	elapsed := time.Since(started)
	stop.Store(true)
	wg.Wait()
	t.Logf("moved 2×%d slots in %s while %d requests ran; the nodes replied MOVED %d, ASK %d, TRYAGAIN %d times",
		slots, elapsed.Round(time.Millisecond), requests.Load(), seen.moved.Load(), seen.ask.Load(), seen.tryAgain.Load())
	if seen.moved.Load() == 0 {
		t.Error("no MOVED redirect was followed: the load did not reach the moved slots")
	}
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d requests failed during resharding, first: %s", n, strings.Join(errs, "; "))
	}

	// The slots did move.
	cc.ReloadState(ctx)
	after := slotOwners(t, cc)
	moved := map[int]bool{}
	for slot := range before {
		if before[slot] != after[slot] {
			moved[slot] = true
		}
	}
	if len(moved) != 2*slots {
		t.Fatalf("%d slots changed owner, want %d", len(moved), 2*slots)
	}

	// No acknowledged write was lost.
	l := s.NewLoader()
	for id, title := range created {
		p, err := l.Post(ctx, id)
		if err != nil || p == nil || p.Title != title {
			t.Fatalf("acknowledged post %s (%q) reads as %+v, %v", id, title, p, err)
		}
	}
	for id, body := range comments {
		c, err := l.Comment(ctx, id)
		if err != nil || c == nil || c.Text != body {
			t.Fatalf("acknowledged comment %s (%q) reads as %+v, %v", id, body, c, err)
		}
	}
	up, down := map[string]int{}, map[string]int{}
	for v, dir := range votes {
		switch dir {
		case 1:
			up[v.post]++
		case -1:
			down[v.post]++
		}
	}
	for _, p0 := range w.posts {
		p, err := l.Post(ctx, p0.ID)
		if err != nil || p == nil {
			t.Fatalf("post %s: %+v, %v", p0.ID, p, err)
		}
		if p.Upvotes != up[p.ID] || p.Downvotes != down[p.ID] {
			t.Errorf("post %s has %d up %d down, acknowledged votes say %d up %d down", p.ID, p.Upvotes, p.Downvotes, up[p.ID], down[p.ID])
		}
	}
	w.checkDerived(t)
	if _, err := s.Rebuild(ctx); err != nil {
		t.Fatalf("rebuild after resharding: %v", err)
	}
	w.checkDerived(t)
	t.Logf("checked the data in %s", time.Since(started.Add(elapsed)).Round(time.Millisecond))
	started = time.Now()

	// Sharded subscriptions whose slot moved were dropped by Redis and made again on the new
	// owner: every channel delivers again. Publish until the message arrives, as the subscription
	// may still be on its way to the new owner.
	movedChans := 0
	for i, ch := range chans {
		if moved[storetest.Slot(ch)] {
			movedChans++
		}
		deadline := time.Now().Add(15 * time.Second)
		for got := false; !got; {
			if time.Now().After(deadline) {
				t.Fatalf("channel %s (slot %d, moved %t) delivers nothing after resharding", ch, storetest.Slot(ch), moved[storetest.Slot(ch)])
			}
			if err := s.Publish(ctx, ch, fmt.Sprint(i)); err != nil {
				t.Fatal(err)
			}
			timeout := time.After(200 * time.Millisecond)
			for wait := true; wait && !got; {
				select {
				case m := <-sub.Messages():
					got = m.Channel == ch && m.Payload == fmt.Sprint(i)
				case <-timeout:
					wait = false
				}
			}
		}
	}
	if movedChans == 0 {
		t.Fatal("no subscribed channel was in a moved slot; the test proves nothing")
	}
	t.Logf("%d of %d subscribed channels moved with their slots and deliver again (checked in %s)", movedChans, len(chans),
		time.Since(started).Round(time.Millisecond))
}

// tail returns the last lines of a command's output.
func tail(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}

// testHalfMigratedThread writes to a comment thread whose slot is half migrated: some of the
// thread's keys on the importing master, the rest on the migrating one. Every comment script
// declares all the keys it touches, so Redis answers TRYAGAIN (and go-redis retries) instead of
// running a script that would fail halfway on a key that has moved, or create on the importing
// master a key that the migration has yet to move (which would make the migration fail with
// BUSYKEY).
func testHalfMigratedThread(t *testing.T, addrs []string) {
	ctx := context.Background()
	var seen redirects
	cc := newCountingClusterClient(t, addrs, &seen)
	s, err := store.New(ctx, cc, store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, s, cc, 3, 1)
	post, ann, bob := w.posts[0], w.users[1], w.users[2]
	pid := post.Key()
	comment := func(uid, parent, body string) *store.Comment {
		t.Helper()
		c, err := s.CreateComment(ctx, uk(uid), store.NewComment{PostID: post.ID, ParentID: parent, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	top := comment(ann, "", "top")
	lone := comment(bob, "", "lone")
	comment(bob, top.ID, "reply")
	num := func(c *store.Comment) string { return c.ID[strings.LastIndexByte(c.ID, ':')+1:] }
	key := func(n, suffix string) string { return s.ThreadKeyForTest(pid, n, suffix) }
	slot := storetest.Slot(s.PostKeyForTest(pid))

	// during runs write while the thread's slot is half migrated (the keys in move already on
	// the importing master) and completes the migration once the write has met TRYAGAIN.
	during := func(what string, move []string, write func() error) {
		t.Helper()
		acrossMigration(t, &seen, what, beginMigration(t, cc, s.PostKeyForTest(pid), move...), write)
	}
	during("a vote", []string{key(num(top), "")}, func() error {
		_, err := s.VoteComment(ctx, uk(bob), top.ID, 1)
		return err
	})
	during("a delete", []string{key("0", ":rt")}, func() error {
		return s.DeleteComment(ctx, uk(bob), lone.ID)
	})
	during("a reply", []string{s.PostKeyForTest(pid), s.ThreadIDsKeyForTest(pid)}, func() error {
		_, err := s.CreateComment(ctx, uk(bob), store.NewComment{PostID: post.ID, ParentID: top.ID, Body: "another"})
		return err
	})

	// The thread is whole: the post counts two top-level comments' worth of live comments, the
	// indexes hold what they should with the right scores.
	p, err := s.NewLoader().Post(ctx, post.ID)
	if err != nil || p.CommentCount != 3 {
		t.Fatalf("post after the writes: %+v, %v; want 3 comments", p, err)
	}
	// Below store.ReplyOrdersAt replies the post keeps no TOP order: the reader ranks.
	if n, err := cc.Exists(ctx, key("0", ":rs")).Result(); err != nil || n != 0 {
		t.Fatalf("top-level TOP index exists: %d, %v", n, err)
	}
	if pg, err := s.NewLoader().PostComments(ctx, p, store.CommentsTop, store.Window{First: 10}, nil); err != nil ||
		len(pg.Items) != 1 || pg.Items[0].ID != top.ID || pg.Items[0].Upvotes != 1 {
		t.Fatalf("top-level TOP page = %+v, %v; want only %s with 1 upvote", pg, err, top.ID)
	}
	if n, err := cc.ZCard(ctx, key(num(top), ":rt")).Result(); err != nil || n != 2 {
		t.Fatalf("replies of the top comment: %d, %v; want 2", n, err)
	}
	t.Logf("TRYAGAIN on the thread's slot %d times", seen.tryAgainIn(slot))
}
