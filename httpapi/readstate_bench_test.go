package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
)

// BenchmarkThreadReadState compares, in one run, the nested thread page served by the response
// cache without read state (shared by every reader) and with `unreadCommentCount viewerHasRead`
// selected by a signed-in reader who marked the thread read (their own entry). Compare the ns/op
// of the two: the goal is within 1.1×.
//
//	go test ./httpapi -run '^$' -bench ThreadReadState -benchtime 300x
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
	for _, c := range []struct {
		name, query, token string
	}{
		{"without", nestedQuery, ""},
		{"with", withState, sess.Token},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := httpapi.New(httpapi.Config{Store: st, Hub: newHub(b, st), ResponseCacheMiB: 64})
			body, _ := json.Marshal(map[string]any{"query": c.query, "variables": map[string]any{"p": post}})
			read := func(warm bool) {
				req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if c.token != "" {
					req.Header.Set("Authorization", "Bearer "+c.token)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !bytes.HasPrefix(rec.Body.Bytes(), []byte(`{"data":`)) {
					b.Fatalf("status %d: %.300s", rec.Code, rec.Body.Bytes())
				}
				if !warm && rec.Header().Get(httpapi.CacheHeader) != "hit" {
					b.Fatalf("not a cache hit")
				}
			}
			read(true)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				read(false)
			}
		})
	}
}
