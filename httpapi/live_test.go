package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

var protos = []string{protoTransportWS, protoGraphQLWS, protoSSE}

// serve runs the real handler over st, with live events of its own, with the given live
// settings.
func serve(t *testing.T, st *store.Store, settings httpapi.Live) *api {
	t.Helper()
	hub := live.New(st, live.Options{})
	h := httpapi.New(httpapi.Config{Store: st, Hub: hub, Live: settings})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = hub.Close() }) // first: ends the streams that srv.Close would wait for
	return &api{t: t, srv: srv, h: h, store: st, hub: hub}
}

// peerOf returns a second server process beside a: its own Redis client and store on the same
// Redis and key prefix, and its own handler.
func peerOf(t *testing.T, a *api, addr string) *api {
	t.Helper()
	rc := rdb.NewPlainClient(&rdb.Options{Addr: addr})
	t.Cleanup(func() { _ = rc.Close() })
	st, err := store.New(context.Background(), rc, a.store.Options())
	if err != nil {
		t.Fatalf("peer store: %v", err)
	}
	return serve(t, st, httpapi.Live{})
}

// addrOf returns the address of a single-node backend, skipping the test on others.
func addrOf(t *testing.T, b storetest.Backend) string {
	t.Helper()
	c, ok := b.Client.(*rdb.Client)
	if !ok {
		t.Skip("needs a single-node backend")
	}
	return c.Options().Addr
}

// keepWriting calls write(0), write(1), … every interval on a goroutine of its own until stop,
// which returns once the last write is done: events that keep coming while a test works.
func keepWriting(interval time.Duration, write func(i int)) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-quit:
				return
			case <-time.After(interval):
			}
			write(i)
		}
	}()
	return func() { close(quit); <-done }
}

// waitSubscribers waits until a's process has n local subscribers on confirmed channels.
func waitSubscribers(t *testing.T, a *api, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d subscribers", n), func() bool {
		return a.h.LiveSubscriptions() == n && (n == 0) == (a.hub.Stats().Subscribers == 0)
	})
}

// stopped waits until operation id, which the client stopped, has ended on the server, leaving
// remaining subscribers on a. The legacy graphql-ws answers stop with complete; on
// graphql-transport-ws nothing more comes for the id.
func (c *wsClient) stopped(t *testing.T, a *api, id string, remaining int) {
	t.Helper()
	if c.proto == protoGraphQLWS {
		if _, done := c.result(t, id); !done {
			t.Fatalf("the stopped operation %s was not completed", id)
		}
	}
	waitSubscribers(t, a, remaining)
}

type livePost struct {
	ID         string
	Title      string
	Upvotes    int
	Downvotes  int
	ViewerVote string
	Author     struct{ Name string }
}

