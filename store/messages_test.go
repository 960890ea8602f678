package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// send sends a message and fails the test on an error.
func send(t testing.TB, s *store.Store, from, to, body string) *store.Message {
	t.Helper()
	m, err := s.SendMessage(context.Background(), uk(from), uk(to), body, "")
	if err != nil {
		t.Fatalf("%s sends %q to %s: %v", from, body, to, err)
	}
	return m
}

// unread returns a user's unread message count.
func unread(t testing.TB, s *store.Store, uid string) int {
	t.Helper()
	n, err := s.NewLoader().UnreadMessageCount(context.Background(), uk(uid))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// convsOf returns the other users of uid's conversations (or requests), in order, with their
// unread counts.
func convsOf(t testing.TB, s *store.Store, uid string, requests bool) []string {
	t.Helper()
	l := s.NewLoader()
	list := l.Conversations
	if requests {
		list = l.MessageRequests
	}
	p, err := list(context.Background(), uk(uid), store.Window{First: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range p.Items {
		out = append(out, fmt.Sprintf("%s:%d", c.With, c.UnreadCount))
	}
	return out
}

// TestMessagesBothWaysPaged has two users write to each other and pages their conversation
// forwards and backwards from both sides, while a third conversation moves the list's order.
func TestMessagesBothWaysPaged(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		s := b.NewStore(t, store.Options{Now: clk.Now})
		signUp(t, s, "alice", "bob", "carol")
		var sent []string
		for i := range 12 {
			from, to := "alice", "bob"
			if i%2 == 1 {
				from, to = "bob", "alice"
			}
			clk.Add(time.Millisecond)
			sent = append(sent, send(t, s, from, to, fmt.Sprint("m", i)).ID)
		}
		clk.Add(time.Millisecond)
		send(t, s, "carol", "alice", "hi alice") // a request: not in alice's conversations
		clk.Add(time.Millisecond)
		send(t, s, "alice", "carol", "hi carol") // a reply accepts it, and is the newest activity
		if got, want := convsOf(t, s, "alice", false), []string{"carol:0", "bob:1"}; !slices.Equal(got, want) {
			t.Errorf("alice's conversations %v, want %v (newest first; sending reads)", got, want)
		}
		if got, want := convsOf(t, s, "bob", false), []string{"alice:0"}; !slices.Equal(got, want) {
			t.Errorf("bob's conversations %v, want %v", got, want)
		}
		for _, viewer := range []string{"alice", "bob"} {
			with := map[string]string{"alice": "bob", "bob": "alice"}[viewer]
			// Forwards, five at a time, then backwards from the end.
			var fwd, bwd []string
			after := ""
			for {
				p, err := s.NewLoader().Messages(ctx, uk(viewer), uk(with), store.Window{First: 5, After: after})
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != 12 {
					t.Fatalf("total %d, want 12", p.Total)
				}
				for _, m := range p.Items {
					fwd = append(fwd, m.ID)
				}
				if !p.HasNext {
					break
				}
				after = p.EndCursor()
			}
			before := ""
			for {
				p, err := s.NewLoader().Messages(ctx, uk(viewer), uk(with), store.Window{Last: 5, Before: before})
				if err != nil {
					t.Fatal(err)
				}
				bwd = append(append([]string{}, idsOf(p.Items)...), bwd...)
				if !p.HasPrev {
					break
				}
				before = p.StartCursor()
			}
			if !slices.Equal(fwd, sent) || !slices.Equal(bwd, sent) {
				t.Errorf("%s paged %v forwards and %v backwards, want %v", viewer, fwd, bwd, sent)
			}
		}
		// A cursor stays valid while messages are added and deleted around it.
		p, err := s.NewLoader().Messages(ctx, "bob", "alice", store.Window{First: 4})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteMessage(ctx, "alice", sent[4]); err != nil {
			t.Fatal(err)
		}
		send(t, s, "bob", "alice", "later")
		p2, err := s.NewLoader().Messages(ctx, "bob", "alice", store.Window{First: 2, After: p.EndCursor()})
		if err != nil {
			t.Fatal(err)
		}
		if got := idsOf(p2.Items); !slices.Equal(got, sent[4:6]) || p2.Items[0].Body() != nil || !p2.Items[0].Deleted {
			t.Errorf("after the cursor: %v (first deleted %v), want %v with a tombstone first", got, p2.Items[0].Deleted, sent[4:6])
		}
		// Only the two can read the conversation.
		if m, err := s.NewLoader().Message(ctx, "carol", sent[0]); err != nil || m != nil {
			t.Errorf("carol reads alice's message to bob: %v, %v", m, err)
		}
		// Every send through the checks settled its repair note; the messages on a send lease
		// (alice's and bob's after their first) leave theirs, one job for their conversation,
		// which derives its mailboxes again and changes nothing.
		before := [][]string{convsOf(t, s, "alice", false), convsOf(t, s, "bob", false)}
		clk.Add(store.RepairGrace + time.Second)
		if n, err := s.Jobs().RunDue(ctx); err != nil || n != 1 {
			t.Errorf("%d jobs left due after the sends (%v), want 1", n, err)
		}
		for i, who := range []string{"alice", "bob"} {
			if got := convsOf(t, s, who, false); !slices.Equal(got, before[i]) {
				t.Errorf("%s's conversations after the repair %v, want %v", who, got, before[i])
			}
		}
	})
}

func idsOf(ms []*store.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// TestMessageRequests: a stranger's first message is a request, kept out of the unread count
// until accepted; a decline refuses the sender's requests for the cooldown, on the driven clock.
func TestMessageRequests(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		s := b.NewStore(t, store.Options{Now: clk.Now, Messages: store.MessageOptions{RequestCooldown: time.Hour}})
		signUp(t, s, "dan", "eve", "fay")
		send(t, s, "eve", "dan", "buy my stuff")
		send(t, s, "eve", "dan", "please")
		send(t, s, "fay", "dan", "hello dan")
		if n := unread(t, s, "dan"); n != 0 {
			t.Errorf("requests count %d unread, want 0", n)
		}
		if got, want := convsOf(t, s, "dan", true), []string{"fay:1", "eve:2"}; !slices.Equal(got, want) {
			t.Errorf("dan's requests %v, want %v", got, want)
		}
		if got := convsOf(t, s, "dan", false); len(got) != 0 {
			t.Errorf("dan's conversations %v, want none before accepting", got)
		}
		if got, want := convsOf(t, s, "eve", false), []string{"dan:0"}; !slices.Equal(got, want) {
			t.Errorf("the sender's conversations %v, want %v", got, want)
		}
		// Accept fay: her message counts.
		c, err := s.AcceptMessageRequest(ctx, "dan", "fay")
		if err != nil || c.IsRequest || c.UnreadCount != 1 {
			t.Fatalf("accept: %+v, %v", c, err)
		}
		if n := unread(t, s, "dan"); n != 1 {
			t.Errorf("unread %d after accepting, want 1", n)
		}
		send(t, s, "fay", "dan", "thanks")
		if n := unread(t, s, "dan"); n != 2 {
			t.Errorf("unread %d, want 2", n)
		}
		// Decline eve: her requests are refused for the cooldown.
		if _, err := s.DeclineMessageRequest(ctx, "dan", "eve"); err != nil {
			t.Fatal(err)
		}
		if got, want := convsOf(t, s, "dan", true), []string(nil); !slices.Equal(got, want) {
			t.Errorf("requests after declining %v, want none", got)
		}
		if _, err := s.SendMessage(ctx, "eve", "dan", "again", ""); !store.IsKind(err, store.KindForbidden) {
			t.Errorf("a request within the cooldown: %v, want FORBIDDEN", err)
		}
		if _, err := s.AcceptMessageRequest(ctx, "dan", "eve"); !store.IsKind(err, store.KindNotFound) {
			t.Errorf("accepting a declined request: %v, want NOT_FOUND", err)
		}
		clk.Add(time.Hour - time.Millisecond)
		if _, err := s.SendMessage(ctx, "eve", "dan", "again", ""); !store.IsKind(err, store.KindForbidden) {
			t.Errorf("a request a millisecond before the cooldown ends: %v, want FORBIDDEN", err)
		}
		clk.Add(time.Millisecond)
		send(t, s, "eve", "dan", "after the cooldown")
		if got, want := convsOf(t, s, "dan", true), []string{"eve:1"}; !slices.Equal(got, want) {
			t.Errorf("requests after the cooldown %v, want %v (the declined ones read)", got, want)
		}
		// Replying accepts a request, and reads what came before it; an accepted conversation
		// cannot be declined.
		send(t, s, "dan", "eve", "fine, what?")
		if _, err := s.DeclineMessageRequest(ctx, "dan", "eve"); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("declining an accepted conversation: %v, want BAD_USER_INPUT", err)
		}
		if got, want := convsOf(t, s, "dan", false), []string{"eve:0", "fay:2"}; !slices.Equal(got, want) {
			t.Errorf("dan's conversations %v, want %v", got, want)
		}
		// Marking read zeroes the conversation, exactly.
		c, err = s.MarkConversationRead(ctx, "dan", "fay", "")
		if err != nil || c.UnreadCount != 0 || c.LastMessage == nil || c.LastMessage.Text != "thanks" {
			t.Fatalf("mark read: %+v, %v", c, err)
		}
		if n := unread(t, s, "dan"); n != 0 {
			t.Errorf("unread %d after reading all, want 0", n)
		}
		if _, err := s.MarkConversationRead(ctx, "dan", "alice", ""); !store.IsKind(err, store.KindNotFound) && !store.IsKind(err, store.KindInvalid) {
			t.Errorf("marking a conversation that does not exist: %v", err)
		}
	})
}

