package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSubscribersShareOneExecution subscribes several clients with the same document and
// variables: those that read a viewer field share one execution per viewer (all anonymous
// clients are one), so each sees their own viewer fields; those that read none share one
// execution whoever they are; the sharers receive byte-identical payloads.
func TestSubscribersShareOneExecution(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		alice, _ := a.signUp("alice")
		bob, _ := a.signUp("bob")
		carol, _ := a.signUp("carol")
		post := a.createPost(carol, "post")
		q := `subscription($p: ID!) { postChanged(postId: $p) { upvotes viewerVote } }`
		dial := func(token, query string) *wsClient {
			c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.close)
			c.init(t, token)
			c.start(t, "1", query, map[string]any{"p": post})
			return c
		}
		anon := []*wsClient{dial("", q), dial("", q), dial("", q)}
		signedIn := map[string]*wsClient{"alice": dial(alice, q), "bob": dial(bob, q)}
		// Without a viewer field, viewers share the anonymous execution.
		plain := `subscription($p: ID!) { postChanged(postId: $p) { upvotes } }`
		plains := []*wsClient{dial("", plain), dial(alice, plain), dial(bob, plain)}
		waitSubscribers(t, a, 8)
		if got := a.hub.Stats().Subscribers; got != 4 {
			t.Errorf("%d executions, want 4: the viewerVote one for the anonymous, alice's, bob's, and the plain one for everybody", got)
		}

		var d struct{ VotePost struct{ Upvotes int } }
		a.do(alice, `mutation($p: ID!) { votePost(postId: $p, direction: UP) { upvotes } }`, map[string]any{"p": post}).decode(t, &d)

		var first []byte
		for i, c := range anon {
			m := c.recv(t)
			if m.Type != "next" {
				t.Fatalf("anonymous subscriber %d: %+v", i, m)
			}
			if first == nil {
				first = m.Payload
			} else if !bytes.Equal(m.Payload, first) {
				t.Errorf("anonymous subscriber %d got %s, the first %s", i, m.Payload, first)
			}
		}
		if !strings.Contains(string(first), `"viewerVote":"NONE"`) {
			t.Errorf("anonymous payload %s, want viewerVote NONE", first)
		}
		for i, c := range plains {
			if m := c.recv(t); string(m.Payload) != `{"data":{"postChanged":{"upvotes":1}},"extensions":{"cost":{"fieldCost":1,"limit":25000,"requested":2},"cursor":"`+cursorOf(t, m)+`"}}` {
				t.Errorf("plain subscriber %d got %s", i, m.Payload)
			}
		}
		for name, want := range map[string]string{"alice": "UP", "bob": "NONE"} {
			m := signedIn[name].recv(t)
			if !strings.Contains(string(m.Payload), `"viewerVote":"`+want+`"`) {
				t.Errorf("%s got %s, want viewerVote %s", name, m.Payload, want)
			}
		}

		// One subscriber leaving leaves the others running; the last one stops the execution.
		anon[0].close()
		waitSubscribers(t, a, 7)
		a.do(bob, `mutation($p: ID!) { votePost(postId: $p, direction: UP) { upvotes } }`, map[string]any{"p": post})
		for i, c := range anon[1:] {
			if m := c.recv(t); !strings.Contains(string(m.Payload), `"upvotes":2`) {
				t.Errorf("anonymous subscriber %d after another left: %s", i+1, m.Payload)
			}
		}
	})
}

// cursorOf returns the cursor of a result message.
func cursorOf(t *testing.T, m wsMsg) string {
	t.Helper()
	var r response
	if err := json.Unmarshal(m.Payload, &r); err != nil {
		t.Fatal(err)
	}
	return r.Extensions.Cursor
}

// TestSubscribeDropCyclesLeaveNothing subscribes and drops 10,000 times — shared executions,
// viewers of their own and resumed subscriptions, over WebSocket — while events keep coming, and
// checks that goroutines and heap return to their baseline.
func TestSubscribeDropCyclesLeaveNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 cycles: skipped with -short")
	}
	b := storetest.Backends(t)[0] // miniredis: the cycles test the server, not Redis
	a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{MaxStreamsPerAddress: -1, MaxAddressCost: -1, MaxAnonAddressCost: -1})
	alice, _ := a.signUp("alice")
	post := a.createPost(alice, "popular")
	a.comment(alice, post, "", "first")
	var cursor string
	{
		s := subscribe(t, a.srv.URL, protoTransportWS, "", `subscription($p:ID!){commentAdded(postId:$p){id}}`, map[string]any{"p": post})
		waitSubscribers(t, a, 1)
		a.comment(alice, post, "", "second")
		cursor = event(t, s).Extensions.Cursor
		s.close()
		waitSubscribers(t, a, 0)
	}
	queries := []struct {
		token, query string
		vars         map[string]any
	}{
		{"", `subscription($p:ID!){postChanged(postId:$p){id upvotes}}`, map[string]any{"p": post}},
		{alice, `subscription($p:ID!){postChanged(postId:$p){id viewerVote}}`, map[string]any{"p": post}},
		{"", `subscription($p:ID!,$a:String){commentAdded(postId:$p,after:$a){id}}`, map[string]any{"p": post, "a": cursor}},
	}
	cycle := func(i int) error {
		q := queries[i%len(queries)]
		c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
		if err != nil {
			return err
		}
		defer c.close()
		if err := c.write(initMsg(q.token)); err != nil {
			return err
		}
		<-c.msgs // the ack
		return c.write(startMsg(protoTransportWS, "1", q.query, q.vars))
	}
	for i := range 30 { // warm up pools and caches
		if err := cycle(i); err != nil {
			t.Fatal(err)
		}
	}
	waitSubscribers(t, a, 0)
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	base, _ := storetest.Goroutines()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	heapBase := heap()

	stopCommenting := keepWriting(5*time.Millisecond, func(int) { a.comment(alice, post, "", "more") })
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)); i <= 10000; i = int(next.Add(1)) {
				if err := cycle(i); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	stopCommenting()
	waitSubscribers(t, a, 0)
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	storetest.WaitGoroutines(t, base, wait)
	if grown := int64(heap()) - int64(heapBase); grown > 16<<20 {
		t.Errorf("the heap grew by %d MiB over 10,000 cycles", grown>>20)
	}
}
