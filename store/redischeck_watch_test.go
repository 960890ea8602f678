package store_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// lockedBuffer is a log's output, written and read by several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMemoryWatchReportsEviction: a Redis master that evicts keys since start-up (a failover to a
// replica configured otherwise, a master added to a cluster, a CONFIG SET) is logged as an error
// at the next reading of its memory, and its return to noeviction too; with AllowEviction, the
// operator's choice, nothing is logged. Before, only the start-up check looked at the policy, and
// such a Redis evicted keys without a word.
func TestMemoryWatchReportsEviction(t *testing.T) {
	const evicts = "Redis evicts keys when memory is full"
	for _, tc := range []struct {
		name  string
		allow bool
	}{
		{"refused", false},
		{"allowed", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, "--maxmemory-policy", "noeviction")
			admin := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
			t.Cleanup(func() { _ = admin.Close() })
			var out lockedBuffer
			b := storetest.Backend{Name: "redis", Client: rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})}
			t.Cleanup(func() { _ = b.Client.Close() })
			s := b.NewStore(t, store.MemoryInterval(store.Options{Prefix: storetest.Prefix(), AllowEviction: tc.allow,
				Log: slog.New(slog.NewTextHandler(&out, nil))}, 10*time.Millisecond))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); s.RunBackground(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			waitFor := func(what string, ok func() bool) {
				t.Helper()
				for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%s; log:\n%s", what, out.String())
					}
				}
			}
			waitFor("no reading of the memory", func() bool { _, ok := s.Memory(); return ok })
			if err := admin.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
				t.Fatal(err)
			}
			waitFor("no reading saw the policy", func() bool { m, _ := s.Memory(); return len(m.Evicting) == 1 })
			if err := admin.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
				t.Fatal(err)
			}
			waitFor("no reading saw the policy back", func() bool { m, _ := s.Memory(); return len(m.Evicting) == 0 })
			log := out.String()
			if got := strings.Count(log, evicts); got != map[bool]int{false: 1, true: 0}[tc.allow] {
				t.Errorf("logged %q %d times, with AllowEviction %v; log:\n%s", evicts, got, tc.allow, log)
			}
			if got := strings.Contains(log, "Redis no longer evicts keys"); got == tc.allow {
				t.Errorf("logged the return to noeviction: %v, with AllowEviction %v; log:\n%s", got, tc.allow, log)
			}
		})
	}
}
