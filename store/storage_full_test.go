package store_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestFullRedis fills a redis-server of its own (maxmemory with noeviction) under a community
// that makes every kind of write (newMoreCommunity), with the rate limits on. Every write is then
// refused with KindStorageFull and changes nothing (the dataset's digest stays), while every
// read still answers as before. Then each write of a second batch is cut off by OOM right after
// its atomic step, as memory running out mid-write does: it fails with KindStorageFull, and once
// memory is freed and RepairGrace has passed, the job engine finishes it, so that everything the
// community renders (listings, counts, rankings, feeds, the leaderboard, conversations,
// notifications, moderation, mails...) and every account's export equals that of a site that got
// the same writes on a Redis with room (and every thread's counters hold). A write of the batch
// that no atomic step of atomicSteps cut off fails it. miniredis has no maxmemory; a Cluster
// fills master by master, which this test does not cover.
func TestFullRedis(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "--maxmemory-policy", "noeviction", "--enable-debug-command", "local")
	admin := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = admin.Close() })
	rc := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rc.Close() })
	prefix := storetest.Prefix()
	cut := newOOMAfterAtomicStep(admin, atomicSteps...)
	rc.AddHook(cut.hook())
	clock := newStepClock()
	c := newMoreCommunity()
	s := c.newStore(t, storetest.Backend{Name: "redis", Client: rc}, store.Options{Prefix: prefix, Now: clock.Now, WriteLimit: 120})
	setMaxMemory := func(v string) {
		t.Helper()
		if err := admin.ConfigSet(ctx, "maxmemory", v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	digest := func() string {
		t.Helper()
		d, err := admin.Do(ctx, "debug", "digest").Text()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	c.run(t, s, clock, c.first())
	before := c.render(t, s)

	// Full: every write is refused, and changes nothing; reads answer as before.
	setMaxMemory("1")
	d0 := digest()
	for i, w := range newCommunityAfter(c).then() {
		if err := w(ctx, s); !store.IsKind(err, store.KindStorageFull) {
			t.Errorf("write %d on a full Redis: %v, want KindStorageFull", i, err)
		}
		if d := digest(); d != d0 {
			t.Errorf("write %d refused for OOM changed the data", i)
			d0 = d
		}
	}
	if got := c.render(t, s); got != before {
		t.Errorf("reads on a full Redis differ:\n%s", lineDiff(got, before))
	}
	// An export counts against its limit: refused too, before it writes anything.
	var doc strings.Builder
	if err := s.Export(ctx, store.UserKey(c.users[1]), "", &doc); !store.IsKind(err, store.KindStorageFull) || doc.Len() > 0 {
		t.Errorf("export on a full Redis: %v after %d bytes, want KindStorageFull before any", err, doc.Len())
	}
	if d := digest(); d != d0 {
		t.Errorf("an export refused for OOM changed the data")
	}
	setMaxMemory("0")

	// Memory runs out right after each write's atomic step.
	t.Run("cut off after the atomic step", func(t *testing.T) {
		ws := c.then()
		cutKinds := map[string]int{}
		for i, w := range ws {
			clock.Add(time.Minute)
			cut.arm()
			err := w(ctx, s)
			step := cut.cutAfter()
			setMaxMemory("0")
			if step == "" {
				t.Errorf("write %d: no atomic step was cut off (it ran %v): list its atomic step in atomicSteps", i, cut.scriptsRun())
				continue
			}
			cutKinds[step]++
			if err != nil && !store.IsKind(err, store.KindStorageFull) {
				t.Errorf("write %d cut off by OOM after %s: %v, want KindStorageFull or done", i, step, err)
			}
		}
		for _, step := range atomicSteps {
			if cutKinds[step] == 0 {
				t.Errorf("no write was cut off after %s", step)
			}
		}
		t.Logf("writes cut off after their atomic step: %v", cutKinds)
		clock.Add(store.RepairGrace + time.Minute)
		settle(t, s)

		// The same writes on a Redis with room.
		wclock := newStepClock()
		c2 := newMoreCommunity()
		want := c2.newStore(t, storetest.Backend{Name: "redis", Client: rdb.NewPlainClient(&rdb.Options{Addr: storetest.RealServer(t).Addr})},
			store.Options{Now: wclock.Now, WriteLimit: 120})
		c2.run(t, want, wclock, c2.first())
		c2.run(t, want, wclock, c2.then())
		wclock.Add(store.RepairGrace + time.Minute)
		settle(t, want)
		if !wclock.Now().Equal(clock.Now()) {
			t.Fatalf("the reference ends at %v, the full Redis's site at %v", wclock.Now(), clock.Now())
		}
		if got, exp := c.render(t, s), c2.render(t, want); got != exp {
			t.Errorf("after repair, the site differs from one written with room:\n%s", lineDiff(got, exp))
		}
		if got, exp := c.exports(t, s), c2.exports(t, want); got != exp {
			t.Errorf("after repair, the accounts' exports differ from those of a site written with room:\n%s", lineDiff(got, exp))
		}
		for _, id := range c.posts {
			if id == c.posts[5] { // deleted
				continue
			}
			if err := s.CheckThread(ctx, strings.TrimPrefix(id, "post:")); err != nil {
				t.Errorf("thread of %s: %v", id, err)
			}
		}
	})
}

// newCommunityAfter returns a copy of c that plans its writes after c's: its own lists, so that
// planning them does not change c's.
func newCommunityAfter(c *community) *community {
	return &community{users: append([]string(nil), c.users...), groups: c.groups, posts: append([]string(nil), c.posts...),
		more: c.more, mail: c.mail}
}

// atomicSteps are the scripts that are the atomic steps of the writes of community.then: the
// first of them a write runs is where memory runs out. A sign-up's is the user's creation
// (signup), not the session's start after its derived writes; a post's is its hash (create_post),
// not its author's list after it.
var atomicSteps = []string{"signup", "follow", "create_post", "vote_post", "create_comment", "vote_comment",
	"update_profile", "edit_post", "set_groups", "delete_post", "delete_comment",
	"message_send", "message_change", "message_state", "watch", "read_mark", "post_labels", "group_change",
	"token_take", "email_set", "token_put", "ban", "moderate_post", "pin_post", "moderate_comment",
	"report_reserve", "report_resolve", "edit_comment", "save_post", "unsave_posts", "block", "account_delete"}

// oomAfterAtomicStep is a client hook that, once armed, fills Redis (CONFIG SET maxmemory 1)
// right after the first of its steps (scripts by SHA1) that succeeds: a write's atomic step. A
// pipeline that holds the step is sent in two, so that what the write sends after the step, in
// the same pipeline or later, meets OOM. cut is the name of the step cut after.
type oomAfterAtomicStep struct {
	admin *rdb.Client
	steps map[string]string // script SHA1 → name
	names map[string]string // script SHA1 → name, of every script of the store
	armed atomic.Bool
	cut   atomic.Pointer[string]
	mu    sync.Mutex
	ran   []string // the scripts run since arm, by name
}

// newOOMAfterAtomicStep returns a hook that cuts a write off after the first of the scripts
// names it runs.
func newOOMAfterAtomicStep(admin *rdb.Client, names ...string) *oomAfterAtomicStep {
	h := &oomAfterAtomicStep{admin: admin, steps: map[string]string{}, names: map[string]string{}}
	for _, n := range names {
		h.steps[store.ScriptSHA(n)] = n
	}
	files, err := filepath.Glob("scripts/*.lua")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		n := strings.TrimSuffix(filepath.Base(f), ".lua")
		h.names[store.ScriptSHA(n)] = n
	}
	jobScripts, err := fs.Glob(jobs.Scripts(), "*.lua")
	if err != nil {
		panic(err)
	}
	for _, f := range jobScripts {
		text, err := fs.ReadFile(jobs.Scripts(), f)
		if err != nil {
			panic(err)
		}
		sum := sha1.Sum(text)
		h.names[hex.EncodeToString(sum[:])] = "jobs/" + strings.TrimSuffix(f, ".lua")
	}
	return h
}

func (h *oomAfterAtomicStep) arm() {
	h.mu.Lock()
	h.ran = nil
	h.mu.Unlock()
	h.cut.Store(nil)
	h.armed.Store(true)
}

// scriptsRun returns the names of the scripts run since arm, in order: what a write that was
// not cut off ran instead of an atomic step.
func (h *oomAfterAtomicStep) scriptsRun() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ran...)
}