// TestSubscriptionsAcrossServers subscribes on one server process and writes through another
// sharing the Redis, over each transport, for every subscription of the contract but
// commentAdded (whose comments arrive with the comments feature).
func TestSubscriptionsAcrossServers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		w := peerOf(t, a, addrOf(t, b))
		alice, _ := w.signUp("alice")
		bob, _ := w.signUp("bob")
		carol, _ := w.signUp("carol")
		post := w.createPost(alice, "the post")
		vote := func(dir string) {
			w.do(bob, `mutation($p:ID!,$d:VoteDirection!){votePost(postId:$p,direction:$d){id}}`,
				map[string]any{"p": post, "d": dir}).decode(t, &struct{}{})
		}

		for _, proto := range protos {
			t.Run(proto, func(t *testing.T) {
				t.Run("postChanged", func(t *testing.T) {
					s := subscribe(t, a.srv.URL, proto, bob,
						`subscription($p:ID!){postChanged(postId:$p){id upvotes downvotes viewerVote author{name}}}`,
						map[string]any{"p": post})
					defer func() { s.close(); waitSubscribers(t, a, 0) }()
					waitSubscribers(t, a, 1)
					// Each event is read fresh, the viewer's own vote too: a loader shared
					// between events would repeat the first one's viewerVote.
					for _, want := range []livePost{
						{ID: post, Upvotes: 1, ViewerVote: "UP"},
						{ID: post, Downvotes: 1, ViewerVote: "DOWN"},
						{ID: post, ViewerVote: "NONE"},
					} {
						vote(want.ViewerVote)
						var d struct{ PostChanged livePost }
						next(t, s, &d)
						want.Author.Name = "alice"
						if d.PostChanged != want {
							t.Errorf("postChanged = %+v, want %+v", d.PostChanged, want)
						}
					}
				})
				t.Run("postPublished in a group", func(t *testing.T) {
					s := subscribe(t, a.srv.URL, proto, "",
						`subscription{postPublished(group:"Go"){title author{name}}}`, nil)
					defer func() { s.close(); waitSubscribers(t, a, 0) }()
					waitSubscribers(t, a, 1)
					w.createPost(carol, "elsewhere", "rust")
					w.createPost(carol, "in go "+proto, "go")
					var d struct{ PostPublished livePost }
					next(t, s, &d)
					if d.PostPublished.Title != "in go "+proto || d.PostPublished.Author.Name != "carol" {
						t.Errorf("postPublished = %+v, want carol's post in go", d.PostPublished)
					}
				})
				t.Run("postPublished everywhere", func(t *testing.T) {
					s := subscribe(t, a.srv.URL, proto, "", `subscription{postPublished{title}}`, nil)
					defer func() { s.close(); waitSubscribers(t, a, 0) }()
					waitSubscribers(t, a, 1)
					w.createPost(carol, "anywhere "+proto)
					var d struct{ PostPublished livePost }
					next(t, s, &d)
					if d.PostPublished.Title != "anywhere "+proto {
						t.Errorf("postPublished = %+v", d.PostPublished)
					}
				})
				t.Run("feed", func(t *testing.T) {
					s := subscribe(t, a.srv.URL, proto, bob, `subscription{feed{title author{name}}}`, nil)
					defer func() { s.close(); waitSubscribers(t, a, 0) }()
					waitSubscribers(t, a, 1)
					// bob follows alice only after subscribing, through the other server.
					follow := `mutation($u:ID!){follow(userId:$u){id}}`
					w.do(bob, follow, map[string]any{"u": "user:alice"}).decode(t, &struct{}{})
					defer func() {
						w.do(bob, `mutation($u:ID!){unfollow(userId:$u){id}}`, map[string]any{"u": "user:alice"}).decode(t, &struct{}{})
					}()
					w.createPost(carol, "not followed")
					w.createPost(alice, "followed "+proto)
					var d struct{ Feed livePost }
					next(t, s, &d)
					if d.Feed.Title != "followed "+proto || d.Feed.Author.Name != "alice" {
						t.Errorf("feed = %+v, want alice's post", d.Feed)
					}
				})
			})
		}
	})
}

func TestSubscriptionEndsWhenPostIsDeleted(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		w := peerOf(t, a, addrOf(t, b))
		alice, _ := w.signUp("alice")
		bob, _ := w.signUp("bob")
		for _, tc := range []struct{ proto, sub, event string }{
			{protoTransportWS, `subscription($p:ID!){postChanged(postId:$p){id}}`, `mutation($p:ID!){votePost(postId:$p,direction:UP){id}}`},
			{protoGraphQLWS, `subscription($p:ID!){postChanged(postId:$p){id}}`, `mutation($p:ID!){votePost(postId:$p,direction:UP){id}}`},
			{protoSSE, `subscription($p:ID!){postChanged(postId:$p){id}}`, `mutation($p:ID!){votePost(postId:$p,direction:UP){id}}`},
			{protoTransportWS, `subscription($p:ID!){commentAdded(postId:$p){id}}`, `mutation($p:ID!){createComment(postId:$p,body:"hi"){id}}`},
			{protoSSE, `subscription($p:ID!){commentAdded(postId:$p){id}}`, `mutation($p:ID!){createComment(postId:$p,body:"hi"){id}}`},
		} {
			proto := tc.proto
			post := w.createPost(alice, "short-lived")
			s := subscribe(t, a.srv.URL, proto, "", tc.sub, map[string]any{"p": post})
			waitSubscribers(t, a, 1)
			// A first event shows the stream running, past the resolver's check that the post
			// exists (a post deleted before that check is NOT_FOUND).
			w.do(bob, tc.event, map[string]any{"p": post}).decode(t, &struct{}{})
			next(t, s, &struct{}{})
			w.do(alice, `mutation($p:ID!){deletePost(id:$p)}`, map[string]any{"p": post}).decode(t, &struct{}{})
			if r, done := s.result(t); !done || len(r.Errors) > 0 {
				t.Errorf("%s: after the delete got %+v, done %v; want a plain completion", proto, r, done)
			}
			s.close()
			waitSubscribers(t, a, 0)
		}
	})
}

