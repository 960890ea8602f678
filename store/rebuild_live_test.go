package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestRebuildUsersAcrossADeletion: an account deleted while `agora rebuild` walks it (after the
// rebuild read that it was not deleted, before it wrote the user's derived entries) stays off the
// leaderboard and out of the name registry. The rebuild wrote them back after the deletion's
// chain had taken them out: its leaderboard entry even won over the deletion's guard, which the
// rebuild reads to raise the karma version past it, so the deleted account held its place for
// good — left out of the pages, it took a rank (the users below it were numbered one too far
// down) and counted in the leaderboard's total.
func TestRebuildUsersAcrossADeletion(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		opts := store.Options{Prefix: storetest.Prefix(), WriteLimit: 1000, NewAccount: store.NewAccountLimits{Age: -1}}
		s := b.NewStore(t, opts)
		signUp(t, s, "ann", "bob", "cat")
		p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "ann's", Body: "a post"})
		if err != nil {
			t.Fatal(err)
		}
		for _, voter := range []store.UserKey{"bob", "cat"} {
			if _, err := s.VotePost(ctx, voter, p.ID, 1); err != nil {
				t.Fatal(err)
			}
		}
		settle(t, s)

		// The rebuilding process reads that ann is not deleted; then her deletion, and its
		// whole chain, run on a server process, before the rebuild goes on with her.
		deletedKey := opts.Prefix + "{u:ann}"
		fired := false
		hook := storetest.After(func(cmds []rdb.Cmder) {
			if fired {
				return
			}
			for _, c := range cmds {
				if a := c.Args(); len(a) == 3 && a[0] == "hget" && a[1] == deletedKey && a[2] == "deleted" {
					fired = true
					if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
						t.Errorf("delete ann: %v", err)
					}
					settle(t, s)
					return
				}
			}
		})
		rb := b.Hooked(t, hook).NewStore(t, opts)
		if _, err := rb.RebuildUsers(ctx); err != nil {
			t.Fatal(err)
		}
		if !fired {
			t.Fatal("the rebuild never read whether ann is deleted")
		}

		l := s.NewLoader()
		page, err := l.Leaderboard(ctx, store.Window{First: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ranks []int
		for _, r := range page.Items {
			ranks = append(ranks, r.Rank)
		}
		if page.Total != 2 || !slices.Equal(ranks, []int{1, 2}) {
			t.Errorf("leaderboard: total %d, ranks %v; want 2 users ranked 1 and 2 (the deleted account off it)", page.Total, ranks)
		}
		if n, err := b.Client.ZScore(ctx, opts.Prefix+"{users}", "ann").Result(); err == nil {
			t.Errorf("the deleted account is in the name registry (score %v)", n)
		}
	})
}
