package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// world is a small site: users and posts in groups, built through the store.
type world struct {
	s      *store.Store
	rdb    rdb.UniversalClient
	users  []string      // user keys
	posts  []*store.Post // as created
	groups []string
}

// newWorld signs up nUsers users and has them publish nPosts posts spread over three groups.
func newWorld(t *testing.T, s *store.Store, rdb rdb.UniversalClient, nUsers, nPosts int) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{s: s, rdb: rdb, groups: []string{"go", "redis", "ops"}}
	for i := range nUsers {
		sess, err := s.SignUp(ctx, fmt.Sprintf("user%03d", i), "password1")
		if err != nil {
			t.Fatalf("sign up: %v", err)
		}
		w.users = append(w.users, string(sess.User.Key()))
	}
	for i := range nPosts {
		p, err := s.CreatePost(ctx, uk(w.users[i%nUsers]), store.NewPost{
			Title: fmt.Sprintf("post %d", i), Groups: w.groups[:1+i%len(w.groups)],
		})
		if err != nil {
			t.Fatalf("create post: %v", err)
		}
		w.posts = append(w.posts, p)
	}
	return w
}

// checkDerived verifies every derived structure against the post hashes: each live post sits in
// the site rankings, its groups' rankings and its author's list with the scores its hash implies,
// and nothing else does.
func (w *world) checkDerived(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	l := w.s.NewLoader()
	type want struct{ hot, new, top float64 }
	site := map[string]want{}
	byGroup := map[string]map[string]want{}
	byUser := map[string]map[string]float64{}
	for _, p0 := range w.posts {
		p, err := l.Post(ctx, p0.ID)
		if err != nil {
			t.Fatalf("load %s: %v", p0.ID, err)
		}
		if p == nil {
			continue // deleted
		}
		v := want{hot: p.HotRank, new: float64(p.CreatedAt.UnixMilli()), top: float64(p.Net())}
		site[p.Key()] = v
		for _, g := range p.GroupNames {
			if byGroup[g] == nil {
				byGroup[g] = map[string]want{}
			}
			byGroup[g][p.Key()] = v
		}
		uid := strings.TrimPrefix(p.Author.ID(), "user:")
		if byUser[uid] == nil {
			byUser[uid] = map[string]float64{}
		}
		byUser[uid][p.Key()] = v.new
	}
	check := func(label, key string, want map[string]float64) {
		t.Helper()
		got, err := w.rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if len(got) != len(want) {
			t.Errorf("%s holds %d posts, want %d", label, len(got), len(want))
		}
		for _, z := range got {
			m := z.Member.(string)
			if w, ok := want[m]; !ok || w != z.Score {
				t.Errorf("%s: post %s has score %v, want %v (present %t)", label, m, z.Score, w, ok)
			}
		}
	}
	rankings := func(label, group string, posts map[string]want) {
		hot, new, top, _ := w.s.RankingKeysForTest(group)
		h, n, tp := map[string]float64{}, map[string]float64{}, map[string]float64{}
		for pid, v := range posts {
			h[pid], n[pid], tp[pid] = v.hot, v.new, v.top
		}
		check(label+" HOT", hot, h)
		check(label+" NEW", new, n)
		check(label+" TOP", top, tp)
	}
	rankings("site", "", site)
	for _, g := range w.groups {
		rankings("group "+g, g, byGroup[g])
	}
	for _, uid := range w.users {
		posts, _ := w.s.UserPostsKeysForTest(uid)
		check("posts of "+uid, posts, byUser[uid])
	}
}

// TestDerivedDataConsistentUnderConcurrentWrites votes, regroups and deletes concurrently, from
// many goroutines, and checks that the rankings and lists — written after each atomic step to
// other hash slots, on a cluster other masters — end up exactly as the posts imply.
func TestDerivedDataConsistentUnderConcurrentWrites(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		s := b.NewStore(t, store.Options{})
		w := newWorld(t, s, b.Client, 12, 24)
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make(chan error, len(w.users))
		for i, uid := range w.users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(i), 7))
				for range 40 {
					p := w.posts[r.IntN(len(w.posts))]
					var err error
					switch {
					case p.Author.ID() == "user:"+uid && r.IntN(10) == 0:
						_, err = s.SetPostGroups(ctx, uk(uid), p.ID, []string{w.groups[r.IntN(3)]}, []string{w.groups[r.IntN(3)]})
					case p.Author.ID() == "user:"+uid:
						continue
					default:
						_, err = s.VotePost(ctx, uk(uid), p.ID, r.IntN(3)-1)
					}
					if err != nil && !store.IsKind(err, store.KindNotFound) {
						errs <- err
						return
					}
				}
			}()
		}
		// Delete a few posts while the votes run.
		for _, p := range w.posts[:3] {
			if err := s.DeletePost(ctx, uk(strings.TrimPrefix(p.Author.ID(), "user:")), p.ID); err != nil {
				t.Fatalf("delete: %v", err)
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("write: %v", err)
		}
		w.checkDerived(t)
	})
}

