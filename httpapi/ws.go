package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/coder/websocket"

	"github.com/agora/agora/live"
)

// wsTransport serves GraphQL over WebSocket, graphql-transport-ws and the legacy graphql-ws
// (wsprotocol.go), with github.com/coder/websocket. It owns each connection from the upgrade to
// the close, so that a result is written as prepared bytes: the envelope of the operation, made
// once per operation, around a payload that a shared subscription encodes once per event for all
// its subscribers (resolvers.Encoded). Nothing is encoded per subscriber and event, and no timer
// is set per message (writeWatch bounds the writes).
type wsTransport struct {
	cfg Config
}

var _ graphql.Transport = wsTransport{}

// Supports takes every upgrade request.
func (wsTransport) Supports(r *http.Request) bool { return header(r, "Upgrade") != "" }

// Do accepts the WebSocket and serves it until it closes.
func (t wsTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:   []string{legacyWSProtocol, transportWSProtocol},
		OriginPatterns: t.cfg.Live.AllowedOrigins,
	})
	if err != nil {
		return // Accept has answered the request
	}
	conn.SetReadLimit(t.cfg.Limits.MaxBodyBytes + 1024) // a message is a request body plus its envelope
	ctx, cancel := context.WithCancel(r.Context())
	c := &wsConn{
		cfg: t.cfg, conn: conn, exec: exec, header: r.Header,
		ctx: ctx, cancel: cancel, running: map[string]*wsOp{},
		slots: make(chan struct{}, MaxSocketOperations),
	}
	if strings.EqualFold(conn.Subprotocol(), transportWSProtocol) {
		c.proto = transportWS
	}
	c.upgradeToken, _ = bearer(r.Header.Get("Authorization")) // for clients that cannot set the init payload
	c.watch = watchWrites(t.cfg.Live.WriteTimeout, func() { _ = conn.CloseNow() })
	c.serve(r.Context())
}

// wsConn is one WebSocket connection.
type wsConn struct {
	cfg          Config
	conn         *websocket.Conn
	proto        wsProtocol
	exec         graphql.GraphExecutor
	header       http.Header // the upgrade request's, which operations see as theirs
	upgradeToken string
	inited       atomic.Bool

	// ctx is the context operations run under: the request's, then, from connection_init, with
	// the socket's viewer and state. Only the read loop sets it. cancel ends every operation.
	ctx    context.Context
	cancel context.CancelFunc
	ops    sync.WaitGroup // running operations' goroutines
	// slots holds one token per query or mutation running (MaxSocketOperations).
	slots chan struct{}

	// Writes go one at a time; a write that takes WriteTimeout closes the connection.
	wmu   sync.Mutex
	buf   []byte // the message being written, assembled under wmu
	watch *writeWatch

	// session follows the session the socket authenticated with, whose end closes the socket
	// with 4403; nil when anonymous. Only the read loop sets it, and end closes it.
	session *live.SessionWatch

	mu         sync.Mutex
	running    map[string]*wsOp // by the client's id
	closing    bool             // a close handshake has begun
	ended      bool             // serve has returned: timers stay stopped
	unanswered int              // keep-alive pings without a pong (graphql-transport-ws)
	initTimer  *time.Timer
	keepAlive  *time.Timer
}

// serve reads the client's messages until the connection closes, then ends its operations.
func (c *wsConn) serve(reqCtx context.Context) {
	c.mu.Lock()
	c.initTimer = time.AfterFunc(c.cfg.Live.InitTimeout, c.initTimedOut)
	c.mu.Unlock()
	stop := context.AfterFunc(reqCtx, func() { c.closeWith(websocket.StatusNormalClosure, "terminated") })
	defer stop()
	defer c.end()
	for {
		_, data, err := c.conn.Read(context.Background())
		if err != nil {
			return
		}
		if cl := c.handle(data); cl != nil {
			c.closeWith(websocket.StatusCode(cl.code), cl.reason)
			return
		}
	}
}

// handle acts on one message from the client; a non-nil result closes the socket.
func (c *wsConn) handle(data []byte) *wsClose {
	m, cl := c.proto.parseClientMsg(data)
	if cl != nil {
		return cl
	}
	inited := c.inited.Load()
	switch m.kind {
	case wsPing:
		c.send(pongMsg(m.payload))
	case wsPong:
		c.mu.Lock()
		c.unanswered = 0
		c.mu.Unlock()
	case wsTerminate:
		return &wsClose{code: int(websocket.StatusNormalClosure), reason: "terminated"}
	case wsInit:
		if cl := m.check(); cl != nil {
			return cl
		}
		if inited {
			if c.proto == transportWS {
				return &wsClose{code: CloseTooManyInitialise, reason: "Too many initialisation requests"}
			}
			return invalid("a second connection_init")
		}
		return c.init(m)
	case wsStart:
		if !inited {
			if c.proto == transportWS {
				return &wsClose{code: CloseUnauthorized, reason: "Unauthorized"}
			}
			return invalid("connection_init must come first")
		}
		if cl := m.check(); cl != nil {
			return cl
		}
		return c.start(m.id, m.payload)
	case wsStop:
		if cl := m.check(); cl != nil {
			return cl
		}
		c.stop(m.id)
	}
	return nil
}