// TestMessagesRefused: blocks stop messages both ways, a site ban stops the banned, the message
// limit applies and switches off with the write limit, and bodies are checked.
func TestMessagesRefused(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{WriteLimit: 1000, Messages: store.MessageOptions{PerWindow: 3}})
		signUp(t, s, "root", "gus", "hal", "ivy")
		if err := s.GrantAdmin(ctx, "root"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Block(ctx, "gus", "hal"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ from, to string }{{"gus", "hal"}, {"hal", "gus"}} {
			if _, err := s.SendMessage(ctx, uk(c.from), uk(c.to), "hi", ""); !store.IsKind(err, store.KindForbidden) {
				t.Errorf("%s to %s across a block: %v, want FORBIDDEN", c.from, c.to, err)
			}
		}
		for _, c := range []struct {
			name, to, body string
			kind           store.Kind
		}{
			{"empty", "ivy", "", store.KindInvalid},
			{"too long", "ivy", string(make([]byte, store.MaxMessageBodyRunes+1)), store.KindInvalid},
			{"yourself", "gus", "me", store.KindInvalid},
			{"nobody", "nobody", "hi", store.KindNotFound},
		} {
			if _, err := s.SendMessage(ctx, "gus", uk(c.to), c.body, ""); !store.IsKind(err, c.kind) {
				t.Errorf("%s: %v, want kind %v", c.name, err, c.kind)
			}
		}
		for i := range 3 {
			send(t, s, "ivy", "gus", fmt.Sprint("n", i))
		}
		if _, err := s.SendMessage(ctx, "ivy", "gus", "one too many", ""); !store.IsKind(err, store.KindRateLimited) {
			t.Errorf("past the message limit: %v, want RATE_LIMITED", err)
		}
		if _, err := s.BanUser(ctx, "root", "ivy", "", nil, "spam"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SendMessage(ctx, "ivy", "hal", "hi", ""); !store.IsKind(err, store.KindBanned) {
			t.Errorf("a site-banned sender: %v, want BANNED", err)
		}
		// AGORA_WRITE_LIMIT=-1 switches the message limit off.
		off := b.NewStore(t, store.Options{WriteLimit: -1, Messages: store.MessageOptions{PerWindow: 1}})
		signUp(t, off, "jay", "kim")
		for i := range 5 {
			send(t, off, "jay", "kim", fmt.Sprint("x", i))
		}
	})
}

