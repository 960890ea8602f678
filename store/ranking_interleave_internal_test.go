package store

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

// interleavings returns every merge of a calls of one writer and b of another, each writer's in
// its own order: true picks the first writer's next call.
func interleavings(a, b int) [][]bool {
	if a == 0 && b == 0 {
		return [][]bool{nil}
	}
	var out [][]bool
	if a > 0 {
		for _, rest := range interleavings(a-1, b) {
			out = append(out, append([]bool{true}, rest...))
		}
	}
	if b > 0 {
		for _, rest := range interleavings(a, b-1) {
			out = append(out, append([]bool{false}, rest...))
		}
	}
	return out
}

// TestRankingCallsInterleaved runs the ranking writes of two versions of a post, as two
// concurrent votes send them, in every interleaving of their script calls: whatever the order,
// every ranking, the windowed TOPs included, ends with the newer version's scores. Two pipelines
// of different connections interleave command by command on the server, so the version guard
// must hold across the calls of one write, not only within each.
func TestRankingCallsInterleaved(t *testing.T) {
	m := miniredis.RunT(t)
	c := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	s, err := New(ctx, c, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	created := now.Add(-time.Minute)
	post := func(pid string, version int64, up int) *Post {
		return &Post{ID: postID(pid), Author: "ann", CreatedAt: created, ActiveAt: created, Upvotes: up,
			HotRank: s.hotScore(created.UnixMilli(), up), Version: version}
	}
	r := s.k.ranking("")
	for i, order := range interleavings(3, 3) {
		pid := strconv.Itoa(i + 1)
		older, newer := post(pid, 1, 1), post(pid, 2, 2)
		calls := [2][]scriptCall{s.rankingCalls("", older, pid, older.Version, true), s.rankingCalls("", newer, pid, newer.Version, true)}
		if len(calls[0]) != 3 {
			t.Fatalf("rankingCalls made %d calls, the test interleaves 3", len(calls[0]))
		}
		var next [2]int
		for _, first := range order {
			w := 1
			if first {
				w = 0
			}
			if err := s.runMany(ctx, []scriptCall{calls[w][next[w]]}); err != nil {
				t.Fatal(err)
			}
			next[w]++
		}
		for _, set := range append([]string{r.top}, r.windows[:]...) {
			got, err := c.ZScore(ctx, set, pid).Result()
			if err != nil {
				t.Fatalf("order %v: %s: %v", order, set, err)
			}
			if got != 2 {
				t.Errorf("order %v (true: the older write's call): %s scores the post %v, want the newer net 2", order, set, got)
			}
		}
	}
}
