package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// startServer runs the server with args until it is ready (returning "" and its log) or stops
// (returning its error); the server stops with the test.
func startServer(t *testing.T, args ...string) (log *syncBuffer, err error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log = &syncBuffer{}
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- runWith(ctx, append([]string{"-addr", "127.0.0.1:0", "-metrics-addr", "off"}, args...), env(nil), log, io.Discard,
			func(a string) { ready <- a })
	}()
	select {
	case <-ready:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("server: %v", err)
			}
		})
		return log, nil
	case err := <-done:
		cancel()
		return log, err
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("server neither ready nor stopped")
	}
	return log, nil
}

// TestStartUpChecks: a Redis that evicts keys is refused at start-up unless -allow-eviction says
// the operator means it; one that keeps nothing on disk is warned about.
func TestStartUpChecks(t *testing.T) {
	srv := storetest.PrivateServer(t) // started with --save "" --appendonly no
	c := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	defer c.Close()
	ctx := context.Background()
	if err := c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	base := []string{"-redis", srv.Addr, "-prefix", storetest.Prefix()}
	if _, err := startServer(t, base...); err == nil || !strings.Contains(err.Error(), "allkeys-lru") || !strings.Contains(err.Error(), "-allow-eviction") {
		t.Fatalf("start on allkeys-lru: %v, want a refusal naming the policy and -allow-eviction", err)
	}
	log, err := startServer(t, append([]string{"-allow-eviction"}, base...)...)
	if err != nil {
		t.Fatalf("start on allkeys-lru with -allow-eviction: %v", err)
	}
	for _, want := range []string{"evicts keys when memory is full", "keeps nothing on disk"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log does not warn %q:\n%s", want, log)
		}
	}

	// noeviction and an RDB schedule (that the test does not live to see run): no warning.
	for _, kv := range [][2]string{{"maxmemory-policy", "noeviction"}, {"save", "3600 1"}} {
		if err := c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	log, err = startServer(t, base...)
	if err != nil {
		t.Fatalf("start on noeviction with AOF: %v", err)
	}
	if s := log.String(); strings.Contains(s, "level=WARN") && (strings.Contains(s, "evict") || strings.Contains(s, "disk")) {
		t.Errorf("warnings on a well-configured Redis:\n%s", s)
	}
}

// TestStartUpChecksSkippedOnEmbeddedRedis: the embedded Redis is not checked, and says so.
func TestStartUpChecksSkippedOnEmbeddedRedis(t *testing.T) {
	log, err := startServer(t)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "embedded Redis: its eviction policy and persistence are not checked") {
		t.Errorf("no line on the skipped checks:\n%s", log)
	}
}

