package httpapi_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSubscribersShareOneExecution subscribes several clients with the same document and
// variables, and others with their own: the same ones share one execution (one subscriber of
// the process's live-event hub) and receive byte-identical payloads; viewers never share, so
// each sees their own viewer fields.
func TestSubscribersShareOneExecution(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		alice, _ := a.signUp("alice")
		bob, _ := a.signUp("bob")
		carol, _ := a.signUp("carol")
		post := a.createPost(carol, "post")
		q := `subscription($p: ID!) { postChanged(postId: $p) { upvotes viewerVote } }`
		dial := func(token string) *wsClient {
			c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.close)
			c.init(t, token)
			c.start(t, "1", q, map[string]any{"p": post})
			return c
		}
		anon := []*wsClient{dial(""), dial(""), dial("")}
		signedIn := map[string]*wsClient{"alice": dial(alice), "bob": dial(bob)}
		waitSubscribers(t, a, 5)
		if got := a.store.LiveStats().Subscribers; got != 3 {
			t.Errorf("%d executions for 3 anonymous subscribers and 2 viewers, want 3", got)
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
		for name, want := range map[string]string{"alice": "UP", "bob": "NONE"} {
			m := signedIn[name].recv(t)
			if !strings.Contains(string(m.Payload), `"viewerVote":"`+want+`"`) {
				t.Errorf("%s got %s, want viewerVote %s", name, m.Payload, want)
			}
		}

		// One subscriber leaving leaves the others running; the last one stops the execution.
		anon[0].close()
		waitSubscribers(t, a, 4)
		a.do(bob, `mutation($p: ID!) { votePost(postId: $p, direction: UP) { upvotes } }`, map[string]any{"p": post})
		for i, c := range anon[1:] {
			if m := c.recv(t); !strings.Contains(string(m.Payload), `"upvotes":2`) {
				t.Errorf("anonymous subscriber %d after another left: %s", i+1, m.Payload)
			}
		}
	})
}
