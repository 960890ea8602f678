package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSendLeaseEndsWhereItsChecksChange: a message on a send lease makes none of the checks of
// other slots, so every change of what they read ends the leases it concerns: after a block
// either way, a site ban of the sender, the deletion of the recipient's account, or the sender's
// message limit filled, a message the same process sends on its lease is refused as the checks
// would refuse it, and leaves no trace — no message, no unread count, no key of a deleted
// account's mailbox made again.
func TestSendLeaseEndsWhereItsChecksChange(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(ctx context.Context, s *store.Store) error
		want   store.Kind
	}{
		{"recipient blocks", func(ctx context.Context, s *store.Store) error { _, err := s.Block(ctx, "bob", "amy"); return err }, store.KindForbidden},
		{"sender blocks", func(ctx context.Context, s *store.Store) error { _, err := s.Block(ctx, "amy", "bob"); return err }, store.KindForbidden},
		{"site ban", func(ctx context.Context, s *store.Store) error {
			_, err := s.BanUser(ctx, "root", "amy", "", nil, "spam")
			return err
		}, store.KindBanned},
		{"recipient deleted", func(ctx context.Context, s *store.Store) error { return s.DeleteAccount(ctx, "bob", "password1", true) }, store.KindNotFound},
		// The limit is 4 messages a minute: the checked message and the two on its lease below
		// are 3 of amy's, her message to cat the 4th, which other conversations' leases do not
		// see: the lease allows one message more, which finds the limit full and ends it.
		{"limit filled elsewhere", func(ctx context.Context, s *store.Store) error {
			_, err := s.SendMessage(ctx, "amy", "cat", "elsewhere", "")
			return err
		}, store.KindRateLimited},
	} {
		t.Run(c.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				b, rt := b.Counted(t)
				prefix := storetest.Prefix()
				s := b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: 1000, Messages: store.MessageOptions{PerWindow: 4}})
				signUp(t, s, "root", "amy", "bob", "cat")
				if err := s.GrantAdmin(ctx, "root"); err != nil {
					t.Fatal(err)
				}
				send(t, s, "bob", "amy", "hello")
				send(t, s, "amy", "bob", "checked") // grants amy's lease
				before := rt.Count()
				send(t, s, "amy", "bob", "on the lease")
				if n := rt.Count() - before; n != 1 {
					t.Fatalf("a message on a lease took %d round trips, want 1", n)
				}
				if c.name == "limit filled elsewhere" {
					send(t, s, "amy", "bob", "on the lease too")
				}
				unreadBefore := -1
				if c.name != "recipient deleted" {
					unreadBefore = unread(t, s, "bob")
				}
				if err := c.change(ctx, s); err != nil {
					t.Fatal(err)
				}
				if c.name == "limit filled elsewhere" {
					send(t, s, "amy", "bob", "one more")
					unreadBefore++
				}
				keysBefore := allKeys(t, b, prefix+"*")
				if _, err := s.SendMessage(ctx, "amy", "bob", "after the change", ""); !store.IsKind(err, c.want) {
					t.Fatalf("a message after the change: %v, want %v", err, c.want)
				}
				p, err := s.NewLoader().Messages(ctx, "amy", "bob", store.Window{First: 10})
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range p.Items {
					if m.Text == "after the change" {
						t.Errorf("the refused message is in the conversation")
					}
				}
				if unreadBefore >= 0 {
					if n := unread(t, s, "bob"); n != unreadBefore {
						t.Errorf("bob's unread messages %d after the refused one, want %d", n, unreadBefore)
					}
					return
				}
				// No key is made again, of the deleted account's mailbox or any other (but the job
				// engine's, of the message's repair note).
				for _, k := range keysAdded(t, b, prefix, keysBefore) {
					if !strings.HasPrefix(k, prefix+"{j:") {
						t.Errorf("the refused message made the key %s", k)
					}
				}
				for _, k := range allKeys(t, b, prefix+"{mb:bob}*") {
					if slices.Contains([]string{":unread", ":runread", ":reqs", ":state", ":ver"}, k[strings.LastIndex(k, ":"):]) {
						t.Errorf("the deleted account's mailbox holds %s", k)
					}
				}
			})
		})
	}
}

// TestSendLeaseBoundsMessagesWithinItsConversation: a lease allows what the sender's message
// limit left when it was granted, exactly, then the checks refuse as they would.
func TestSendLeaseBoundsMessagesWithinItsConversation(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{WriteLimit: 1000, Messages: store.MessageOptions{PerWindow: 5}})
		signUp(t, s, "amy", "bob")
		for i := range 5 {
			send(t, s, "amy", "bob", fmt.Sprint("m", i))
		}
		if _, err := s.SendMessage(ctx, "amy", "bob", "one too many", ""); !store.IsKind(err, store.KindRateLimited) {
			t.Errorf("past the message limit on a lease: %v, want RATE_LIMITED", err)
		}
		if n := unread(t, s, "bob"); n != 0 {
			t.Errorf("bob's unread count %d, want 0: amy's messages are a request", n)
		}
		p, err := s.NewLoader().MessageRequests(ctx, "bob", store.Window{First: 10})
		if err != nil || len(p.Items) != 1 || p.Items[0].UnreadCount != 5 {
			t.Errorf("bob's requests %+v (%v), want amy's with 5 unread", p, err)
		}
	})
}

// TestSendLeaseEndsWithANewAddress: under Options.RequireEmail, a new address (not verified yet)
// stops the account's messages, also in a conversation whose lease held.
func TestSendLeaseEndsWithANewAddress(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		b, rt := b.Counted(t)
		s, srv, _ := mailStoreWith(t, b, store.Options{RequireEmail: true})
		for i, name := range []string{"amy", "bob"} {
			if _, err := s.SignUpWithEmail(ctx, name, "password1", name+"@example.org"); err != nil {
				t.Fatal(err)
			}
			settle(t, s)
			if _, err := s.VerifyEmail(ctx, mailToken(t, srv, i+1)); err != nil {
				t.Fatalf("verify: %v", err)
			}
		}
		send(t, s, "amy", "bob", "checked")
		before := rt.Count()
		send(t, s, "amy", "bob", "on the lease")
		if n := rt.Count() - before; n != 1 {
			t.Fatalf("a message on a lease took %d round trips, want 1", n)
		}
		if _, err := s.SetEmail(ctx, "amy", "amy2@example.org", "password1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SendMessage(ctx, "amy", "bob", "unverified", ""); !store.IsKind(err, store.KindEmailUnverified) {
			t.Errorf("a message from a new, unverified address: %v, want EMAIL_UNVERIFIED", err)
		}
	})
}
