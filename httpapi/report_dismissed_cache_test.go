package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store/storetest"
)

// TestDismissedReportReadsFresh: a report resolved as DISMISSED (which also counts against its
// reporter, report_dismissed.lua) is read fresh by the cached answers that show it: the lists of
// open and of all reports, the report by id and the count.
func TestDismissedReportReadsFresh(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a, tok := newReportsAPI(t, b)
		p := a.createPost(tok["ann"], "in go", "go")
		id := a.reportOf(tok["ben"], p, "spam")
		queries := []struct{ name, q, before, after string }{
			{"all", `query{reports(group:"go",unresolvedOnly:false){nodes{id resolved resolution}}}`,
				`{"data":{"reports":{"nodes":[{"id":"` + id + `","resolved":false,"resolution":null}]}}}`,
				`{"data":{"reports":{"nodes":[{"id":"` + id + `","resolved":true,"resolution":"DISMISSED"}]}}}`},
			{"open", `query{reports(group:"go"){nodes{id}}}`,
				`{"data":{"reports":{"nodes":[{"id":"` + id + `"}]}}}`, `{"data":{"reports":{"nodes":[]}}}`},
			{"node", `query{node(id:"` + id + `"){... on Report{resolved resolution}}}`,
				`{"data":{"node":{"resolved":false,"resolution":null}}}`,
				`{"data":{"node":{"resolved":true,"resolution":"DISMISSED"}}}`},
		}
		get := func(q string) (string, string) {
			t.Helper()
			body, _ := json.Marshal(map[string]any{"query": q})
			req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+tok["mia"])
			rec := httptest.NewRecorder()
			a.h.ServeHTTP(rec, req)
			var d struct{ Data json.RawMessage }
			if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
				t.Fatal(err)
			}
			return rec.Header().Get(httpapi.CacheHeader), `{"data":` + string(d.Data) + `}`
		}
		for _, q := range queries {
			get(q.q)
			if c, body := get(q.q); c != "hit" || body != q.before {
				t.Fatalf("%s before: %s %s, want hit %s", q.name, c, body, q.before)
			}
		}
		a.do(tok["mia"], `mutation($id:ID!){resolveReport(id:$id,resolution:DISMISSED){id}}`, map[string]any{"id": id}).decode(t, &struct{}{})
		for _, q := range queries {
			if c, body := get(q.q); body != q.after {
				t.Errorf("%s after the dismissal: %s %s, want %s", q.name, c, body, q.after)
			}
		}
	})
}
