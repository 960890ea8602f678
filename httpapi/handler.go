// Package httpapi serves agora over HTTP: the GraphQL endpoint with its transports and limits,
// authentication, the error presenter, the GraphiQL page and the health checks.
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"go.opentelemetry.io/otel/trace"

	"github.com/agora/agora/graph"
	"github.com/agora/agora/live"
	"github.com/agora/agora/readexec"
	"github.com/agora/agora/resolvers"
	"github.com/agora/agora/store"
)

// Config configures the handler.
type Config struct {
	Store *store.Store
	// Hub delivers the live events that subscriptions stream; required. The caller owns it and
	// closes it when the server stops, which ends every subscription with UNAVAILABLE.
	Hub    *live.Hub
	Log    *slog.Logger
	Limits Limits
	Live   Live
	// ResponseCacheMiB bounds the response cache (see cache.go) in MiB: 0 selects the default,
	// 64; a negative value turns the cache off.
	ResponseCacheMiB int
	// QueryCacheMiB bounds the cache of parsed documents (see doccache.go) in MiB of their text
	// and syntax trees; 0 selects the default, 32.
	QueryCacheMiB int
	// TrustedDocuments, when set, are the only documents the server runs (see persisted.go).
	TrustedDocuments TrustedDocuments
	// PublicMaxAge is how long shared caches (a CDN) may keep the answer to an anonymous query
	// sent over GET; zero (the default) keeps them from storing it.
	PublicMaxAge time.Duration
	// MetricsPublic serves the metrics at /metrics on this handler too. Off by default: the
	// caller serves Handler.Metrics on an address of its own (-metrics-addr, loopback by
	// default), so that the public port does not show them.
	MetricsPublic bool
	// Tracing, when set, traces every operation (see tracing.go).
	Tracing trace.TracerProvider
	// GraphiQL serves the GraphiQL IDE, embedded in the binary, at / (see graphiql.go); without
	// it GET / is 404.
	GraphiQL bool

	gqlgenOnly bool // every operation through gqlgen's executor, for the differential tests
}

// DefaultResponseCacheMiB is the response cache's default size.
const DefaultResponseCacheMiB = 64

// Handler is agora's HTTP handler.
type Handler struct {
	http.Handler
	ops     *resolvers.Operations
	metrics *metrics
	docs    *docCache
	rx      *readexec.Schema // nil when gqlgen executes everything (tracing, tests)
}

// Metrics returns the handler of the Prometheus metrics, to serve on an address of its own.
func (h *Handler) Metrics() http.Handler { return h.metrics.handler() }

// LiveSubscriptions returns how many subscriptions are running on the handler, over every
// transport.
func (h *Handler) LiveSubscriptions() int { return h.ops.Subscriptions() }

