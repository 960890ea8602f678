package httpapi_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestTransportWSCloseCodes drives graphql-transport-ws with a raw WebSocket client through each
// rule of PROTOCOL.md whose breach closes the socket, and checks the close code.
func TestTransportWSCloseCodes(t *testing.T) {
	sub := `subscription{postPublished{title}}`
	subscribe := func(id string) string {
		p, _ := json.Marshal(map[string]any{"query": sub})
		m, _ := json.Marshal(wsMsg{ID: id, Type: "subscribe", Payload: p})
		return string(m)
	}
	const initMsg = `{"type":"connection_init"}`
	tests := []struct {
		name string
		send []string
		want websocket.StatusCode
	}{
		{"subscribe before connection_init", []string{subscribe("1")}, httpapi.CloseUnauthorized},
		{"a second connection_init", []string{initMsg, initMsg}, httpapi.CloseTooManyInitialise},
		{"an id already in use", []string{initMsg, subscribe("x"), subscribe("x")}, httpapi.CloseSubscriberExists},
		{"a first message that is not JSON", []string{`hello`}, httpapi.CloseInvalidMessage},
		{"a first message without a type", []string{`{"payload":{}}`}, httpapi.CloseInvalidMessage},
		{"an unknown type", []string{`{"type":"start"}`}, httpapi.CloseInvalidMessage},
		{"a server message from the client", []string{initMsg, `{"id":"1","type":"next","payload":{}}`}, httpapi.CloseInvalidMessage},
		{"connection_init with a payload that is not an object", []string{`{"type":"connection_init","payload":[1]}`}, httpapi.CloseInvalidMessage},
		{"subscribe without an id", []string{initMsg, `{"type":"subscribe","payload":{"query":"{viewer{name}}"}}`}, httpapi.CloseInvalidMessage},
		{"subscribe without a query", []string{initMsg, `{"id":"1","type":"subscribe","payload":{}}`}, httpapi.CloseInvalidMessage},
		{"complete without an id", []string{initMsg, `{"type":"complete"}`}, httpapi.CloseInvalidMessage},
	}
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer c.close()
				for _, m := range tt.send {
					ctx, cancel := context.WithTimeout(context.Background(), wait)
					err := c.conn.Write(ctx, websocket.MessageText, []byte(m))
					cancel()
					if err != nil {
						break // the server closed the socket already
					}
				}
				if got := c.closeStatus(t); got != tt.want {
					t.Errorf("close code %d, want %d", got, tt.want)
				}
			})
		}
		waitSubscribers(t, a, 0)
	})
}

// TestGraphQLWSCloseCodes drives the legacy graphql-ws with a raw WebSocket client through the
// messages it does not allow, and checks the close code.
func TestGraphQLWSCloseCodes(t *testing.T) {
	start := func(id string) string {
		p, _ := json.Marshal(map[string]any{"query": `subscription{postPublished{title}}`})
		m, _ := json.Marshal(wsMsg{ID: id, Type: "start", Payload: p})
		return string(m)
	}
	const initMsg = `{"type":"connection_init"}`
	tests := []struct {
		name string
		send []string
		want websocket.StatusCode
	}{
		{"start before connection_init", []string{start("1")}, httpapi.CloseInvalidMessage},
		{"a second connection_init", []string{initMsg, initMsg}, httpapi.CloseInvalidMessage},
		{"a message that is not JSON", []string{initMsg, `hello`}, httpapi.CloseInvalidMessage},
		{"a graphql-transport-ws message", []string{initMsg, `{"id":"1","type":"subscribe","payload":{"query":"{viewer{name}}"}}`}, httpapi.CloseInvalidMessage},
		{"start without a query", []string{initMsg, `{"id":"1","type":"start","payload":{}}`}, httpapi.CloseInvalidMessage},
		{"connection_terminate", []string{initMsg, `{"type":"connection_terminate"}`}, websocket.StatusNormalClosure},
	}
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c, _, err := dialWS(context.Background(), a.srv.URL, protoGraphQLWS, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer c.close()
				for _, m := range tt.send {
					ctx, cancel := context.WithTimeout(context.Background(), wait)
					err := c.conn.Write(ctx, websocket.MessageText, []byte(m))
					cancel()
					if err != nil {
						break // the server closed the socket already
					}
				}
				if got := c.closeStatus(t); got != tt.want {
					t.Errorf("close code %d, want %d", got, tt.want)
				}
			})
		}
		waitSubscribers(t, a, 0)
	})
}

// TestGraphQLWSReusedIDStopsTheOldOperation checks that a start with an id in use on graphql-ws
// ends the operation running under it (its complete comes first) and runs the new one.
func TestGraphQLWSReusedIDStopsTheOldOperation(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		token, _ := a.signUp("alice")
		c, _, err := dialWS(context.Background(), a.srv.URL, protoGraphQLWS, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { c.close(); waitSubscribers(t, a, 0) }()
		c.init(t, "")
		c.start(t, "x", `subscription{postPublished{title}}`, nil)
		waitSubscribers(t, a, 1)
		c.start(t, "x", `subscription{postPublished{id}}`, nil)
		if _, done := c.result(t, "x"); !done {
			t.Fatal("the first operation under x was not completed")
		}
		waitSubscribers(t, a, 1)
		a.createPost(token, "post")
		r, done := c.result(t, "x")
		if done || !strings.Contains(string(r.Data), `"id"`) || strings.Contains(string(r.Data), `"title"`) {
			t.Fatalf("got %+v (ended %v), want the second operation's result", r, done)
		}
	})
}

