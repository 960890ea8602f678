package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestPrivateWritesAcrossTheirUsersDeletionMakeNoKey: a block, a saved post, a scheduled post's
// draft or a read mark whose checks passed just before its user deleted the account, and whose
// script landed after the deletion (and its whole chain), made again the key the deletion's step
// had dropped — a block list, saved posts, drafts and scheduled posts, read marks — which nothing
// ever dropped again: memory for good, and a deleted account's choices kept. The scripts of the
// user's slot now read the deletion in the user's hash and write nothing (UNAUTHENTICATED); a
// read mark, of a slot of its own, reads it in its round trip and takes the marks it made again
// back out.
func TestPrivateWritesAcrossTheirUsersDeletionMakeNoKey(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		d := newAcrossDeletion(t, b)
		prefix := d.prefix
		s := d.s
		signUp(t, s, "owner")
		p, err := s.CreatePost(ctx, "owner", store.NewPost{Title: "owner's", Body: "a post"})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			// deleted is deleted, with its whole chain, right before the first script naming key:
			// the write's, after its checks. left are the patterns of the keys that must not exist
			// once it is done.
			deleted, key string
			write        func() error
			left         []string
		}{
			{
				name: "block", deleted: "ann", key: "{u:ann}:blocks",
				write: func() error { _, err := s.Block(ctx, "ann", "owner"); return err },
				left:  []string{"{u:ann}:blocks"},
			},
			{
				name: "saved post", deleted: "bob", key: "{u:bob}:saved",
				write: func() error { _, err := s.SavePost(ctx, "bob", p.ID); return err },
				left:  []string{"{u:bob}:saved"},
			},
			{
				name: "scheduled post", deleted: "cat", key: "{u:cat}:scheduled",
				write: func() error {
					at := time.Now().Add(time.Hour)
					_, err := s.CreatePost(ctx, "cat", store.NewPost{Title: "later", Body: "a draft", PublishAt: at})
					return err
				},
				left: []string{"{u:cat}:scheduled", "{u:cat}:drafts"},
			},
			{
				name: "read mark", deleted: "dan", key: "{rd:dan}:marks",
				write: func() error { return s.MarkPostRead(ctx, "dan", p.ID) },
				left:  []string{"{rd:dan}*"},
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				signUp(t, s, tc.deleted)
				d.arm(t, tc.deleted, false, argIs(prefix+tc.key))
				if err := tc.write(); !store.IsKind(err, store.KindUnauthenticated) {
					t.Errorf("%v, want UNAUTHENTICATED", err)
				}
				settle(t, s)
				d.deleted(t, tc.deleted)
				for _, pattern := range tc.left {
					if keys := allKeys(t, b, prefix+pattern); len(keys) > 0 {
						t.Errorf("the deleted account's keys made again: %q", keys)
					}
				}
			})
		}
	})
}