// TestRebuildRepairsCorruptDerivedData wipes and corrupts the derived structures and checks that
// Rebuild, which scans every master of a cluster, restores them exactly, twice in a row.
func TestRebuildRepairsCorruptDerivedData(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		s := b.NewStore(t, store.Options{})
		w := newWorld(t, s, b.Client, 5, 30)
		ctx := context.Background()
		for i, p := range w.posts[3:20] {
			if _, err := s.VotePost(ctx, uk(w.users[(i+1)%len(w.users)]), p.ID, 1-2*(i%2)); err != nil && !store.IsKind(err, store.KindForbidden) {
				t.Fatal(err)
			}
		}
		deleted := w.posts[0]
		if err := s.DeletePost(ctx, uk(strings.TrimPrefix(deleted.Author.ID(), "user:")), deleted.ID); err != nil {
			t.Fatal(err)
		}
		// Lose the site's HOT ranking and a group, corrupt a score, and put the deleted post back
		// into the TOP ranking as a crash between the steps of a write could leave them.
		hot, _, top, _ := s.RankingKeysForTest("")
		ghot, gnew, gtop, gver := s.RankingKeysForTest("redis")
		for _, k := range []string{hot, ghot, gnew, gtop, gver} {
			if err := b.Client.Del(ctx, k).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Client.ZAdd(ctx, top, rdb.Z{Member: w.posts[5].Key(), Score: 1e9}, rdb.Z{Member: deleted.Key(), Score: 3}).Err(); err != nil {
			t.Fatal(err)
		}
		stats, err := s.Rebuild(ctx)
		if err != nil {
			t.Fatalf("rebuild: %v", err)
		}
		if stats.Posts != len(w.posts)-1 || stats.Deleted != 1 {
			t.Errorf("rebuild stats = %+v, want %d posts and 1 deleted", stats, len(w.posts)-1)
		}
		w.checkDerived(t)
		// Rebuilding again changes nothing.
		if _, err := s.Rebuild(ctx); err != nil {
			t.Fatalf("second rebuild: %v", err)
		}
		w.checkDerived(t)
	})
}

// TestRebuildAfterLostWrites makes the state a failover without WAIT can leave — a post whose
// hash was lost while its ranking entries survived on other masters, and a vote lost from a
// post hash while its ranking entry, with the vote's newer version, survived — and checks that
// a rebuild makes the derived data agree with the posts again.
func TestRebuildAfterLostWrites(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		s := b.NewStore(t, store.Options{})
		w := newWorld(t, s, b.Client, 4, 12)
		ctx := context.Background()
		lost := w.posts[2]
		if err := b.Client.Del(ctx, s.PostKeyForTest(lost.Key())).Err(); err != nil {
			t.Fatal(err)
		}
		voted := w.posts[4]
		_, _, top, ver := s.RankingKeysForTest("")
		if err := b.Client.HSet(ctx, ver, voted.Key(), voted.Version+3).Err(); err != nil {
			t.Fatal(err)
		}
		if err := b.Client.ZAdd(ctx, top, rdb.Z{Member: voted.Key(), Score: 7}).Err(); err != nil {
			t.Fatal(err)
		}
		// A post id handed out again after the lost creation: entries of the old post stay in
		// its author's list and its groups, though the id now names another author's post.
		reused := w.posts[5]
		var stranger string
		for _, u := range w.users {
			if uk(u) != reused.Author {
				stranger = u
			}
		}
		list, listVer := s.UserPostsKeysForTest(stranger)
		ghot, gnew, gtop, gver := s.RankingKeysForTest("elsewhere")
		for _, k := range []string{list, ghot, gnew, gtop} {
			if err := b.Client.ZAdd(ctx, k, rdb.Z{Member: reused.Key(), Score: 1}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range []string{listVer, gver} {
			if err := b.Client.HSet(ctx, k, reused.Key(), 1).Err(); err != nil {
				t.Fatal(err)
			}
		}
		stats, err := s.Rebuild(ctx)
		if err != nil {
			t.Fatalf("rebuild: %v", err)
		}
		if stats.Orphans < 1 {
			t.Errorf("rebuild stats = %+v, want the lost post's entries dropped", stats)
		}
		var kept []*store.Post
		for _, p := range w.posts {
			if p.ID != lost.ID {
				kept = append(kept, p)
			}
		}
		w.posts = kept
		w.checkDerived(t)
		if n, err := b.Client.ZCard(ctx, gtop).Result(); err != nil || n != 0 {
			t.Errorf("a group the post is not in still lists it: %d, %v", n, err)
		}
	})
}

