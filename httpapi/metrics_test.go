package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// scrape reads /metrics and parses it with Prometheus's text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", res.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
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

	m := scrape(t, a.srv.URL)
	for _, tc := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"agora_operations_total", map[string]string{"type": "query", "name": "Count", "code": "OK"}, 1},
		{"agora_operations_total", map[string]string{"type": "query", "name": "Bad", "code": "BAD_USER_INPUT"}, 1},
		{"agora_operations_total", map[string]string{"type": "mutation", "name": "Write", "code": "OK"}, 1},
		{"agora_operation_duration_seconds", map[string]string{"type": "mutation", "name": "Write"}, 1},
		{"agora_operation_redis_round_trips", map[string]string{"type": "mutation"}, 2}, // signUp, createPost
		{"agora_errors_total", map[string]string{"code": "BAD_USER_INPUT"}, 1},
		{"agora_response_cache_hits_total", nil, 4},
		{"agora_http_responses_total", map[string]string{"status": "200"}, 4 + 2 + 1 + 1 + 205 + 1},
	} {
		got, ok := value(m, tc.family, tc.labels)
		if !ok || got != tc.want {
			t.Errorf("%s%v = %v (%v), want %v", tc.family, tc.labels, got, ok, tc.want)
		}
	}
	// Operation names are capped: the 200 first seen, then "other".
	if got, _ := value(m, "agora_operations_total", map[string]string{"name": "other"}); got == 0 {
		t.Errorf("no operation counted as other after %d names", 205)
	}
	if n := len(m["agora_operations_total"].Metric); n > 200+5 {
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