// cutAfter returns the step the write was cut off after, "" when none.
func (h *oomAfterAtomicStep) cutAfter() string {
	if p := h.cut.Load(); p != nil {
		return *p
	}
	return ""
}

// hook is the client hook that cuts a pipeline (see oomAfterAtomicStep).
func (h *oomAfterAtomicStep) hook() *storetest.Hook {
	return &storetest.Hook{Pipeline: func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
		if !h.armed.Load() {
			return next(ctx, cmds)
		}
		for _, c := range cmds {
			if sha := evalSHA(c); sha != "" {
				h.mu.Lock()
				h.ran = append(h.ran, h.names[sha])
				h.mu.Unlock()
			}
		}
		// The pipeline is sent in two: up to the first step, then, if the step succeeded, the rest
		// on a full Redis, as if memory ran out between them.
		k := slices.IndexFunc(cmds, func(c rdb.Cmder) bool { _, ok := h.steps[evalSHA(c)]; return ok })
		if k < 0 {
			return next(ctx, cmds)
		}
		err := next(ctx, cmds[:k+1])
		if cmds[k].Err() == nil && h.armed.CompareAndSwap(true, false) {
			if err := h.admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
				panic(err)
			}
			name := h.steps[evalSHA(cmds[k])]
			h.cut.Store(&name)
		}
		if k+1 < len(cmds) {
			if rest := next(ctx, cmds[k+1:]); err == nil {
				err = rest
			}
		}
		return err
	}}
}