// TestUnreadMessagesExactUnderConcurrency has 50 writers message one reader at once, each
// sending, retrying a send with its idempotency key, deleting one message and editing another,
// while the reader reads some conversations, and every pipeline of scripts is sent twice (lost
// replies): every count comes out exact.
func TestUnreadMessagesExactUnderConcurrency(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		b.Client = b.NewClient(t)
		runTwice(b)
		clk := storetest.NewClock()
		s := b.NewStore(t, store.Options{Now: clk.Now})
		const writers = 50
		signUp(t, s, "reader")
		names := make([]string, writers)
		for i := range names {
			names[i] = fmt.Sprintf("w%02d", i)
			signUp(t, s, names[i])
			if i%2 == 0 {
				send(t, s, "reader", names[i], "hello") // the reader accepts the even ones
			}
		}
		clk.Add(time.Second) // every message after the reader's own
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for i, w := range names {
			wg.Go(func() {
				var ids []string
				for j := range 4 {
					key := fmt.Sprintf("k%d", j)
					for range 1 + j%2 { // the odd sends are retried with their key
						m, err := s.SendMessage(ctx, uk(w), "reader", fmt.Sprint("m", j), key)
						if err != nil {
							errs <- err
							return
						}
						if len(ids) == j+1 && ids[j] != m.ID {
							errs <- fmt.Errorf("%s: a retry sent %s, then %s", w, ids[j], m.ID)
							return
						}
						if len(ids) == j {
							ids = append(ids, m.ID)
						}
					}
				}
				if err := s.DeleteMessage(ctx, uk(w), ids[0]); err != nil {
					errs <- err
					return
				}
				if _, err := s.EditMessage(ctx, uk(w), ids[1], "edited"); err != nil {
					errs <- err
					return
				}
				if i%10 == 0 {
					// A read in the middle of the writes: it marks what came before it.
					if _, err := s.MarkConversationRead(ctx, "reader", uk(w), ""); err != nil && i%2 == 0 {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		// Each even writer's conversation holds 3 unread messages, unless the reader read it
		// after the writer's last send (every 10th); the odd ones are requests, not counted.
		want := 0
		for i := range names {
			if i%2 == 0 && i%10 != 0 {
				want += 3
			}
		}
		if got := unread(t, s, "reader"); got != want {
			t.Errorf("unread %d, want %d", got, want)
		}
		sum := 0
		p, err := s.NewLoader().Conversations(ctx, "reader", store.Window{First: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Items {
			sum += c.UnreadCount
		}
		if sum != want || len(p.Items) != writers/2 {
			t.Errorf("conversations sum to %d unread over %d, want %d over %d", sum, len(p.Items), want, writers/2)
		}
		reqs := convsOf(t, s, "reader", true)
		if len(reqs) != writers/2 {
			t.Errorf("%d requests, want %d", len(reqs), writers/2)
		}
		for _, r := range reqs {
			if r[len(r)-2:] != ":3" {
				t.Errorf("request %s, want 3 unread", r)
			}
		}
		// The repair of a conversation derives the same mailboxes again.
		before := unread(t, s, "reader")
		for _, w := range names {
			if err := s.RepairConversation(ctx, "reader", uk(w)); err != nil {
				t.Fatal(err)
			}
		}
		if after := unread(t, s, "reader"); after != before || !slices.Equal(convsOf(t, s, "reader", true), reqs) {
			t.Errorf("after repair: unread %d (was %d), requests %v (were %v)", after, before, convsOf(t, s, "reader", true), reqs)
		}
	})
}

// TestMessagesExportedAndDeletedWithTheAccount: an account's export holds its messages, both
// directions; deleting it with erase makes the messages it sent tombstones for the other side
// (and no longer unread), without erase leaves them; either way its mailbox goes, the
// conversation stays for the other side, and nobody can write to it any more.
func TestMessagesExportedAndDeletedWithTheAccount(t *testing.T) {
	for _, erase := range []bool{true, false} {
		t.Run(fmt.Sprintf("erase=%v", erase), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				clk := storetest.NewClock()
				s := b.NewStore(t, store.Options{Now: clk.Now})
				signUp(t, s, "ann", "ben")
				ids := []string{send(t, s, "ann", "ben", "one").ID}
				clk.Add(time.Millisecond)
				ids = append(ids, send(t, s, "ben", "ann", "two").ID)
				clk.Add(time.Millisecond)
				ids = append(ids, send(t, s, "ann", "ben", "three").ID)
				var buf bytes.Buffer
				if err := s.Export(ctx, "ann", "", &buf); err != nil {
					t.Fatal(err)
				}
				var doc struct {
					Messages []struct {
						ID, ConversationID, SenderID, RecipientID string
						Body                                      *string
					}
				}
				if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, m := range doc.Messages {
					got = append(got, fmt.Sprintf("%s %s>%s %s", m.ConversationID, m.SenderID, m.RecipientID, *m.Body))
				}
				want := []string{"conversation:ann:ben user:ann>user:ben one", "conversation:ann:ben user:ben>user:ann two",
					"conversation:ann:ben user:ann>user:ben three"}
				if !slices.Equal(got, want) {
					t.Errorf("exported %v, want %v", got, want)
				}
				if n := unread(t, s, "ben"); n != 1 {
					t.Fatalf("ben's unread %d, want 1", n)
				}
				if err := s.DeleteAccount(ctx, "ann", "password1", erase); err != nil {
					t.Fatal(err)
				}
				settle(t, s)
				p, err := s.NewLoader().Messages(ctx, "ben", "ann", store.Window{First: 10})
				if err != nil {
					t.Fatal(err)
				}
				var bodies []string
				for _, m := range p.Items {
					body := "<deleted>"
					if m.Body() != nil {
						body = *m.Body()
					}
					bodies = append(bodies, body)
				}
				wantBodies, wantUnread := []string{"one", "two", "three"}, 1
				if erase {
					wantBodies, wantUnread = []string{"<deleted>", "two", "<deleted>"}, 0
				}
				if !slices.Equal(bodies, wantBodies) || !slices.Equal(idsOf(p.Items), ids) {
					t.Errorf("ben sees %v, want %v", bodies, wantBodies)
				}
				if n := unread(t, s, "ben"); n != wantUnread {
					t.Errorf("ben's unread %d, want %d", n, wantUnread)
				}
				if got := convsOf(t, s, "ben", false); !slices.Equal(got, []string{fmt.Sprintf("ann:%d", wantUnread)}) {
					t.Errorf("ben's conversations %v", got)
				}
				if got := convsOf(t, s, "ann", false); len(got) != 0 {
					t.Errorf("the deleted account's conversations %v, want none", got)
				}
				if _, err := s.SendMessage(ctx, "ben", "ann", "still there?", ""); !store.IsKind(err, store.KindNotFound) {
					t.Errorf("writing to a deleted account: %v, want NOT_FOUND", err)
				}
				// The repair keeps the deleted account without a mailbox.
				if err := s.RepairConversation(ctx, "ann", "ben"); err != nil {
					t.Fatal(err)
				}
				if got := convsOf(t, s, "ann", false); len(got) != 0 {
					t.Errorf("after a repair, the deleted account's conversations %v, want none", got)
				}
			})
		})
	}
}

// TestRebuildDerivesMailboxes loses every mailbox and rebuilds them from the conversations.
func TestRebuildDerivesMailboxes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clk := storetest.NewClock()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: clk.Now})
		signUp(t, s, "lea", "max", "ned")
		send(t, s, "lea", "max", "request")
		send(t, s, "ned", "lea", "another request")
		clk.Add(time.Millisecond)
		send(t, s, "lea", "ned", "accepted by replying")
		clk.Add(time.Millisecond)
		send(t, s, "ned", "lea", "unread")
		state := func() []string {
			var out []string
			for _, u := range []string{"lea", "max", "ned"} {
				out = append(out, fmt.Sprint(u, convsOf(t, s, u, false), convsOf(t, s, u, true), unread(t, s, u)))
			}
			return out
		}
		before := state()
		for _, u := range []string{"lea", "max", "ned"} {
			for _, suffix := range []string{"convs", "reqs", "unread", "runread", "state"} {
				if err := b.Client.Del(ctx, prefix+"{mb:"+u+"}:"+suffix).Err(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if lost := state(); slices.Equal(lost, before) {
			t.Fatalf("deleting the mailboxes changed nothing: %v", lost)
		}
		st, err := s.Rebuild(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after := state(); !slices.Equal(after, before) || st.Conversations != 2 {
			t.Errorf("rebuilt %d conversations: %v, want 2: %v", st.Conversations, after, before)
		}
	})
}

// TestMessageRefusedByItsConversationLeavesNoTrace: when the conversation refuses a message that
// the mailboxes took — a decline that reached the conversation after the send's checks, and its
// mailbox not yet — the write derives the mailboxes again, so the refused message counts nowhere.
func TestMessageRefusedByItsConversationLeavesNoTrace(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clk := storetest.NewClock()
		other := b.Client
		hook := &beforeScript{}
		b = b.Hooked(t, hook.hook())
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: clk.Now})
		signUp(t, s, "dan", "eve")
		send(t, s, "eve", "dan", "first")
		clk.Add(time.Millisecond)
		// The send's checks pass (their pipeline runs the rate limit's and the repair note's
		// scripts); then, before its write, half a decline: the conversation's step only.
		conv := prefix + "{m:dan:eve}"
		hook.arm(nil, func() {
			hook.arm(nil, func() {
				until := clk.Now().Add(time.Hour).UnixMilli()
				if err := other.HSet(ctx, conv, "d:dan", until).Err(); err != nil {
					t.Error(err)
				}
				if err := other.HDel(ctx, conv, "q:dan").Err(); err != nil {
					t.Error(err)
				}
			})
		})
		if _, err := s.SendMessage(ctx, "eve", "dan", "second", ""); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("a message the conversation refuses: %v, want FORBIDDEN", err)
		}
		if got := convsOf(t, s, "dan", true); len(got) != 0 {
			t.Errorf("dan's requests %v, want none: the conversation declined them", got)
		}
		p, err := s.NewLoader().Messages(ctx, "dan", "eve", store.Window{First: 10})
		if err != nil || p.Total != 1 {
			t.Errorf("the conversation holds %d messages (%v), want the first only", p.Total, err)
		}
	})
}

