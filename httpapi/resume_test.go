package httpapi_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// event waits for the subscription's next result and returns it with its cursor, failing on
// errors, on the end of the stream and on a result without a cursor (or, over server-sent
// events, whose frame id differs from it).
func event(t *testing.T, s sub) response {
	t.Helper()
	r, done := s.result(t)
	if done || len(r.Errors) > 0 {
		t.Fatalf("want an event, got %+v (ended %v)", r, done)
	}
	if r.Extensions.Cursor == "" {
		t.Fatalf("the event %s has no cursor", r.Data)
	}
	if _, ok := s.(*sseClient); ok && r.FrameID != r.Extensions.Cursor {
		t.Fatalf("frame id %q, cursor %q", r.FrameID, r.Extensions.Cursor)
	}
	return r
}

// bodies reads n events and returns what each one's data holds at field.
func bodies(t *testing.T, s sub, n int) []string {
	t.Helper()
	var out []string
	for range n {
		r := event(t, s)
		out = append(out, string(r.Data))
	}
	return out
}

// writer returns a second server process on a's Redis where the backend allows one, else a.
func writer(t *testing.T, a *api, b storetest.Backend) *api {
	if c, ok := b.Client.(*rdb.Client); ok {
		return peerOf(t, a, c.Options().Addr)
	}
	return a
}

// TestResumeFromCursor cuts a subscriber off on every transport, writes through another server
// meanwhile, and resumes with the last cursor, on that other server: every missed event arrives
// once, in order, and then live events follow without a duplicate at the switch-over.
func TestResumeFromCursor(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		w := writer(t, a, b)
		alice, _ := a.signUp("alice")
		bob, _ := a.signUp("bob")
		q := `subscription($p: ID!, $after: String) { commentAdded(postId: $p, after: $after) { body } }`
		type resumer func(t *testing.T, post, cursor string) sub
		cases := map[string]resumer{}
		for _, proto := range protos {
			cases[proto] = func(t *testing.T, post, cursor string) sub {
				return subscribe(t, w.srv.URL, proto, "", q, map[string]any{"p": post, "after": cursor})
			}
		}
		cases["sse with Last-Event-ID"] = func(t *testing.T, post, cursor string) sub {
			c, err := openSSEFrom(w.srv.URL, "", cursor, q, map[string]any{"p": post})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		for name, resume := range cases {
			t.Run(name, func(t *testing.T) {
				proto := name
				if strings.HasPrefix(name, "sse") {
					proto = protoSSE
				}
				post := w.createPost(alice, "thread "+name)
				s := subscribe(t, a.srv.URL, proto, "", q, map[string]any{"p": post})
				waitSubscribers(t, a, 1)
				w.comment(bob, post, "", "c1")
				first := event(t, s)
				s.close()
				waitSubscribers(t, a, 0)
				for i := 2; i <= 4; i++ {
					w.comment(bob, post, "", fmt.Sprintf("c%d", i))
				}
				s2 := resume(t, post, first.Extensions.Cursor)
				defer s2.close()
				got := bodies(t, s2, 3)
				waitSubscribers(t, w, 1)
				w.comment(bob, post, "", "c5")
				w.comment(bob, post, "", "c6")
				got = append(got, bodies(t, s2, 2)...)
				for i, g := range got {
					if want := fmt.Sprintf(`{"commentAdded":{"body":"c%d"}}`, i+2); g != want {
						t.Errorf("event %d = %s, want %s", i+1, g, want)
					}
				}
			})
		}
	})
}