// init authenticates the connection from its connection_init (see authenticateSocket) and
// acknowledges it. A bad token closes the socket with 4403.
func (c *wsConn) init(m clientMsg) *wsClose {
	c.inited.Store(true)
	c.mu.Lock()
	c.initTimer.Stop()
	c.mu.Unlock()
	ctx, err := authenticateSocket(c.ctx, c.cfg, initAuthorization(m.payload), c.upgradeToken)
	if err != nil {
		cl := &wsClose{code: CloseForbidden, reason: "Forbidden"}
		if !errors.Is(err, errForbidden) {
			logFailure(c.ctx, c.cfg.Log, "authenticate websocket", err)
			err = errors.New("internal server error")
			cl = &wsClose{code: int(websocket.StatusInternalError), reason: err.Error()}
		}
		if c.proto == legacyWS {
			c.send(connectionErrorMsg(err.Error()))
		}
		return cl
	}
	if cl := c.watchSession(ctx); cl != nil {
		return cl
	}
	c.ctx = ctx
	c.send([]byte(ackMsg))
	if c.proto == legacyWS {
		c.send(c.proto.keepAlive())
	}
	c.mu.Lock()
	if !c.ended {
		c.keepAlive = time.AfterFunc(c.cfg.Live.KeepAlive, c.sendKeepAlive)
	}
	c.mu.Unlock()
	return nil
}

// watchSession follows the session of an authenticated socket (ctx is its context, from
// authenticateSocket): when the session ends — logOut, logOutEverywhere or changePassword, on any
// replica — the socket closes with 4403 and its subscriptions end with it.
func (c *wsConn) watchSession(ctx context.Context) *wsClose {
	s, _ := ctx.Value(socketKey{}).(*socket)
	if s == nil || s.token == "" {
		return nil
	}
	w, err := c.cfg.Hub.WatchSession(ctx, s.token, c.cfg.Live.KeepAlive)
	if err != nil {
		logFailure(ctx, c.cfg.Log, "watch the websocket's session", err)
		err = errors.New("internal server error")
		if c.proto == legacyWS {
			c.send(connectionErrorMsg(err.Error()))
		}
		return &wsClose{code: int(websocket.StatusInternalError), reason: err.Error()}
	}
	c.session = w
	s.watch = w
	go func() {
		select {
		case <-w.Ended():
			c.closeWith(CloseForbidden, "Forbidden: the session has ended")
		case <-ctx.Done():
		}
	}()
	return nil
}

// initTimedOut closes a connection that has not sent connection_init in time with 4408.
func (c *wsConn) initTimedOut() {
	if !c.inited.Load() {
		c.closeWith(CloseInitTimeout, "Connection initialisation timeout")
	}
}

// sendKeepAlive sends a keep-alive every interval. On graphql-transport-ws it is a ping, and a
// client that has not answered the last two is disconnected.
func (c *wsConn) sendKeepAlive() {
	c.mu.Lock()
	if c.ended || c.closing {
		c.mu.Unlock()
		return
	}
	if c.proto == transportWS {
		if c.unanswered >= 2 {
			c.mu.Unlock()
			_ = c.conn.CloseNow()
			return
		}
		c.unanswered++
	}
	c.keepAlive.Reset(c.cfg.Live.KeepAlive)
	c.mu.Unlock()
	c.send(c.proto.keepAlive())
}

// send writes one message.
func (c *wsConn) send(msg []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.write(msg)
}

// sendAround writes the message prefix + payload + "}", assembled in the connection's buffer.
func (c *wsConn) sendAround(prefix, payload []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.buf = append(append(append(c.buf[:0], prefix...), payload...), '}')
	c.write(c.buf)
	if cap(c.buf) > 64<<10 {
		c.buf = nil // a large result does not stay with the connection
	}
}

// write writes msg under wmu. A failed write closes the connection, unless a close handshake
// has begun (which fails writes on purpose).
func (c *wsConn) write(msg []byte) {
	c.watch.start()
	err := c.conn.Write(context.Background(), websocket.MessageText, msg)
	c.watch.end()
	if err != nil {
		c.mu.Lock()
		closing := c.closing
		c.mu.Unlock()
		if !closing {
			_ = c.conn.CloseNow()
		}
	}
}

// closeWith ends every operation and closes the socket with code. The close handshake runs in
// the background: coder/websocket waits up to five seconds for the peer's close frame.
func (c *wsConn) closeWith(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	c.mu.Unlock()
	c.cancel()
	go func() { _ = c.conn.Close(code, reason) }()
}

// end stops the connection's timers, ends its operations and waits for them, and closes the
// socket unless a close handshake owns it.
func (c *wsConn) end() {
	c.mu.Lock()
	c.ended = true
	handshake := c.closing
	for _, t := range []*time.Timer{c.initTimer, c.keepAlive} {
		if t != nil {
			t.Stop()
		}
	}
	c.mu.Unlock()
	c.watch.stop()
	c.cancel()
	if !handshake {
		_ = c.conn.CloseNow()
	}
	c.ops.Wait()
	if c.session != nil {
		c.session.Close()
	}
}