// New returns agora's HTTP handler: /query, /export (see export.go), / (GraphiQL, when
// Config.GraphiQL is set), /healthz, /readyz, and /metrics when Config.MetricsPublic is set.
func New(cfg Config) *Handler {
	if cfg.Store == nil || cfg.Hub == nil {
		panic("httpapi: Config needs a Store and a Hub")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Limits = cfg.Limits.withDefaults()
	cfg.Live = cfg.Live.withDefaults()
	root := &resolvers.Resolver{Store: cfg.Store, Live: cfg.Hub, Log: cfg.Log}
	var es graphql.ExecutableSchema = graph.NewExecutableSchema(graph.Config{Resolvers: root})
	tr := newTracing(cfg.Tracing)
	// Queries of known fields skip gqlgen's per-field machinery (see readexec), and readexec's
	// decision is what the limits check charges by, on every server. Traced servers keep
	// gqlgen's executor, whose field middleware makes a span of each resolver.
	plans := readexec.Wrap(es, root)
	var rx *readexec.Schema
	if tr == nil && !cfg.gqlgenOnly {
		rx = plans
		es = rx
	}

	srv := handler.New(es)
	addLiveTransports(srv, cfg)
	srv.AddTransport(transport.Options{})
	srv.AddTransport(httpTransport{log: cfg.Log}) // GET and POST, see graphqlhttp.go
	if cfg.QueryCacheMiB <= 0 {
		cfg.QueryCacheMiB = DefaultQueryCacheMiB
	}
	docs := newDocCache(int64(cfg.QueryCacheMiB)<<20, plans.Forget)
	srv.SetQueryCache(docs)
	srv.SetParserTokenLimit(cfg.Limits.MaxTokens)
	srv.Use(extension.Introspection{})
	if cfg.TrustedDocuments != nil {
		srv.Use(trustedOnly{docs: cfg.TrustedDocuments})
	}
	// Before the limits' check, whose charge plans the operation with its variables.
	srv.Use(strictVariables{schema: es.Schema()})
	srv.Use(newLimitCheck(es.Schema(), cfg.Limits, docs, plans.Runs))
	budget := newLiveBudget(cfg.Live)
	srv.AroundOperations(limitSubscriptions(es.Schema(), cfg.Limits, cfg.Live, budget))
	srv.AroundOperations(socketAuth(cfg)) // before Operations, which copies the request state
	var cache *responseCache
	if cfg.ResponseCacheMiB == 0 {
		cfg.ResponseCacheMiB = DefaultResponseCacheMiB
	}
	if cfg.ResponseCacheMiB > 0 {
		cache = newResponseCache(cfg.Store, cfg.Log, int64(cfg.ResponseCacheMiB)<<20)
	}
	// The metrics read the operations' count, and the operations present errors through the
	// metrics' counting presenter: present is looked up when an error is presented.
	present := presentError(cfg.Log)
	ops := resolvers.NewOperations(cfg.Store, func(ctx context.Context, err error) *gqlerror.Error { return present(ctx, err) }, cfg.Hub.Options().EventBuffer)
	m := newMetrics(cfg.Store, cfg.Hub, ops, cache, rx, cfg.TrustedDocuments != nil)
	present = m.presenting(present)
	srv.AroundOperations(m.aroundOperations)
	if tr != nil {
		srv.AroundOperations(tr.aroundOperations)
		srv.AroundFields(tr.aroundFields)
	}
	srv.Use(ops)
	srv.SetErrorPresenter(present)
	srv.SetRecoverFunc(recoverPanic(cfg.Log))

	mux := http.NewServeMux()
	var gql http.Handler = srv
	if cache != nil {
		gql = cache.wrap(srv)
	}
	mux.Handle("/query", m.countResponses(cors(cfg, negotiate(liveRequests(cfg, budget, onlyQueriesOverGET(cfg.Limits.MaxTokens, capBody(cfg.Limits.MaxBodyBytes, cfg.Limits.BodyTimeout, withRequest(cfg, tr, persisted(cfg, gql)))))))))
	mux.Handle("/export", cors(cfg, exportHandler(cfg)))
	if cfg.MetricsPublic {
		mux.Handle("GET /metrics", m.handler())
	}
	if cfg.GraphiQL {
		g, err := newGraphiQL()
		if err != nil {
			panic(err) // the embedded files are fixed at build time, and tested
		}
		g.register(mux)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := cfg.Store.Ping(ctx); err != nil {
			cfg.Log.WarnContext(ctx, "not ready", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "redis unavailable\n")
			return
		}
		_, _ = io.WriteString(w, "ok\n")
		if mu, ok := cfg.Store.Memory(); ok {
			_, _ = io.WriteString(w, "redis memory: "+mu.String()+"\n")
		}
	})
	return &Handler{Handler: mux, ops: ops, metrics: m, docs: docs, rx: rx}
}

