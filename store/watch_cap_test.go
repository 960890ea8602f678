package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestWatchCap: one user holds a watch mode for at most store.MaxWatches posts and groups
// (LIMIT_REACHED past it); an item already watched changes mode freely, setting one back to
// REPLIES frees its place (but on a post of a group the user chose a mode for, where REPLIES is a
// choice that wins over the group's), and posts deleted since, and groups gone, stop counting.
func TestWatchCap(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix})
		signUp(t, s, "ann", "rita")
		post := func(title string, groups ...string) *store.Post {
			t.Helper()
			p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: title, Groups: groups})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		p1, p2, p3 := post("one", "golang"), post("two", "golang"), post("three")
		p4, p5 := post("brief", "brief"), post("five")
		index := prefix + "{u:rita}:watches"
		places := func() int64 {
			t.Helper()
			n, err := b.Client.ZCard(ctx, index).Result()
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		type step struct {
			name  string
			do    func() error
			limit bool  // the step is LIMIT_REACHED
			want  int64 // places taken after it
		}
		watchPost := func(p *store.Post, m store.WatchMode) func() error {
			return func() error { return s.WatchPost(ctx, "rita", p.ID, m) }
		}
		watchGroup := func(m store.WatchMode) func() error {
			return func() error { return s.WatchGroup(ctx, "rita", "golang", m) }
		}
		full := int64(store.MaxWatches)
		for _, st := range []step{
			{"a group", watchGroup(store.WatchAll), false, 1},
			{"a post", watchPost(p3, store.WatchAll), false, 2},
			{"a group made by a post", func() error { return s.WatchGroup(ctx, "rita", "brief", store.WatchAll) }, false, 3},
			{"fill the index", func() error {
				// Groups that last (their info holds a version), each the first of its slot.
				zs := make([]rdb.Z, store.MaxWatches-3)
				p := b.Client.Pipeline()
				for i := range zs {
					zs[i] = rdb.Z{Score: 1, Member: fmt.Sprintf("g:filler%d", i)}
					p.HSet(ctx, fmt.Sprintf("%s{g:filler%d}:info", prefix, i), "ver", 1)
				}
				if _, err := p.Exec(ctx); err != nil {
					return err
				}
				return b.Client.ZAdd(ctx, index, zs...).Err()
			}, false, full},
			{"one more", watchPost(p1, store.WatchAll), true, full},
			{"another mode of a watched item", watchGroup(store.WatchMuted), false, full},
			{"REPLIES frees a group's place", watchGroup(store.WatchReplies), false, full - 1},
			{"which the next takes", watchPost(p1, store.WatchAll), false, full},
			{"full again", watchPost(p2, store.WatchMuted), true, full},
			{"a watched post deleted", func() error { return s.DeletePost(ctx, "ann", p3.ID) }, false, full},
			{"frees its place when needed", watchPost(p2, store.WatchMuted), false, full},
			{"REPLIES frees a post's place", watchPost(p2, store.WatchReplies), false, full - 1},
			{"a group muted", watchGroup(store.WatchMuted), false, full},
			{"REPLIES on a post of a group with a mode is a choice", watchPost(p1, store.WatchReplies), false, full},
			{"a watched group ends with its post", func() error { return s.DeletePost(ctx, "ann", p4.ID) }, false, full},
			{"and frees its place when needed", watchPost(p5, store.WatchAll), false, full},
		} {
			err := st.do()
			if st.limit != store.IsKind(err, store.KindLimitReached) || (!st.limit && err != nil) {
				t.Fatalf("%s: %v (limit wanted: %v)", st.name, err, st.limit)
			}
			if st.limit && !strings.Contains(err.Error(), fmt.Sprint(store.MaxWatches)) {
				t.Errorf("%s: %q does not name the cap", st.name, err)
			}
			if got := places(); got != st.want {
				t.Fatalf("%s: %d places taken, want %d", st.name, got, st.want)
			}
		}
		l := s.NewLoader()
		for _, c := range []struct {
			p    *store.Post
			want store.WatchMode
		}{{p1, store.WatchReplies}, {p2, store.WatchReplies}} {
			if m, err := l.PostWatch(ctx, "rita", strings.TrimPrefix(c.p.ID, "post:")); err != nil || m != c.want {
				t.Errorf("%s: %q, %v; want %s", c.p.ID, m, err, c.want)
			}
		}
		// The choice wins over the muted group; the default does not need to be kept.
		for p, want := range map[*store.Post]string{p1: "R", p2: ""} {
			got, err := b.Client.HGet(ctx, prefix+"{p:"+strings.TrimPrefix(p.ID, "post:")+"}:watch", "rita").Result()
			if err != nil && err != rdb.Nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s: stored %q, want %q", p.ID, got, want)
			}
		}
	})
}