// TestResumeOnAnotherServerAfterItsServerStops subscribes on server A over every transport and
// receives some events; then A stops (its live events end the stream with UNAVAILABLE, and its
// HTTP server closes) while events are written through server B, on the same Redis; the client
// resumes on B with its last cursor (after, or Last-Event-ID over server-sent events) and receives
// every event exactly once, in order: the missed ones from the log, then live ones.
func TestResumeOnAnotherServerAfterItsServerStops(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{}) // server B
		alice, _ := w.signUp("alice")
		bob, _ := w.signUp("bob")
		q := `subscription($p: ID!, $after: String) { commentAdded(postId: $p, after: $after) { body } }`
		type resumer func(t *testing.T, post, cursor string) sub
		cases := map[string]resumer{}
		for _, proto := range protos {
			cases[proto] = func(t *testing.T, post, cursor string) sub {
				return subscribe(t, w.srv.URL, proto, "", q, map[string]any{"p": post, "after": cursor})
			}
		}
		cases["sse with Last-Event-ID"] = func(t *testing.T, post, cursor string) sub {
			c, err := openSSEFrom(w.srv.URL, "", cursor, q, map[string]any{"p": post})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		for name, resume := range cases {
			t.Run(name, func(t *testing.T) {
				proto := name
				if strings.HasPrefix(name, "sse") {
					proto = protoSSE
				}
				// Server A: another process on the same Redis and key prefix, over its own client.
				st, err := store.New(context.Background(), b.NewClient(t), w.store.Options())
				if err != nil {
					t.Fatal(err)
				}
				a := serve(t, st, httpapi.Live{})
				post := w.createPost(alice, "thread "+name)
				s := subscribe(t, a.srv.URL, proto, "", q, map[string]any{"p": post})
				waitSubscribers(t, a, 1)
				w.comment(bob, post, "", "c1")
				w.comment(bob, post, "", "c2")
				got := []string{string(event(t, s).Data)}
				last := event(t, s)
				got = append(got, string(last.Data))

				// A stops, as TestStoppingServerEndsSubscriptionsWithAnError stops it: its live
				// events end, which ends the stream with a last UNAVAILABLE result; then its HTTP
				// server closes.
				if err := a.hub.Close(); err != nil {
					t.Fatal(err)
				}
				if r, done := s.result(t); done || r.code() != httpapi.CodeUnavailable {
					t.Fatalf("server A stopping: got %+v, done %v; want a last result with %s", r, done, httpapi.CodeUnavailable)
				}
				if _, done := s.result(t); !done {
					t.Fatal("server A stopping: the stream did not complete")
				}
				s.close()
				a.srv.Close()

				for i := 3; i <= 5; i++ { // while the client has no server
					w.comment(bob, post, "", fmt.Sprintf("c%d", i))
				}
				s2 := resume(t, post, last.Extensions.Cursor)
				got = append(got, bodies(t, s2, 3)...)
				waitSubscribers(t, w, 1)
				w.comment(bob, post, "", "c6")
				w.comment(bob, post, "", "c7")
				got = append(got, bodies(t, s2, 2)...)
				for i, g := range got {
					if want := fmt.Sprintf(`{"commentAdded":{"body":"c%d"}}`, i+1); g != want {
						t.Errorf("event %d = %s, want %s", i+1, g, want)
					}
				}
				s2.close()
				waitSubscribers(t, w, 0)
			})
		}
	})
}

// TestResumePostChangedSendsTheCurrentStateOnce checks postChanged's replay: however many
// changes a subscriber missed, it gets the post as it is now, once.
func TestResumePostChangedSendsTheCurrentStateOnce(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		w := writer(t, a, b)
		alice, _ := a.signUp("alice")
		bob, _ := a.signUp("bob")
		post := w.createPost(alice, "post")
		q := `subscription($p: ID!, $after: String) { postChanged(postId: $p, after: $after) { commentCount } }`
		s := subscribe(t, a.srv.URL, protoTransportWS, "", q, map[string]any{"p": post})
		waitSubscribers(t, a, 1)
		w.comment(bob, post, "", "one")
		first := event(t, s)
		s.close()
		waitSubscribers(t, a, 0)
		w.comment(bob, post, "", "two")
		w.comment(bob, post, "", "three")
		w.comment(bob, post, "", "four")
		s2 := subscribe(t, w.srv.URL, protoTransportWS, "", q, map[string]any{"p": post, "after": first.Extensions.Cursor})
		defer s2.close()
		if r := event(t, s2); string(r.Data) != `{"postChanged":{"commentCount":4}}` {
			t.Fatalf("the replay: %s, want the current post once", r.Data)
		}
		waitSubscribers(t, w, 1)
		w.comment(bob, post, "", "five")
		if r := event(t, s2); string(r.Data) != `{"postChanged":{"commentCount":5}}` {
			t.Fatalf("after the replay: %s, want the next change", r.Data)
		}
	})
}

