package store_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestBackupRestoreDrill runs the backup and restore procedure of docs/OPERATIONS.md on a
// redis-server of its own: BGSAVE takes the snapshot, and the restore puts the RDB file alone in
// a fresh directory under a fresh redis-server (runDrill says what is written and compared).
func TestBackupRestoreDrill(t *testing.T) {
	primary := startServer(t, "--dir", t.TempDir())
	rdb := redis.NewClient(&redis.Options{Addr: primary.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	var snapshot string
	runDrill(t, storetest.Backend{Name: "redis", Client: rdb},
		func() { snapshot = bgsave(t, rdb) },
		func() storetest.Backend {
			primary.Stop()
			dir := t.TempDir()
			copyFile(t, snapshot, filepath.Join(dir, "dump.rdb"))
			restored := startServer(t, "--dir", dir)
			rr := redis.NewClient(&redis.Options{Addr: restored.Addr})
			t.Cleanup(func() { _ = rr.Close() })
			return storetest.Backend{Name: "redis", Client: rr}
		})
}

// runDrill runs a backup and restore drill on the Redis of b: a community is written, snapshot
// takes a snapshot, writing goes on, then restore stops that Redis, restores the snapshot into a
// fresh one and returns it, and `rebuild` (Rebuild, RebuildUsers) runs there. Every listing,
// count, ranking, feed and leaderboard of the restored site must equal those of a site that got
// only the writes before the snapshot: nothing written after it survives, nothing before it is
// lost. The snapshot is taken with a write cut off between its atomic step and its derived
// writes (a post missing from its rankings), as a snapshot taken mid-write holds it.
func runDrill(t *testing.T, b storetest.Backend, snapshot func(), restore func() storetest.Backend) {
	t.Helper()
	ctx := context.Background()
	prefix := storetest.Prefix()
	clock := newStepClock()
	s := b.NewStore(t, store.Options{Prefix: prefix, Now: clock.Now})

	c := newCommunity()
	c.run(t, s, clock, c.first())
	// The last post's derived writes never ran.
	last := c.posts[len(c.posts)-1]
	lastKey := strings.TrimPrefix(last, "post:")
	hot, newest, top, _ := s.RankingKeysForTest("")
	for _, k := range []string{hot, newest, top} {
		if err := b.Client.ZRem(ctx, k, lastKey).Err(); err != nil {
			t.Fatal(err)
		}
	}
	snapshot()
	afterSnapshot := clock.Now()

	c2 := *c
	c.run(t, s, clock, c.then())
	written := c.render(t, s)

	rb := restore()
	rclock := newStepClock()
	rclock.Add(afterSnapshot.Sub(rclock.Now()))
	rs := rb.NewStore(t, store.Options{Prefix: prefix, Now: rclock.Now})
	if _, err := rs.Rebuild(ctx); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if _, err := rs.RebuildUsers(ctx); err != nil {
		t.Fatalf("rebuild users: %v", err)
	}

	// What the restored primary data implies: the writes before the snapshot, replayed on a
	// store of their own.
	wclock := newStepClock()
	want := rb.NewStore(t, store.Options{Now: wclock.Now})
	c2.posts, c2.users = nil, nil
	c2.run(t, want, wclock, c2.first())
	if !wclock.Now().Equal(afterSnapshot) {
		t.Fatalf("the replay ends at %v, the snapshot was taken at %v", wclock.Now(), afterSnapshot)
	}

	got, exp := c2.render(t, rs), c2.render(t, want)
	if got == exp && got == written {
		t.Fatal("the writes after the snapshot changed nothing: this drill shows nothing")
	}
	if got != exp {
		t.Errorf("the restored site differs from its writes before the snapshot:\n%s", lineDiff(got, exp))
	}
	// The posts written after the snapshot are gone with their comments and votes.
	for _, id := range c.posts[len(c2.posts):] {
		if p, err := rs.NewLoader().Post(ctx, id); err != nil || p != nil {
			t.Errorf("post %s, written after the snapshot, was restored: %v, %v", id, p, err)
		}
	}
	// The job engine of the restored site finds nothing to change: later, both sites still agree.
	rclock.Add(store.RepairGrace + time.Minute)
	wclock.Add(store.RepairGrace + time.Minute)
	settle(t, rs)
	settle(t, want)
	if got, exp := c2.render(t, rs), c2.render(t, want); got != exp {
		t.Errorf("after the due jobs, the restored site differs from its writes before the snapshot:\n%s", lineDiff(got, exp))
	}
}

// startServer starts a redis-server of the test's own with the extra arguments, stopped when the
// test ends; without redis-server it skips (or fails with REQUIRE_REAL_REDIS=1).
func startServer(t *testing.T, extra ...string) *storetest.Server {
	t.Helper()
	storetest.RealServer(t) // skips without redis-server
	srv, err := storetest.StartServer(extra...)
	if err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// bgsave takes a snapshot with BGSAVE, waits until it is written, and returns the path of the
// RDB file.
func bgsave(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	ctx := context.Background()
	// BGSAVE forks its child before it answers: from then on, in progress until written.
	if err := rdb.BgSave(ctx).Err(); err != nil {
		t.Fatalf("BGSAVE: %v", err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, err := rdb.Info(ctx, "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, "rdb_bgsave_in_progress:0") {
			if !strings.Contains(info, "rdb_last_bgsave_status:ok") {
				t.Fatalf("BGSAVE failed:\n%s", info)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("BGSAVE did not finish:\n%s", info)
		}
	}
	cfg, err := rdb.ConfigGet(ctx, "dir").Result()
	if err != nil {
		t.Fatal(err)
	}
	file, err := rdb.ConfigGet(ctx, "dbfilename").Result()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(cfg["dir"], file["dbfilename"])
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// lineDiff lists the lines of got and want that differ, position by position.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			b.WriteString("got:  " + gl + "\nwant: " + wl + "\n")
		}
	}
	return b.String()
}
