package httpapi

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/live"
	"github.com/agora/agora/readexec"
	"github.com/agora/agora/resolvers"
	"github.com/agora/agora/store"
)

// Prometheus metrics, in a registry of the handler's own (served on -metrics-addr, or at /metrics
// of the handler with Config.MetricsPublic): operations, their latency and Redis work, errors by
// code, HTTP statuses, live subscriptions, the response cache, jobs, the memory of Redis, and the Go runtime and
// process. Labels stay bounded, whatever clients send: an operation is counted under its name
// only when its document is one the server knows — a trusted document, or a persisted query sent
// by its hash — and then for the first maxOperationNames names seen of at most
// maxOperationNameLen bytes; the others share "other", unnamed ones "anonymous". Error codes and
// statuses are finite sets.

// maxOperationNames and maxOperationNameLen bound the operation-name label: at most 200 names of
// at most 64 bytes, so that clients cannot make the metrics grow.
const (
	maxOperationNames   = 200
	maxOperationNameLen = 64
)

// metrics holds the handler's collectors.
type metrics struct {
	reg        *prometheus.Registry
	operations *prometheus.CounterVec   // type, name, code
	duration   *prometheus.HistogramVec // type, name
	roundTrips *prometheus.HistogramVec // type
	commands   *prometheus.HistogramVec // type
	subscribed *prometheus.CounterVec   // name
	errors     *prometheus.CounterVec   // code
	responses  *prometheus.CounterVec   // status

	// trusted: every operation that runs is a trusted document (-trusted-documents).
	trusted bool

	mu    sync.Mutex
	names map[string]bool
}

// newMetrics registers the handler's collectors; the func-backed ones read their values from
// st, hub, ops, cache and rx (nil when off) at scrape time. trusted says that the server runs
// only trusted documents.
func newMetrics(st *store.Store, hub *live.Hub, ops *resolvers.Operations, cache *responseCache, rx *readexec.Schema, trusted bool) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(), trusted: trusted,
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agora_operations_total",
			Help: "GraphQL queries and mutations executed, by type, operation name and outcome (OK or the first error's code)."},
			[]string{"type", "name", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agora_operation_duration_seconds",
			Help:    "Time to execute a query or mutation, from its arrival to its response.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}},
			[]string{"type", "name"}),
		roundTrips: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agora_operation_redis_round_trips",
			Help:    "Redis round trips (pipelines) one query or mutation made.",
			Buckets: []float64{0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 50}},
			[]string{"type"}),
		commands: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agora_operation_redis_commands",
			Help:    "Redis commands and script calls one query or mutation sent.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 9)},
			[]string{"type"}),
		subscribed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agora_subscriptions_started_total",
			Help: "Subscriptions started, by operation name."}, []string{"name"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agora_errors_total",
			Help: "GraphQL errors answered, by code: RATE_LIMITED counts refused writes, SLOW_SUBSCRIBER subscribers dropped."},
			[]string{"code"}),
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agora_http_responses_total",
			Help: "HTTP responses of /query, by status (429: refused by a rate or stream limit)."}, []string{"status"}),
		names: map[string]bool{},
	}
	m.reg.MustRegister(m.operations, m.duration, m.roundTrips, m.commands, m.subscribed, m.errors, m.responses,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "agora_live_subscriptions",
			Help: "Subscriptions running on this process, over every transport."},
			func() float64 { return float64(ops.Subscriptions()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "agora_live_channels",
			Help: "Redis pub/sub channels this process is subscribed to."},
			func() float64 { return float64(hub.Stats().Channels) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "agora_live_events_delivered_total",
			Help: "Live events handed to the local executions of subscriptions."},
			func() float64 { return float64(hub.Stats().Delivered) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "agora_live_events_dropped_total",
			Help: "Live events a full execution buffer could not take (caught up from the channel's log instead)."},
			func() float64 { return float64(hub.Stats().Dropped) }),
	)
	// The memory of Redis, as the store's background loop last read it (every 15s) on the fullest
	// master: not read per scrape, so that scrapes never cost Redis an INFO.
	memory := func(f func(store.MemoryUsage) float64) func() float64 {
		return func() float64 {
			if mu, ok := st.Memory(); ok {
				return f(mu)
			}
			return 0
		}
	}
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "agora_redis_memory_used_bytes",
			Help: "Memory Redis uses (used_memory) on its fullest master, read every 15s; 0 until read."},
			memory(func(mu store.MemoryUsage) float64 { return float64(mu.Used) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "agora_redis_memory_max_bytes",
			Help: "maxmemory of that master; 0 is no limit."},
			memory(func(mu store.MemoryUsage) float64 { return float64(mu.Max) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "agora_redis_memory_used_ratio",
			Help: "Memory used over maxmemory on the fullest master (0 without a limit); the log warns at 0.8 and 0.95."},
			memory(func(mu store.MemoryUsage) float64 { return mu.Ratio() })),
	)
	jobs := st.Jobs()
	for _, c := range []struct {
		name, help string
		value      func() uint64
	}{
		{"agora_jobs_done_total", "Background jobs this process finished.", func() uint64 { return jobs.Stats().Done }},
		{"agora_jobs_failed_total", "Background job runs that failed and will be retried.", func() uint64 { return jobs.Stats().Failed }},
		{"agora_jobs_dead_total", "Background jobs set aside as dead letters by this process.", func() uint64 { return jobs.Stats().Dead }},
	} {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.name, Help: c.help},
			func() float64 { return float64(c.value()) }))
	}
	if cache != nil {
		m.reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "agora_response_cache_hits_total",
				Help: "Query answers served from the response cache."}, func() float64 { return float64(cache.hits.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "agora_response_cache_misses_total",
				Help: "Cacheable query answers computed."}, func() float64 { return float64(cache.misses.Load()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "agora_response_cache_bytes",
				Help: "Bytes of answers the response cache holds."}, func() float64 { _, b := cache.stats(); return float64(b) }),
		)
	}
	if rx != nil {
		for _, e := range []struct {
			executor string
			value    func() uint64
		}{
			{"readexec", func() uint64 { ran, _ := rx.Counts(); return ran }},
			{"gqlgen", func() uint64 { _, handed := rx.Counts(); return handed }},
		} {
			m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "agora_queries_executed_total",
				Help:        "Queries executed, by executor: readexec plans known fields, gqlgen runs the rest.",
				ConstLabels: prometheus.Labels{"executor": e.executor}}, func() float64 { return float64(e.value()) }))
		}
	}
	return m
}

