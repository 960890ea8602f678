package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// sfwTitles lists a page of posts as a viewer who hides NSFW posts (hide) or shows them reads it.
func sfwTitles(t *testing.T, s *store.Store, hide bool, sort store.PostSort, group string) ([]string, int) {
	t.Helper()
	l := s.NewLoader()
	l.HideNSFW(hide)
	p, err := l.Posts(context.Background(), sort, group, store.Window{First: 50}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range p.Items {
		out = append(out, it.Title)
	}
	slices.Sort(out)
	return out, p.Total
}

// TestLabelsRebuildDerivesTheNSFWFreeCopies: the NSFW-free copies of the rankings and post lists
// are derived data: dropped, Rebuild (and so the layout 3 migration) writes them again, exactly
// (NSFW posts out, the others in). It also measures what the copies cost: the entries they add
// per post that is not NSFW.
func TestLabelsRebuildDerivesTheNSFWFreeCopies(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := &fixture{t: t, s: b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: -1}), ctx: context.Background()}
		u := store.UserKey(f.user("ivy"))
		var want []string
		for i := range 6 {
			title := fmt.Sprintf("post %d", i)
			if _, err := f.s.CreatePost(f.ctx, u, store.NewPost{Title: title, Groups: []string{"pics"}, NSFW: i%3 == 0}); err != nil {
				t.Fatal(err)
			}
			if i%3 != 0 {
				want = append(want, title)
			}
		}
		check := func(when string) {
			t.Helper()
			for _, sort := range []store.PostSort{store.SortHot, store.SortNew, store.SortTopDay, store.SortMostComments} {
				for _, g := range []string{"", "pics"} {
					got, total := sfwTitles(t, f.s, true, sort, g)
					if !slices.Equal(got, want) || total != len(want) {
						t.Errorf("%s: sort %d group %q hides NSFW: %v (total %d), want %v", when, sort, g, got, total, want)
					}
					if all, total := sfwTitles(t, f.s, false, sort, g); len(all) != 6 || total != 6 {
						t.Errorf("%s: sort %d group %q shows NSFW: %v (total %d), want all 6", when, sort, g, all, total)
					}
				}
			}
		}
		check("written")
		// The cost: every key of the copies, and their entries.
		var keys []string
		entries := 0
		for _, pattern := range []string{prefix + "{r:all}:s:*", prefix + "{g:pics}:s:*", prefix + "{u:ivy}:posts:s*"} {
			ks := allKeys(t, b, pattern)
			for _, k := range ks {
				typ := b.Client.Type(f.ctx, k).Val()
				switch typ {
				case "zset":
					entries += int(b.Client.ZCard(f.ctx, k).Val())
				case "hash":
					if strings.HasSuffix(k, ":ver") {
						entries += int(b.Client.HLen(f.ctx, k).Val())
					}
				}
			}
			keys = append(keys, ks...)
		}
		// 4 posts that are not NSFW: 11 sorted sets in each of 2 rankings and the user's list (23
		// entries each), and a version entry per post (NSFW ones too: their removal is guarded)
		// in each of 3 version hashes.
		if wantEntries := 4*23 + 6*3; entries != wantEntries {
			t.Errorf("the copies hold %d entries, want %d", entries, wantEntries)
		}
		t.Logf("NSFW-free copies: %d keys, %d entries for 4 posts that are not NSFW and 2 that are", len(keys), entries)
		for _, k := range keys {
			if err := b.Client.Del(f.ctx, k).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := sfwTitles(t, f.s, true, store.SortNew, ""); len(got) != 0 {
			t.Fatalf("the copies dropped, a viewer hiding NSFW still sees %v", got)
		}
		if _, err := f.s.Rebuild(f.ctx); err != nil {
			t.Fatal(err)
		}
		check("rebuilt")
	})
}

// allKeys returns the keys matching pattern, on every master of a cluster.
func allKeys(t *testing.T, b storetest.Backend, pattern string) []string {
	t.Helper()
	ctx := context.Background()
	cc, ok := b.Client.(*rdb.ClusterClient)
	if !ok {
		ks, err := b.Client.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	var mu sync.Mutex
	var out []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, c *rdb.Client) error {
		ks, err := c.Keys(ctx, pattern).Result()
		mu.Lock()
		out = append(out, ks...)
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
