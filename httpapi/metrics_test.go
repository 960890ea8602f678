package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// scrape reads the handler's metrics and parses them with Prometheus's text parser.
func scrape(t *testing.T, h *httpapi.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.Metrics().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// value returns the value of the sample of family whose labels include labels (a counter, a
// gauge, or a histogram's count), and whether there is one.
func value(families map[string]*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	f := families[family]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestMetrics(t *testing.T) {
	b := storetest.Backends(t)[0]
	a := newAPI(t, b, store.Options{})
	token, _ := a.signUp("metered")
	for range 3 { // the first runs; the others, and the anonymous ones, are served from the cache
		a.do(token, `query Count { posts(first: 5) { totalCount } }`, nil)
	}
	a.do("", `query Count { posts(first: 5) { totalCount } }`, nil)
	a.do("", `query Count { posts(first: 5) { totalCount } }`, nil)
	a.do("", `query Bad { posts(first: 0) { totalCount } }`, nil)
	a.do(token, `mutation Write { createPost(input: {title: "measured"}) { id } }`, nil)
	for i := range 205 {
		a.do("", fmt.Sprintf(`query Name%03d { __typename }`, i), nil)
	}
	a.do("", `query `+strings.Repeat("Long", 100)+` { __typename }`, nil)

	m := scrape(t, a.h)
	for _, tc := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		// Names that documents sent in full choose are not labels (see TestMetricsNames).
		{"agora_operations_total", map[string]string{"type": "query", "name": "other", "code": "OK"}, 1 + 205 + 1},
		{"agora_operations_total", map[string]string{"type": "query", "name": "other", "code": "BAD_USER_INPUT"}, 1},
		{"agora_operations_total", map[string]string{"type": "mutation", "name": "other", "code": "OK"}, 1},
		{"agora_operations_total", map[string]string{"type": "mutation", "name": "anonymous", "code": "OK"}, 1},
		{"agora_operation_duration_seconds", map[string]string{"type": "mutation", "name": "other"}, 1},
		{"agora_operation_redis_round_trips", map[string]string{"type": "mutation"}, 2}, // signUp, createPost
		{"agora_errors_total", map[string]string{"code": "BAD_USER_INPUT"}, 1},
		{"agora_response_cache_hits_total", nil, 4},
		// Executed: the first Count (the others are hits), Bad and the 206 names; none handed on.
		{"agora_queries_executed_total", map[string]string{"executor": "readexec"}, 1 + 1 + 206},
		{"agora_queries_executed_total", map[string]string{"executor": "gqlgen"}, 0},
		{"agora_http_responses_total", map[string]string{"status": "200"}, 4 + 2 + 1 + 1 + 205 + 1},
	} {
		got, ok := value(m, tc.family, tc.labels)
		if !ok || got != tc.want {
			t.Errorf("%s%v = %v (%v), want %v", tc.family, tc.labels, got, ok, tc.want)
		}
	}
	if n := len(m["agora_operations_total"].Metric); n > 5 {
		t.Errorf("%d series of agora_operations_total: the name label is not bounded", n)
	}
	for _, s := range m["agora_operations_total"].Metric {
		for _, l := range s.Label {
			if len(l.GetValue()) > 64 {
				t.Errorf("a label of %d bytes", len(l.GetValue()))
			}
		}
	}
	// Redis round trips: a query's reads are counted.
	var rt *dto.Histogram
	for _, s := range m["agora_operation_redis_round_trips"].Metric {
		if s.Label[0].GetValue() == "query" {
			rt = s.Histogram
		}
	}
	if rt == nil || rt.GetSampleSum() < 1 {
		t.Errorf("query round trips %v", rt)
	}
	for _, family := range []string{"go_goroutines", "agora_live_subscriptions", "agora_jobs_done_total", "agora_live_events_delivered_total"} {
		if m[family] == nil {
			t.Errorf("no %s", family)
		}
	}
}

// TestMetricsNames: the names of operations sent in full, which any client chooses, share the
// label "other", so that 500 anonymous names make no series of their own; a persisted query run
// by its hash is counted under its name. The public handler serves no /metrics unless asked.
func TestMetricsNames(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		st := b.NewStore(t, store.Options{})
		hub := newHub(t, st)
		h := httpapi.New(httpapi.Config{Store: st, Hub: hub, ResponseCacheMiB: -1}) // every request runs
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)

		for i := range 500 {
			if r := send(t, srv, map[string]any{"query": fmt.Sprintf(`query Chosen%03d { __typename }`, i)}); len(r.Errors) > 0 {
				t.Fatalf("query %d: %+v", i, r.Errors)
			}
		}
		doc := `query Persisted { __typename }`
		hash := store.QueryHash(doc)
		send(t, srv, map[string]any{"query": doc, "extensions": persistedExt(hash)}) // registers it
		for range 2 {
			if r := send(t, srv, map[string]any{"extensions": persistedExt(hash)}); len(r.Errors) > 0 {
				t.Fatalf("persisted query: %+v", r.Errors)
			}
		}

		m := scrape(t, h)
		names := map[string]bool{}
		for _, s := range m["agora_operations_total"].Metric {
			for _, l := range s.Label {
				if l.GetName() == "name" {
					names[l.GetValue()] = true
				}
			}
		}
		if len(names) != 2 || !names["other"] || !names["Persisted"] {
			t.Errorf("name labels %v, want other and Persisted", names)
		}
		if got, _ := value(m, "agora_operations_total", map[string]string{"name": "other"}); got != 500+1 {
			t.Errorf("other = %v, want 501: the 500 names sent in full and the persisted query's registration", got)
		}
		if got, _ := value(m, "agora_operations_total", map[string]string{"name": "Persisted"}); got != 2 {
			t.Errorf("Persisted = %v, want 2", got)
		}

		if res, err := http.Get(srv.URL + "/metrics"); err != nil {
			t.Fatal(err)
		} else if res.Body.Close(); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET /metrics on the public handler: %d, want 404", res.StatusCode)
		}
		public := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: hub, MetricsPublic: true}))
		t.Cleanup(public.Close)
		if res, err := http.Get(public.URL + "/metrics"); err != nil {
			t.Fatal(err)
		} else if res.Body.Close(); res.StatusCode != http.StatusOK {
			t.Errorf("GET /metrics with MetricsPublic: %d, want 200", res.StatusCode)
		}
	})
}