// TestMigrateCommand: `agora migrate --dry-run` prints the plan for the previous release's data
// and changes nothing; `agora migrate` runs it, and again finds nothing to do; a server refuses a
// newer layout.
func TestMigrateCommand(t *testing.T) {
	addr := storetest.RealServer(t).Addr
	prefix := storetest.Prefix()
	ctx := context.Background()
	c := rdb.NewPlainClient(&rdb.Options{Addr: addr})
	defer c.Close()
	st, err := store.New(ctx, c, store.Options{Prefix: prefix, Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.SignUp(ctx, "oldtimer", "password1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreatePost(ctx, sess.User.Key(), store.NewPost{Title: "written before layouts"}); err != nil {
		t.Fatal(err)
	}
	migrate := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := run(ctx, append([]string{"-redis", addr, "-prefix", prefix, "migrate"}, args...), env(nil), &out, io.Discard); err != nil {
			t.Fatalf("migrate %q: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	out := migrate("--dry-run")
	for _, want := range []string{"keyspace layout: 1 (data of the previous release", "would migrate 1 → 2: derive",
		"would migrate 3 → 4: keep every post list", "would migrate 4 → 5: move every post's body"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run does not say %q:\n%s", want, out)
		}
	}
	if n, _ := c.Exists(ctx, prefix+"{meta}:layout").Result(); n != 0 {
		t.Errorf("the dry run wrote the version hash")
	}
	if out := migrate(); !strings.Contains(out, "migrated 1 → 2") || !strings.Contains(out, "migrated 3 → 4") || !strings.Contains(out, "migrated 4 → 5") {
		t.Errorf("migrate:\n%s", out)
	}
	if out := migrate(); !strings.Contains(out, "nothing left to migrate") {
		t.Errorf("migrate again:\n%s", out)
	}
	if out := migrate("--dry-run"); !strings.Contains(out, "nothing to migrate") {
		t.Errorf("dry run after:\n%s", out)
	}

	if err := c.HSet(ctx, prefix+"{meta}:layout", "version", strconv.Itoa(store.Layout+1)).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := startServer(t, "-redis", addr, "-prefix", prefix); !errors.Is(err, store.ErrLayoutTooNew) {
		t.Fatalf("start on a newer layout: %v, want ErrLayoutTooNew", err)
	}
}

// TestRebuildOnAnOlderLayout: `agora rebuild` on a keyspace of an older layout (here 4, whose post
// bodies are in the posts' hashes) refuses, naming the layouts and `agora migrate`, and changes
// nothing: it ran with this release's assumptions, and its steps that redo what migrations did
// moved the bodies out of the hashes, where the replicas of layout 4 still serving read them
// (they showed every post without its body), with the layout still recorded as 4. During a
// migration it says to wait for it.
func TestRebuildOnAnOlderLayout(t *testing.T) {
	addr := storetest.RealServer(t).Addr
	prefix := storetest.Prefix()
	ctx := context.Background()
	c := rdb.NewPlainClient(&rdb.Options{Addr: addr})
	defer c.Close()
	st, err := store.New(ctx, c, store.Options{Prefix: prefix, Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CheckLayout(ctx); err != nil {
		t.Fatal(err)
	}
	sess, err := st.SignUp(ctx, "oldtimer", "password1")
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.CreatePost(ctx, sess.User.Key(), store.NewPost{Title: "a bird", Body: "a curlew on the shore"})
	if err != nil {
		t.Fatal(err)
	}
	// Layout 4: the body in the post's hash, none apart.
	pid, _ := store.PostKey(p.ID)
	hash := prefix + "{p:" + pid + "}"
	if err := c.HSet(ctx, hash, "body", p.Body).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.HDel(ctx, hash+":c:body", "b").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.HSet(ctx, prefix+"{meta}:layout", "version", 4).Err(); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	err = run(ctx, []string{"-redis", addr, "-prefix", prefix, "rebuild"}, env(nil), &out, &out)
	if err == nil || !strings.Contains(err.Error(), "layout 4") || !strings.Contains(err.Error(), "agora migrate") {
		t.Errorf("rebuild on layout 4: %v; want a refusal naming the layout and agora migrate\n%s", err, out.String())
	}
	if body, err := c.HGet(ctx, hash, "body").Result(); err != nil || body != p.Body {
		t.Errorf("after the rebuild, the post's hash holds the body %q (%v), want %q (what a replica of layout 4 reads)", body, err, p.Body)
	}
	if l, err := st.ReadLayout(ctx); err != nil || l.Version != 4 {
		t.Errorf("after the rebuild: layout %+v, %v; want 4", l, err)
	}
	// A migration from it in progress (the servers run it in the background): wait for it.
	if err := c.HSet(ctx, prefix+"{meta}:layout", "migrating", 5, "started", time.Now().UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	err = run(ctx, []string{"-redis", addr, "-prefix", prefix, "rebuild"}, env(nil), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "migration to layout 5 is in progress") || !strings.Contains(err.Error(), "agora migrate") {
		t.Errorf("rebuild during a migration: %v; want a refusal saying to wait for it", err)
	}
}

// TestMigrateDryRunWritesNothing: `agora migrate --dry-run` changes no key of the keyspace, on
// data of the previous release and on a keyspace already migrated, also with -admins set (whose
// names a start records, see store/admins.go).
func TestMigrateDryRunWritesNothing(t *testing.T) {
	addr := storetest.RealServer(t).Addr
	ctx := context.Background()
	c := rdb.NewPlainClient(&rdb.Options{Addr: addr})
	defer c.Close()
	// snapshot returns every key of prefix with its serialized value.
	snapshot := func(prefix string) map[string]string {
		t.Helper()
		out := map[string]string{}
		var keys []string
		for cursor := uint64(0); ; {
			batch, next, err := c.Scan(ctx, cursor, prefix+"*", 1000).Result()
			if err != nil {
				t.Fatal(err)
			}
			keys, cursor = append(keys, batch...), next
			if cursor == 0 {
				break
			}
		}
		for _, k := range keys {
			v, err := c.Dump(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		migrated bool
	}{{"previous release", false}, {"migrated", true}} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := storetest.Prefix()
			st, err := store.New(ctx, c, store.Options{Prefix: prefix, Password: storetest.FastPasswords, WriteLimit: -1})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.SignUp(ctx, "oldtimer", "password1"); err != nil {
				t.Fatal(err)
			}
			args := []string{"-redis", addr, "-prefix", prefix, "-admins", "oldtimer,newcomer", "migrate"}
			if tc.migrated {
				if err := run(ctx, args, env(nil), io.Discard, io.Discard); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(prefix)
			var out bytes.Buffer
			if err := run(ctx, append(args, "--dry-run"), env(nil), &out, io.Discard); err != nil {
				t.Fatalf("migrate --dry-run: %v\n%s", err, out.String())
			}
			after := snapshot(prefix)
			for k, v := range after {
				if w, ok := before[k]; !ok {
					t.Errorf("the dry run wrote %s", k)
				} else if w != v {
					t.Errorf("the dry run changed %s", k)
				}
			}
			for k := range before {
				if _, ok := after[k]; !ok {
					t.Errorf("the dry run deleted %s", k)
				}
			}
		})
	}
}
