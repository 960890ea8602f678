package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// After a burst of posts and a quiet time with no write to trim them, the posts past a window
// cost every page read of the windowed TOP a filter of each: a read that filters many queues a
// job that trims them, so that later reads filter none. Pages are exact before and after.
func TestWindowedTopBacklogTrimmedAfterARead(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		f := newFixture(t, b, store.Options{Now: clk.Now, WriteLimit: -1})
		var backlog []int
		f.s.OnWindowBacklog(func(n int) { backlog = append(backlog, n) })
		alice := f.user("alice")
		const burst = 300 // more than a write trims, than a read lets pass and than a trim call takes (64, 128, 256)
		for i := range burst {
			f.post(alice, "burst "+string(rune('a'+i%26)), "g")
			clk.Add(time.Millisecond) // a trim call stops at the millisecond after its limit
		}
		clk.Add(30 * time.Minute)
		young := []string{f.post(alice, "young 1", "g").ID, f.post(alice, "young 2", "g").ID}
		slices.Reverse(young)     // ties (no votes) by id, descending
		clk.Add(31 * time.Minute) // the burst is past the hour, with no write since
		zcard := func(group string) int64 {
			t.Helper()
			var n int64
			for _, k := range f.s.WindowSets(group, store.SortTopHour) {
				c, err := b.Client.ZCard(f.ctx, k).Result()
				if err != nil {
					t.Fatal(err)
				}
				n += c
			}
			return n
		}
		check := func(when string) {
			t.Helper()
			for _, g := range []string{"g", ""} {
				p, ids := f.page(store.SortTopHour, g, store.Window{First: 10})
				if !slices.Equal(ids, young) || p.Total != 2 || p.HasNext || p.HasPrev {
					t.Fatalf("%s, group %q: %v (total %d, next %v, prev %v), want %v", when, g, ids, p.Total, p.HasNext, p.HasPrev, young)
				}
				p, ids = f.page(store.SortTopHour, g, store.Window{First: 1, After: p.StartCursor()})
				if !slices.Equal(ids, young[1:]) || p.Total != 2 {
					t.Fatalf("%s, group %q, after a cursor: %v (total %d), want %v", when, g, ids, p.Total, young[1:])
				}
			}
		}
		for _, g := range []string{"g", ""} {
			if n := zcard(g); n != burst+2 {
				t.Fatalf("group %q before reads: the hour's sets hold %d posts, want %d untrimmed", g, n, burst+2)
			}
		}
		check("before the trim")
		settle(t, f.s)
		for _, g := range []string{"g", ""} {
			if n := zcard(g); n != 2 {
				t.Errorf("group %q after the trim job: the hour's sets hold %d posts, want the 2 within it", g, n)
			}
		}
		if len(backlog) == 0 || slices.Max(backlog) < burst {
			t.Fatalf("the reads before the trim filtered %v posts, want %d", backlog, burst)
		}
		backlog = nil
		check("after the trim")
		if len(backlog) == 0 || slices.Max(backlog) != 0 {
			t.Errorf("the reads after the trim filtered %v posts, want none", backlog)
		}
		// Another read and another run of the jobs change nothing: the trim is queued once.
		settle(t, f.s)
		check("after a second run")
	})
}
