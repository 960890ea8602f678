package store_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestRetriedMessageCostsNoDerivation: a message retried with its idempotency key returns the
// first message, and costs a bounded number of commands whatever the size of the conversation:
// the mailboxes' steps of the retry are taken back (the recipient's unread copy), not derived
// again from every message the reader has not read — a retry, which any client may repeat,
// would otherwise read and rewrite every unread message of the conversation each time. The
// counts stay exact, and agree with a derivation. Where the retry's step may have listed a
// conversation the recipient's lists no longer hold (a declined request whose cooldown is over),
// the mailboxes are derived again, and the recipient's requests stay empty.
func TestRetriedMessageCostsNoDerivation(t *testing.T) {
	const unreadByBen = 300
	cases := []struct {
		name     string
		declined bool // ben declined ann's request, and the cooldown is over when ann retries
		fresh    bool // the retry goes through another process: through the checks, not on a lease
	}{
		{name: "on a lease"},
		{name: "through the checks", fresh: true},
		{name: "after a declined request's cooldown", declined: true, fresh: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				prefix := storetest.Prefix()
				clk := storetest.NewClock()
				var sent commandCount
				hooked := b.Hooked(t, sent.hook())
				o := store.Options{Prefix: prefix, Now: clk.Now, WriteLimit: -1,
					Messages: store.MessageOptions{RequestCooldown: time.Hour}}
				s := hooked.NewStore(t, o)
				retrier := s
				if tc.fresh {
					retrier = hooked.NewStore(t, o)
				}
				signUp(t, s, "ann", "ben")
				want := 0
				if tc.declined {
					send(t, s, "ann", "ben", "hello?")
					if _, err := s.DeclineMessageRequest(ctx, "ben", "ann"); err != nil {
						t.Fatal(err)
					}
				} else {
					send(t, s, "ben", "ann", "hi ann")
					send(t, s, "ann", "ben", "hi ben") // accepted both ways; ben reads no further
					for range unreadByBen {
						clk.Add(time.Millisecond)
						send(t, s, "ann", "ben", "unread")
					}
					want = unreadByBen + 2
				}
				clk.Add(2 * time.Hour) // past the cooldown; within the key's day
				first, err := s.SendMessage(ctx, "ann", "ben", "are you there?", "k1")
				if err != nil {
					t.Fatal(err)
				}
				if tc.declined {
					if _, err := s.DeclineMessageRequest(ctx, "ben", "ann"); err != nil {
						t.Fatal(err)
					}
					clk.Add(2 * time.Hour)
				}
				clk.Add(time.Millisecond)
				var again *store.Message
				n := sent.during(func() { again, err = retrier.SendMessage(ctx, "ann", "ben", "are you there?", "k1") })
				if err != nil {
					t.Fatal(err)
				}
				if again.ID != first.ID {
					t.Errorf("the retry answered %s, want the first message %s", again.ID, first.ID)
				}
				if !tc.declined && n > 60 {
					t.Errorf("the retry sent %d commands to Redis with %d unread messages in the conversation; want a bounded number (at most 60)", n, want)
				}
				check := func(when string) {
					t.Helper()
					if n := unread(t, s, "ben"); n != want {
						t.Errorf("%s: ben's unread count %d, want %d", when, n, want)
					}
					if n := unread(t, s, "ann"); n != 0 {
						t.Errorf("%s: ann's unread count %d, want 0", when, n)
					}
					if tc.declined {
						if got := convsOf(t, s, "ben", true); len(got) != 0 {
							t.Errorf("%s: ben's requests %v after declining them, want none", when, got)
						}
						return
					}
					if got, w := convsOf(t, s, "ben", false), []string{"ann:" + strconv.Itoa(want)}; !slices.Equal(got, w) {
						t.Errorf("%s: ben's conversations %v, want %v", when, got, w)
					}
				}
				check("after the retry")
				if err := s.RepairConversation(ctx, "ann", "ben"); err != nil {
					t.Fatal(err)
				}
				check("after deriving the mailboxes again")
			})
		})
	}
}

