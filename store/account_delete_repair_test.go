package store_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestErasedAccountKeepsNothingItsCutWritesRepair: a post or comment whose write was cut off
// after its atomic step (the process stopped before it was listed), and whose author then deleted
// the account with eraseContent, is erased when its repair job lists it after the deletion's
// chain had been through the author's lists: the repair reads the author's deletion where it
// lists the item, as the write does. It stayed listed, counted and found by search.
func TestErasedAccountKeepsNothingItsCutWritesRepair(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clock := storetest.NewClock()
		o := store.Options{Prefix: storetest.Prefix(), Now: clock.Now, WriteLimit: -1, NewAccount: store.NewAccountLimits{Age: -1}}
		s := b.NewStore(t, o)
		signUp(t, s, "ann", "bob", "cat")
		bobs, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "bob's", Body: "a post"})
		if err != nil {
			t.Fatal(err)
		}
		cut := func(step string, write func(doomed *store.Store) error) {
			t.Helper()
			client := b.NewClient(t)
			dead := new(atomic.Bool)
			client.AddHook(dieAfterStep(step, dead))
			doomed := storetest.Backend{Name: b.Name, Client: client}.NewStore(t, o)
			if err := write(doomed); err == nil || !dead.Load() {
				t.Fatalf("the write cut off after %s: %v (cut %t)", step, err, dead.Load())
			}
		}
		cut("create_post", func(d *store.Store) error {
			_, err := d.CreatePost(ctx, "ann", store.NewPost{Title: "curlew", Body: "cut off before its listing"})
			return err
		})
		cut("create_comment", func(d *store.Store) error {
			_, err := d.CreateComment(ctx, "cat", store.NewComment{PostID: bobs.ID, Body: "plover cut off before its listing"})
			return err
		})
		for _, who := range []string{"ann", "cat"} {
			if err := s.DeleteAccount(ctx, store.UserKey(who), "password1", true); err != nil {
				t.Fatal(err)
			}
		}
		settle(t, s) // the chains, before the repairs are due
		clock.Add(store.RepairGrace + time.Minute)
		settle(t, s) // the repairs
		settle(t, s)

		checkErasedWrites(t, s, bobs.ID)
	})
}