// keysAdded returns the keys under prefix that are not in before.
func keysAdded(t *testing.T, b storetest.Backend, prefix string, before []string) []string {
	t.Helper()
	var added []string
	for _, k := range allKeys(t, b, prefix+"*") {
		if !slices.Contains(before, k) {
			added = append(added, k)
		}
	}
	return added
}

// TestMarkingANonexistentConversationReadWritesNothing: markConversationRead is not rate limited
// (it only moves the viewer's read position), so marking read a conversation that does not
// exist — with any name, an account or not — must leave nothing behind: neither a field in the
// viewer's mailbox nor a key of the conversation (its revision counter), or one account could
// grow the keyspace without limit. The conversation's reads are unchanged.
func TestMarkingANonexistentConversationReadWritesNothing(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix})
		signUp(t, s, "dan", "eve")
		send(t, s, "eve", "dan", "hello")
		mailbox := prefix + "{mb:dan}:state"
		fields := func() []string {
			t.Helper()
			fs, err := b.Client.HKeys(ctx, mailbox).Result()
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(fs)
			return fs
		}
		before, beforeFields := allKeys(t, b, prefix+"*"), fields()
		for _, with := range []store.UserKey{"nobody", "ghost-1", "fay"} {
			if _, err := s.MarkConversationRead(ctx, "dan", with, ""); !store.IsKind(err, store.KindNotFound) {
				t.Errorf("marking read the conversation with %s: %v, want NOT_FOUND", with, err)
			}
		}
		if added := keysAdded(t, b, prefix, before); len(added) > 0 {
			t.Errorf("keys written by marking nonexistent conversations read: %q", added)
		}
		if got := fields(); !slices.Equal(got, beforeFields) {
			t.Errorf("dan's mailbox state %q, want %q", got, beforeFields)
		}
		// A conversation that exists, whose first message's step has not reached dan's mailbox
		// (here: taken out of it), is marked read and the mailbox derived again from it.
		mb := prefix + "{mb:dan}"
		if err := b.Client.ZRem(ctx, mb+":reqs", "eve").Err(); err != nil {
			t.Fatal(err)
		}
		if err := b.Client.Del(ctx, mb+":runread").Err(); err != nil {
			t.Fatal(err)
		}
		if got := convsOf(t, s, "dan", true); len(got) != 0 {
			t.Fatalf("dan's requests %v after the step was taken out, want none", got)
		}
		c, err := s.MarkConversationRead(ctx, "dan", "eve", "")
		if err != nil || c == nil || c.UnreadCount != 0 || c.LastMessage == nil || c.LastMessage.Text != "hello" {
			t.Fatalf("mark the conversation with eve read: %+v, %v", c, err)
		}
		if got, want := convsOf(t, s, "dan", true), []string{"eve:0"}; !slices.Equal(got, want) {
			t.Errorf("dan's requests %v, want %v: derived again, read", got, want)
		}
		send(t, s, "eve", "dan", "again")
		if got, want := convsOf(t, s, "dan", true), []string{"eve:1"}; !slices.Equal(got, want) {
			t.Errorf("dan's requests after another message %v, want %v", got, want)
		}
	})
}

