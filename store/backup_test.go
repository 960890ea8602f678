package store_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestBackupRestoreDrill runs the backup and restore procedure of docs/OPERATIONS.md on a
// redis-server of its own: BGSAVE takes the snapshot, and the restore puts the RDB file alone in
// a fresh directory under a fresh redis-server (runDrill says what is written and compared).
func TestBackupRestoreDrill(t *testing.T) {
	primary := startServer(t, "--dir", t.TempDir())
	client := rdb.NewPlainClient(&rdb.Options{Addr: primary.Addr})
	t.Cleanup(func() { _ = client.Close() })
	var snapshot string
	runDrill(t, storetest.Backend{Name: "redis", Client: client},
		func() { snapshot = bgsave(t, client) },
		func() storetest.Backend {
			primary.Stop()
			dir := t.TempDir()
			copyFile(t, snapshot, filepath.Join(dir, "dump.rdb"))
			restored := startServer(t, "--dir", dir)
			rr := rdb.NewPlainClient(&rdb.Options{Addr: restored.Addr})
			t.Cleanup(func() { _ = rr.Close() })
			return storetest.Backend{Name: "redis", Client: rr}
		})
}

// TestBackupRestoreDrillCluster runs the drill on a private 3-master Redis Cluster
// (scripts/redis-cluster.sh), with the Cluster steps of docs/OPERATIONS.md. Snapshot: writes
// are paused on every master (CLIENT PAUSE WRITE) while each master forks for its BGSAVE in
// turn, so that all the snapshots hold the same instant of the site; once written, each master's
// RDB file and cluster configuration file (its node id, its slots, its peers' addresses) are
// copied. Restore: every
// node is stopped, and a fresh one starts on each node's port from its two files, in a directory
// of its own; the restored nodes know each other again as the cluster they were.
func TestBackupRestoreDrillCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster, stops and restores it: not with -short")
	}
	d := storetest.StartDeployment(t, "redis-cluster.sh")
	addrs := strings.Split(d.Env["REDIS_CLUSTER_ADDRS"], ",")
	cc := storetest.NewClusterClient(t, addrs)
	ids := clusterMasters(t, cc)
	var snaps []nodeSnapshot
	runDrill(t, storetest.Backend{Name: "cluster", Client: cc},
		func() { snaps = snapshotCluster(t, cc) },
		func() storetest.Backend {
			d.Stop()
			rb := restoreCluster(t, snaps)
			// The same nodes serve again, each with keys of its own.
			rc := rb.Client.(*rdb.ClusterClient)
			if got := clusterMasters(t, rc); !maps.Equal(got, ids) {
				t.Fatalf("restored masters %v, want %v", got, ids)
			}
			if err := rc.ForEachMaster(context.Background(), func(ctx context.Context, c *rdb.Client) error {
				n, err := c.DBSize(ctx).Result()
				if err == nil && n == 0 {
					err = fmt.Errorf("master %s restored no key", c.Options().Addr)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return rb
		})
}

// nodeSnapshot is the backup of one master of a cluster: copies of its RDB file and of its
// cluster configuration file, and the port it served on.
type nodeSnapshot struct {
	port      int
	rdb, conf string
}

// snapshotCluster takes a snapshot of every master of cc at one instant (writes paused on all of
// them while each starts its BGSAVE) and copies each master's RDB and cluster configuration
// files once written.
func snapshotCluster(t *testing.T, cc *rdb.ClusterClient) []nodeSnapshot {
	t.Helper()
	ctx := context.Background()
	var masters []*rdb.Client
	var mu sync.Mutex
	if err := cc.ForEachMaster(ctx, func(ctx context.Context, c *rdb.Client) error {
		mu.Lock()
		defer mu.Unlock()
		masters = append(masters, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Each master forks its snapshot while writes wait on all of them (BGSAVE, INFO and CONFIG
	// GET do not wait), so that the snapshots hold one instant of the site; writes go on once
	// every fork is done, while the snapshots are written. The pause would end by itself, as
	// docs/OPERATIONS.md has it: before the servers' -redis-timeout.
	for _, m := range masters {
		if err := m.Do(ctx, "CLIENT", "PAUSE", 2000, "WRITE").Err(); err != nil {
			t.Fatalf("CLIENT PAUSE on %s: %v", m.Options().Addr, err)
		}
	}
	for _, m := range masters {
		startBgsave(t, m)
	}
	for _, m := range masters {
		if err := m.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
			t.Fatalf("CLIENT UNPAUSE on %s: %v", m.Options().Addr, err)
		}
	}
	dir := t.TempDir()
	var out []nodeSnapshot
	for _, m := range masters {
		addr := m.Options().Addr
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			t.Fatal(err)
		}
		n := nodeSnapshot{port: port, rdb: filepath.Join(dir, "dump-"+p+".rdb"), conf: filepath.Join(dir, "nodes-"+p+".conf")}
		copyFile(t, savedRDB(t, m), n.rdb)
		cfg, err := m.ConfigGet(ctx, "dir").Result()
		if err != nil {
			t.Fatal(err)
		}
		file, err := m.ConfigGet(ctx, "cluster-config-file").Result()
		if err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join(cfg["dir"], file["cluster-config-file"]), n.conf)
		if b, err := os.ReadFile(n.conf); err != nil || !strings.Contains(string(b), "myself") {
			t.Fatalf("cluster configuration of %s: %v\n%s", addr, err, b)
		}
		out = append(out, n)
	}
	return out
}

// restoreCluster starts a fresh node for every snapshot, on the snapshot's port, from its RDB
// file and cluster configuration file put in a directory of its own, and returns the restored
// cluster once every node reports cluster_state:ok with every slot served.
func restoreCluster(t *testing.T, snaps []nodeSnapshot) storetest.Backend {
	t.Helper()
	var addrs []string
	for _, n := range snaps {
		dir := t.TempDir()
		copyFile(t, n.rdb, filepath.Join(dir, "dump.rdb"))
		copyFile(t, n.conf, filepath.Join(dir, "nodes.conf"))
		srv, err := storetest.StartServerOn(n.port, "--dir", dir, "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000")
		if err != nil {
			t.Fatalf("restore the node of port %d: %v", n.port, err)
		}
		t.Cleanup(srv.Stop)
		addrs = append(addrs, srv.Addr)
	}
	want := []string{"cluster_state:ok", "cluster_slots_ok:16384", fmt.Sprintf("cluster_known_nodes:%d", len(snaps))}
	for _, addr := range addrs {
		c := rdb.NewPlainClient(&rdb.Options{Addr: addr})
		t.Cleanup(func() { _ = c.Close() })
		var info string
		// Generous: the machine is shared, and a node that saw its peers fail waits before it
		// serves again.
		waitUntilFor(t, 60*time.Second, "cluster_state:ok on "+addr, func() bool {
			var err error
			if info, err = c.ClusterInfo(context.Background()).Result(); err != nil {
				return false
			}
			for _, w := range want {
				if !strings.Contains(info, w+"\r\n") {
					return false
				}
			}
			return true
		})
	}
	return storetest.Backend{Name: "cluster", Client: storetest.NewClusterClient(t, addrs)}
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
func bgsave(t *testing.T, client *rdb.Client) string {
	t.Helper()
	startBgsave(t, client)
	return savedRDB(t, client)
}

// startBgsave starts a snapshot with BGSAVE. BGSAVE forks its child before it answers, so the
// snapshot holds the data as it was at the answer, however long the child takes to write it.
func startBgsave(t *testing.T, client *rdb.Client) {
	t.Helper()
	if err := client.BgSave(context.Background()).Err(); err != nil {
		t.Fatalf("BGSAVE on %s: %v", client.Options().Addr, err)
	}
}

// savedRDB waits until the snapshot that BGSAVE started is written, and returns the path of the
// RDB file.
func savedRDB(t *testing.T, client *rdb.Client) string {
	t.Helper()
	ctx := context.Background()
	// From BGSAVE's answer on, in progress until written.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, err := client.Info(ctx, "persistence").Result()
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
	cfg, err := client.ConfigGet(ctx, "dir").Result()
	if err != nil {
		t.Fatal(err)
	}
	file, err := client.ConfigGet(ctx, "dbfilename").Result()
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
