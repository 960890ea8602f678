package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

const (
	lightSub = `subscription{postPublished{title}}` // cost 2
	// heavySub costs 1 + 1 + 1 + 1 + 50 × 3 = 154: every event reads 50 posts of the author.
	heavySub = `subscription{postPublished{title author{posts(first:50){edges{node{title}}}}}}`
)

// try starts a subscription on c and returns the code of its refusal, or "" once it runs, which
// it sees as the process's subscriber count reaching running. When the count is there already, a
// subscription that runs would not show, so it waits for the refusal.
func try(t *testing.T, a *api, c *wsClient, id, query string, running int) string {
	t.Helper()
	expectRefusal := a.h.LiveSubscriptions() >= running
	c.start(t, id, query, nil)
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				t.Fatalf("the socket closed: %v", c.err)
			}
			var r response
			if m.ID != id || m.Type != "next" || json.Unmarshal(m.Payload, &r) != nil || r.code() == "" {
				t.Fatalf("subscription %s: unexpected %+v", id, m)
			}
			if _, done := c.result(t, id); !done {
				t.Fatalf("refused subscription %s was not completed", id)
			}
			return r.code()
		case <-time.After(5 * time.Millisecond):
			if !expectRefusal && a.h.LiveSubscriptions() >= running {
				return ""
			}
		}
	}
	t.Fatalf("subscription %s neither ran nor was refused within %s", id, wait)
	return ""
}

// TestLiveBudgets checks that the work accepted for subscriptions is bounded per socket, per
// client address (anonymous subscriptions held to less) and per process, that the streams one
// address holds are capped, and that what a subscription takes is given back when it ends.
func TestLiveBudgets(t *testing.T) {
	const refused = httpapi.CodeTooManySubscriptions
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		dial := func(t *testing.T, a *api, token string) *wsClient {
			t.Helper()
			c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.close)
			c.init(t, token)
			return c
		}
		type step struct {
			socket  int // index into the test's sockets
			query   string
			running int    // subscribers of the process once it runs
			want    string // refusal code, "" to run
		}
		tests := []struct {
			name    string
			live    httpapi.Live
			sockets []bool // signed in?
			steps   []step
		}{
			{"an anonymous socket has a smaller budget than a signed-in one",
				httpapi.Live{MaxAnonSocketCost: 100, MaxSocketCost: 400},
				[]bool{false, true},
				[]step{{0, heavySub, 1, refused}, {0, lightSub, 1, ""}, {1, heavySub, 2, ""}, {1, heavySub, 3, ""}, {1, heavySub, 3, refused}}},
			{"an address's anonymous subscriptions share a budget; signed-in ones have more",
				httpapi.Live{MaxAnonAddressCost: 5, MaxAddressCost: 9},
				[]bool{false, false, true},
				[]step{{0, lightSub, 1, ""}, {1, lightSub, 2, ""}, {1, lightSub, 2, refused}, {2, lightSub, 3, ""}, {2, lightSub, 4, ""}, {2, lightSub, 4, refused}}},
			{"the process has a budget",
				httpapi.Live{MaxProcessCost: 300, MaxAddressCost: -1, MaxAnonAddressCost: -1},
				[]bool{true, true},
				[]step{{0, heavySub, 1, ""}, {1, heavySub, 1, refused}, {1, lightSub, 2, ""}}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a := serve(t, b.NewStore(t, store.Options{}), tt.live)
				token, _ := a.signUp("alice")
				var socks []*wsClient
				for _, signedIn := range tt.sockets {
					tok := ""
					if signedIn {
						tok = token
					}
					socks = append(socks, dial(t, a, tok))
				}
				for i, s := range tt.steps {
					if code := try(t, a, socks[s.socket], string(rune('a'+i)), s.query, s.running); code != s.want {
						t.Fatalf("step %d (%+v): refusal %q, want %q", i+1, s, code, s.want)
					}
				}
				// Closing the sockets gives everything back: the same steps pass again.
				for _, c := range socks {
					c.close()
				}
				waitSubscribers(t, a, 0)
				for i := range socks {
					tok := ""
					if tt.sockets[i] {
						tok = token
					}
					socks[i] = dial(t, a, tok)
				}
				for i, s := range tt.steps {
					if code := try(t, a, socks[s.socket], string(rune('a'+i)), s.query, s.running); code != s.want {
						t.Fatalf("again, step %d (%+v): refusal %q, want %q", i+1, s, code, s.want)
					}
				}
			})
		}

		t.Run("an event stream is held to the socket budget", func(t *testing.T) {
			a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{MaxAnonSocketCost: 100})
			c := subscribeSSE(t, a.srv.URL, "", heavySub, nil)
			defer c.close()
			if r, _ := c.result(t); r.code() != refused {
				t.Fatalf("a heavy anonymous subscription over SSE: %+v, want %s", r, refused)
			}
		})

		t.Run("an address holds a bounded number of streams", func(t *testing.T) {
			a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{MaxStreamsPerAddress: 2})
			first, _ := dial(t, a, ""), dial(t, a, "")
			if _, res, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil); err == nil || res == nil || res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
				t.Fatalf("a third WebSocket: %v, %+v; want 429 with Retry-After", err, res)
			}
			if _, err := openSSE(a.srv.URL, "", lightSub, nil); err == nil {
				t.Fatal("an event stream over the cap was accepted")
			}
			first.close()
			waitFor(t, "a stream's place to be freed", func() bool {
				c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
				if err != nil {
					return false
				}
				c.close()
				return true
			})
		})
	})
}

// TestLiveBudgetHoldsOffTheIssuesAmplification replays the attack that prompted the budgets: 50
// anonymous sockets from one address each asking for 100 subscriptions that read an author's
// posts on every event. With the default limits the process takes at most the anonymous budget
// of one address.
func TestLiveBudgetHoldsOffTheIssuesAmplification(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		q := `subscription{postPublished{id title author{name posts(first:100){edges{node{id title score}}}}}}` // cost 506
		accepted, streams := 0, 0
		for range 50 {
			c, res, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
			if err != nil {
				if res == nil || res.StatusCode != http.StatusTooManyRequests {
					t.Fatalf("dial: %v", err)
				}
				continue
			}
			defer c.close()
			streams++
			c.init(t, "")
			for i := range 100 {
				if try(t, a, c, string(rune('a'+i%26))+string(rune('0'+i/26)), q, accepted+1) == "" {
					accepted++
				}
			}
		}
		if max := httpapi.DefaultLive.MaxAnonAddressCost / 506; accepted > max {
			t.Fatalf("%d heavy anonymous subscriptions accepted from one address, want at most %d", accepted, max)
		}
		if streams > httpapi.DefaultLive.MaxStreamsPerAddress {
			t.Fatalf("%d streams from one address, want at most %d", streams, httpapi.DefaultLive.MaxStreamsPerAddress)
		}
		t.Logf("%d streams, %d subscriptions accepted of 5,000 asked", streams, accepted)
	})
}
