package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/agora/agora/live"
	"github.com/agora/agora/resolvers"
	"github.com/agora/agora/store"
)

// Live configures the streaming transports: WebSocket (graphql-transport-ws and the legacy
// graphql-ws) and server-sent events. Zero fields take the defaults of DefaultLive.
type Live struct {
	// InitTimeout is how long a WebSocket may stay open without sending connection_init; then
	// it is closed with 4408.
	InitTimeout time.Duration
	// KeepAlive is the interval of keep-alive messages: "ka" on graphql-ws, ping on
	// graphql-transport-ws (a client that does not answer with pong within two intervals is
	// disconnected), and a comment line on server-sent events. A signed-in stream checks its
	// session as often (live.SessionWatch).
	KeepAlive time.Duration
	// WriteTimeout bounds one write to a client; a client that does not read for that long is
	// disconnected rather than left holding a goroutine and its buffers.
	WriteTimeout time.Duration
	// MaxSubscriptions caps the subscriptions open at once on one WebSocket.
	MaxSubscriptions int
	// MaxSocketBytes bounds the bytes of the documents (query and variables) of the
	// subscriptions open on one WebSocket. Default 512 KiB.
	MaxSocketBytes int64
	// AllowedOrigins lists the origins allowed to open a WebSocket besides the server's own
	// host: host patterns ("app.example.com", "*.example.com") or, with a scheme,
	// "https://app.example.com", matched case-insensitively with path.Match. Requests without an
	// Origin header (not from a browser) are allowed.
	AllowedOrigins []string

	// MaxSocketCost bounds the summed cost (see livebudget.go) of the subscriptions open on one
	// WebSocket, or of the one subscription of an event stream, of a signed-in client; default
	// 10,000. MaxAnonSocketCost is the same for an anonymous one; default 1,000.
	MaxSocketCost, MaxAnonSocketCost int
	// MaxAddressCost bounds the summed cost of the subscriptions open from one client address;
	// default 50,000. MaxAnonAddressCost bounds the part of it that anonymous subscriptions may
	// hold; default 5,000. Negative: no limit (load tests from one machine).
	MaxAddressCost, MaxAnonAddressCost int
	// MaxProcessCost bounds the summed cost of every subscription open on the process; default
	// 1,000,000.
	MaxProcessCost int
	// MaxStreamsPerAddress caps the WebSockets and event streams open at once from one client
	// address; default 100. Negative: no limit.
	MaxStreamsPerAddress int
}

// DefaultLive holds the defaults of Live.
var DefaultLive = Live{
	InitTimeout: 10 * time.Second, KeepAlive: 25 * time.Second, WriteTimeout: 10 * time.Second,
	MaxSubscriptions: 100, MaxSocketBytes: 512 << 10,
	MaxSocketCost: 10000, MaxAnonSocketCost: 1000, MaxAddressCost: 50000, MaxAnonAddressCost: 5000,
	MaxProcessCost: 1000000, MaxStreamsPerAddress: 100,
}

func (l Live) withDefaults() Live {
	d := DefaultLive
	if l.InitTimeout <= 0 {
		l.InitTimeout = d.InitTimeout
	}
	if l.KeepAlive <= 0 {
		l.KeepAlive = d.KeepAlive
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = d.WriteTimeout
	}
	if l.MaxSubscriptions <= 0 {
		l.MaxSubscriptions = d.MaxSubscriptions
	}
	if l.MaxSocketBytes <= 0 {
		l.MaxSocketBytes = d.MaxSocketBytes
	}
	for _, f := range []struct {
		v *int
		d int
	}{
		{&l.MaxSocketCost, d.MaxSocketCost}, {&l.MaxAnonSocketCost, d.MaxAnonSocketCost},
		{&l.MaxAddressCost, d.MaxAddressCost}, {&l.MaxAnonAddressCost, d.MaxAnonAddressCost},
		{&l.MaxProcessCost, d.MaxProcessCost}, {&l.MaxStreamsPerAddress, d.MaxStreamsPerAddress},
	} {
		if *f.v == 0 {
			*f.v = f.d
		}
	}
	return l
}

// CheckOrigins reports the first malformed pattern of AllowedOrigins.
func (l Live) CheckOrigins() error {
	for _, p := range l.AllowedOrigins {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("origin pattern %q: %w", p, err)
		}
	}
	return nil
}

// WebSocket close codes of graphql-transport-ws (more in wsprotocol.go).
const (
	CloseForbidden      = 4403 // connection_init carried a bad token, or the session ended
	CloseInitTimeout    = 4408 // no connection_init in time
	CloseInvalidMessage = 4400 // a message the server could not take
)

// Error codes of the live transports, in extensions.code.
const (
	CodeTooManySubscriptions = "TOO_MANY_SUBSCRIPTIONS"
	CodeSlowSubscriber       = "SLOW_SUBSCRIBER"
	CodeStreamingRequired    = "STREAMING_REQUIRED"
	CodeUnavailable          = "UNAVAILABLE" // the server is shutting down
)

// addLiveTransports adds the WebSocket and SSE transports to srv. They must come before POST:
// gqlgen serves a request with the first transport that supports it.
func addLiveTransports(srv interface{ AddTransport(graphql.Transport) }, cfg Config) {
	srv.AddTransport(wsTransport{cfg: cfg})
	srv.AddTransport(sseTransport{cfg: cfg})
}