func TestSubscriptionErrors(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		tests := []struct {
			name, token, query string
			vars               map[string]any
			code               string
		}{
			{"feed needs a viewer", "", `subscription{feed{id}}`, nil, httpapi.CodeUnauthenticated},
			{"malformed post id", "", `subscription{postChanged(postId:"user:x"){id}}`, nil, httpapi.CodeBadUserInput},
			{"missing post", "", `subscription{postChanged(postId:"post:999"){id}}`, nil, httpapi.CodeNotFound},
			{"missing post's comments", "", `subscription{commentAdded(postId:"post:999"){id}}`, nil, httpapi.CodeNotFound},
			{"bad group", "", `subscription{postPublished(group:"a b"){id}}`, nil, httpapi.CodeBadUserInput},
		}
		for _, proto := range protos {
			for _, tc := range tests {
				t.Run(proto+"/"+tc.name, func(t *testing.T) {
					before := a.hub.Stats().Subscribes
					s := subscribe(t, a.srv.URL, proto, tc.token, tc.query, tc.vars)
					defer s.close()
					r, _ := s.result(t)
					if r.code() != tc.code {
						t.Errorf("got %+v, want code %s", r, tc.code)
					}
					// Refused before the hub subscribes a channel: a stream of a post that does not
					// exist sends Redis no SUBSCRIBE (and no UNSUBSCRIBE), each of which waits for
					// the hub's pub/sub connection as every new channel's subscriber does.
					if n := a.hub.Stats().Subscribes - before; n != 0 {
						t.Errorf("%d SUBSCRIBEs sent for a refused stream, want none", n)
					}
				})
			}
		}
		waitSubscribers(t, a, 0)
	})
}

func TestSubscriptionNeedsAStreamingTransport(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		if r := a.do("", `subscription{postPublished{id}}`, nil); r.code() != httpapi.CodeStreamingRequired {
			t.Errorf("a subscription over plain POST: %+v, want %s", r, httpapi.CodeStreamingRequired)
		}
	})
}

func TestWebSocketAuthentication(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		token, _ := a.signUp("alice")
		for _, proto := range []string{protoTransportWS, protoGraphQLWS} {
			for _, tc := range []struct {
				name, auth string
			}{
				{"unknown token", "Bearer nope"},
				{"not a bearer token", "Basic YWxpY2U6cHc="},
			} {
				t.Run(proto+"/"+tc.name, func(t *testing.T) {
					c, _, err := dialWS(context.Background(), a.srv.URL, proto, nil)
					if err != nil {
						t.Fatal(err)
					}
					defer c.close()
					p := fmt.Sprintf(`{"Authorization":%q}`, tc.auth)
					c.send(t, wsMsg{Type: "connection_init", Payload: []byte(p)})
					if code := c.closeStatus(t); code != httpapi.CloseForbidden {
						t.Errorf("close code %d, want %d", code, httpapi.CloseForbidden)
					}
				})
			}
			t.Run(proto+"/valid token", func(t *testing.T) {
				c, _, err := dialWS(context.Background(), a.srv.URL, proto, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer c.close()
				c.init(t, token)
				c.start(t, "v", `{viewer{name}}`, nil)
				r, _ := c.result(t, "v")
				var d struct{ Viewer struct{ Name string } }
				r.decode(t, &d)
				if d.Viewer.Name != "alice" {
					t.Errorf("viewer = %+v, want alice", d.Viewer)
				}
			})
		}
	})
}