// TestChangingANonexistentMessageWritesNothing: editing or deleting a message that does not
// exist — its id naming the viewer and any name, an account or not — is NOT_FOUND and leaves no
// key behind (neither the conversation's revision counter nor the other name's mailbox's), so
// that made-up ids do not grow the keyspace; someone else's message is FORBIDDEN and unchanged.
func TestChangingANonexistentMessageWritesNothing(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix})
		signUp(t, s, "dan", "eve")
		m := send(t, s, "eve", "dan", "hello")
		before := allKeys(t, b, prefix+"*")
		const id = "1796000000000abcdef"
		for _, gid := range []string{"message:dan:nobody:" + id, "message:aaa:dan:" + id, "message:dan:eve:" + id} {
			if _, err := s.EditMessage(ctx, "dan", gid, "edited"); !store.IsKind(err, store.KindNotFound) {
				t.Errorf("edit %s: %v, want NOT_FOUND", gid, err)
			}
			if err := s.DeleteMessage(ctx, "dan", gid); !store.IsKind(err, store.KindNotFound) {
				t.Errorf("delete %s: %v, want NOT_FOUND", gid, err)
			}
		}
		// Dan's first writes start his write limit's record.
		if added := keysAdded(t, b, prefix, append(before, prefix+"{u:dan}:rate")); len(added) > 0 {
			t.Errorf("keys written by changing messages that do not exist: %q", added)
		}
		if _, err := s.EditMessage(ctx, "dan", m.ID, "edited"); !store.IsKind(err, store.KindForbidden) {
			t.Errorf("dan edits eve's message: %v, want FORBIDDEN", err)
		}
		if err := s.DeleteMessage(ctx, "dan", m.ID); !store.IsKind(err, store.KindForbidden) {
			t.Errorf("dan deletes eve's message: %v, want FORBIDDEN", err)
		}
		if got, err := s.NewLoader().Message(ctx, "dan", m.ID); err != nil || got == nil || got.Text != "hello" || got.Deleted {
			t.Errorf("eve's message after dan's attempts: %+v, %v", got, err)
		}
	})
}

// TestBlockStopsEditingMessages: a block stops messages both ways, edits included — the blocked
// user cannot rewrite what the blocker already has, nor the blocker write through an edit — while
// deleting one's own message (which only takes text away) stays allowed.
func TestBlockStopsEditingMessages(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		signUp(t, s, "dan", "eve")
		fromEve := send(t, s, "eve", "dan", "hello")
		fromDan := send(t, s, "dan", "eve", "hi")
		if _, err := s.Block(ctx, "dan", "eve"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			who store.UserKey
			m   *store.Message
		}{{"eve", fromEve}, {"dan", fromDan}} {
			if _, err := s.EditMessage(ctx, c.who, c.m.ID, "rewritten"); !store.IsKind(err, store.KindForbidden) {
				t.Errorf("%s edits their message across a block: %v, want FORBIDDEN", c.who, err)
			}
			if got, err := s.NewLoader().Message(ctx, c.who, c.m.ID); err != nil || got == nil || got.Text != c.m.Text || got.EditedAt != nil {
				t.Errorf("%s's message after the refused edit: %+v, %v", c.who, got, err)
			}
		}
		if err := s.DeleteMessage(ctx, "eve", fromEve.ID); err != nil {
			t.Errorf("eve deletes her message across a block: %v", err)
		}
		if _, err := s.Unblock(ctx, "dan", "eve"); err != nil {
			t.Fatal(err)
		}
		if m, err := s.EditMessage(ctx, "dan", fromDan.ID, "hi again"); err != nil || m.Text != "hi again" {
			t.Errorf("dan edits his message once unblocked: %+v, %v", m, err)
		}
	})
}

// TestMarkConversationReadUpTo: marking a conversation read up to the newest message the reader
// has seen leaves what was sent after it unread, also in the same millisecond (where "up to now"
// cannot tell them apart); a position never moves back, one past now is now, and a message of
// another conversation is refused.
func TestMarkConversationReadUpTo(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		var ms atomic.Int64
		ms.Store(time.Now().UnixMilli())
		s := b.NewStore(t, store.Options{Now: func() time.Time { return time.UnixMilli(ms.Load()) }})
		signUp(t, s, "ann", "ben", "cat")
		send(t, s, "ann", "ben", "hi")
		ms.Add(1)
		send(t, s, "ben", "ann", "hello") // ben accepts
		ms.Add(1)
		m1 := send(t, s, "ann", "ben", "one") // the clock stands still from here
		if _, err := s.MarkConversationRead(ctx, "ben", "ann", m1.ID); err != nil {
			t.Fatal(err)
		}
		m2 := send(t, s, "ann", "ben", "two, in the same millisecond")
		if got := unread(t, s, "ben"); got != 1 {
			t.Fatalf("ben's unread count %d after reading up to m1, then m2 in the same millisecond; want 1", got)
		}
		if _, err := s.MarkConversationRead(ctx, "ben", "ann", m2.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.MarkConversationRead(ctx, "ben", "ann", m1.ID); err != nil { // back: no change
			t.Fatal(err)
		}
		if got := unread(t, s, "ben"); got != 0 {
			t.Fatalf("ben's unread count %d after reading up to m2, then up to m1; want 0", got)
		}
		// A position past now is now: a message sent later is unread.
		if _, err := s.MarkConversationRead(ctx, "ben", "ann", "message:ann:ben:9999999999999ffffff"); err != nil {
			t.Fatal(err)
		}
		ms.Add(1)
		send(t, s, "ann", "ben", "three")
		if got := unread(t, s, "ben"); got != 1 {
			t.Fatalf("ben's unread count %d after reading up to the year 2286, then a message; want 1", got)
		}
		mc := send(t, s, "cat", "ben", "a request")
		for _, upTo := range []string{mc.ID, "post:1", "message:ann:ben:x"} {
			if _, err := s.MarkConversationRead(ctx, "ben", "ann", upTo); !store.IsKind(err, store.KindInvalid) {
				t.Errorf("read up to %s: %v, want BAD_USER_INPUT", upTo, err)
			}
		}
		if got := unread(t, s, "ben"); got != 1 {
			t.Errorf("ben's unread count %d after refused reads, want 1", got)
		}
	})
}

