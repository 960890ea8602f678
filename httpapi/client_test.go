package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Test clients of the streaming transports: graphql-transport-ws, the legacy graphql-ws, and
// server-sent events.

// wait bounds how long a test waits for something that must happen; it is a liveness bound, not
// a timing assertion.
const wait = 10 * time.Second

const (
	protoTransportWS = "graphql-transport-ws"
	protoGraphQLWS   = "graphql-ws"
	protoSSE         = "sse"
)

// wsMsg is a message of either WebSocket subprotocol.
type wsMsg struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// wsClient is a WebSocket client. A goroutine reads the socket, answers pings, drops
// keep-alives and queues everything else on msgs.
type wsClient struct {
	conn  *websocket.Conn
	proto string
	msgs  chan wsMsg
	done  chan struct{} // closed when the socket's reading ends
	err   error         // why it ended; read after done

	mute  atomic.Bool  // do not answer pings
	pings atomic.Int32 // pings and keep-alives received
}

// wsURL turns the test server's URL into the WebSocket URL of /query.
func wsURL(base string) string { return "ws" + strings.TrimPrefix(base, "http") + "/query" }

// dialWS opens a WebSocket to /query with a subprotocol and optional headers.
func dialWS(ctx context.Context, base, proto string, header http.Header) (*wsClient, *http.Response, error) {
	conn, res, err := websocket.Dial(ctx, wsURL(base), &websocket.DialOptions{
		Subprotocols: []string{proto},
		HTTPHeader:   header,
	})
	if err != nil {
		return nil, res, err
	}
	conn.SetReadLimit(1 << 20)
	c := &wsClient{conn: conn, proto: proto, msgs: make(chan wsMsg, 256), done: make(chan struct{})}
	go c.read()
	return c, res, nil
}

func (c *wsClient) read() {
	defer close(c.done)
	defer close(c.msgs)
	for {
		_, data, err := c.conn.Read(context.Background())
		if err != nil {
			c.err = err
			return
		}
		var m wsMsg
		if err := json.Unmarshal(data, &m); err != nil {
			c.err = err
			return
		}
		switch m.Type {
		case "ka":
			c.pings.Add(1)
			continue
		case "ping":
			c.pings.Add(1)
			if !c.mute.Load() {
				_ = c.write(wsMsg{Type: "pong"})
			}
			continue
		}
		c.msgs <- m
	}
}

func (c *wsClient) write(m wsMsg) error {
	b, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return c.conn.Write(ctx, websocket.MessageText, b)
}

func (c *wsClient) send(t testing.TB, m wsMsg) {
	t.Helper()
	if err := c.write(m); err != nil {
		t.Fatalf("websocket write: %v", err)
	}
}

// initMsg is connection_init with token (none when "").
func initMsg(token string) wsMsg {
	m := wsMsg{Type: "connection_init"}
	if token != "" {
		m.Payload, _ = json.Marshal(map[string]string{"Authorization": "Bearer " + token})
	}
	return m
}

// startMsg starts an operation with the subprotocol's message.
func startMsg(proto, id, query string, vars map[string]any) wsMsg {
	typ := "subscribe"
	if proto == protoGraphQLWS {
		typ = "start"
	}
	p, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return wsMsg{ID: id, Type: typ, Payload: p}
}

// init sends connection_init with token (none when "") and waits for the ack.
func (c *wsClient) init(t testing.TB, token string) {
	t.Helper()
	c.send(t, initMsg(token))
	if got := c.recv(t); got.Type != "connection_ack" {
		t.Fatalf("after connection_init got %+v, want connection_ack", got)
	}
}

// recv returns the next message other than a keep-alive.
func (c *wsClient) recv(t testing.TB) wsMsg {
	t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			t.Fatalf("the socket closed: %v", c.err)
		}
		return m
	case <-time.After(wait):
		t.Fatalf("no message within %s", wait)
	}
	return wsMsg{}
}

// start starts an operation with the subprotocol's message.
func (c *wsClient) start(t testing.TB, id, query string, vars map[string]any) {
	t.Helper()
	c.send(t, startMsg(c.proto, id, query, vars))
}

// stop ends an operation from the client side.
func (c *wsClient) stop(t testing.TB, id string) {
	t.Helper()
	typ := "complete"
	if c.proto == protoGraphQLWS {
		typ = "stop"
	}
	c.send(t, wsMsg{ID: id, Type: typ})
}

