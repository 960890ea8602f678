package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestMessagesAcrossTheirSendersErasureKeepNoText: a message whose checks passed just before
// its sender deleted the account with eraseContent, and whose script landed after the deletion
// and its whole chain, stayed as plain text for the recipient, and unread: the sender's mailbox
// was marked gone, so that its step of the message wrote nothing, and the conversation — a new
// contact's, or a request the sender answered — never entered the list the chain's messages step
// walks, or, with a contact, the step had walked it already. The message now reads the deletion
// in its sender's mailbox step (mailbox.lua "out" answers a mailbox marked gone), becomes a
// tombstone for the other side and leaves their unread messages, as the chain does to the others,
// and is answered UNAUTHENTICATED. A message on a send lease and an edit across the deletion
// write no text either: the deletion ends the lease, and the chain's tombstone refuses the edit.
func TestMessagesAcrossTheirSendersErasureKeepNoText(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		d := newAcrossDeletion(t, b)
		prefix := d.prefix
		s, other := d.s, d.other
		var edited string // the message the edit case edits
		for _, tc := range []struct {
			name string
			// sender is deleted, with eraseContent and its whole chain, right before the first
			// script that names key (after the write's checks); to is the other side.
			sender, to, key string
			setup           func(t *testing.T)
			write           func() error
			want            store.Kind
		}{
			{
				name: "first message to a new contact", sender: "ann", to: "ben", key: "{m:ann:ben}",
				write: func() error { _, err := s.SendMessage(ctx, "ann", "ben", "secret", ""); return err },
				want:  store.KindUnauthenticated,
			},
			{
				name: "reply to a request", sender: "cat", to: "dan", key: "{m:cat:dan}",
				setup: func(t *testing.T) { send(t, s, "dan", "cat", "hello?") },
				write: func() error { _, err := s.SendMessage(ctx, "cat", "dan", "secret", ""); return err },
				want:  store.KindUnauthenticated,
			},
			{
				name: "message to a contact after the chain's messages step", sender: "eve", to: "fay", key: "{m:eve:fay}",
				// Sent by another process: this one holds no send lease, so the message passes the checks.
				setup: func(t *testing.T) { send(t, other, "fay", "eve", "hello"); send(t, other, "eve", "fay", "hi") },
				write: func() error { _, err := s.SendMessage(ctx, "eve", "fay", "secret", ""); return err },
				want:  store.KindUnauthenticated,
			},
			{
				name: "message on a send lease", sender: "gus", to: "hal", key: "{m:gus:hal}",
				setup: func(t *testing.T) {
					send(t, s, "hal", "gus", "hello")
					for _, body := range []string{"one", "two", "three"} { // the later ones grant and use a lease
						send(t, s, "gus", "hal", body)
					}
				},
				write: func() error { _, err := s.SendMessage(ctx, "gus", "hal", "secret", ""); return err },
				want:  store.KindUnauthenticated,
			},
			{
				name: "edit", sender: "ian", to: "jon", key: "{m:ian:jon}",
				setup: func(t *testing.T) {
					send(t, s, "jon", "ian", "hello")
					edited = send(t, s, "ian", "jon", "first draft").ID
				},
				write: func() error { _, err := s.EditMessage(ctx, "ian", edited, "secret"); return err },
				want:  store.KindNotFound, // the chain made it a tombstone: an edit of a deleted message
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				signUp(t, s, tc.sender, tc.to)
				if tc.setup != nil {
					tc.setup(t)
				}
				d.arm(t, tc.sender, true, func(arg string) bool { return strings.HasPrefix(arg, prefix+tc.key) })
				if err := tc.write(); !store.IsKind(err, tc.want) {
					t.Errorf("%v, want kind %v", err, tc.want)
				}
				settle(t, s)
				d.deleted(t, tc.sender)
				p, err := s.NewLoader().Messages(ctx, uk(tc.to), uk(tc.sender), store.Window{First: 100})
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range p.Items {
					if string(m.Sender) == tc.sender && m.Body() != nil {
						t.Errorf("%s reads %q of the erased account's", tc.to, *m.Body())
					}
				}
				if n := unread(t, s, tc.to); n != 0 {
					t.Errorf("%s's unread messages: %d, want 0", tc.to, n)
				}
				for _, requests := range []bool{false, true} {
					for _, c := range convsOf(t, s, tc.to, requests) {
						if !strings.HasSuffix(c, ":0") {
							t.Errorf("%s's conversations (requests: %v): %s, want none unread", tc.to, requests, c)
						}
					}
				}
			})
		}
	})
}