// socket is the state of one WebSocket connection, installed by its connection_init.
type socket struct {
	token string // the bearer token the connection authenticated with; "" for none
	// watch follows the session of a signed-in socket and its user's live filters (set by
	// wsConn.watchSession before the connection is acknowledged, so before any operation).
	watch         *live.SessionWatch
	subscriptions atomic.Int64
	docBytes      atomic.Int64 // bytes of the documents of the socket's open subscriptions
	cost          atomic.Int64 // summed cost of the socket's open subscriptions
}

type socketKey struct{}

// errForbidden is a WebSocket's token that is invalid or expired; the socket is closed with 4403.
var errForbidden = errors.New("Forbidden: the token is invalid or expired")

// authenticateSocket returns the context of a WebSocket's operations: the socket's state and its
// viewer, who holds the bearer token in auth (the Authorization entry of the connection_init
// payload) or, when auth is empty, token (from the upgrade request, which non-browser clients may
// use instead); anonymous without either. A malformed, invalid or expired token is errForbidden.
func authenticateSocket(ctx context.Context, cfg Config, auth, token string) (context.Context, error) {
	if auth != "" {
		var ok bool
		if token, ok = bearer(auth); !ok {
			return ctx, errForbidden
		}
	}
	ctx = context.WithValue(ctx, socketKey{}, &socket{token: token})
	if token == "" {
		return resolvers.WithRequest(ctx, &resolvers.Request{}), nil
	}
	v, err := cfg.Store.AuthenticateViewer(ctx, token)
	switch {
	case store.IsKind(err, store.KindUnauthenticated):
		return ctx, errForbidden
	case err != nil:
		return ctx, fmt.Errorf("authenticate websocket: %w", err)
	}
	return resolvers.WithRequest(ctx, &resolvers.Request{Viewer: v.User, Token: token, Blocks: v.Blocks, ShowNSFW: v.ShowNSFW}), nil
}

// socketAuth is an operation middleware: every operation on an authenticated WebSocket checks
// its token again, which extends the session's idle lifetime while the socket is in use and
// refuses an operation started after the session ended (logOut, expiry) with UNAUTHENTICATED.
// Subscriptions already running keep the viewer they started with until the session ends: then
// the socket closes with 4403 (wsConn.watchSession). Their events are filtered with the viewer's
// block list and NSFW setting as they are at each event, which the socket's session watch
// follows.
func socketAuth(cfg Config) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		s, _ := ctx.Value(socketKey{}).(*socket)
		if s == nil || s.token == "" {
			return next(ctx)
		}
		v, err := cfg.Store.AuthenticateViewer(ctx, s.token)
		switch {
		case err == nil:
			r := &resolvers.Request{Viewer: v.User, Token: s.token, Blocks: v.Blocks, ShowNSFW: v.ShowNSFW}
			if s.watch != nil {
				r.Live = s.watch
			}
			return next(resolvers.WithRequest(ctx, r))
		case store.IsKind(err, store.KindUnauthenticated):
			return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{limitError(CodeUnauthenticated, "the session has ended: sign in again")}})
		}
		logFailure(ctx, cfg.Log, "authenticate websocket operation", err)
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{limitError(CodeInternal, "internal server error")}})
	}
}

// streamingKey marks the context of a request on a streaming transport.
type streamingKey struct{}

// liveRequests checks the origin of WebSocket upgrades, holds both them and server-sent events
// to the per-address limits, and marks both as streaming so that subscriptions may run on them.
func liveRequests(cfg Config, budget *liveBudget, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case header(r, "Upgrade") != "":
			if err := checkOrigin(r, cfg.Live.AllowedOrigins); err != nil {
				writeError(w, http.StatusForbidden, err.Error(), CodeForbidden)
				return
			}
			r = r.WithContext(store.WithClient(r.Context(), r.RemoteAddr))
			budget.limitStreams(w, r, func() {
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), streamingKey{}, true)))
			})
		case wantsEventStream(r):
			r = r.WithContext(store.WithClient(r.Context(), r.RemoteAddr))
			budget.limitStreams(w, r, func() {
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), streamingKey{}, true)))
			})
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// checkOrigin allows a request without an Origin header, one from the server's own host, and
// one whose origin matches a pattern; these are the rules of github.com/coder/websocket, which
// checks them again on accepting the socket.
func checkOrigin(r *http.Request, patterns []string) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return fmt.Errorf("the Origin %q is not a URL with a host", origin)
	}
	if strings.EqualFold(r.Host, u.Host) {
		return nil
	}
	for _, p := range patterns {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(target)); ok {
			return nil
		}
	}
	return fmt.Errorf("the origin %s may not open a WebSocket here", u.Host)
}

// MaxSocketOperations caps the queries and mutations that run at once on one WebSocket, as one
// HTTP connection runs one request at a time: the socket reads no further message while that
// many run, so a client that sends a burst of them waits for its own answers (see wsConn.start).
// Subscriptions are bounded by MaxSubscriptions and the live budgets instead.
const MaxSocketOperations = 8
