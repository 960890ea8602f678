package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
)

// BenchmarkNestedPageSignedIn reads the nested page of BenchmarkPages as a signed-in reader who
// voted on every third of its 800 comments, asking viewerVote at every level, with the response
// cache off: the reader's votes ride in the pipelines of their levels, so the page costs the
// round trips of the anonymous one (4).
//
//	go test ./httpapi -run '^$' -bench NestedPageSignedIn -benchtime 200x -benchmem
func BenchmarkNestedPageSignedIn(b *testing.B) {
	be := benchBackend(b)
	ctx := context.Background()
	st, post := pageWorld(b, be, "nested")
	sess, err := st.SignUp(ctx, "reader", "password1")
	if err != nil {
		b.Fatal(err)
	}
	pid, err := store.PostKey(post)
	if err != nil {
		b.Fatal(err)
	}
	for n := 1; n <= 800; n += 3 {
		dir := 1
		if n%2 == 0 {
			dir = -1
		}
		if _, err := st.VoteComment(ctx, sess.User.Key(), fmt.Sprintf("%s:%s:%d", store.TypeComment, pid, n), dir); err != nil {
			b.Fatal(err)
		}
	}
	q := strings.ReplaceAll(nestedQuery, "upvotes", "upvotes viewerVote")
	body, _ := json.Marshal(map[string]any{"query": q, "variables": map[string]any{"p": post}})
	counted, rt := be.Counted(b)
	st2 := counted.NewStore(b, store.Options{Prefix: st.Options().Prefix})
	h := httpapi.New(httpapi.Config{Store: st2, Hub: newHub(b, st2), ResponseCacheMiB: -1})
	read := func() {
		req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+sess.Token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !bytes.HasPrefix(rec.Body.Bytes(), []byte(`{"data":`)) {
			b.Fatalf("status %d: %.300s", rec.Code, rec.Body.Bytes())
		}
		if up, down := bytes.Count(rec.Body.Bytes(), []byte(`"viewerVote":"UP"`)), bytes.Count(rec.Body.Bytes(), []byte(`"viewerVote":"DOWN"`)); up+down < 200 {
			b.Fatalf("the page shows %d votes up and %d down of the reader's, want about 267", up, down)
		}
	}
	read() // warm: connections
	rt.Reset()
	cpu0 := redisCPU(b, be.Client)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		read()
	}
	b.StopTimer()
	b.ReportMetric(float64(rt.Count())/float64(b.N), "roundtrips/op")
	b.ReportMetric((redisCPU(b, be.Client)-cpu0)/float64(b.N), "redis-µs/op")
}
