package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestWatchIndexHoldsEveryModeUnderConcurrentWatches: a user's watch index names every post they
// hold a mode for, also when two of their watches of one post cross — one setting it to ALL, the
// other back to REPLIES, whose index entry leaves after its mode is cleared. The ALL that lands
// between the REPLIES' clearing and its taking the entry out (or whose entry the REPLIES takes
// out between the ALL's recording it and its mode) was left without an entry: missing from the
// export, kept on the thread by the account's deletion, and not counted against MaxWatches, so
// that racing watches grew a user's modes past the cap.
func TestWatchIndexHoldsEveryModeUnderConcurrentWatches(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix})
		signUp(t, s, "ann", "rita")
		hooked := func(h *afterFirst) *store.Store {
			return b.Hooked(t, h.hook()).NewStore(t, store.Options{Prefix: prefix})
		}
		for _, tc := range []struct {
			name string
			// first runs with a hook after its script of SHA sha, which runs second meanwhile.
			sha           string
			first, second store.WatchMode
		}{
			{"ALL lands between the REPLIES' clearing and its index step", store.ScriptSHA("watch"), store.WatchReplies, store.WatchAll},
			{"REPLIES lands between the ALL's index step and its mode", store.ScriptSHA("watch_index"), store.WatchAll, store.WatchReplies},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: tc.name})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.WatchPost(ctx, "rita", p.ID, store.WatchAll); err != nil {
					t.Fatal(err)
				}
				var second error
				h := &afterFirst{
					match: func(args string) bool { return strings.HasPrefix(args, "evalsha "+tc.sha+" ") },
					then:  func() { second = s.WatchPost(ctx, "rita", p.ID, tc.second) },
				}
				if err := hooked(h).WatchPost(ctx, "rita", p.ID, tc.first); err != nil {
					t.Fatal(err)
				}
				if !h.done.Load() {
					t.Fatal("the watch did not go through the hook")
				}
				if second != nil {
					t.Fatal(second)
				}
				pid := strings.TrimPrefix(p.ID, store.TypePost+":")
				mode, err := b.Client.HGet(ctx, prefix+"{p:"+pid+"}:watch", "rita").Result()
				if err != nil && !errors.Is(err, rdb.Nil) {
					t.Fatal(err)
				}
				_, err = b.Client.ZScore(ctx, prefix+"{u:rita}:watches", "p:"+pid).Result()
				indexed := err == nil
				if err != nil && !errors.Is(err, rdb.Nil) {
					t.Fatal(err)
				}
				if mode != "" && !indexed {
					t.Errorf("rita holds mode %q of %s, which her watch index does not name", mode, p.ID)
				}
			})
		}
	})
}

// TestClearingWatchAtTheCapIsNoLimit: a watch set back to REPLIES that crosses another watch of
// the same post setting a mode, on a full index, ends with no mode — the other's mode, whose
// entry it took out and could not record again under store.MaxWatches, is cleared again — and
// that is what it asked for: it answers no LIMIT_REACHED, and the post holds no mode the index
// does not name.
func TestClearingWatchAtTheCapIsNoLimit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix})
		signUp(t, s, "ann", "rita")
		var posts []*store.Post
		for _, title := range []string{"watched", "another"} {
			p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: title})
			if err != nil {
				t.Fatal(err)
			}
			posts = append(posts, p)
		}
		p, q := posts[0], posts[1]
		if err := s.WatchPost(ctx, "rita", p.ID, store.WatchAll); err != nil {
			t.Fatal(err)
		}
		index := prefix + "{u:rita}:watches"
		zs := make([]rdb.Z, store.MaxWatches-1) // full, with p
		for i := range zs {
			zs[i] = rdb.Z{Score: 1, Member: fmt.Sprintf("g:filler%d", i)}
		}
		if err := b.Client.ZAdd(ctx, index, zs...).Err(); err != nil {
			t.Fatal(err)
		}
		pid := strings.TrimPrefix(p.ID, store.TypePost+":")
		var setting, filling error
		// After the clearing watch's mode is cleared, the same post is set to ALL again (its
		// entry is still there); after the clearing watch takes the entry out, another post
		// takes the place.
		cleared := &afterFirst{
			match: func(args string) bool { return strings.HasPrefix(args, "evalsha "+store.ScriptSHA("watch")+" ") },
			then:  func() { setting = s.WatchPost(ctx, "rita", p.ID, store.WatchAll) },
		}
		removed := &afterFirst{
			match: func(args string) bool { return args == strings.ToLower("zrem "+index+" p:"+pid) },
			then:  func() { filling = s.WatchPost(ctx, "rita", q.ID, store.WatchAll) },
		}
		hooked := b.Hooked(t, storetest.After(func(cmds []rdb.Cmder) {
			cleared.after(cmds)
			removed.after(cmds)
		})).NewStore(t, store.Options{Prefix: prefix})
		err := hooked.WatchPost(ctx, "rita", p.ID, store.WatchReplies)
		if !cleared.done.Load() || !removed.done.Load() {
			t.Fatalf("the clearing watch did not go through both hooks (%v, %v)", cleared.done.Load(), removed.done.Load())
		}
		if setting != nil || filling != nil {
			t.Fatalf("the crossing watches: %v, %v", setting, filling)
		}
		if err != nil {
			t.Errorf("the watch set back to REPLIES: %v, want no error (it holds no mode now)", err)
		}
		mode, err := b.Client.HGet(ctx, prefix+"{p:"+pid+"}:watch", "rita").Result()
		if err != nil && !errors.Is(err, rdb.Nil) {
			t.Fatal(err)
		}
		if mode != "" {
			t.Errorf("rita holds mode %q of %s, want none", mode, p.ID)
		}
		if n, err := b.Client.ZCard(ctx, index).Result(); err != nil || n != store.MaxWatches {
			t.Errorf("the index holds %d items (%v), want %d", n, err, store.MaxWatches)
		}
	})
}