// TestMessageNotWrittenLeavesNoReadPosition: a message the conversation did not write — a retry
// with its idempotency key, or one past MaxUnread — took its steps in both mailboxes, the
// recipient's unread copy included, until the copy is taken back out in the next round trip. A
// mark of read by the recipient landing in between, which reads "up to the last message the
// mailbox holds unread" (mailbox.lua latest), moved the mailbox's read position to that copy,
// past the conversation's: another replica's message sent next, whose time falls between the
// two (its clock a little behind the first one's), was unread in the conversation and not in
// the recipient's mailbox, whose unread count missed it until the next derivation. The copy's
// removal now notices a read position taken from it, and derives the mailboxes. (A message past
// the cap is refused by the conversation's script only when the message that fills the cap lands
// after its checks.)
func TestMessageNotWrittenLeavesNoReadPosition(t *testing.T) {
	const capped = 3
	cases := []struct {
		name string
		full bool // the message is one past MaxUnread, not a retry
	}{
		{name: "a retry"},
		{name: "a message past the cap", full: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				prefix := storetest.Prefix()
				clk := storetest.NewClock()
				var window beforeScript
				hooked := b.Hooked(t, window.hook())
				// Three replicas: s at the clock, ahead 10 ms ahead of it, and behind 5 ms ahead.
				at := func(d time.Duration) func() time.Time { return func() time.Time { return clk.Now().Add(d) } }
				o := store.Options{Prefix: prefix, Now: clk.Now, WriteLimit: 1000,
					Messages: store.MessageOptions{PerWindow: 1000, MaxUnread: capped}}
				s := hooked.NewStore(t, o)
				o.Now = at(10 * time.Millisecond)
				ahead := hooked.NewStore(t, o)
				o.Now = at(5 * time.Millisecond)
				behind := hooked.NewStore(t, o)
				signUp(t, s, "ann", "ben")
				send(t, s, "ben", "ann", "hi ann")
				clk.Add(time.Millisecond)
				if _, err := s.SendMessage(ctx, "ann", "ben", "hi ben", "k1"); err != nil {
					t.Fatal(err)
				}
				if tc.full {
					for range capped - 2 {
						clk.Add(time.Millisecond)
						send(t, s, "ann", "ben", "unread")
					}
				}
				clk.Add(time.Second)
				// ben reads, on s, between the refused message's pipeline and the removal of its
				// unread copy.
				read := func() {
					window.arm(argIs("remove"), func() {
						if _, err := s.MarkConversationRead(ctx, "ben", "ann", ""); err != nil {
							t.Error(err)
						}
					})
				}
				if tc.full {
					// The message that fills the cap lands between the checks of the one past it,
					// which let it through, and its script, which refuses it.
					window.arm(argIs("one too many"), func() {
						send(t, s, "ann", "ben", "the last the cap allows")
						read()
					})
				} else {
					read()
				}
				if tc.full {
					_, err := ahead.SendMessage(ctx, "ann", "ben", "one too many", "")
					if !store.IsKind(err, store.KindLimitReached) {
						t.Fatalf("a message past %d unread: %v, want LIMIT_REACHED", capped, err)
					}
				} else if _, err := ahead.SendMessage(ctx, "ann", "ben", "hi ben", "k1"); err != nil {
					t.Fatal(err)
				}
				window.arm(nil, nil)
				send(t, behind, "ann", "ben", "sent after ben read")
				if n := unread(t, s, "ben"); n != 1 {
					t.Errorf("ben's unread count %d after ann's message that followed his read; want 1", n)
				}
				if err := s.RepairConversation(ctx, "ann", "ben"); err != nil {
					t.Fatal(err)
				}
				if n := unread(t, s, "ben"); n != 1 {
					t.Errorf("after deriving the mailboxes again: ben's unread count %d, want 1", n)
				}
			})
		})
	}
}