// TestCreatePostSkipsTakenIDs rewinds the post id counter, as a failover that lost its last
// increments would (on a cluster the counter lives on another master than most posts), and
// checks that new posts take fresh ids instead of answering with someone else's post.
func TestCreatePostSkipsTakenIDs(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		s := b.NewStore(t, store.Options{})
		w := newWorld(t, s, b.Client, 2, 4)
		ctx := context.Background()
		if err := b.Client.Set(ctx, s.PostSeqKeyForTest(), 1, 0).Err(); err != nil {
			t.Fatal(err)
		}
		p, err := s.CreatePost(ctx, uk(w.users[1]), store.NewPost{Title: "fresh"})
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != "post:5" || p.Title != "fresh" {
			t.Fatalf("new post = %s %q, want post:5 \"fresh\"", p.ID, p.Title)
		}
		// With an idempotency key: the key binds to the id finally used, and a repeat returns it.
		if err := b.Client.Set(ctx, s.PostSeqKeyForTest(), 0, 0).Err(); err != nil {
			t.Fatal(err)
		}
		in := store.NewPost{Title: "once", IdempotencyKey: "k1"}
		first, err := s.CreatePost(ctx, uk(w.users[0]), in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := s.CreatePost(ctx, uk(w.users[0]), in)
		if err != nil {
			t.Fatal(err)
		}
		if first.ID != "post:6" || again.ID != first.ID || again.Title != "once" {
			t.Fatalf("idempotent creation gave %s then %s (%q), want post:6 twice", first.ID, again.ID, again.Title)
		}
		// The old posts are untouched.
		for _, old := range w.posts {
			got, err := s.NewLoader().Post(ctx, old.ID)
			if err != nil || got == nil || got.Title != old.Title {
				t.Fatalf("post %s became %+v (%v)", old.ID, got, err)
			}
		}
		w.posts = append(w.posts, p, first)
		w.checkDerived(t)
	})
}

// TestPrefixWithBracesRejected: braces in the prefix would override the aggregates' hash tags.
func TestPrefixWithBracesRejected(t *testing.T) {
	b := storetest.Backends(t)[0]
	_, err := store.New(context.Background(), b.Client, store.Options{Prefix: "app{1}:"})
	if !store.IsKind(err, store.KindInvalid) {
		t.Fatalf("New with prefix app{1}: err = %v, want invalid", err)
	}
}

// TestWaitReplicasFailsUnreplicatedWrites runs writes that demand a replica on servers that have
// none: the writes must fail with rdb.ErrNotReplicated rather than be acknowledged. (The Sentinel
// failover test covers the case with a replica.)
func TestWaitReplicasFailsUnreplicatedWrites(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		if b.Mini != nil {
			t.Skip("miniredis has no WAIT")
		}
		s := b.NewStore(t, store.Options{})
		w := newWorld(t, s, b.Client, 2, 1)
		strict := b.NewStore(t, store.Options{Prefix: s.Options().Prefix, WaitReplicas: 1, WaitTimeout: 20 * time.Millisecond})
		ctx := context.Background()
		if _, err := strict.VotePost(ctx, uk(w.users[1]), w.posts[0].ID, 1); !errors.Is(err, rdb.ErrNotReplicated) {
			t.Fatalf("vote: err = %v, want rdb.ErrNotReplicated", err)
		}
		if _, err := strict.SignUp(ctx, "nobody", "password1"); !errors.Is(err, rdb.ErrNotReplicated) {
			t.Fatalf("sign up: err = %v, want rdb.ErrNotReplicated", err)
		}
		// The writes did reach the master: WAIT does not undo them.
		p, err := s.NewLoader().Post(ctx, w.posts[0].ID)
		if err != nil || p.Upvotes != 1 {
			t.Fatalf("post after the unreplicated vote: %+v, %v", p, err)
		}
	})
}

// countKeysPerMaster counts the keys starting with prefix on each master of a cluster.
func countKeysPerMaster(t *testing.T, cc *rdb.ClusterClient, prefix string) map[string]int {
	t.Helper()
	var mu sync.Mutex
	out := map[string]int{}
	err := cc.ForEachMaster(context.Background(), func(ctx context.Context, c *rdb.Client) error {
		n := 0
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			n++
		}
		mu.Lock()
		out[c.Options().Addr] = n
		mu.Unlock()
		return iter.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestClusterSpreadsDataOverMasters checks on a real cluster that the data of many users and
// posts lands on every master, each holding a fair share.
func TestClusterSpreadsDataOverMasters(t *testing.T) {
	cc := storetest.NewClusterClient(t, storetest.ClusterAddrs(t))
	s, err := store.New(context.Background(), cc, store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	newWorld(t, s, cc, 60, 240)
	counts := countKeysPerMaster(t, cc, s.Options().Prefix)
	total := 0
	for _, n := range counts {
		total += n
	}
	addrs := make([]string, 0, len(counts))
	for a := range counts {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	var report []string
	for _, a := range addrs {
		report = append(report, a+"="+strconv.Itoa(counts[a]))
	}
	t.Logf("%d keys: %s", total, strings.Join(report, " "))
	if len(counts) < 3 {
		t.Fatalf("want at least 3 masters, got %d", len(counts))
	}
	for a, n := range counts {
		if n < total/(2*len(counts)) {
			t.Errorf("master %s holds %d of %d keys, less than half its share", a, n, total)
		}
	}
}
