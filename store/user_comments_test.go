package store_test

import (
	"slices"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestUserComments lists a user's comments both ways and counts them exactly as they are
// deleted, removed, restored and as their post goes; Rebuild derives the list again.
func TestUserComments(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{Now: tickingClock(), WriteLimit: -1})
		ann, ben, root := f.user("ann"), f.user("ben"), uk(f.admin("root"))
		p1, p2 := f.post(ben, "one", "go"), f.post(ben, "two")
		var ids []string // oldest first
		for i, p := range []*store.Post{p1, p2, p1, p2, p1} {
			c, err := f.s.CreateComment(f.ctx, uk(ann), store.NewComment{PostID: p.ID, Body: "c" + string(rune('a'+i))})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, c.ID)
		}
		if _, err := f.s.CreateComment(f.ctx, uk(ben), store.NewComment{PostID: p1.ID, Body: "not ann's"}); err != nil {
			t.Fatal(err)
		}
		list := func(sort store.CommentSort, n int, backward bool) []string {
			t.Helper()
			var out []string
			cursor := ""
			for range 20 {
				w := store.Window{First: n, After: cursor}
				if backward {
					w = store.Window{Last: n, Before: cursor}
				}
				p, err := f.s.NewLoader().UserComments(f.ctx, uk(ann), sort, w)
				if err != nil {
					t.Fatal(err)
				}
				var page []string
				for _, c := range p.Items {
					page = append(page, c.ID)
				}
				if backward {
					out = append(page, out...)
					if !p.HasPrev {
						return out
					}
					cursor = p.StartCursor()
				} else {
					out = append(out, page...)
					if !p.HasNext {
						return out
					}
					cursor = p.EndCursor()
				}
			}
			t.Fatal("too many pages")
			return nil
		}
		check := func(want []string) {
			t.Helper()
			newest := slices.Clone(want)
			slices.Reverse(newest)
			for _, n := range []int{1, 2, 10} {
				for _, backward := range []bool{false, true} {
					if got := list(store.CommentsOld, n, backward); !slices.Equal(got, want) {
						t.Errorf("OLD (page %d, backward %v) = %v, want %v", n, backward, got, want)
					}
					if got := list(store.CommentsNew, n, backward); !slices.Equal(got, newest) {
						t.Errorf("NEW (page %d, backward %v) = %v, want %v", n, backward, got, newest)
					}
				}
			}
			if n, err := f.s.NewLoader().UserCommentCount(f.ctx, uk(ann)); err != nil || n != len(want) {
				t.Errorf("commentCount = %d (%v), want %d", n, err, len(want))
			}
		}
		check(ids)
		if n, err := f.s.NewLoader().UserPostCount(f.ctx, uk(ben)); err != nil || n != 2 {
			t.Errorf("postCount = %d (%v), want 2", n, err)
		}

		if err := f.s.DeleteComment(f.ctx, uk(ann), ids[1]); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RemoveComment(f.ctx, root, ids[2], "spam"); err != nil {
			t.Fatal(err)
		}
		check([]string{ids[0], ids[3], ids[4]})
		if _, err := f.s.RestoreComment(f.ctx, root, ids[2]); err != nil {
			t.Fatal(err)
		}
		check([]string{ids[0], ids[2], ids[3], ids[4]})

		// Rebuild derives the list from the threads.
		if err := f.s.DropUserComments(f.ctx, ann); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Rebuild(f.ctx); err != nil {
			t.Fatal(err)
		}
		check([]string{ids[0], ids[2], ids[3], ids[4]})

		// The post's deletion takes its comments out.
		if err := f.s.DeletePost(f.ctx, uk(ben), p2.ID); err != nil {
			t.Fatal(err)
		}
		settle(t, f.s)
		check([]string{ids[0], ids[2], ids[4]})
		if n, err := f.s.NewLoader().UserPostCount(f.ctx, uk(ben)); err != nil || n != 1 {
			t.Errorf("postCount after a deletion = %d (%v), want 1", n, err)
		}
		if _, err := f.s.NewLoader().UserComments(f.ctx, uk(ann), store.CommentSort(9), store.Window{First: 2}); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("an unknown order: %v, want BAD_USER_INPUT", err)
		}
	})
}
