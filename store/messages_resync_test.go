package store_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestResyncKeepsConcurrentMessages: a write whose steps disagreed derives both mailboxes again
// from the conversation, as the conversation's repair does (which this test runs). A message the other
// user sends between that derivation's read of the conversation and its write to the mailboxes
// must still count as unread, and move the conversation to the top of the list.
func TestResyncKeepsConcurrentMessages(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clk := storetest.NewClock()
		plain := b
		hook := &beforeScript{}
		b = b.Hooked(t, hook.hook())
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: clk.Now})
		other := plain.NewStore(t, store.Options{Prefix: prefix, Now: clk.Now})
		signUp(t, s, "ann", "ben")
		send(t, s, "ben", "ann", "hi ann")
		send(t, s, "ann", "ben", "hi ben") // accepted both ways
		clk.Add(time.Millisecond)
		send(t, s, "ann", "ben", "are you there?")
		clk.Add(time.Millisecond)
		var reply *store.Message
		hook.arm(argIs("sync"), func() {
			reply = send(t, other, "ben", "ann", "yes, here")
		})
		// The mailboxes are derived again, and ben's reply lands between the derivation's read and
		// its write.
		if err := s.RepairConversation(ctx, "ann", "ben"); err != nil {
			t.Fatal(err)
		}
		if reply == nil {
			t.Fatal("the hook did not run: no derivation")
		}
		if n := unread(t, s, "ann"); n != 1 {
			t.Errorf("ann's unread count %d after ben's reply, want 1", n)
		}
		if got, want := convsOf(t, s, "ann", false), []string{"ben:1"}; !slices.Equal(got, want) {
			t.Errorf("ann's conversations %v, want %v", got, want)
		}
		c, err := s.NewLoader().ConversationWith(ctx, "ann", "ben")
		if err != nil || c == nil || c.LastMessage == nil || c.LastMessage.ID != reply.ID {
			t.Errorf("ann's conversation with ben: %+v, %v", c, err)
		}
	})
}

// TestResyncRunTwice: deriving a conversation's mailboxes again is safe to run twice — a
// pipeline resent after its replies were lost finds the sync it made, not a mailbox that changed
// under it — so that the repair succeeds and leaves the counts exact.
func TestResyncRunTwice(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		plain := b
		on := new(atomic.Bool)
		on.Store(true)
		b = b.Hooked(t, scriptsTwice(on))
		s := b.NewStore(t, store.Options{Prefix: prefix})
		direct := plain.NewStore(t, store.Options{Prefix: prefix})
		signUp(t, s, "ann", "ben")
		send(t, s, "ben", "ann", "hi ann")
		send(t, s, "ann", "ben", "hi ben")
		send(t, s, "ben", "ann", "unread")
		if err := s.RepairConversation(ctx, "ann", "ben"); err != nil {
			t.Fatalf("repair with every pipeline sent twice: %v", err)
		}
		if n := unread(t, direct, "ann"); n != 1 {
			t.Errorf("ann's unread count %d after the repair, want 1", n)
		}
	})
}