// withRequest authenticates the bearer token, if any, and installs the request state: the
// viewer. Each operation then gets its own copy with a fresh loader (resolvers.Operations). A
// request that presents a token that is invalid or expired, or an Authorization header that is
// not "Bearer <token>", is answered 401 UNAUTHENTICATED, reads included: a client that believes
// it is signed in learns that it must sign in again instead of silently reading anonymously.
func withRequest(cfg Config, tr *tracing, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := &resolvers.Request{}
		if h := header(r, "Authorization"); h != "" {
			token, ok := bearer(h)
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_request"`)
				writeError(w, http.StatusUnauthorized, `send the token as "Authorization: Bearer <token>"`, CodeUnauthenticated)
				return
			}
			req.Token = token
			v, err := cfg.Store.AuthenticateViewer(r.Context(), token)
			var se *store.Error
			switch {
			case err == nil:
				req.Viewer, req.Blocks, req.ShowNSFW = v.User, v.Blocks, v.ShowNSFW
			case store.IsKind(err, store.KindUnauthenticated) && header(r, "Upgrade") != "":
				// A WebSocket learns it from its connection_init, closed with 4403 (live.go).
				req.Token = ""
			case store.IsKind(err, store.KindUnauthenticated):
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				writeError(w, http.StatusUnauthorized, "the token is invalid or has expired: sign in again", CodeUnauthenticated)
				return
			case errors.As(err, &se) && se.Kind == store.KindUnavailable:
				cfg.Log.WarnContext(r.Context(), "authenticate", "err", err)
				writeError(w, http.StatusServiceUnavailable, se.Msg, CodeUnavailable)
				return
			default:
				logFailure(r.Context(), cfg.Log, "authenticate", err)
				writeError(w, http.StatusServiceUnavailable, "internal server error", CodeInternal)
				return
			}
		}
		if strings.Contains(header(r, "Accept"), "text/event-stream") {
			req.LastEventID = r.Header.Get("Last-Event-ID") // the cursor an EventSource resumes from
		}
		w = setCacheControl(w, r, req.Token != "", cfg.PublicMaxAge)
		if pw, ok := w.(*publicWriter); ok {
			defer pw.finish()
		}
		ctx := store.WithClient(tr.extract(r.Context(), r), r.RemoteAddr) // per-address limits on log-ins and sign-ups
		if header(r, "Upgrade") == "" {
			ctx = withRetryAfter(ctx, w)
		}
		next.ServeHTTP(w, r.WithContext(resolvers.WithRequest(ctx, req)))
	})
}

// setCacheControl tells shared caches what they may keep: the answer to an anonymous query over
// GET for maxAge, when it is set, unless it turns out to be an error (decided when the answer is
// written: see publicWriter); nothing else — a signed-in viewer's answers are private. It returns
// the writer to answer through.
func setCacheControl(w http.ResponseWriter, r *http.Request, signedIn bool, maxAge time.Duration) http.ResponseWriter {
	if header(r, "Upgrade") != "" {
		return w
	}
	h := w.Header()
	h.Add("Vary", "Authorization") // negotiate adds Accept
	switch {
	case signedIn:
		h.Set("Cache-Control", "private, no-store")
	case r.Method == http.MethodGet && maxAge > 0 && !strings.Contains(header(r, "Accept"), "text/event-stream"):
		h.Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(maxAge.Seconds())))
		h.Add("Vary", "Origin") // the CORS headers differ by origin
		return &publicWriter{ResponseWriter: w}
	default:
		h.Set("Cache-Control", "no-store")
	}
	return w
}

// publicWriter holds back the status of a publicly cacheable answer until its body starts, and
// makes it no-store if it is not a 200 with data and no errors: a shared cache must not hand
// one client's error (Redis unavailable, a bad id) to everybody.
type publicWriter struct {
	http.ResponseWriter
	status  int
	written bool
}

func (w *publicWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *publicWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.written = true
		if w.status == 0 {
			w.status = http.StatusOK
		}
		if w.status != http.StatusOK || hasErrors(b) {
			w.Header().Set("Cache-Control", "no-store")
		}
		w.ResponseWriter.WriteHeader(w.status)
	}
	return w.ResponseWriter.Write(b)
}

