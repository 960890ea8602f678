package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestReplyOrdersModel drives a parent around ReplyOrdersAt replies with random replies, votes,
// deletions, removals and restores, and after each step checks every vote order of its replies,
// paged both ways (listAll), against the order its replies' votes give (ReplyScoreForTest, ties
// newest first), whichever side of the threshold the parent is on.
func TestReplyOrdersModel(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{WriteLimit: -1})
		sess, err := th.s.SignUp(ctx, "root", "password1")
		if err != nil {
			t.Fatal(err)
		}
		if err := th.s.GrantAdmin(ctx, "root"); err != nil {
			t.Fatal(err)
		}
		root := sess.User.Key()
		parent := th.add("author", nil, "parent")
		rng := rand.New(rand.NewPCG(7, 11))
		var live, removed []*store.Comment
		for range store.ReplyOrdersAt - 4 {
			live = append(live, th.add("author", parent, "reply"))
		}
		pick := func(cs []*store.Comment) (int, *store.Comment) {
			i := rng.IntN(len(cs))
			return i, cs[i]
		}
		above, below := 0, 0
		for step := range 100 { // with this seed, 10 steps past the threshold (150 steps gave no more)
			what := ""
			// The number of live replies heads for a target past the threshold, then below it.
			target := store.ReplyOrdersAt + 3
			if step/25%2 == 1 {
				target = store.ReplyOrdersAt - 3
			}
			switch r := rng.IntN(10); {
			case r < 3 && len(live) < target:
				live = append(live, th.add("author", parent, "reply"))
				what = "add"
			case r < 6 && len(live) > 0:
				_, c := pick(live)
				dir := rng.IntN(3) - 1
				if _, err := th.s.VoteComment(ctx, uk(fmt.Sprintf("voter%d", rng.IntN(6))), c.ID, dir); err != nil {
					t.Fatal(err)
				}
				what = fmt.Sprintf("vote %d on %s", dir, c.ID)
			case r < 8 && len(live) > target:
				i, c := pick(live)
				if err := th.s.DeleteComment(ctx, "author", c.ID); err != nil {
					t.Fatal(err)
				}
				live = slices.Delete(live, i, i+1)
				what = "delete " + c.ID
			case r < 9 && len(live) > 0:
				i, c := pick(live)
				if _, err := th.s.RemoveComment(ctx, root, c.ID, "spam"); err != nil {
					t.Fatal(err)
				}
				live, removed = slices.Delete(live, i, i+1), append(removed, c)
				what = "remove " + c.ID
			case len(removed) > 0:
				i, c := pick(removed)
				if _, err := th.s.RestoreComment(ctx, root, c.ID); err != nil {
					t.Fatal(err)
				}
				removed, live = slices.Delete(removed, i, i+1), append(live, c)
				what = "restore " + c.ID
			default:
				continue
			}
			fresh := th.get(parent.ID)
			if len(live) >= store.ReplyOrdersAt {
				above++
			} else {
				below++
			}
			for _, sort := range []store.CommentSort{store.CommentsTop, store.CommentsBest, store.CommentsControversial} {
				type scored struct {
					id    string
					score float64
				}
				var want []scored
				for _, c := range live {
					c = th.get(c.ID)
					want = append(want, scored{c.ID, store.ReplyScoreForTest(sort, c.Upvotes, c.Downvotes)})
				}
				slices.SortFunc(want, func(a, b scored) int {
					if a.score != b.score {
						if a.score > b.score {
							return -1
						}
						return 1
					}
					return numOf(b.id) - numOf(a.id)
				})
				wantIDs := make([]string, len(want))
				for i, w := range want {
					wantIDs[i] = w.id
				}
				if got := th.listAll(fresh, sort, 7).ids; !slices.Equal(got, wantIDs) {
					t.Fatalf("step %d (%s), %d replies, sort %d:\n got %v\nwant %v", step, what, len(live), sort, got, wantIDs)
				}
			}
		}
		t.Logf("%d steps past the threshold, %d below", above, below)
		if above == 0 || below == 0 {
			t.Errorf("%d steps past the threshold, %d below: want both", above, below)
		}
	})
}
