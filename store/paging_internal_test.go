package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/agora/agora/internal/rdb"
)

// TestPageReadKey checks that a page read's cache key, made in one allocation, names everything
// that tells two pages apart as the concatenation it replaced did, so that no two different reads
// share a key: the list, the order, the span (size, direction, cursors, window cut-off) and, for
// a plain read, whether it reads the total and the scores.
func TestPageReadKey(t *testing.T) {
	// want is the key as it was built before pageReadKey.
	want := func(key string, desc bool, sp span, plain, total, scores bool) string {
		k := "pg:" + key + "\x00" + strconv.FormatBool(desc) + "\x00" + strconv.Itoa(sp.n) + "\x00" +
			strconv.FormatBool(sp.backward) + "\x00" + sp.after.score + "\x00" + sp.after.member + "\x00" +
			sp.before.score + "\x00" + sp.before.member + "\x00" + strconv.FormatInt(sp.cut.cutoff, 10)
		if plain {
			k += "\x00" + strconv.FormatBool(total) + strconv.FormatBool(scores)
		}
		return k
	}
	spans := []span{
		{n: 10},
		{n: 10, backward: true},
		{n: -1 << 62, after: cursor{score: "1700000000000", member: "000000000004"}},
		{n: 50, before: cursor{score: "-3", member: "u:7"}, cut: windowCut{cutoff: -1 << 62, set: "w"}},
		{n: 5, after: cursor{score: "1", member: "a\x00b"}, before: cursor{score: "2", member: "c"}},
	}
	seen := map[string]bool{}
	for _, sp := range spans {
		for _, desc := range []bool{false, true} {
			for _, flags := range [][3]bool{{false, false, false}, {true, false, false}, {true, true, false}, {true, false, true}, {true, true, true}} {
				plain, total, scores := flags[0], flags[1], flags[2]
				got := pageReadKey("agora:{p:1}:c:0:rs", desc, sp, plain, total, scores)
				if w := want("agora:{p:1}:c:0:rs", desc, sp, plain, total, scores); got != w {
					t.Errorf("pageReadKey(%+v, desc %v, %v) = %q, want %q", sp, desc, flags, got, w)
				}
				if seen[got] {
					t.Errorf("pageReadKey(%+v, desc %v, %v) = %q, the key of another read", sp, desc, flags, got)
				}
				seen[got] = true
				if n := testing.AllocsPerRun(10, func() { _ = pageReadKey("agora:{p:1}:c:0:rs", desc, sp, plain, total, scores) }); n != 1 {
					t.Errorf("pageReadKey(%+v): %v allocations, want 1", sp, n)
				}
			}
		}
	}
}

// TestKeepItems checks that a page keeps its items and their cursors in order, leaving out the
// items gone since the page was read, and that a page whose items are all there shares no slice
// with a caller that keeps its own.
func TestKeepItems(t *testing.T) {
	rp := rawPage{members: []string{"a", "b", "c"}, scores: []string{"1", "2", "3"}, total: 3}
	all := rp.cursors("t")
	for _, tc := range []struct {
		name        string
		items, want []string
		cursors     []string
	}{
		{"all there", []string{"A", "B", "C"}, []string{"A", "B", "C"}, all},
		{"one gone", []string{"A", "", "C"}, []string{"A", "C"}, []string{all[0], all[2]}},
		{"none", []string{}, []string{}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rp
			r.members, r.scores = rp.members[:len(tc.items)], rp.scores[:len(tc.items)]
			for _, own := range []bool{false, true} {
				items := slices.Clone(tc.items)
				p := keepItems(r, "t", items, own)
				if !slices.Equal(p.Items, tc.want) || !slices.Equal(p.Cursors, tc.cursors) || p.Items == nil || p.Cursors == nil {
					t.Fatalf("own %v: items %q cursors %q, want %q %q (not nil)", own, p.Items, p.Cursors, tc.want, tc.cursors)
				}
				if !own && len(items) > 0 {
					items[0] = "changed"
					if p.Items[0] == "changed" {
						t.Errorf("a page of items the caller keeps shares them")
					}
				}
			}
		})
	}
}

