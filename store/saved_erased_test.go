package store_test

import (
	"context"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSavedPostsLeaveOutErasedPosts: a post its author's account deletion erased (a "[deleted]"
// tombstone) leaves every listing, the savedPosts of those who saved it too.
func TestSavedPostsLeaveOutErasedPosts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock()})
		signUp(t, s, "ann", "ben")
		kept, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "kept", Groups: []string{"go"}})
		if err != nil {
			t.Fatal(err)
		}
		erased, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "to erase", Groups: []string{"go"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []*store.Post{kept, erased} {
			if _, err := s.SavePost(ctx, "ben", p.ID); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.DeleteAccount(ctx, "ann", "password1", true); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			settle(t, s)
		}
		page, err := s.NewLoader().SavedPosts(ctx, "ben", store.Window{First: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page.Items {
			if p.ID == erased.ID {
				t.Fatalf("savedPosts shows the erased post %s (%q, erased %v)", p.ID, p.Title, p.Erased)
			}
		}
		if len(page.Items) != 1 || page.Items[0].ID != kept.ID {
			t.Fatalf("savedPosts = %d items, want only %s", len(page.Items), kept.ID)
		}
	})
}
