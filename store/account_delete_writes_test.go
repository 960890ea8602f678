package store_test

import (
	"context"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestNoWritesAfterDeletion: a request authenticated before its account was deleted — the
// mutations after deleteAccount in one request, or one that was in flight — writes nothing once
// the deletion's step ran: each write is refused with UNAUTHENTICATED, so that nothing the
// deletion's chain has already passed (posts, follows, memberships, messages) comes back under
// the deleted account, its content out of reach of eraseContent.
func TestNoWritesAfterDeletion(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: 1000, NewAccount: store.NewAccountLimits{Age: -1}})
		for _, n := range []string{"ann", "bob"} {
			if _, err := s.SignUp(ctx, n, "password1"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.CreateGroup(ctx, "bob", "birds", nil); err != nil {
			t.Fatal(err)
		}
		post, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "bob's", Body: "a post", Groups: []string{"birds"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAccount(ctx, "ann", "password1", true); err != nil {
			t.Fatal(err)
		}
		settle(t, s) // the deletion's chain, done

		for _, w := range []struct {
			name  string
			write func() error
		}{
			{"createPost", func() error {
				_, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "after", Body: "written after the deletion"})
				return err
			}},
			{"createComment", func() error {
				_, err := s.CreateComment(ctx, "ann", store.NewComment{PostID: post.ID, Body: "after the deletion"})
				return err
			}},
			{"votePost", func() error { _, err := s.VotePost(ctx, "ann", post.ID, 1); return err }},
			{"followUser", func() error { _, err := s.Follow(ctx, "ann", "bob"); return err }},
			{"joinGroup", func() error { _, err := s.JoinGroup(ctx, "ann", "birds"); return err }},
			{"sendMessage", func() error { _, err := s.SendMessage(ctx, "ann", "bob", "hello", ""); return err }},
		} {
			if err := w.write(); !store.IsKind(err, store.KindUnauthenticated) {
				t.Errorf("%s by a deleted account: %v, want UNAUTHENTICATED", w.name, err)
			}
		}
		// The writes a site ban leaves open: nothing of the account's slot, which the deletion's
		// step dropped, comes back (a saved-post list, a block list nobody ever drops again), nor
		// a watch after the chain's step took the account off every thread.
		for _, w := range []struct {
			name  string
			write func() error
		}{
			{"savePost", func() error { _, err := s.SavePost(ctx, "ann", post.ID); return err }},
			{"blockUser", func() error { _, err := s.Block(ctx, "ann", "bob"); return err }},
			{"watchPost", func() error { return s.WatchPost(ctx, "ann", post.ID, store.WatchAll) }},
			{"markPostRead", func() error { return s.MarkPostRead(ctx, "ann", post.ID) }},
		} {
			if err := w.write(); !store.IsKind(err, store.KindUnauthenticated) {
				t.Errorf("%s by a deleted account: %v, want UNAUTHENTICATED", w.name, err)
			}
		}
		if left := allKeys(t, b, prefix+"{rd:ann}*"); len(left) > 0 {
			t.Errorf("keys of the deleted account's read state written again: %q", left)
		}
	})
}

// TestNoConversationReadAfterDeletion: marking a conversation read is a write like the others:
// by an account deleted since the request was authenticated (the chain not yet through its
// conversations), it is UNAUTHENTICATED and writes nothing into the mailbox the deletion
// dropped — a mailbox that nothing would ever drop again once the chain is done.
func TestNoConversationReadAfterDeletion(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix})
		signUp(t, s, "ann", "bob", "cat")
		m := send(t, s, "bob", "ann", "hi")
		send(t, s, "ann", "bob", "hello")
		send(t, s, "bob", "ann", "there")
		send(t, s, "cat", "ann", "a request")
		if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ with, upTo string }{{"bob", ""}, {"bob", m.ID}, {"cat", ""}} {
			if _, err := s.MarkConversationRead(ctx, "ann", store.UserKey(c.with), c.upTo); !store.IsKind(err, store.KindUnauthenticated) {
				t.Errorf("a deleted account marks its conversation with %s read (upTo %q): %v, want UNAUTHENTICATED", c.with, c.upTo, err)
			}
		}
		settle(t, s) // the deletion's chain, done
		for _, k := range []string{"state", "ver", "unread", "runread", "reqs", "convs"} {
			if n, err := b.Client.Exists(ctx, prefix+"{mb:ann}:"+k).Result(); err != nil || n != 0 {
				t.Errorf("the deleted account's mailbox %s after the chain: %d, %v; want none", k, n, err)
			}
		}
		// Bob's side is whole: his conversation with ann still reads.
		if c, err := s.NewLoader().ConversationWith(ctx, "bob", "ann"); err != nil || c == nil || c.LastMessage == nil {
			t.Errorf("bob's conversation with the deleted ann: %+v, %v", c, err)
		}
	})
}
