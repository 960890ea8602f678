package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// beforeStep is a go-redis hook that runs f once, just before the first pipeline that holds a
// mailbox step named step (see mailbox.lua) after it is armed.
type beforeStep struct {
	mu   sync.Mutex
	step string
	f    func()
}

func (h *beforeStep) arm(step string, f func()) { h.mu.Lock(); h.step, h.f = step, f; h.mu.Unlock() }

func (*beforeStep) DialHook(next rdb.DialHook) rdb.DialHook          { return next }
func (*beforeStep) ProcessHook(next rdb.ProcessHook) rdb.ProcessHook { return next }
func (h *beforeStep) ProcessPipelineHook(next rdb.ProcessPipelineHook) rdb.ProcessPipelineHook {
	return func(ctx context.Context, cmds []rdb.Cmder) error {
		h.mu.Lock()
		var f func()
		for _, c := range cmds {
			if c.Name() == "evalsha" && h.f != nil && slices.Contains(c.Args(), any(h.step)) {
				f, h.f = h.f, nil
				break
			}
		}
		h.mu.Unlock()
		if f != nil {
			f()
		}
		return next(ctx, cmds)
	}
}

// TestResyncKeepsConcurrentMessages: a write whose steps disagreed derives both mailboxes again
// from the conversation (a retry with an idempotency key does, every time). A message the other
// user sends between that derivation's read of the conversation and its write to the mailboxes
// must still count as unread, and move the conversation to the top of the list.
func TestResyncKeepsConcurrentMessages(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clk := storetest.NewClock()
		plain := b
		b.Client = b.NewClient(t)
		hook := &beforeStep{}
		b.Client.AddHook(hook)
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: clk.Now})
		other := plain.NewStore(t, store.Options{Prefix: prefix, Now: clk.Now})
		signUp(t, s, "ann", "ben")
		send(t, s, "ben", "ann", "hi ann")
		send(t, s, "ann", "ben", "hi ben") // accepted both ways
		clk.Add(time.Millisecond)
		if _, err := s.SendMessage(ctx, "ann", "ben", "are you there?", "k1"); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Millisecond)
		var reply *store.Message
		hook.arm("sync", func() {
			reply = send(t, other, "ben", "ann", "yes, here")
		})
		// The retry finds its key: the mailboxes are derived again, and ben's reply lands between
		// the derivation's read and its write.
		if _, err := s.SendMessage(ctx, "ann", "ben", "are you there?", "k1"); err != nil {
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
		b.Client = b.NewClient(t)
		b.Client.AddHook(resend{})
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