func TestWebSocketSessions(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		token, _ := a.signUp("alice")
		viewer := func(c *wsClient, id string) response {
			c.start(t, id, `{viewer{name}}`, nil)
			r, _ := c.result(t, id)
			if _, done := c.result(t, id); !done {
				t.Fatalf("operation %s did not complete", id)
			}
			return r
		}
		t.Run("token in the upgrade request", func(t *testing.T) {
			h := http.Header{"Authorization": {"Bearer " + token}}
			c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, h)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			c.init(t, "")
			var d struct{ Viewer *struct{ Name string } }
			viewer(c, "1").decode(t, &d)
			if d.Viewer == nil || d.Viewer.Name != "alice" {
				t.Errorf("viewer = %+v, want alice", d.Viewer)
			}
		})
		t.Run("bad token in the upgrade request", func(t *testing.T) {
			h := http.Header{"Authorization": {"Bearer nope"}}
			c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, h)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			c.send(t, initMsg(""))
			if code := c.closeStatus(t); code != httpapi.CloseForbidden {
				t.Errorf("close code %d, want %d", code, httpapi.CloseForbidden)
			}
		})
		signedIn := func(t *testing.T, session string) *wsClient {
			t.Helper()
			c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.close)
			c.init(t, session)
			var d struct{ Viewer *struct{ Name string } }
			viewer(c, "1").decode(t, &d)
			if d.Viewer == nil {
				t.Fatal("no viewer while the session is on")
			}
			return c
		}
		t.Run("the session expires while the socket is open", func(t *testing.T) {
			session, _ := a.signUp("bob")
			c := signedIn(t, session)
			// An expiry is not announced: the session is gone, and each operation finds it.
			user, id, _ := store.SessionOf(session)
			if err := b.Client.HDel(context.Background(), a.store.Options().Prefix+"{u:"+string(user)+"}", "s:"+id).Err(); err != nil {
				t.Fatal(err)
			}
			if r := viewer(c, "2"); r.code() != httpapi.CodeUnauthenticated {
				t.Errorf("a read after the expiry: %+v, want %s", r, httpapi.CodeUnauthenticated)
			}
			c.start(t, "3", `mutation{createPost(input:{title:"after the expiry"}){id}}`, nil)
			if r, _ := c.result(t, "3"); r.code() != httpapi.CodeUnauthenticated {
				t.Errorf("a write after the expiry: %+v, want %s", r, httpapi.CodeUnauthenticated)
			}
		})
		t.Run("logOut closes the socket", func(t *testing.T) {
			session, _ := a.signUp("carol")
			c := signedIn(t, session)
			a.do(session, `mutation{logOut}`, nil).decode(t, &struct{}{})
			if code := c.closeStatus(t); code != httpapi.CloseForbidden {
				t.Errorf("close code %d after logOut, want %d", code, httpapi.CloseForbidden)
			}
		})
	})
}

func TestWebSocketInitTimeout(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{InitTimeout: 50 * time.Millisecond})
		for _, proto := range []string{protoTransportWS, protoGraphQLWS} {
			c, _, err := dialWS(context.Background(), a.srv.URL, proto, nil)
			if err != nil {
				t.Fatal(err)
			}
			if code := c.closeStatus(t); code != httpapi.CloseInitTimeout {
				t.Errorf("%s: close code %d, want %d", proto, code, httpapi.CloseInitTimeout)
			}
			c.close()
		}
	})
}

func TestWebSocketClosesOnBadInitPayload(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		for _, proto := range []string{protoTransportWS, protoGraphQLWS} {
			c, _, err := dialWS(context.Background(), a.srv.URL, proto, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.send(t, wsMsg{Type: "connection_init", Payload: []byte(`"not an object"`)})
			if code := c.closeStatus(t); code != httpapi.CloseInvalidMessage {
				t.Errorf("%s: close code %d, want %d", proto, code, httpapi.CloseInvalidMessage)
			}
			c.close()
		}
	})
}

