package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestQueryCacheIsBoundedByBytes sends many large, distinct, valid documents — 100 KB of comment
// after a small query, as an anonymous client may — and checks that the parsed-document cache
// stays within its byte budget, plans and shapes going with their documents, while a document
// sent again is still served from it. It used to keep the last 1,000 documents whatever their
// size.
func TestQueryCacheIsBoundedByBytes(t *testing.T) {
	st := storetest.Backends(t)[0].NewStore(t, store.Options{})
	hub := live.New(st, live.Options{})
	t.Cleanup(func() { _ = hub.Close() })
	h := New(Config{Store: st, Hub: hub, QueryCacheMiB: 1, ResponseCacheMiB: -1})
	forgotten := 0
	forget := h.docs.forget
	h.docs.forget = func(d *ast.QueryDocument) { forgotten++; forget(d) }
	post := func(query string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": query})
		req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), `{"data":`) {
			t.Fatalf("status %d: %.200s", rec.Code, rec.Body)
		}
	}
	padding := strings.Repeat("x", 100<<10)
	const sent = 50
	for i := range sent {
		q := "{ posts { totalCount } } # " + strconv.Itoa(i) + padding
		post(q)
		post(q) // measured again, its shape kept with it
	}
	docs, size := h.docs.stats()
	if size > 1<<20 || docs >= sent {
		t.Errorf("%d documents kept in %d bytes, want at most %d bytes", docs, size, 1<<20)
	}
	if docs == 0 {
		t.Fatal("no document kept")
	}
	if forgotten != sent-docs {
		t.Errorf("%d documents left the cache, %d told to readexec", sent-docs, forgotten)
	}
	last := "{ posts { totalCount } } # " + strconv.Itoa(sent-1) + padding
	if _, ok := h.docs.shape(last); !ok {
		t.Error("the last document's shape is not kept with it")
	}
}