// handler serves the metrics in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// name returns the label of an operation name; known says that the operation's document is one
// the server knows (see above), without which any client could choose the labels.
func (m *metrics) name(n string, known bool) string {
	if n == "" {
		return "anonymous"
	}
	if !known || len(n) > maxOperationNameLen {
		return "other"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.names[n] {
		return n
	}
	if len(m.names) >= maxOperationNames {
		return "other"
	}
	m.names[n] = true
	return n
}

// aroundOperations counts each operation, times it and counts its Redis work. A subscription is
// counted when it starts; its events are counted by the live metrics.
func (m *metrics) aroundOperations(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc == nil || oc.Operation == nil {
		return next(ctx)
	}
	name := m.name(oc.Operation.Name, m.trusted || knownDocument(ctx))
	if oc.Operation.Operation == ast.Subscription {
		m.subscribed.WithLabelValues(name).Inc()
		return next(ctx)
	}
	typ := string(oc.Operation.Operation)
	ctx, count := rdb.WithRedisCount(ctx)
	h := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := h(ctx)
		code := "OK"
		if resp != nil && len(resp.Errors) > 0 {
			code = errorCode(resp.Errors[0])
		}
		m.operations.WithLabelValues(typ, name, code).Inc()
		m.duration.WithLabelValues(typ, name).Observe(time.Since(oc.Stats.OperationStart).Seconds())
		m.roundTrips.WithLabelValues(typ).Observe(float64(count.RoundTrips.Load()))
		m.commands.WithLabelValues(typ).Observe(float64(count.Commands.Load()))
		return resp
	}
}

// errorCode is the extensions.code of a presented error.
func errorCode(e *gqlerror.Error) string {
	if c, ok := e.Extensions["code"].(string); ok {
		return c
	}
	return CodeInternal
}

// presenting counts every error the presenter answers, by code.
func (m *metrics) presenting(present graphql.ErrorPresenterFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		e := present(ctx, err)
		m.errors.WithLabelValues(errorCode(e)).Inc()
		return e
	}
}

// countResponses counts the HTTP statuses of next's responses (those it writes; a WebSocket
// upgrade counts as 101).
func (m *metrics) countResponses(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		m.responses.WithLabelValues(strconv.Itoa(status)).Inc()
	})
}

// statusWriter remembers the status of a response. It passes on Flush and Hijack, which the
// streaming transports need, and Unwrap for http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// Flush sends what is buffered (server-sent events).
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection to a WebSocket; the response counts as 101.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the connection cannot be hijacked")
	}
	if w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return h.Hijack()
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