func TestWebSocketKeepAlive(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{KeepAlive: 20 * time.Millisecond})
		for _, proto := range []string{protoTransportWS, protoGraphQLWS} {
			t.Run(proto, func(t *testing.T) {
				c, _, err := dialWS(context.Background(), a.srv.URL, proto, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer c.close()
				c.init(t, "")
				waitFor(t, "keep-alives", func() bool { return c.pings.Load() >= 3 })
				select {
				case <-c.done:
					t.Fatalf("a client that answers keep-alives was disconnected: %v", c.err)
				default:
				}
			})
		}
		t.Run("a silent graphql-transport-ws client is dropped", func(t *testing.T) {
			c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			c.mute.Store(true)
			c.init(t, "")
			c.closeStatus(t) // fails the test unless the server drops the socket
		})
	})
}

func TestSubscriptionCapPerSocket(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{MaxSubscriptions: 2})
		token, _ := a.signUp("alice")
		for _, proto := range []string{protoTransportWS, protoGraphQLWS} {
			t.Run(proto, func(t *testing.T) {
				c, _, err := dialWS(context.Background(), a.srv.URL, proto, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { c.close(); waitSubscribers(t, a, 0) }()
				c.init(t, token)
				q := `subscription{postPublished{title}}`
				c.start(t, "1", q, nil)
				c.start(t, "2", q, nil)
				waitSubscribers(t, a, 2)
				c.start(t, "3", q, nil)
				if r, _ := c.result(t, "3"); r.code() != httpapi.CodeTooManySubscriptions {
					t.Fatalf("a third subscription: %+v, want %s", r, httpapi.CodeTooManySubscriptions)
				}
				if _, done := c.result(t, "3"); !done {
					t.Fatal("the refused subscription was not completed")
				}
				// Queries are not subscriptions: they still run.
				c.start(t, "q", `{viewer{name}}`, nil)
				if r, _ := c.result(t, "q"); len(r.Errors) > 0 {
					t.Fatalf("a query on a full socket: %+v", r.Errors)
				}
				if _, done := c.result(t, "q"); !done {
					t.Fatal("the query was not completed")
				}
				// Ending one frees its place.
				c.stop(t, "1")
				c.stopped(t, a, "1", 1)
				c.start(t, "4", q, nil)
				waitSubscribers(t, a, 2)
				a.createPost(token, "to both")
				got := map[string]bool{}
				for range 2 { // the two subscriptions' results come in either order
					m := c.recv(t)
					if m.Type != "next" && m.Type != "data" {
						t.Fatalf("got %+v, want a result", m)
					}
					got[m.ID] = true
				}
				if !got["2"] || !got["4"] {
					t.Errorf("results for %v, want 2 and 4", got)
				}
			})
		}
	})
}

func TestWebSocketOrigins(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{AllowedOrigins: []string{"*.example.com", "https://app.example.org"}})
		host := strings.TrimPrefix(a.srv.URL, "http://")
		for _, tc := range []struct {
			origin string
			ok     bool
		}{
			{"", true}, // not a browser
			{"http://" + host, true},
			{"https://chat.example.com", true},
			{"https://app.example.org", true},
			{"http://app.example.org", false}, // the pattern names the scheme
			{"https://evil.example.net", false},
			{"null", false},
		} {
			h := http.Header{}
			if tc.origin != "" {
				h.Set("Origin", tc.origin)
			}
			c, res, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, h)
			if tc.ok != (err == nil) {
				t.Errorf("origin %q: err = %v, want allowed %v", tc.origin, err, tc.ok)
			}
			if err == nil {
				c.close()
			} else if res == nil || res.StatusCode != http.StatusForbidden {
				t.Errorf("origin %q: response %+v, want 403", tc.origin, res)
			}
		}
	})
}