// TestChangingAnotherPairsMessageLeavesNoRepair: deleting or editing a message of a conversation
// the viewer is not in is NOT_FOUND, and leaves nothing behind either, not even later: no repair
// job whose derivation would write the mailboxes of two made-up names once it runs.
func TestChangingAnotherPairsMessageLeavesNoRepair(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		var skew atomic.Int64
		clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: clock})
		signUp(t, s, "dan", "eve", "fay")
		send(t, s, "eve", "fay", "hello")
		settle(t, s)
		before := append(allKeys(t, b, prefix+"*"), prefix+"{u:dan}:rate")
		const id = "1796000000000abcdef"
		for _, gid := range []string{"message:aaa:bbb:" + id, "message:eve:fay:" + id, "message:ghost-1:ghost-2:" + id} {
			if _, err := s.EditMessage(ctx, "dan", gid, "edited"); !store.IsKind(err, store.KindNotFound) {
				t.Errorf("edit %s: %v, want NOT_FOUND", gid, err)
			}
			if err := s.DeleteMessage(ctx, "dan", gid); !store.IsKind(err, store.KindNotFound) {
				t.Errorf("delete %s: %v, want NOT_FOUND", gid, err)
			}
		}
		skew.Store(int64(store.RepairGrace + time.Minute))
		settle(t, s)
		if added := keysAdded(t, b, prefix, before); len(added) > 0 {
			t.Errorf("keys written by changing messages of others' conversations: %q", added)
		}
	})
}

// TestDeclineCountsWhatTheRequestHeldAsRead: declining a request counts every message it held as
// read, also one sent by a replica whose clock is ahead of the decliner's (or sent while the
// decline was in flight, its time after the one the decline read up to): such a message stayed
// unread in a conversation listed nowhere, and came back with the sender's next request after the
// cooldown, or with an accept, as unread.
func TestDeclineCountsWhatTheRequestHeldAsRead(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clk := storetest.NewClock()
		var ahead atomic.Int64
		ahead.Store(int64(2 * time.Second))
		aheadClock := func() time.Time { return clk.Now().Add(time.Duration(ahead.Load())) }
		opts := store.Options{Prefix: prefix, Now: clk.Now, Messages: store.MessageOptions{RequestCooldown: time.Hour}}
		s := b.NewStore(t, opts)
		opts.Now = aheadClock
		fast := b.NewStore(t, opts) // another replica, its clock 2 s ahead
		signUp(t, s, "dan", "eve")
		send(t, s, "eve", "dan", "buy my stuff")
		send(t, fast, "eve", "dan", "please")
		clk.Add(time.Second) // dan declines a second later, by his server's clock
		if _, err := s.DeclineMessageRequest(ctx, "dan", "eve"); err != nil {
			t.Fatal(err)
		}
		if c, err := s.NewLoader().ConversationWith(ctx, "dan", "eve"); err != nil || c == nil || c.UnreadCount != 0 || c.IsRequest {
			t.Errorf("dan's conversation with eve after his decline: %+v, %v; want nothing unread", c, err)
		}
		// After the cooldown, eve's next request holds her new message alone, derived again too.
		clk.Add(2 * time.Hour)
		ahead.Store(0)
		send(t, s, "eve", "dan", "me again")
		if got, want := convsOf(t, s, "dan", true), []string{"eve:1"}; !slices.Equal(got, want) {
			t.Errorf("dan's requests after the cooldown %v, want %v", got, want)
		}
		if err := s.RepairConversation(ctx, "dan", "eve"); err != nil {
			t.Fatal(err)
		}
		if got, want := convsOf(t, s, "dan", true), []string{"eve:1"}; !slices.Equal(got, want) {
			t.Errorf("dan's requests derived again %v, want %v", got, want)
		}
	})
}

// TestConversationsPageOnPastGoneEntries: a page of conversations whose every entry is gone (a
// mailbox listing a conversation before its first message is written, or after it is gone)
// lists none, and still says where it ended, so that paging reaches the conversations after it.
func TestConversationsPageOnPastGoneEntries(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix})
		signUp(t, s, "dan", "eve")
		send(t, s, "dan", "eve", "hello")
		for i, o := range []string{"gone-1", "gone-2"} { // newer than eve's, with no conversation
			if err := b.Client.ZAdd(ctx, prefix+"{mb:dan}:convs", rdb.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli() + int64(i)), Member: o}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		w := store.Window{First: 2}
		for page := 0; ; page++ {
			if page > 3 {
				t.Fatal("the pages do not end")
			}
			p, err := s.NewLoader().Conversations(ctx, "dan", w)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p.Items {
				got = append(got, string(c.With))
			}
			if !p.HasNext {
				break
			}
			if p.EndCursor() == "" {
				t.Fatalf("page %d (%d conversations) has a next page and no end cursor", page, len(p.Items))
			}
			w.After = p.EndCursor()
		}
		if !slices.Equal(got, []string{"eve"}) {
			t.Errorf("dan's conversations paged: %v, want [eve]", got)
		}
	})
}