// TestCommentPageKey checks that the pages of replies a walk keeps are named apart from each other
// and from the pages of sorted sets, that pageKey names a set's page as it did as a concatenation,
// and that a resolver looks a kept page up without allocating.
func TestCommentPageKey(t *testing.T) {
	windows := []Window{{First: 5}, {First: 2}, {Last: 5}, {First: 5, NoTotal: true}, {First: 5, NoCursors: true},
		{First: 5, After: "abc"}, {Last: 5, Before: "abc"}}
	seen := map[string]string{}
	add := func(name, what string) {
		t.Helper()
		if other, ok := seen[name]; ok {
			t.Errorf("%s is named %q, as %s is", what, name, other)
		}
		seen[name] = what
	}
	for _, w := range windows {
		for _, pid := range []string{"1", "12"} {
			for _, parent := range []string{topLevel, "000000000004", "000000000041"} {
				for _, sort := range []CommentSort{CommentsNew, CommentsOld, CommentsTop, CommentsBest} {
					add(string(appendCommentPageKey(nil, pid, parent, sort, w)), fmt.Sprintf("replies %s/%s/%v %+v", pid, parent, sort, w))
				}
			}
		}
		for _, desc := range []bool{false, true} {
			key := "agora:{p:1}:c:0:rs"
			want := key + "\x00" + strconv.FormatBool(desc) + "\x00" + strconv.Itoa(w.First) + "\x00" + strconv.Itoa(w.Last) +
				"\x00" + w.After + "\x00" + w.Before + "\x00" + strconv.FormatBool(w.NoTotal) + strconv.FormatBool(w.NoCursors)
			got := pageKey(key, desc, w)
			if got != want {
				t.Errorf("pageKey(%q, %v, %+v) = %q, want %q", key, desc, w, got, want)
			}
			add(got, fmt.Sprintf("set page %v %+v", desc, w))
		}
	}
	l := &Loader{pages: map[string]keptPageEntry{}}
	w := Window{First: 5, NoTotal: true, NoCursors: true}
	kept := &Page[*Comment]{Total: 3}
	l.pages[string(appendCommentPageKey(nil, "12", "000000000004", CommentsTop, w))] = keptPageEntry{page: kept}
	var got *Page[*Comment]
	if n := testing.AllocsPerRun(10, func() {
		var scratch [128]byte
		got = keptPageOf[*Comment](l, appendCommentPageKey(scratch[:0], "12", "000000000004", CommentsTop, w))
	}); n != 0 {
		t.Errorf("looking a kept page up: %v allocations, want 0", n)
	}
	if got != kept {
		t.Errorf("keptPageOf found %v, want the page kept", got)
	}
}

// TestSendZRange checks that the loader's ZRANGE and ZCARD, whose key goes by its address, are
// the commands go-redis's ZRangeArgs, ZRangeArgsWithScores and ZCard send, with the same reply
// types.
func TestSendZRange(t *testing.T) {
	ctx := context.Background()
	c := rdb.NewPlainClient(&rdb.Options{Addr: "127.0.0.1:1"}) // never dialled: nothing is sent
	defer c.Close()
	p := c.Pipeline()
	deref := func(args []any) []any {
		out := slices.Clone(args)
		for i, a := range out {
			if s, ok := a.(*string); ok {
				out[i] = *s
			}
		}
		return out
	}
	key := "agora:{p:1}:c:0:rs"
	for _, tc := range []struct {
		start, stop int64
		rev, scores bool
	}{{0, 5, true, false}, {0, 5, false, false}, {-6, -1, true, true}, {0, 31, false, true}, {-300, -1, false, false}} {
		got := sendZRange(ctx, p, &key, tc.start, tc.stop, tc.rev, tc.scores)
		a := rdb.ZRangeArgs{Key: key, Start: tc.start, Stop: tc.stop, Rev: tc.rev}
		var want rdb.Cmder
		if tc.scores {
			want = p.ZRangeArgsWithScores(ctx, a)
			if _, ok := got.(*rdb.ZSliceCmd); !ok {
				t.Errorf("%+v: a %T, want a *rdb.ZSliceCmd", tc, got)
			}
		} else {
			want = p.ZRangeArgs(ctx, a)
			if _, ok := got.(*rdb.StringSliceCmd); !ok {
				t.Errorf("%+v: a %T, want a *rdb.StringSliceCmd", tc, got)
			}
		}
		if g, w := deref(got.Args()), want.Args(); !slices.Equal(g, w) {
			t.Errorf("%+v: sends %v, want %v", tc, g, w)
		}
	}
	if g, w := deref(sendZCard(ctx, p, &key).Args()), p.ZCard(ctx, key).Args(); !slices.Equal(g, w) {
		t.Errorf("sendZCard sends %v, want %v", g, w)
	}
}