func TestOperationsOverWebSocketReadFreshData(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		alice, _ := a.signUp("alice")
		bob, _ := a.signUp("bob")
		c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.close()
		c.init(t, alice)
		c.start(t, "m", `mutation{createPost(input:{title:"over ws"}){id title}}`, nil)
		r, _ := c.result(t, "m")
		var m struct{ CreatePost struct{ ID, Title string } }
		r.decode(t, &m)
		c.result(t, "m") // complete
		q := `query($p:ID!){post(id:$p){upvotes}}`
		for i, want := range []int{0, 1} {
			id := fmt.Sprint("q", i)
			c.start(t, id, q, map[string]any{"p": m.CreatePost.ID})
			r, _ := c.result(t, id)
			c.result(t, id)
			var d struct{ Post struct{ Upvotes int } }
			r.decode(t, &d)
			if d.Post.Upvotes != want {
				t.Errorf("query %d: upvotes %d, want %d", i, d.Post.Upvotes, want)
			}
			a.do(bob, `mutation($p:ID!){votePost(postId:$p,direction:UP){id}}`, map[string]any{"p": m.CreatePost.ID}).decode(t, &struct{}{})
		}
	})
}

func TestStoppingServerEndsSubscriptionsWithAnError(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		for _, proto := range protos {
			a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
			s := subscribe(t, a.srv.URL, proto, "", `subscription{postPublished{id}}`, nil)
			waitSubscribers(t, a, 1)
			if err := a.hub.Close(); err != nil {
				t.Fatal(err)
			}
			r, done := s.result(t)
			if done || r.code() != httpapi.CodeUnavailable {
				t.Errorf("%s: got %+v, done %v; want a last result with %s", proto, r, done, httpapi.CodeUnavailable)
			}
			if _, done := s.result(t); !done {
				t.Errorf("%s: the stream did not complete", proto)
			}
			s.close()
		}
	})
}

// TestDisconnectStormLeaksNothing drops hundreds of subscribers abruptly, over every transport
// and at every stage, while events flow, then checks that goroutines, local subscribers and Redis
// subscriptions all return to where they were. It is not parallel: it counts goroutines.
func TestDisconnectStormLeaksNothing(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			// The per-address limits off: the storm's drops are released asynchronously, and on a
			// loaded machine the next opens would meet a budget still held (429); leaks are what
			// this test is about (the limits have tests of their own).
			a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{MaxStreamsPerAddress: -1, MaxAddressCost: -1, MaxAnonAddressCost: -1})
			alice, _ := a.signUp("alice")
			bob, _ := a.signUp("bob")
			post := a.createPost(alice, "popular")
			q := `subscription($p:ID!){postChanged(postId:$p){id upvotes viewerVote author{name}}}`
			vars := map[string]any{"p": post}
			vote := func(dir string) {
				a.do(bob, `mutation($p:ID!,$d:VoteDirection!){votePost(postId:$p,direction:$d){id}}`,
					map[string]any{"p": post, "d": dir}).decode(t, &struct{}{})
			}
			// open starts one subscription; it reports errors rather than failing, since the
			// storm runs it on many goroutines.
			open := func(proto string, stage int) (drop func(), err error) {
				if proto == protoSSE {
					s, err := openSSE(a.srv.URL, alice, q, vars)
					if err != nil {
						return nil, err
					}
					return s.close, nil
				}
				c, _, err := dialWS(context.Background(), a.srv.URL, proto, nil)
				if err != nil {
					return nil, err
				}
				if stage > 0 {
					_ = c.write(initMsg(alice))
				}
				if stage > 1 {
					<-c.msgs // the ack, or the end of the socket
					_ = c.write(startMsg(proto, "1", q, vars))
				}
				return c.close, nil
			}

			// Warm up: the hub's connection and the HTTP client's pools outlive the storm.
			for _, proto := range protos {
				drop, err := open(proto, 2)
				if err != nil {
					t.Fatal(err)
				}
				waitSubscribers(t, a, 1)
				drop()
				waitSubscribers(t, a, 0)
			}
			http.DefaultTransport.(*http.Transport).CloseIdleConnections()
			base, _ := storetest.Goroutines()

			// Subscribers that are fully in place, with an event under way, vanish at once.
			var drops []func()
			for i := range 60 {
				drop, err := open(protos[i%len(protos)], 2)
				if err != nil {
					t.Fatal(err)
				}
				drops = append(drops, drop)
			}
			waitSubscribers(t, a, 60)
			vote("UP")
			for _, drop := range drops {
				drop()
			}

			// A storm: subscribers come and go at every stage while events keep coming.
			stopVoting := keepWriting(2*time.Millisecond, func(i int) {
				a.do(bob, `mutation($p:ID!,$d:VoteDirection!){votePost(postId:$p,direction:$d){id}}`,
					map[string]any{"p": post, "d": []string{"DOWN", "UP"}[i%2]})
			})
			var wg sync.WaitGroup
			for w := range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 15 {
						n := w*15 + i
						drop, err := open(protos[n%len(protos)], n%3)
						if err != nil {
							t.Error(err)
							return
						}
						drop()
					}
				}()
			}
			wg.Wait()
			stopVoting()

			waitSubscribers(t, a, 0)
			channel := a.store.Options().Prefix + "{p:" + strings.TrimPrefix(post, "post:") + "}:ev:changed"
			waitFor(t, "Redis to drop the channel", func() bool {
				n, err := b.Client.PubSubNumSub(context.Background(), channel).Result()
				return err == nil && n[channel] == 0
			})
			http.DefaultTransport.(*http.Transport).CloseIdleConnections()
			storetest.WaitGoroutines(t, base, wait)
		})
	}
}