// TestResumeErrors checks a cursor that is malformed, older than the events kept, or newer than
// any event.
func TestResumeErrors(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		alice, _ := a.signUp("alice")
		post := a.createPost(alice, "post")
		a.comment(alice, post, "", "one") // the thread's log now exists
		q := `subscription($p: ID!, $after: String) { commentAdded(postId: $p, after: $after) { body } }`
		for _, tc := range []struct{ after, code string }{
			{"not a cursor", httpapi.CodeBadUserInput},
			{"1-0", httpapi.CodeResyncRequired},
			{"99999999999999-0", httpapi.CodeResyncRequired},
		} {
			for _, proto := range protos {
				s := subscribe(t, a.srv.URL, proto, "", q, map[string]any{"p": post, "after": tc.after})
				r, _ := s.result(t)
				if r.code() != tc.code {
					t.Errorf("%s after %q: %+v, want %s", proto, tc.after, r, tc.code)
				}
				s.close()
			}
		}
		waitSubscribers(t, a, 0)
	})
}

// gatedRedis starts a redis-server of the test's own (skipping, or failing under
// REQUIRE_REAL_REDIS=1, without redis-server), and returns it with a client of its own (direct),
// a proxy in front of it (g, which can refuse new connections) and a client through the proxy.
func gatedRedis(t *testing.T) (srv *storetest.Server, direct *rdb.Client, g *storetest.Proxy, viaGate *rdb.Client) {
	t.Helper()
	storetest.RealServer(t)
	srv, err := storetest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	direct = rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = direct.Close() })
	g = storetest.NewProxy(t, srv.Addr)
	viaGate = rdb.NewPlainClient(&rdb.Options{Addr: g.Addr()})
	t.Cleanup(func() { _ = viaGate.Close() })
	return srv, direct, g, viaGate
}