// result waits for the next message of operation id: a result (next or data) as a response, or
// its end (complete, or error whose errors it returns) with done set.
func (c *wsClient) result(t testing.TB, id string) (r response, done bool) {
	t.Helper()
	for {
		m := c.recv(t)
		if m.ID != id {
			t.Fatalf("message %+v, want one of operation %s", m, id)
		}
		switch m.Type {
		case "next", "data":
			if err := json.Unmarshal(m.Payload, &r); err != nil {
				t.Fatalf("decode %s: %v", m.Payload, err)
			}
			return r, false
		case "complete":
			return r, true
		case "error":
			_ = json.Unmarshal(m.Payload, &r.Errors)
			return r, true
		default:
			t.Fatalf("unexpected message %+v", m)
		}
	}
}

// closeStatus waits for the server to close the socket and returns the close code.
func (c *wsClient) closeStatus(t testing.TB) websocket.StatusCode {
	t.Helper()
	for {
		select {
		case _, ok := <-c.msgs:
			if ok {
				continue // a connection_error or the like before the close
			}
			return websocket.CloseStatus(c.err)
		case <-time.After(wait):
			t.Fatalf("the server did not close the socket within %s", wait)
		}
	}
}

func (c *wsClient) close() { _ = c.conn.CloseNow(); <-c.done }

// sseEvent is one server-sent event.
type sseEvent struct {
	ID    string
	Event string
	Data  string
}

// sseClient reads a subscription over server-sent events.
type sseClient struct {
	res    *http.Response
	events chan sseEvent
	cancel context.CancelFunc
}

// subscribeSSE POSTs a subscription with Accept: text/event-stream.
func subscribeSSE(t testing.TB, base, token, query string, vars map[string]any) *sseClient {
	t.Helper()
	c, err := openSSE(base, token, query, vars)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// openSSE is subscribeSSE for goroutines other than the test's.
func openSSE(base, token, query string, vars map[string]any) (*sseClient, error) {
	return openSSEFrom(base, token, "", query, vars)
}

// openSSEFrom opens a subscription over server-sent events sending lastEventID ("" for none) as
// its Last-Event-ID header, as an EventSource does when it reconnects.
func openSSEFrom(base, token, lastEventID, query string, vars map[string]any) (*sseClient, error) {
	ctx, cancel := context.WithCancel(context.Background())
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("sse request: %w", err)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		cancel()
		_ = res.Body.Close()
		return nil, fmt.Errorf("sse response: status %d, Content-Type %q", res.StatusCode, ct)
	}
	c := &sseClient{res: res, events: make(chan sseEvent, 256), cancel: cancel}
	go c.read()
	return c, nil
}

func (c *sseClient) read() {
	defer close(c.events)
	sc := bufio.NewScanner(c.res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Event != "" || ev.Data != "" {
				c.events <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"): // a comment: keep-alive
		case strings.HasPrefix(line, "id:"):
			ev.ID = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case strings.HasPrefix(line, "event:"):
			ev.Event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			ev.Data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		}
	}
}

// result waits for the next event: a result as a response, or the end of the stream.
func (c *sseClient) result(t testing.TB) (r response, done bool) {
	t.Helper()
	select {
	case ev, ok := <-c.events:
		if !ok || ev.Event == "complete" {
			return r, true
		}
		if err := json.Unmarshal([]byte(ev.Data), &r); err != nil {
			t.Fatalf("decode %q: %v", ev.Data, err)
		}
		r.FrameID = ev.ID
		return r, false
	case <-time.After(wait):
		t.Fatalf("no event within %s", wait)
	}
	return r, true
}

func (c *sseClient) close() {
	c.cancel()
	_ = c.res.Body.Close()
	for range c.events {
	}
}

// sub is one subscription over any transport.
type sub interface {
	result(t testing.TB) (response, bool)
	close()
}

// wsSub is a subscription alone on its own socket.
type wsSub struct{ c *wsClient }

func (s wsSub) result(t testing.TB) (response, bool) { return s.c.result(t, "1") }
func (s wsSub) close()                               { s.c.close() }

// subscribe starts a subscription over one transport, as the holder of token.
func subscribe(t testing.TB, base, proto, token, query string, vars map[string]any) sub {
	t.Helper()
	if proto == protoSSE {
		return subscribeSSE(t, base, token, query, vars)
	}
	c, _, err := dialWS(context.Background(), base, proto, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.init(t, token)
	c.start(t, "1", query, vars)
	return wsSub{c}
}

// next waits for the subscription's next result and decodes its data into v.
func next(t testing.TB, s sub, v any) {
	t.Helper()
	r, done := s.result(t)
	if done {
		t.Fatalf("the subscription ended: %+v", r.Errors)
	}
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decode %s: %v", r.Data, err)
	}
}

// waitFor polls cond until it holds, failing after wait.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