// TestTransportWSConversation checks the rules that keep a socket open: ping is answered before
// connection_init too; after the client's complete nothing more comes for the id and the id can be
// used again; an operation that fails validation gets error and no complete.
func TestTransportWSConversation(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		token, _ := a.signUp("alice")
		c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { c.close(); waitSubscribers(t, a, 0) }()

		// The test client answers pings itself and counts them; here the server must answer.
		c.send(t, wsMsg{Type: "ping", Payload: json.RawMessage(`{"n":1}`)})
		if m := c.recv(t); m.Type != "pong" || string(m.Payload) != `{"n":1}` {
			t.Fatalf("ping before connection_init: got %+v, want pong with the payload", m)
		}
		c.init(t, "")

		q := `subscription{postPublished{title}}`
		for round := range 3 { // the same id, started and stopped three times
			c.start(t, "x", q, nil)
			waitSubscribers(t, a, 1)
			a.createPost(token, "post")
			if r, done := c.result(t, "x"); done || !strings.Contains(string(r.Data), `"post"`) {
				t.Fatalf("round %d: got %+v (ended %v), want the post", round, r, done)
			}
			c.stop(t, "x")
			waitSubscribers(t, a, 0)
		}
		// Nothing came for x after its last complete: the next message is this query's.
		c.start(t, "bad", `{nope}`, nil)
		m := c.recv(t)
		if m.ID != "bad" || m.Type != "error" {
			t.Fatalf("an invalid query: got %+v, want error for bad", m)
		}
		c.start(t, "q", `{viewer{name}}`, nil)
		if m := c.recv(t); m.ID != "q" || m.Type != "next" {
			t.Fatalf("after an error: got %+v, want the next query's result (no complete after error)", m)
		}
		if _, done := c.result(t, "q"); !done {
			t.Fatal("the query was not completed")
		}
	})
}

// TestTransportWSReusedIDLeavesNoStreams is the case: three subscribes with one id on
// each of many sockets used to leave streams that no complete could stop. Now the second
// subscribe closes the socket, and every stream ends with it.
func TestTransportWSReusedIDLeavesNoStreams(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		before := runtime.NumGoroutine()
		for range 20 {
			c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.init(t, "")
			for range 3 {
				if err := c.write(startMsg(protoTransportWS, "x", `subscription{postPublished{title}}`, nil)); err != nil {
					break
				}
			}
			if got := c.closeStatus(t); got != httpapi.CloseSubscriberExists {
				t.Fatalf("close code %d, want %d", got, httpapi.CloseSubscriberExists)
			}
			c.close()
		}
		waitSubscribers(t, a, 0)
		waitFor(t, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= before+10 })
	})
}

// TestTransportWSBadPayloadHasACode: a subscribe with a query whose other members are not those
// of a GraphQL request (variables or extensions that are not objects, an operationName that is
// not a string) is answered with an error that carries its code, BAD_USER_INPUT, as every error
// a client can act on does. It carried none ("invalid json"). A payload without a string query
// closes the socket with 4400 (TestTransportWSCloseCodes).
func TestTransportWSBadPayloadHasACode(t *testing.T) {
	a := serve(t, storetest.Backends(t)[0].NewStore(t, store.Options{}), httpapi.Live{})
	c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	c.init(t, "")
	for _, payload := range []string{
		`{"query":"{viewer{name}}","variables":[1]}`,
		`{"query":"{viewer{name}}","operationName":5}`,
		`{"query":"{viewer{name}}","extensions":"x"}`,
	} {
		c.send(t, wsMsg{ID: "bad", Type: "subscribe", Payload: json.RawMessage(payload)})
		m := c.recv(t)
		var errs []gqlError
		if m.ID != "bad" || m.Type != "error" || json.Unmarshal(m.Payload, &errs) != nil || len(errs) != 1 {
			t.Fatalf("subscribe with payload %s: got %+v, want one error for bad", payload, m)
		}
		if code := errs[0].Extensions["code"]; code != "BAD_USER_INPUT" {
			t.Errorf("subscribe with payload %s: %+v, want code BAD_USER_INPUT", payload, errs[0])
		}
	}
}

// TestTransportWSIDFreeAfterItsComplete: once the client has received an operation's complete,
// PROTOCOL.md lets it use the id again at once. The server sent complete before it forgot the
// id, so a subscribe sent back right after it could find the id still in use and close the
// socket with 4409.
func TestTransportWSIDFreeAfterItsComplete(t *testing.T) {
	a := serve(t, storetest.Backends(t)[0].NewStore(t, store.Options{}), httpapi.Live{})
	c, _, err := dialWS(context.Background(), a.srv.URL, protoTransportWS, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	c.init(t, "")
	for i := range 500 {
		c.start(t, "x", `{__typename}`, nil)
		if _, done := c.result(t, "x"); done {
			t.Fatalf("round %d: complete before the result", i)
		}
		if _, done := c.result(t, "x"); !done {
			t.Fatalf("round %d: no complete after the result", i)
		}
	}
}
