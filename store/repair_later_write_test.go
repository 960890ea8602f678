package store_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestRepairOfACutWriteOutlivesALaterWrite cuts a post's creation off right after its atomic step,
// then, before its repair is due, makes a later write of the same post that finishes (an edit, a
// vote): the later write must not take back the first one's repair note. Once RepairGrace has
// passed, the job engine lists the post everywhere, as if neither had been cut.
func TestRepairOfACutWriteOutlivesALaterWrite(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		for _, later := range []string{"edit", "vote"} {
			t.Run(later, func(t *testing.T) {
				ctx := context.Background()
				clock := newStepClock()
				s := b.NewStore(t, store.Options{Now: clock.Now, WriteLimit: -1})
				if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
					t.Fatal(err)
				}
				if _, err := s.SignUp(ctx, "bob", "password1"); err != nil {
					t.Fatal(err)
				}
				first, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "listed", Groups: []string{"birds"}})
				if err != nil {
					t.Fatal(err)
				}
				pid, err := store.PostKey(first.ID)
				if err != nil {
					t.Fatal(err)
				}
				n, _ := strconv.Atoi(pid)
				cutID := store.TypePost + ":" + strconv.Itoa(n+1)

				client := b.NewClient(t)
				dead := new(atomic.Bool)
				client.AddHook(dieAfterStep("create_post", dead))
				doomed := storetest.Backend{Name: b.Name, Client: client}.NewStore(t, store.Options{Prefix: s.Options().Prefix, Now: clock.Now, WriteLimit: -1})
				if _, err := doomed.CreatePost(ctx, "ann", store.NewPost{Title: "cut off", Groups: []string{"birds"}}); err == nil || !dead.Load() {
					t.Fatalf("the creation cut off after create_post: %v (cut %t)", err, dead.Load())
				}
				switch later {
				case "edit":
					title := "cut off, then edited"
					if _, err := s.EditPost(ctx, "ann", cutID, store.PostEdit{Title: &title}); err != nil {
						t.Fatalf("the edit: %v", err)
					}
				case "vote":
					if _, err := s.VotePost(ctx, "bob", cutID, 1); err != nil {
						t.Fatalf("the vote: %v", err)
					}
				}
				clock.Add(store.RepairGrace + time.Minute)
				settle(t, s)

				l := s.NewLoader()
				for _, where := range []struct {
					name  string
					group string
				}{{"the site", ""}, {"group birds", "birds"}} {
					page, err := l.Posts(ctx, store.SortNew, where.group, store.Window{First: 10}, nil)
					if err != nil {
						t.Fatal(err)
					}
					if page.Total != 2 || len(page.Items) != 2 || page.Items[0].ID != cutID {
						t.Errorf("%s's NEW after repair: %d %v, want the cut post first of 2", where.name, page.Total, page.Items)
					}
				}
				mine, err := l.UserPosts(ctx, "ann", store.SortNew, store.Window{First: 10}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if mine.Total != 2 {
					t.Errorf("ann's posts after repair: %d, want 2", mine.Total)
				}
			})
		}
	})
}
