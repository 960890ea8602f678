package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// lockCut is a client hook for a migrating process that loses the migration lock: it stalls the
// process's first round trip that stall matches until the test lets it go, as a process paused
// while another takes over; with cut, the process's renewals of the lock fail from then on (the
// lock's node does not answer it) while its other commands go through. It counts the round trips
// with data scripts (not the lock's or the version hash's) started after the resume.
type lockCut struct {
	stall   func(key string, args []any) bool
	cut     bool
	once    sync.Once
	cutting atomic.Bool
	stalled chan struct{} // closed when the stalled round trip waits
	resume  chan struct{} // closed by the test
	resumed atomic.Bool
	after   atomic.Int64 // round trips with data scripts started after the resume
}

// see looks at the commands of one round trip before they are sent (pipelined together, they are
// one write in flight).
func (h *lockCut) see(cmds []rdb.Cmder) error {
	data, stall := false, false
	for _, cmd := range cmds {
		args := cmd.Args()
		if len(args) < 4 || !strings.EqualFold(cmd.Name(), "evalsha") {
			continue
		}
		key, _ := args[3].(string)
		if strings.Contains(key, "{lock:migrate}") {
			if h.cutting.Load() && len(args) > 5 && args[5] == "renew" {
				return errors.New("lockCut: the lock's node does not answer")
			}
			continue
		}
		data = data || !strings.Contains(key, "{meta}:layout")
		stall = stall || h.stall(key, args)
	}
	if h.resumed.Load() {
		if data {
			h.after.Add(1)
		}
		return nil
	}
	if stall {
		h.once.Do(func() {
			h.cutting.Store(h.cut)
			close(h.stalled)
			<-h.resume
			h.resumed.Store(true)
		})
	}
	return nil
}

// hook is the client hook that stalls and cuts (see see): a command or pipeline it cuts fails
// whole, unsent.
func (h *lockCut) hook() *storetest.Hook {
	return storetest.OnEach(func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
		if err := h.see(cmds); err != nil {
			return storetest.Fail(cmds, err)
		}
		return next(ctx, cmds)
	})
}

// TestMigrationStopsWhenItLosesTheLock: a process migrating the previous release's data loses the
// migration lock while it is stalled, and another process takes the migration over and finishes
// it. Once resumed, the first writes nothing more (a step run beside a newer layout can put data
// where that layout does not look, or run with the older layout's assumptions), and returns once
// the keyspace is at Layout, with what it ran before.
func TestMigrationStopsWhenItLosesTheLock(t *testing.T) {
	isData := func(key string, _ []any) bool { return !strings.Contains(key, "{meta}:layout") }
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		// stall picks the round trip at which the first process stalls; with cut, its renewals
		// fail from then on and the lock's lease runs out; without, the lock vanishes (a failover
		// lost it) while the lease still runs.
		stall func(key string, args []any) bool
		cut   bool
		ran   int // migrations the first process ran
	}{
		{name: "its lease runs out during a step", ttl: 300 * time.Millisecond, stall: isData, cut: true},
		{name: "a failover loses the lock between two migrations", ttl: 10 * time.Second,
			stall: func(key string, args []any) bool {
				return strings.Contains(key, "{meta}:layout") && len(args) > 6 && args[4] == "begin" && fmt.Sprint(args[5]) == "2"
			}, ran: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				prefix := storetest.Prefix()
				opts := store.MigrateLockTTL(store.Options{Prefix: prefix, WriteLimit: -1}, tc.ttl)
				f := newFixture(t, b, opts)
				ann := f.user("ann")
				for _, title := range []string{"one", "two", "three"} {
					f.post(ann, "Quokka "+title)
				}
				deleteMatching(t, b.Client, prefix+"{meta}:layout") // the previous release's data

				cut := &lockCut{stall: tc.stall, cut: tc.cut, stalled: make(chan struct{}), resume: make(chan struct{})}
				first := b.Hooked(t, cut.hook())
				a := first.NewStore(t, opts)
				second := b
				second.Client = b.NewClient(t)
				other := second.NewStore(t, opts)

				// The deadline only stops a hang: every migration of the second process scans the
				// shared server's whole keyspace, which CI's busy cores made last past 20 s.
				ctx, cancel := context.WithTimeout(f.ctx, 2*time.Minute)
				defer cancel()
				type result struct {
					ran []store.Migration
					err error
				}
				done := make(chan result, 1)
				go func() {
					ran, err := a.Migrate(ctx, 5*time.Millisecond)
					done <- result{ran, err}
				}()
				select {
				case <-cut.stalled:
				case r := <-done:
					t.Fatalf("the first process returned before it stalled: %+v", r)
				}
				switch {
				case !tc.cut:
					deleteMatching(t, b.Client, prefix+"{lock:migrate}")
				case b.Mini != nil: // miniredis moves time only when told
					time.Sleep(tc.ttl) // the renewals the first process tries meanwhile fail
					b.Mini.FastForward(tc.ttl)
				}
				ran, err := other.Migrate(ctx, 5*time.Millisecond)
				if err != nil || len(ran) != store.Layout-1-tc.ran {
					t.Fatalf("the second process ran %d migrations, %v; want %d", len(ran), err, store.Layout-1-tc.ran)
				}
				close(cut.resume)
				r := <-done
				if n := cut.after.Load(); n != 0 {
					t.Errorf("the first process started %d writes after it lost the migration lock, want none", n)
				}
				if len(r.ran) != tc.ran {
					t.Errorf("the first process says it ran %d migrations, want %d", len(r.ran), tc.ran)
				}
				if r.err != nil {
					t.Errorf("the first process: %v; want it to return once the other finished", r.err)
				}
				if l, err := f.s.ReadLayout(f.ctx); err != nil || l.Version != store.Layout || l.Migrating != 0 {
					t.Errorf("after: %+v, %v; want layout %d, none in progress", l, err, store.Layout)
				}
			})
		})
	}
}