// TestMarkReadCoversMessagesFromAClockAhead: a message sent by a replica whose clock runs ahead
// of the reader's is read when the reader marks the conversation read, with or without upTo: the
// position covers every message the conversation holds, not only those up to the reader's clock
// (which left it unread until that clock passed its time). A made-up id past the last message
// still reads no further than it.
func TestMarkReadCoversMessagesFromAClockAhead(t *testing.T) {
	for _, tc := range []struct {
		name string
		upTo func(m *store.Message) string
	}{
		{"without upTo", func(*store.Message) string { return "" }},
		{"up to it", func(m *store.Message) string { return m.ID }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				prefix := storetest.Prefix()
				clk := storetest.NewClock()
				opts := store.Options{Prefix: prefix, Now: clk.Now}
				s := b.NewStore(t, opts)
				opts.Now = func() time.Time { return clk.Now().Add(2 * time.Second) }
				fast := b.NewStore(t, opts) // another replica, its clock 2 s ahead
				signUp(t, s, "ann", "ben")
				send(t, s, "ann", "ben", "hi")
				send(t, s, "ben", "ann", "hello") // ben accepts
				clk.Add(time.Millisecond)
				ahead := send(t, fast, "ann", "ben", "from the future")
				if got := unread(t, s, "ben"); got != 1 {
					t.Fatalf("ben's unread count %d, want 1", got)
				}
				c, err := s.MarkConversationRead(ctx, "ben", "ann", tc.upTo(ahead))
				if err != nil {
					t.Fatal(err)
				}
				if got := unread(t, s, "ben"); got != 0 || c.UnreadCount != 0 {
					t.Errorf("ben's unread count %d (conversation %d) after marking read, want 0", got, c.UnreadCount)
				}
				// The conversation and the mailbox agree: derived again, nothing comes back.
				if err := s.RepairConversation(ctx, "ann", "ben"); err != nil {
					t.Fatal(err)
				}
				if got := unread(t, s, "ben"); got != 0 {
					t.Errorf("ben's unread count %d once derived again, want 0", got)
				}
				// A made-up id far past the last message reads no further than it.
				if _, err := s.MarkConversationRead(ctx, "ben", "ann", "message:ann:ben:9999999999999ffffff"); err != nil {
					t.Fatal(err)
				}
				clk.Add(3 * time.Second) // past ahead's time
				send(t, s, "ann", "ben", "later")
				if got := unread(t, s, "ben"); got != 1 {
					t.Errorf("ben's unread count %d after a made-up upTo, then a message; want 1", got)
				}
			})
		})
	}
}

// TestMessageRequestsTotalLeavesOutBlocked: the total of messageRequests counts the requests the
// viewer can page: those of users the viewer blocks are left out of the count as they are of the
// list (a block of a user with no request changes nothing), on every page, and the page still
// costs the round trips of one without blocks.
func TestMessageRequestsTotalLeavesOutBlocked(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		b, rt := b.Counted(t)
		clk := storetest.NewClock()
		s := b.NewStore(t, store.Options{Now: clk.Now})
		signUp(t, s, "dan", "eve", "fay", "gus", "hal")
		for _, from := range []string{"eve", "fay", "gus"} {
			clk.Add(time.Millisecond)
			send(t, s, from, "dan", "hello from "+from)
		}
		for _, blocked := range []string{"fay", "hal"} {
			if _, err := s.Block(ctx, "dan", uk(blocked)); err != nil {
				t.Fatal(err)
			}
		}
		sess, err := s.LogIn(ctx, "dan", "password1")
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.AuthenticateViewer(ctx, sess.Token)
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{1, 2, 100} {
			var paged []string
			after := ""
			for {
				l := s.NewLoader()
				l.SetBlocks(v.Blocks)
				before := rt.Count()
				p, err := l.MessageRequests(ctx, "dan", store.Window{First: size, After: after})
				if err != nil {
					t.Fatal(err)
				}
				if n := rt.Count() - before; n > 2 {
					t.Errorf("a page of requests took %d round trips, want at most 2", n)
				}
				if p.Total != 2 {
					t.Errorf("pages of %d: total %d, want 2 (gus and eve; fay is blocked)", size, p.Total)
				}
				for _, c := range p.Items {
					paged = append(paged, string(c.With))
				}
				if !p.HasNext {
					break
				}
				after = p.EndCursor()
			}
			if want := []string{"gus", "eve"}; !slices.Equal(paged, want) {
				t.Errorf("pages of %d: %v, want %v", size, paged, want)
			}
		}
	})
}

// TestDeclinedRequestCannotBeEdited: a request the recipient declined is gone for them, so its
// sender can no longer edit its messages (FORBIDDEN), which would show them again in the
// conversation the recipient can still open; deleting them stays open. A new request after the
// cooldown is the sender's to edit, and once the recipient accepts the conversation every message
// is. A conversation declined before the last message a decline held was kept (no x:) refuses
// the same edits, by the recipient's read position.
func TestDeclinedRequestCannotBeEdited(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clk := storetest.NewClock()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: clk.Now, Messages: store.MessageOptions{RequestCooldown: time.Hour}})
		signUp(t, s, "dan", "eve", "fay")
		first := send(t, s, "eve", "dan", "buy my stuff")
		clk.Add(time.Millisecond)
		second := send(t, s, "eve", "dan", "please")
		clk.Add(time.Millisecond)
		if _, err := s.DeclineMessageRequest(ctx, "dan", "eve"); err != nil {
			t.Fatal(err)
		}
		for _, m := range []*store.Message{first, second} {
			if _, err := s.EditMessage(ctx, "eve", m.ID, "rewritten"); !store.IsKind(err, store.KindForbidden) {
				t.Errorf("eve edits %q of her declined request: %v, want FORBIDDEN", m.Text, err)
			}
			if got, err := s.NewLoader().Message(ctx, "dan", m.ID); err != nil || got == nil || got.Text != m.Text || got.EditedAt != nil {
				t.Errorf("dan reads %q after the refused edit: %+v, %v", m.Text, got, err)
			}
		}
		if err := s.DeleteMessage(ctx, "eve", second.ID); err != nil {
			t.Errorf("eve deletes a message of her declined request: %v", err)
		}
		// After the cooldown, a new request: its message is hers to edit, the declined ones stay not.
		clk.Add(2 * time.Hour)
		again := send(t, s, "eve", "dan", "me again")
		if m, err := s.EditMessage(ctx, "eve", again.ID, "me again, edited"); err != nil || m.Text != "me again, edited" {
			t.Errorf("eve edits her new request: %+v, %v", m, err)
		}
		if _, err := s.EditMessage(ctx, "eve", first.ID, "rewritten"); !store.IsKind(err, store.KindForbidden) {
			t.Errorf("eve edits her declined request while a new one is pending: %v, want FORBIDDEN", err)
		}
		// Accepted, the conversation is whole again.
		if _, err := s.AcceptMessageRequest(ctx, "dan", "eve"); err != nil {
			t.Fatal(err)
		}
		if m, err := s.EditMessage(ctx, "eve", first.ID, "rewritten"); err != nil || m.Text != "rewritten" {
			t.Errorf("eve edits her first message once dan accepted: %+v, %v", m, err)
		}
		// A decline stored before x: was kept: the read position bounds what it held.
		fromFay := send(t, s, "fay", "dan", "hi dan")
		if _, err := s.DeclineMessageRequest(ctx, "dan", "fay"); err != nil {
			t.Fatal(err)
		}
		c := b.NewClient(t)
		if n, err := c.HDel(ctx, prefix+"{m:dan:fay}", "x:dan").Result(); err != nil || n != 1 {
			t.Fatalf("dropping x:dan: %d, %v", n, err)
		}
		if _, err := s.EditMessage(ctx, "fay", fromFay.ID, "rewritten"); !store.IsKind(err, store.KindForbidden) {
			t.Errorf("fay edits her request declined before x: was kept: %v, want FORBIDDEN", err)
		}
	})
}

