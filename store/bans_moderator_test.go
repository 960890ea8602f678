package store_test

import (
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// A moderator acts for a group: the ban that matters is the one of the group they act through.
// Rex moderates rust and is banned from go; a post in both rust and go is his to moderate through
// rust, while a post in go alone stays out of his reach.
func TestModeratorBannedElsewhereModeratesThroughTheirGroup(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		yes := true
		for _, tc := range []struct {
			name string
			act  func(p *store.Post, c *store.Comment) error
		}{
			{"lock", func(p *store.Post, _ *store.Comment) error {
				_, err := w.s.LockPost(w.ctx, "rex", p.ID, true, nil)
				return err
			}},
			{"label", func(p *store.Post, _ *store.Comment) error {
				_, err := w.s.SetPostLabels(w.ctx, "rex", p.ID, &yes, nil, nil)
				return err
			}},
			{"remove comment", func(_ *store.Post, c *store.Comment) error {
				_, err := w.s.RemoveComment(w.ctx, "rex", c.ID, "rude")
				return err
			}},
			{"remove", func(p *store.Post, _ *store.Comment) error {
				_, err := w.s.RemovePost(w.ctx, "rex", p.ID, "spam")
				return err
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				both := w.post("amy", "in both "+tc.name, "rust", "go")
				goOnly := w.post("amy", "in go "+tc.name, "go")
				cBoth, err := w.s.CreateComment(w.ctx, "amy", store.NewComment{PostID: both.ID, Body: "hi"})
				if err != nil {
					t.Fatal(err)
				}
				cGo, err := w.s.CreateComment(w.ctx, "amy", store.NewComment{PostID: goOnly.ID, Body: "hi"})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.s.BanUser(w.ctx, "mia", "rex", "go", nil, "x"); err != nil && !store.IsKind(err, store.KindConflict) {
					t.Fatal(err)
				}
				if err := tc.act(both, cBoth); err != nil {
					t.Fatalf("a moderator of rust banned from go, on a post in rust and go: %v", err)
				}
				if err := tc.act(goOnly, cGo); !store.IsKind(err, store.KindForbidden) {
					t.Fatalf("on a post in go alone: %v, want FORBIDDEN", err)
				}
				// A moderator of both, banned from the first: they act through the other.
				first := w.post("amy", "go first "+tc.name, "go", "rust")
				cFirst, err := w.s.CreateComment(w.ctx, "amy", store.NewComment{PostID: first.ID, Body: "hi"})
				if err != nil {
					t.Fatal(err)
				}
				if err := w.s.SetModerator(w.ctx, "go", "rex"); err != nil {
					t.Fatal(err)
				}
				defer func() {
					if _, err := w.s.RemoveModerator(w.ctx, "root", "go", "rex"); err != nil {
						t.Fatal(err)
					}
				}()
				if err := tc.act(first, cFirst); err != nil {
					t.Fatalf("a moderator of go and rust banned from go, on a post in go then rust: %v", err)
				}
			})
		}
	})
}