// evalSHA returns the SHA1 of the script an EVALSHA command runs, "" for another command.
func evalSHA(c rdb.Cmder) string {
	args := c.Args()
	if c.Name() != "evalsha" || len(args) < 2 {
		return ""
	}
	sha, _ := args[1].(string)
	return sha
}

// fullRedis is a redis-server of a test's own that the test fills (maxmemory 1 with
// noeviction: every write that may grow memory is refused) and frees again, through a client of
// its own (admin).
type fullRedis struct {
	t     *testing.T
	addr  string
	admin *rdb.Client
}

// newFullRedis starts a fullRedis, with room until fill.
func newFullRedis(t *testing.T) *fullRedis {
	t.Helper()
	srv := startServer(t, "--maxmemory-policy", "noeviction", "--enable-debug-command", "local")
	f := &fullRedis{t: t, addr: srv.Addr, admin: rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})}
	t.Cleanup(func() { _ = f.admin.Close() })
	return f
}

// backend returns a backend on a client of the server's own, closed with the test.
func (f *fullRedis) backend() storetest.Backend {
	c := rdb.NewPlainClient(&rdb.Options{Addr: f.addr})
	f.t.Cleanup(func() { _ = c.Close() })
	return storetest.Backend{Name: "redis", Client: c}
}

// fill makes Redis full, until free gives it room again or the test ends: the room comes back
// before the cleanups registered earlier (the stores') run.
func (f *fullRedis) fill() {
	f.t.Helper()
	f.setMaxMemory("1")
	f.t.Cleanup(func() { _ = f.admin.ConfigSet(context.Background(), "maxmemory", "0").Err() })
}

// free gives a full Redis room again.
func (f *fullRedis) free() { f.t.Helper(); f.setMaxMemory("0") }

func (f *fullRedis) setMaxMemory(v string) {
	f.t.Helper()
	if err := f.admin.ConfigSet(context.Background(), "maxmemory", v).Err(); err != nil {
		f.t.Fatal(err)
	}
}