// TestMarkReadAgreesWhenAStepIsInFlight: marking read while a message from a replica whose
// clock is ahead is in the conversation, and its step has not reached the reader's mailbox yet
// (a cluster runs them on different masters), leaves the mailbox's read position where the
// conversation's is, so that the step, when it comes, does not count the message unread in a
// conversation that says it is read.
func TestMarkReadAgreesWhenAStepIsInFlight(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clk := storetest.NewClock()
		opts := store.Options{Prefix: prefix, Now: clk.Now}
		s := b.NewStore(t, opts)
		opts.Now = func() time.Time { return clk.Now().Add(2 * time.Second) }
		fast := b.NewStore(t, opts) // another replica, its clock 2 s ahead
		signUp(t, s, "ann", "ben")
		send(t, s, "ann", "ben", "hi")
		send(t, s, "ben", "ann", "hello") // ben accepts
		clk.Add(time.Millisecond)
		ahead := send(t, fast, "ann", "ben", "from the future")
		_, _, id, err := store.ParseMessageID(ahead.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Its step in ben's mailbox not there yet: as before it came.
		c := b.NewClient(t)
		if n, err := c.ZRem(ctx, prefix+"{mb:ben}:unread", "ann:"+id).Result(); err != nil || n != 1 {
			t.Fatalf("taking the step back: %d, %v", n, err)
		}
		if _, err := s.MarkConversationRead(ctx, "ben", "ann", ""); err != nil {
			t.Fatal(err)
		}
		conv, err := c.HGet(ctx, prefix+"{m:ann:ben}", "r:ben").Result()
		if err != nil {
			t.Fatal(err)
		}
		mb, err := c.HGet(ctx, prefix+"{mb:ben}:state", "ann").Result()
		if err != nil {
			t.Fatal(err)
		}
		if parts := strings.Fields(mb); len(parts) != 3 || parts[2] != conv || conv < id {
			t.Errorf("ben's read position: %q in the conversation, %q in his mailbox; want both past %s", conv, mb, id)
		}
	})
}

// TestMessageAfterMarkReadInTheSameMillisecond marks a conversation read and receives another
// message within the same millisecond (a frozen clock): the message sent after stays unread, in
// the conversation's count and the mailbox's total, and the one sent before counts as read.
func TestMessageAfterMarkReadInTheSameMillisecond(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
		s := b.NewStore(t, store.Options{Prefix: storetest.Prefix(), Now: func() time.Time { return at }, WriteLimit: -1})
		signUp(t, s, "dan", "eve")
		send(t, s, "eve", "dan", "hi")
		send(t, s, "dan", "eve", "hi eve") // a reply accepts the conversation
		send(t, s, "eve", "dan", "hello")
		if _, err := s.MarkConversationRead(ctx, "dan", "eve", ""); err != nil {
			t.Fatal(err)
		}
		if n := unread(t, s, "dan"); n != 0 {
			t.Fatalf("dan's unread messages after marking read: %d, want 0", n)
		}
		send(t, s, "eve", "dan", "again") // the same millisecond
		if n := unread(t, s, "dan"); n != 1 {
			t.Errorf("dan's unread messages after another in the same millisecond: %d, want 1", n)
		}
		if got := convsOf(t, s, "dan", false); !slices.Equal(got, []string{"eve:1"}) {
			t.Errorf("dan's conversations %v, want [eve:1]", got)
		}
	})
}

// TestMessageFromAClockBehindAfterMarkReadStaysUnread sends a message through a replica whose
// clock runs 2 s behind, after the recipient marked the conversation read on a replica with the
// right time: the message came after the mark, so it is unread — in the conversation, in the
// mailbox, and once both are derived again — and it sorts after every message before it.
func TestMessageFromAClockBehindAfterMarkReadStaysUnread(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clk := storetest.NewClock()
		opts := store.Options{Prefix: prefix, Now: clk.Now}
		s := b.NewStore(t, opts)
		opts.Now = func() time.Time { return clk.Now().Add(-2 * time.Second) }
		slow := b.NewStore(t, opts) // another replica, its clock 2 s behind
		signUp(t, s, "ann", "ben")
		send(t, s, "ann", "ben", "hi")
		send(t, s, "ben", "ann", "hello") // ben accepts
		clk.Add(time.Millisecond)
		send(t, s, "ann", "ben", "unread")
		if _, err := s.MarkConversationRead(ctx, "ben", "ann", ""); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Millisecond)
		late := send(t, slow, "ann", "ben", "sent after the mark")
		c, err := s.NewLoader().ConversationWith(ctx, "ben", "ann")
		if err != nil {
			t.Fatal(err)
		}
		if got := unread(t, s, "ben"); got != 1 || c == nil || c.UnreadCount != 1 {
			t.Fatalf("ben's unread count %d (conversation %+v), want 1", got, c)
		}
		if err := s.RepairConversation(ctx, "ann", "ben"); err != nil {
			t.Fatal(err)
		}
		if got := unread(t, s, "ben"); got != 1 {
			t.Fatalf("ben's unread count %d once derived again, want 1", got)
		}
		page, err := s.NewLoader().Messages(ctx, "ben", "ann", store.Window{Last: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 1 || page.Items[0].ID != late.ID {
			t.Fatalf("the newest message is not the late one: %+v", page.Items)
		}
	})
}
