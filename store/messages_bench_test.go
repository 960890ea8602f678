package store_test

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// messageWorld signs up reader and n users who each have an accepted conversation with reader,
// with one unread message in it.
func messageWorld(t testing.TB, s *store.Store, reader string, n int) []string {
	t.Helper()
	ctx := context.Background()
	if _, err := s.SignUp(ctx, reader, "password1"); err != nil {
		t.Fatal(err)
	}
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("%s_p%d", reader, i)
		if _, err := s.SignUp(ctx, names[i], "password1"); err != nil {
			t.Fatal(err)
		}
		send(t, s, reader, names[i], "hi")
		send(t, s, names[i], reader, "hello")
	}
	return names
}

// messageRoundTrips measures the round trips of the message operations on a store whose client
// rt counts: sending (on the send lease the peer's message in messageWorld granted, and by
// fresh, a process that holds no lease, through the checks), marking read, the first page of
// conversations (with their users), of requests and of a conversation's messages.
func messageRoundTrips(t testing.TB, s, fresh *store.Store, rt *storetest.RoundTrips, reader string, peers []string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	out := map[string]int64{}
	measure := func(name string, f func() error) {
		before := rt.Count()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = rt.Count() - before
	}
	// A message first, so that the peer's lease is fresh however long the world took to build
	// (a lease holds a minute): checked if it ended, on it if not.
	send(t, s, peers[0], reader, "first")
	measure("send", func() error { _, err := s.SendMessage(ctx, uk(peers[0]), uk(reader), "again", ""); return err })
	measure("sendChecked", func() error { _, err := fresh.SendMessage(ctx, uk(peers[1]), uk(reader), "again", ""); return err })
	measure("markRead", func() error { _, err := s.MarkConversationRead(ctx, uk(reader), uk(peers[0]), ""); return err })
	measure("conversations", func() error {
		l := s.NewLoader()
		p, err := l.Conversations(ctx, uk(reader), store.Window{First: 100})
		if err != nil {
			return err
		}
		for _, c := range p.Items { // the users, as Conversation.with and lastMessage read them
			for _, uid := range []store.UserKey{c.With, c.LastMessage.Sender, c.LastMessage.Recipient} {
				if u, err := l.User(ctx, uid); err != nil || u == nil {
					return fmt.Errorf("user %s: %v %v", uid, u, err)
				}
			}
		}
		return nil
	})
	measure("requests", func() error {
		_, err := s.NewLoader().MessageRequests(ctx, uk(reader), store.Window{First: 100})
		return err
	})
	measure("messages", func() error {
		_, err := s.NewLoader().Messages(ctx, uk(reader), uk(peers[0]), store.Window{Last: 20})
		return err
	})
	measure("unreadCount", func() error { _, err := s.NewLoader().UnreadMessageCount(ctx, uk(reader)); return err })
	return out
}

// TestMessageRoundTrips checks the round trips of messages, and that they do not grow with the
// number of conversations: sending on a send lease is one (the message with both mailboxes, its
// events, its repair note and its settling, and the sender's limits), through the checks two
// (the checks, then the rest), marking read one, a first page of conversations two.
func TestMessageRoundTrips(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		b, rt := b.Counted(t)
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix})
		fresh := func() *store.Store { return b.NewStore(t, store.Options{Prefix: prefix}) }
		small := messageRoundTrips(t, s, fresh(), rt, "few", messageWorld(t, s, "few", 2))
		large := messageRoundTrips(t, s, fresh(), rt, "many", messageWorld(t, s, "many", 30))
		if !maps.Equal(small, large) {
			t.Errorf("round trips grew with the conversations: %v, then %v", small, large)
		}
		for op, limit := range map[string]int64{"send": 1, "sendChecked": 2, "markRead": 1, "conversations": 2, "requests": 2, "messages": 2, "unreadCount": 1} {
			if small[op] > limit {
				t.Errorf("%s took %d round trips, want at most %d", op, small[op], limit)
			}
		}
	})
}

// BenchmarkMessages measures sending a message, marking a conversation read and reading the
// first page of 100 conversations on a real Redis, with the round trips each takes
// (roundtrips/op); run it with -benchmem.
func BenchmarkMessages(b *testing.B) {
	ctx := context.Background()
	srv := storetest.RealServer(b)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	b.Cleanup(func() { _ = rdb.Close() })
	rt := &storetest.RoundTrips{}
	rdb.AddHook(rt)
	s, err := store.New(ctx, rdb, store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		b.Fatal(err)
	}
	peers := messageWorld(b, s, "reader", 100)
	run := func(name string, f func(i int) error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			before := rt.Count()
			n := 0
			for i := 0; b.Loop(); i++ {
				if err := f(i); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(rt.Count()-before)/float64(n), "roundtrips/op")
		})
	}
	run("send", func(i int) error {
		_, err := s.SendMessage(ctx, uk(peers[i%len(peers)]), "reader", "a message", "")
		return err
	})
	run("markRead", func(i int) error {
		_, err := s.MarkConversationRead(ctx, "reader", uk(peers[i%len(peers)]), "")
		return err
	})
	run("conversations=100", func(int) error {
		l := s.NewLoader()
		p, err := l.Conversations(ctx, "reader", store.Window{First: 100})
		if err == nil && len(p.Items) != 100 {
			err = fmt.Errorf("%d conversations, want 100", len(p.Items))
		}
		for _, c := range p.Items {
			if _, err := l.User(ctx, c.With); err != nil {
				return err
			}
		}
		return err
	})
}