// TestResubscribesAfterKilledRedisConnectionRealRedis kills the subscriber process's pub/sub
// connection on a redis-server of its own and checks that later writes through the other process
// still arrive, over each transport.
func TestResubscribesAfterKilledRedisConnectionRealRedis(t *testing.T) {
	storetest.RealServer(t) // skips (or fails under REQUIRE_REAL_REDIS=1) without redis-server
	srv, err := storetest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	rc := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	defer rc.Close()
	st, err := store.New(context.Background(), rc, store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	a := serve(t, st, httpapi.Live{})
	w := peerOf(t, a, srv.Addr)
	alice, _ := w.signUp("alice")
	ctx := context.Background()
	channel := st.Options().Prefix + "{r:all}:ev:posts"
	for _, proto := range protos {
		s := subscribe(t, a.srv.URL, proto, "", `subscription{postPublished{title}}`, nil)
		waitSubscribers(t, a, 1)
		if n, err := rc.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); err != nil || n != 1 {
			t.Fatalf("CLIENT KILL TYPE pubsub = %d, %v; want 1", n, err)
		}
		waitFor(t, "the resubscription", func() bool {
			n, err := rc.PubSubNumSub(ctx, channel).Result()
			return err == nil && n[channel] == 1
		})
		w.createPost(alice, "after the kill "+proto)
		var d struct{ PostPublished livePost }
		next(t, s, &d)
		if d.PostPublished.Title != "after the kill "+proto {
			t.Errorf("%s: got %+v", proto, d.PostPublished)
		}
		s.close()
		waitSubscribers(t, a, 0)
	}
}

// TestSubscriptionBytesPerSocket checks that the documents of one socket's open subscriptions are
// bounded in bytes: padded documents are refused once the socket holds the limit, and freed bytes
// can be used again.
func TestSubscriptionBytesPerSocket(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{MaxSocketBytes: 20 << 10})
		c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { c.close(); waitSubscribers(t, a, 0) }()
		c.init(t, "")
		padded := `subscription{postPublished{title}} # ` + strings.Repeat("x", 8<<10)
		c.start(t, "1", padded, nil)
		c.start(t, "2", padded, nil)
		waitSubscribers(t, a, 2)
		c.start(t, "3", padded, nil)
		if r, _ := c.result(t, "3"); r.code() != httpapi.CodeTooManySubscriptions {
			t.Fatalf("a third 8 KiB document on a 20 KiB socket: %+v, want %s", r, httpapi.CodeTooManySubscriptions)
		}
		if _, done := c.result(t, "3"); !done {
			t.Fatal("the refused subscription was not completed")
		}
		c.stop(t, "1")
		c.stopped(t, a, "1", 1)
		c.start(t, "4", padded, nil)
		waitSubscribers(t, a, 2)
	})
}
