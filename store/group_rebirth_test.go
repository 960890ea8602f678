package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestGroupMadeAgainStartsEmpty: a group made by a post dies with its last post; made again under
// its name — by createGroup or by a post — it starts empty: no members (on either side, so that
// RebuildUsers derives the same), no watchers, its own created time. Members who join the new
// group stay, through RebuildUsers too.
func TestGroupMadeAgainStartsEmpty(t *testing.T) {
	for _, tc := range []struct {
		name  string
		again func(s *store.Store) error
	}{
		{"by createGroup", func(s *store.Store) error {
			_, err := s.CreateGroup(context.Background(), "bob", "typo", nil)
			return err
		}},
		{"by a post", func(s *store.Store) error {
			_, err := s.CreatePost(context.Background(), "bob", store.NewPost{Title: "again", Groups: []string{"typo"}})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				clk := storetest.NewClock()
				s := b.NewStore(t, store.Options{Now: clk.Now})
				signUp(t, s, "ann", "bob", "rita", "sam", "tom")
				first, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "first", Groups: []string{"typo"}})
				if err != nil {
					t.Fatal(err)
				}
				born := clk.Now()
				for _, u := range []store.UserKey{"rita", "tom"} {
					if _, err := s.JoinGroup(ctx, u, "typo"); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.WatchGroup(ctx, "rita", "typo", store.WatchMuted); err != nil {
					t.Fatal(err)
				}
				clk.Add(time.Hour)
				if err := s.DeletePost(ctx, "ann", first.ID); err != nil {
					t.Fatal(err)
				}
				clk.Add(time.Hour)
				if err := tc.again(s); err != nil {
					t.Fatal(err)
				}
				if _, err := s.JoinGroup(ctx, "sam", "typo"); err != nil {
					t.Fatal(err)
				}
				check := func(when string) {
					t.Helper()
					l := s.NewLoader()
					g := store.NewGroup("typo")
					if n, err := l.GroupMemberCount(ctx, g); err != nil || n != 1 {
						t.Errorf("%s: %d members (%v), want 1: sam", when, n, err)
					}
					for user, want := range map[store.UserKey]bool{"rita": false, "tom": false, "sam": true} {
						if in, err := l.IsMember(ctx, g, user); err != nil || in != want {
							t.Errorf("%s: %s a member: %v (%v), want %v", when, user, in, err, want)
						}
					}
					if m, err := l.GroupWatch(ctx, "rita", "typo"); err != nil || m != store.WatchReplies {
						t.Errorf("%s: rita's watch mode %q (%v), want REPLIES", when, m, err)
					}
					if at, err := l.GroupCreatedAt(ctx, g); err != nil || !at.After(born) {
						t.Errorf("%s: created %v (%v), want after the first group's %v", when, at, err, born)
					}
				}
				check("made again")
				if _, err := s.RebuildUsers(ctx); err != nil {
					t.Fatal(err)
				}
				check("after RebuildUsers")
			})
		})
	}
}