// TestServerCatchesUpAfterLosingItsRedisSubscription breaks the subscriber server's pub/sub
// connection and keeps it from coming back while events are written through another server:
// when it reconnects, the server catches its subscribers up from the channel's log, so each gets
// every event once, in order, without reconnecting.
func TestServerCatchesUpAfterLosingItsRedisSubscription(t *testing.T) {
	srv, direct, g, viaGate := gatedRedis(t)
	ctx := context.Background()
	st, err := store.New(ctx, viaGate, store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	a := serve(t, st, httpapi.Live{})
	w := peerOf(t, a, srv.Addr)
	alice, _ := w.signUp("alice")
	q := `subscription($p: ID!) { commentAdded(postId: $p) { body } }`
	for _, proto := range protos {
		post := w.createPost(alice, "thread "+proto)
		s := subscribe(t, a.srv.URL, proto, "", q, map[string]any{"p": post})
		waitSubscribers(t, a, 1)
		w.comment(alice, post, "", "c1")
		event(t, s)

		g.Refuse(true)
		if n, err := direct.ClientKillByFilter(ctx, "TYPE", "pubsub", "LADDR", srv.Addr).Result(); err != nil || n != 1 {
			t.Fatalf("CLIENT KILL TYPE pubsub = %d, %v; want 1", n, err)
		}
		for i := 2; i <= 4; i++ { // while the subscriber's server cannot hear them
			w.comment(alice, post, "", fmt.Sprintf("c%d", i))
		}
		g.Refuse(false)
		got := bodies(t, s, 3)
		w.comment(alice, post, "", "c5")
		got = append(got, bodies(t, s, 1)...)
		for i, b := range got {
			if want := fmt.Sprintf(`{"commentAdded":{"body":"c%d"}}`, i+2); b != want {
				t.Errorf("%s: event %d = %s, want %s", proto, i+1, b, want)
			}
		}
		s.close()
		waitSubscribers(t, a, 0)
	}
}

// TestCatchUpBeforeTheFirstEventStartsAtTheSubscription: a new subscriber whose server loses its
// Redis subscription before the first event gets, once it reconnects, every event published after
// the subscription was made. The catch-up of a subscriber that has received nothing starts at the
// channel's log head, which was read after the subscription was made: an event published between
// the two, while the connection was down, was passed over. The head is now read before.
func TestCatchUpBeforeTheFirstEventStartsAtTheSubscription(t *testing.T) {
	srv, direct, g, viaGate := gatedRedis(t)
	ctx := context.Background()
	var a, w *api
	var alice, post string
	var broke atomic.Int64 // the comment published while the connection is down, once per protocol
	n := 0
	// The break: no new connection gets through the gate, the pub/sub connection is killed, and a
	// comment is written through the other server, which the subscriber's server cannot hear.
	brk := func() {
		g.Refuse(true)
		if k, err := direct.ClientKillByFilter(ctx, "TYPE", "pubsub", "LADDR", srv.Addr).Result(); err != nil || k != 1 {
			t.Errorf("CLIENT KILL TYPE pubsub = %d, %v; want 1", k, err)
		}
		w.comment(alice, post, "", fmt.Sprintf("c%d", n))
		broke.Store(int64(n))
	}
	// A log head read once the subscription is made breaks the connection before it is sent.
	viaGate.AddHook(storetest.Before(func(cmds []rdb.Cmder) {
		for _, c := range cmds {
			if c.Name() == "xrevrange" && broke.Load() == 0 && a.hub.Stats().Subscribers > 0 {
				brk()
			}
		}
	}))
	st, err := store.New(ctx, viaGate, store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	a = serve(t, st, httpapi.Live{})
	w = peerOf(t, a, srv.Addr)
	alice, _ = w.signUp("alice")
	q := `subscription($p: ID!) { commentAdded(postId: $p) { body } }`
	for i, proto := range protos {
		n = i + 1
		post = w.createPost(alice, "thread "+proto)
		broke.Store(0)
		s := subscribe(t, a.srv.URL, proto, "", q, map[string]any{"p": post})
		waitSubscribers(t, a, 1)
		if broke.Load() == 0 {
			brk() // the head was read before the subscription: the break comes after both
		}
		g.Refuse(false)
		if got, want := bodies(t, s, 1)[0], fmt.Sprintf(`{"commentAdded":{"body":"c%d"}}`, n); got != want {
			t.Errorf("%s: the first event %s, want %s", proto, got, want)
		}
		s.close()
		waitSubscribers(t, a, 0)
	}
}

// TestResumersWithTheSameCursorEachGetTheirReplay: clients resuming from the same cursor with the
// same document — the clients of a server that stopped all reconnect with the last event they
// got — each get the events they missed, whether the cursor is a variable named after, one named
// otherwise or a literal of the document: a subscription resumed from a cursor runs alone, and
// never joins a run that replayed for another client before it came.
func TestResumersWithTheSameCursorEachGetTheirReplay(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		alice, _ := a.signUp("alice")
		bob, _ := a.signUp("bob")
		for _, tc := range []struct {
			name  string
			query func(cursor string) (string, map[string]any)
		}{
			{"variable named after", func(c string) (string, map[string]any) {
				return `subscription($p: ID!, $after: String) { commentAdded(postId: $p, after: $after) { body } }`, map[string]any{"after": c}
			}},
			{"variable named otherwise", func(c string) (string, map[string]any) {
				return `subscription($p: ID!, $from: String) { commentAdded(postId: $p, after: $from) { body } }`, map[string]any{"from": c}
			}},
			{"literal", func(c string) (string, map[string]any) {
				return `subscription($p: ID!) { commentAdded(postId: $p, after: "` + c + `") { body } }`, map[string]any{}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				post := a.createPost(alice, "thread "+tc.name)
				s := subscribe(t, a.srv.URL, protoTransportWS, "", `subscription($p: ID!) { commentAdded(postId: $p) { body } }`, map[string]any{"p": post})
				waitSubscribers(t, a, 1)
				a.comment(bob, post, "", "c1")
				first := event(t, s)
				s.close()
				waitSubscribers(t, a, 0)
				a.comment(bob, post, "", "c2")
				a.comment(bob, post, "", "c3")
				q, vars := tc.query(first.Extensions.Cursor)
				vars["p"] = post
				want := []string{`{"commentAdded":{"body":"c2"}}`, `{"commentAdded":{"body":"c3"}}`}
				var subs []sub
				for i := range 2 { // the second comes while the first runs
					s := subscribe(t, a.srv.URL, protoTransportWS, "", q, vars)
					defer s.close()
					subs = append(subs, s)
					if got := bodies(t, s, 2); !slices.Equal(got, want) {
						t.Fatalf("resumer %d got %q, want %q", i+1, got, want)
					}
				}
				waitSubscribers(t, a, 2)
				a.comment(bob, post, "", "c4")
				for i, s := range subs {
					if got := bodies(t, s, 1); got[0] != `{"commentAdded":{"body":"c4"}}` {
						t.Errorf("resumer %d then got %s, want c4", i+1, got[0])
					}
				}
			})
		}
	})
}