// digest is Redis's digest of its dataset: equal digests, equal data.
func (f *fullRedis) digest() string {
	f.t.Helper()
	d, err := f.admin.Do(context.Background(), "debug", "digest").Text()
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

// TestFullRedisMoreWrites: a log-in, a scheduled post and a dismissal of a report on a full Redis
// are refused with KindStorageFull and change nothing, with the rate limits on.
func TestFullRedisMoreWrites(t *testing.T) {
	ctx := context.Background()
	full := newFullRedis(t)
	clock := newStepClock()
	s := full.backend().NewStore(t, store.Options{Prefix: storetest.Prefix(), Now: clock.Now, WriteLimit: 120})
	for _, name := range []string{"ann", "bob"} {
		if _, err := s.SignUp(ctx, name, "password1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.GrantAdmin(ctx, "ann"); err != nil {
		t.Fatal(err)
	}
	p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "a post", Body: "its body", Groups: []string{"go"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.ReportPost(ctx, "bob", p.ID, "spam")
	if err != nil {
		t.Fatal(err)
	}
	settle(t, s)
	clock.Add(time.Hour)
	full.fill()
	d0 := full.digest()
	for _, w := range []struct {
		name string
		do   func() error
	}{
		{"log-in", func() error { _, err := s.LogIn(ctx, "bob", "password1"); return err }},
		{"scheduled post", func() error {
			_, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "later", Body: "later", Groups: []string{"go"}, PublishAt: clock.Now().Add(time.Hour)})
			return err
		}},
		{"dismissal", func() error { _, err := s.ResolveReportAs(ctx, "ann", r.ID, store.ReportDismissed); return err }},
	} {
		if err := w.do(); !store.IsKind(err, store.KindStorageFull) {
			t.Errorf("%s on a full Redis: %v, want KindStorageFull", w.name, err)
		}
		if d := full.digest(); d != d0 {
			t.Errorf("%s refused for OOM changed the data", w.name)
			d0 = d
		}
	}
}

// TestScriptsRefusedWhenFull runs the scripts that keep a window (a sorted set they trim) on a
// full Redis, each with an entry past the window to trim and arguments that make it write: each
// must be refused with OOM and change nothing. Redis refuses a script's first write that may grow
// memory only while the script has written nothing, and a trim is a write: a script that trims
// first runs to its end when Redis is full.
func TestScriptsRefusedWhenFull(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "--maxmemory-policy", "noeviction", "--enable-debug-command", "local")
	c := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = c.Close() })
	const now = 1_000_000_000
	for _, tc := range []struct {
		script string
		keys   []string
		args   []any
	}{
		{"ratelimit", []string{"w"}, []any{now, 60_000, 10, "attempt"}},
		{"newaccount", []string{"user", "karma", "w"}, []any{now, 86_400_000, 0, 10, 60_000, "attempt", "0"}},
		{"known_address", []string{"w"}, []any{"10.0.0.1", now, 86_400_000, 20}},
		{"report_dismissed", []string{"w"}, []any{"report:1", now, now, 60_000}},
		{"schedule", []string{"w", "drafts", "cancelled", "user", "rev"}, []any{"add", "7", `{"at":"2000000000"}`, 2_000_000_000, now, 10}},
		// A new session beside an expired one to prune (the user's password hash is "pw"), and
		// the user's hash of sessions of layout 7 to fold.
		{"session_start", []string{"user", "sessions"}, []any{"new", 3_600_000, now, 10, "pw", "user:ev:sessions", "0"}},
		// A session of layout 4 (a string with its TTL) that its first use moves into the user's
		// hash: refused, it stays where it was instead of being lost.
		{"session_touch", []string{"user", "sessions", "legacy"}, []any{"old", now, 3_600_000, 10, "user:ev:sessions", "0"}},
		// A session of layout 7 that its first use moves, with the others, into the user's hash.
		{"session_touch", []string{"user", "sessions"}, []any{"live", now, 3_600_000, 10, "user:ev:sessions", "0"}},
		// The migration from layout 7 of the same hash.
		{"sessions_fold", []string{"user", "sessions"}, []any{now, 10, "user:ev:sessions", "0"}},
	} {
		t.Run(tc.script, func(t *testing.T) {
			if err := c.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			// An entry past the window (and past its time) to trim; a user created now, for
			// newaccount.
			if err := c.ZAdd(ctx, "w", rdb.Z{Score: 1, Member: "old"}).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.HSet(ctx, "user", "created", now, "pass", "pw", "s:expired", 1).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.HSet(ctx, "sessions", "expired", 1, "live", now+60_000).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.Set(ctx, "legacy", "ann", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
				t.Fatal(err)
			}
			before := c.Do(ctx, "debug", "digest").Val()
			err := c.Eval(ctx, store.ScriptSource(tc.script), tc.keys, tc.args...).Err()
			if err == nil || !strings.HasPrefix(err.Error(), "OOM ") {
				t.Errorf("on a full Redis: %v, want OOM", err)
			}
			if after := c.Do(ctx, "debug", "digest").Val(); after != before {
				t.Errorf("refused for OOM, it changed the data")
			}
		})
	}
	if err := c.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
}

// TestJobLeaseRenewedWhenFull: a job that runs longer than its lease while Redis is full keeps
// its lease, so that another process does not claim it and run it again meanwhile: a renewal
// grows no memory, and jobs_renew.lua takes the lease out before it writes it again, which a
// full Redis lets through (a ZADD first is refused).
func TestJobLeaseRenewedWhenFull(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	full := newFullRedis(t)
	const lease = 150 * time.Millisecond
	prefix := storetest.Prefix()
	var runs atomic.Int32
	finished := make(chan struct{}, 8)
	var es []*jobs.Engine
	for range 2 {
		e := full.backend().NewStore(t, store.Options{Prefix: prefix, Jobs: jobs.Options{Lease: lease, Poll: 5 * time.Millisecond}}).Jobs()
		e.Handle("long", func(context.Context, jobs.Job) error {
			runs.Add(1)
			bg := context.Background()
			if err := full.admin.ConfigSet(bg, "maxmemory", "1").Err(); err != nil {
				return err
			}
			time.Sleep(4 * lease) // Redis full all along
			if err := full.admin.ConfigSet(bg, "maxmemory", "0").Err(); err != nil {
				return err
			}
			finished <- struct{}{}
			return nil
		})
		es = append(es, e)
	}
	t.Cleanup(func() { _ = full.admin.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	if err := es[0].Enqueue(ctx, jobs.Job{ID: "x", Kind: "long"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, e := range es {
		wg.Go(func() { e.Run(ctx) })
	}
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("the job never finished")
	}
	time.Sleep(2 * lease)
	cancel()
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Errorf("the job ran %d times, want once", n)
	}
}
