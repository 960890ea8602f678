package store_test

import (
	"context"
	"errors"
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
