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

// TestUnreadMessagesPerConversationCapped: a conversation holds at most MessageOptions.MaxUnread
// messages its recipient has not read — the next is LIMIT_REACHED, writes nothing and costs a
// bounded number of commands (the mailboxes' steps of the refused message are taken back, not
// derived again from every unread message) —, which bounds what a derivation of the
// conversation's mailboxes reads; a request is capped too. Once the recipient reads, the sender
// writes again. The counts stay exact and agree with a derivation. The cap is off with a
// negative write limit, as the limits are.
func TestUnreadMessagesPerConversationCapped(t *testing.T) {
	const capped = 4
	cases := []struct {
		name    string
		request bool // ben never wrote to ann: her messages are a request
		fresh   bool // the refused message goes through another process: the checks, no lease
		off     bool // a negative write limit
	}{
		{name: "on a lease"},
		{name: "through the checks", fresh: true},
		{name: "a request", request: true},
		{name: "off with the limits", off: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				clk := storetest.NewClock()
				var sent commandCount
				hooked := b.Hooked(t, sent.hook())
				o := store.Options{Prefix: storetest.Prefix(), Now: clk.Now, WriteLimit: 1000,
					Messages: store.MessageOptions{PerWindow: 1000, MaxUnread: capped}}
				if tc.off {
					o.WriteLimit = -1
				}
				s := hooked.NewStore(t, o)
				signUp(t, s, "ann", "ben")
				if !tc.request {
					send(t, s, "ben", "ann", "hi ann")
				}
				for range capped {
					clk.Add(time.Millisecond)
					send(t, s, "ann", "ben", "unread")
				}
				clk.Add(time.Millisecond)
				sender := s
				if tc.fresh {
					sender = hooked.NewStore(t, o)
				}
				var err error
				n := sent.during(func() { _, err = sender.SendMessage(ctx, "ann", "ben", "one too many", "") })
				if tc.off {
					if err != nil {
						t.Fatalf("a message past the cap with the limits off: %v, want it sent", err)
					}
					return
				}
				if !store.IsKind(err, store.KindLimitReached) {
					t.Fatalf("a message past %d unread: %v, want LIMIT_REACHED", capped, err)
				}
				if n > 60 {
					t.Errorf("the refused message sent %d commands to Redis; want a bounded number (at most 60)", n)
				}
				check := func(when string) {
					t.Helper()
					if tc.request {
						if got, w := convsOf(t, s, "ben", true), []string{"ann:4"}; !slices.Equal(got, w) {
							t.Errorf("%s: ben's requests %v, want %v", when, got, w)
						}
						return
					}
					if n := unread(t, s, "ben"); n != capped {
						t.Errorf("%s: ben's unread count %d, want %d", when, n, capped)
					}
					if n := unread(t, s, "ann"); n != 0 {
						t.Errorf("%s: ann's unread count %d, want 0", when, n)
					}
					if got, w := convsOf(t, s, "ben", false), []string{"ann:4"}; !slices.Equal(got, w) {
						t.Errorf("%s: ben's conversations %v, want %v", when, got, w)
					}
				}
				check("after the refusal")
				if err := s.RepairConversation(ctx, "ann", "ben"); err != nil {
					t.Fatal(err)
				}
				check("after deriving the mailboxes again")
				if tc.request {
					if _, err := s.AcceptMessageRequest(ctx, "ben", "ann"); err != nil {
						t.Fatal(err)
					}
				}
				clk.Add(time.Millisecond)
				if _, err := s.MarkConversationRead(ctx, "ben", "ann", ""); err != nil {
					t.Fatal(err)
				}
				clk.Add(time.Millisecond)
				send(t, sender, "ann", "ben", "read at last")
				if n := unread(t, s, "ben"); n != 1 {
					t.Errorf("after ben read and ann wrote again: ben's unread count %d, want 1", n)
				}
			})
		})
	}
}

// TestMessagePastTheCapMovesNoConversation: a message past MaxUnread is LIMIT_REACHED and writes
// nothing — but it was refused by the conversation's script, after its mailbox steps had moved the
// conversation to the top of both users' lists, which the conversation took too (message_send.lua
// took): a sender at the cap could keep a conversation, or a request, at the top of the
// recipient's lists without a message. The message that reaches the cap now ends its sender's
// lease, and the checks refuse the next before its steps; a retry of the message that reached the
// cap, with its idempotency key, still answers that message.
func TestMessagePastTheCapMovesNoConversation(t *testing.T) {
	const capped = 3
	cases := []struct {
		name    string
		request bool // ben never wrote to ann: her messages are a request
		fresh   bool // the refused message goes through another process: the checks, no lease
	}{
		{name: "on a lease"},
		{name: "through the checks", fresh: true},
		{name: "a request", request: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				clk := storetest.NewClock()
				o := store.Options{Prefix: storetest.Prefix(), Now: clk.Now, WriteLimit: 1000,
					Messages: store.MessageOptions{PerWindow: 1000, MaxUnread: capped}}
				s := b.NewStore(t, o)
				signUp(t, s, "ann", "ben", "cat")
				send(t, s, "ben", "cat", "hi cat") // cat's messages to ben and ann are no requests
				send(t, s, "ann", "cat", "hi cat")
				if !tc.request {
					send(t, s, "ben", "ann", "hi ann")
				}
				var last *store.Message
				for i := range capped {
					clk.Add(time.Millisecond)
					m, err := s.SendMessage(ctx, "ann", "ben", "unread", "k"+strconv.Itoa(i))
					if err != nil {
						t.Fatal(err)
					}
					last = m
				}
				clk.Add(time.Millisecond)
				// cat writes to ben after ann, and to ann: above ann in ben's lists, above ben in ann's.
				send(t, s, "cat", "ben", "hi ben")
				send(t, s, "cat", "ann", "hi ann")
				lists := func() []string {
					return slices.Concat(convsOf(t, s, "ben", false), convsOf(t, s, "ben", true), convsOf(t, s, "ann", false))
				}
				before := lists()
				clk.Add(time.Hour)
				sender := s
				if tc.fresh {
					sender = b.NewStore(t, o)
				}
				for range 2 {
					if _, err := sender.SendMessage(ctx, "ann", "ben", "one too many", ""); !store.IsKind(err, store.KindLimitReached) {
						t.Fatalf("a message past %d unread: %v, want LIMIT_REACHED", capped, err)
					}
				}
				if after := lists(); !slices.Equal(after, before) {
					t.Errorf("ben's conversations, ben's requests and ann's conversations after the refusals: %v, want %v", after, before)
				}
				again, err := sender.SendMessage(ctx, "ann", "ben", "unread", "k"+strconv.Itoa(capped-1))
				if err != nil || again.ID != last.ID {
					t.Errorf("the retry of the message that reached the cap: %v, %v; want %s", again, err, last.ID)
				}
			})
		})
	}
}