// finish sends a status that was set with no body written.
func (w *publicWriter) finish() {
	if !w.written && w.status != 0 {
		w.Header().Set("Cache-Control", "no-store")
		w.ResponseWriter.WriteHeader(w.status)
	}
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *publicWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// bearer extracts the token of an "Authorization: Bearer <token>" header.
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// capBody refuses a body over max bytes with 413 before anything parses it, and one that takes
// longer than timeout to arrive with 408, closing the connection, so that a client sending a byte
// now and then cannot hold a connection.
func capBody(max int64, timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			writeError(w, http.StatusRequestEntityTooLarge, "the request body is larger than the limit", CodeTooLarge)
			return
		}
		if r.Method == http.MethodGet {
			for _, vs := range r.URL.Query() {
				for _, v := range vs {
					if !validJSONText([]byte(v)) {
						writeError(w, http.StatusBadRequest, "the request is not valid UTF-8 (raw bytes or a lone surrogate escape)", CodeBadUserInput)
						return
					}
				}
			}
		}
		if r.Body != nil && r.Method == http.MethodPost {
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Now().Add(timeout))
			body, err := readAll(http.MaxBytesReader(w, r.Body, max), r.ContentLength)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// The deadline, past, stays: after the answer net/http reads what is left of
				// the body before it closes the connection, and with no deadline it would wait
				// for as long as the client keeps the socket open, holding a -max-conns slot.
				w.Header().Set("Connection", "close")
				writeError(w, http.StatusRequestTimeout, fmt.Sprintf("the request body did not arrive within %s", timeout), CodeBadUserInput)
				return
			}
			_ = rc.SetReadDeadline(time.Time{})
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, http.StatusRequestEntityTooLarge, "the request body is larger than the limit", CodeTooLarge)
				return
			}
			if err != nil {
				writeError(w, http.StatusBadRequest, "could not read the request body", CodeBadUserInput)
				return
			}
			if !validJSONText(body) {
				writeError(w, http.StatusBadRequest, "the request is not valid UTF-8 (raw bytes or a lone surrogate escape)", CodeBadUserInput)
				return
			}
			r.Body = newBufferedBody(body) // read by the layers after this one (see requestBody)
		}
		next.ServeHTTP(w, r)
	})
}

// writeError answers with a GraphQL-shaped error outside the executor: no data entry, in the
// media type negotiate chose (application/graphql-response+json when the client asked for it),
// else in application/json.
func writeError(w http.ResponseWriter, status int, msg, code string) {
	writeErrorExtensions(w, status, msg, map[string]any{"code": code})
}

// writeStoreErrorBody answers a store error met outside the executor with status, its message and
// the extensions the executor would give it (retryAfter, until, …); a RATE_LIMITED one sets
// Retry-After too.
func writeStoreErrorBody(w http.ResponseWriter, status int, se *store.Error) {
	if se.Kind == store.KindRateLimited {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(se)))
	}
	writeErrorExtensions(w, status, se.Msg, storeErrorExtensions(se))
}

// writeErrorExtensions writes a response of one error with its extensions, as writeError does.
func writeErrorExtensions(w http.ResponseWriter, status int, msg string, ext map[string]any) {
	if w.Header().Get("Content-Type") != mediaGraphQLResponse {
		w.Header().Set("Content-Type", mediaJSON)
	}
	// As every answer (docs/API.md, HTTP caching): not kept, and varying with what decides it — an
	// error written before the layers that set these (a 405, 406 or 413, a bad token) included.
	if cc := w.Header().Get("Cache-Control"); cc != "private, no-store" {
		w.Header().Set("Cache-Control", "no-store")
	}
	addVary(w.Header(), "Authorization", "Accept")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"errors": []any{map[string]any{"message": msg, "extensions": ext}},
	})
}

// addVary adds each of names to h's Vary header unless a value already names it.
func addVary(h http.Header, names ...string) {
	have := strings.Join(h.Values("Vary"), ",")
	for _, n := range names {
		found := false
		for _, v := range strings.Split(have, ",") {
			if strings.EqualFold(strings.TrimSpace(v), n) {
				found = true
				break
			}
		}
		if !found {
			h.Add("Vary", n)
		}
	}
}

// validJSONText reports whether a JSON body is valid UTF-8 and its \u escapes name no lone UTF-16
// surrogate. encoding/json would turn either into U+FFFD without a word, and the text would be
// stored altered.
func validJSONText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range b[i+2 : i+6] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // another escape: skip the escaped character
			continue
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false // a low surrogate with no high one before it
		case r >= 0xD800 && r <= 0xDBFF:
			low, ok := hex4(i + 6)
			if !ok || low < 0xDC00 || low > 0xDFFF {
				return false
			}
			i += 11
		default:
			i += 5
		}
	}
	return true
}
