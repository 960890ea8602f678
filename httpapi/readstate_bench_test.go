package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
)

// BenchmarkThreadReadState compares the nested thread page served by the response cache to a
// signed-in reader who marked the thread read, without read state and with `unreadCommentCount
// viewerHasRead` selected (the shared entry, its holes filled with the reader's marks read in
// the revision check's round trip). On a shared machine two benchmarks run one after the other
// see different loads, so each iteration reads both pages, alternately, and the benchmark
// reports the median of each and their ratio (the goal: at most 1.1).
//
//	go test ./httpapi -run '^$' -bench ThreadReadState -benchtime 3000x
func BenchmarkThreadReadState(b *testing.B) {
	be := benchBackend(b)
	st, post := pageWorld(b, be, "nested")
	ctx := context.Background()
	sess, err := st.SignUp(ctx, "reader", "password1")
	if err != nil {
		b.Fatal(err)
	}
	if err := st.MarkPostRead(ctx, sess.User.Key(), post); err != nil {
		b.Fatal(err)
	}
	withState := strings.Replace(nestedQuery, "{ id title score", "{ id title score unreadCommentCount viewerHasRead", 1)
	h := httpapi.New(httpapi.Config{Store: st, Hub: newHub(b, st), ResponseCacheMiB: 64})
	read := func(query string, warm bool) time.Duration {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"p": post}})
		req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+sess.Token)
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req)
		d := time.Since(start)
		if rec.Code != http.StatusOK || !bytes.HasPrefix(rec.Body.Bytes(), []byte(`{"data":`)) {
			b.Fatalf("status %d: %.300s", rec.Code, rec.Body.Bytes())
		}
		if !warm && rec.Header().Get(httpapi.CacheHeader) != "hit" {
			b.Fatalf("not a cache hit")
		}
		return d
	}
	read(nestedQuery, true)
	read(withState, true)
	without, with := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			without = append(without, read(nestedQuery, false))
			with = append(with, read(withState, false))
		} else {
			with = append(with, read(withState, false))
			without = append(without, read(nestedQuery, false))
		}
	}
	b.StopTimer()
	slices.Sort(without)
	slices.Sort(with)
	mw, mr := without[len(without)/2], with[len(with)/2]
	b.ReportMetric(float64(mw.Microseconds()), "without-µs")
	b.ReportMetric(float64(mr.Microseconds()), "with-µs")
	b.ReportMetric(float64(mr)/float64(mw), "ratio")
}
