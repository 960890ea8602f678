package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// send POSTs a raw GraphQL request body to srv and decodes the answer.
func send(t *testing.T, srv *httptest.Server, body map[string]any) response {
	t.Helper()
	raw, _ := json.Marshal(body)
	res, err := http.Post(srv.URL+"/query", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := response{Status: res.StatusCode}
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return r
}

// sendGET sends a GraphQL request over GET with the given parameters.
func sendGET(t *testing.T, srv *httptest.Server, params url.Values) response {
	t.Helper()
	res, err := http.Get(srv.URL + "/query?" + params.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := response{Status: res.StatusCode}
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return r
}

func persistedExt(hash string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
}

func TestAutomaticPersistedQueries(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		// A second replica on the same Redis.
		hub := newHub(t, a.store)
		other := httptest.NewServer(httpapi.New(httpapi.Config{Store: a.store, Hub: hub}))
		t.Cleanup(other.Close)

		const q = `query Count { posts(first: 1) { totalCount } }`
		hash := store.QueryHash(q)

		r := send(t, a.srv, map[string]any{"extensions": persistedExt(hash)})
		if r.Status != http.StatusOK || r.code() != "PERSISTED_QUERY_NOT_FOUND" || r.Errors[0].Message != "PersistedQueryNotFound" {
			t.Fatalf("unknown hash: %d %+v", r.Status, r.Errors)
		}
		r = send(t, a.srv, map[string]any{"query": q, "extensions": persistedExt(hash)})
		var d struct{ Posts struct{ TotalCount int } }
		r.decode(t, &d)
		// Now every replica knows it, over POST and GET.
		send(t, other, map[string]any{"extensions": persistedExt(hash)}).decode(t, &d)
		ext, _ := json.Marshal(persistedExt(hash))
		sendGET(t, other, url.Values{"extensions": {string(ext)}}).decode(t, &d)

		if r := send(t, a.srv, map[string]any{"query": q + " ", "extensions": persistedExt(hash)}); r.code() != "BAD_USER_INPUT" {
			t.Errorf("a hash that is not the query's: %+v", r.Errors)
		}
		for _, bad := range []map[string]any{
			{"persistedQuery": map[string]any{"version": 2, "sha256Hash": hash}},
			{"persistedQuery": map[string]any{"version": 1, "sha256Hash": "abc"}},
			{"persistedQuery": map[string]any{"version": 1, "sha256Hash": strings.ToUpper(hash)}},
		} {
			if r := send(t, a.srv, map[string]any{"extensions": bad}); r.code() != "BAD_USER_INPUT" {
				t.Errorf("%v: %+v", bad, r.Errors)
			}
		}

		// A persisted mutation is still refused over GET.
		const m = `mutation { logOut }`
		send(t, a.srv, map[string]any{"query": m, "extensions": persistedExt(store.QueryHash(m))})
		ext, _ = json.Marshal(persistedExt(store.QueryHash(m)))
		if r := sendGET(t, a.srv, url.Values{"extensions": {string(ext)}}); r.Status != http.StatusMethodNotAllowed {
			t.Errorf("persisted mutation over GET: %d %+v", r.Status, r.Errors)
		}

		// Every query's answer says what it cost.
		var cost struct {
			Extensions struct {
				Cost struct{ Requested, Limit int }
			}
		}
		raw, _ := json.Marshal(map[string]any{"query": q})
		res, err := http.Post(a.srv.URL+"/query", "application/json", bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if err := json.NewDecoder(res.Body).Decode(&cost); err != nil {
			t.Fatal(err)
		}
		if cost.Extensions.Cost.Requested < 1 || cost.Extensions.Cost.Limit != httpapi.DefaultLimits.MaxComplexity {
			t.Errorf("extensions.cost %+v", cost.Extensions.Cost)
		}
	})
}

// TestPersistedQueryRegistrationsAreBounded: one address adds at most 20 documents a minute
// (documents already kept do not count), documents over 16 KiB and documents that do not parse
// are never kept — and every one of those requests still runs what it sent.
func TestPersistedQueryRegistrationsAreBounded(t *testing.T) {
	b := storetest.Backends(t)[0]
	a := newAPI(t, b, store.Options{WriteLimit: 120})
	doc := func(i int) string { return fmt.Sprintf(`query Q%d { posts(first: 1) { totalCount } }`, i) }
	for i := range 25 {
		for range 2 { // the second time is not a new document
			r := send(t, a.srv, map[string]any{"query": doc(i), "extensions": persistedExt(store.QueryHash(doc(i)))})
			if len(r.Errors) > 0 || r.Status != http.StatusOK {
				t.Fatalf("registering document %d: %d %+v", i, r.Status, r.Errors)
			}
		}
	}
	kept := 0
	for i := range 25 {
		if r := send(t, a.srv, map[string]any{"extensions": persistedExt(store.QueryHash(doc(i)))}); len(r.Errors) == 0 {
			kept++
		}
	}
	if kept != 20 {
		t.Fatalf("%d of 25 documents kept, want the 20 a minute one address may add", kept)
	}
	huge := `query Huge { posts(first: 1) { totalCount } }` + strings.Repeat(" ", store.MaxPersistedQueryBytes)
	garbage := `this is not GraphQL`
	for _, q := range []string{huge, garbage} {
		send(t, a.srv, map[string]any{"query": q, "extensions": persistedExt(store.QueryHash(q))})
		if r := send(t, a.srv, map[string]any{"extensions": persistedExt(store.QueryHash(q))}); r.code() != "PERSISTED_QUERY_NOT_FOUND" {
			t.Errorf("a document of %d bytes was kept: %+v", len(q), r.Errors)
		}
	}
}

func TestTrustedDocuments(t *testing.T) {
	const trusted = `query Count { posts(first: 1) { totalCount } }`
	dir := t.TempDir()
	for name, manifest := range map[string]any{
		"apollo.json": map[string]any{"format": "apollo-persisted-query-manifest", "version": 1,
			"operations": []any{map[string]any{"id": store.QueryHash(trusted), "name": "Count", "type": "query", "body": trusted}}},
		"plain.json": map[string]string{store.QueryHash(trusted): trusted},
		"wrong.json": map[string]string{store.QueryHash("{ a }"): trusted},
	} {
		raw, _ := json.Marshal(manifest)
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := httpapi.LoadTrustedDocuments(filepath.Join(dir, "wrong.json")); err == nil {
		t.Fatal("a manifest whose hash is not its document's loaded")
	}
	plain, err := httpapi.LoadTrustedDocuments(filepath.Join(dir, "plain.json"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := httpapi.LoadTrustedDocuments(filepath.Join(dir, "apollo.json"))
	if err != nil || len(docs) != 1 || len(plain) != 1 {
		t.Fatalf("manifests: %v %v %v", docs, plain, err)
	}
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		st := b.NewStore(t, store.Options{})
		hub := live.New(st, live.Options{})
		t.Cleanup(func() { _ = hub.Close() })
		srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: hub, TrustedDocuments: docs}))
		t.Cleanup(srv.Close)
		var d struct{ Posts struct{ TotalCount int } }
		send(t, srv, map[string]any{"extensions": persistedExt(store.QueryHash(trusted))}).decode(t, &d)
		send(t, srv, map[string]any{"query": trusted}).decode(t, &d)
		const other = `{ posts(first: 2) { totalCount } }`
		for name, body := range map[string]map[string]any{
			"in full":       {"query": other},
			"with its hash": {"query": other, "extensions": persistedExt(store.QueryHash(other))},
		} {
			if r := send(t, srv, body); r.code() != "TRUSTED_DOCUMENTS_ONLY" {
				t.Errorf("an untrusted document %s: %d %+v", name, r.Status, r.Errors)
			}
		}
		if r := send(t, srv, map[string]any{"extensions": persistedExt(store.QueryHash(other))}); r.code() != "PERSISTED_QUERY_NOT_FOUND" {
			t.Errorf("an unknown hash: %+v", r.Errors)
		}
		// Subscriptions are held to the manifest too (here over SSE).
		raw, _ := json.Marshal(map[string]any{"query": `subscription { postPublished { id } }`})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/query", bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(res.Body)
		if !strings.Contains(buf.String(), "TRUSTED_DOCUMENTS_ONLY") {
			t.Errorf("an untrusted subscription: %d %s", res.StatusCode, buf.String())
		}
	})
}

func TestCacheControl(t *testing.T) {
	b := storetest.Backends(t)[0]
	st := b.NewStore(t, store.Options{})
	hub := newHub(t, st)
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: hub, PublicMaxAge: time.Minute}))
	t.Cleanup(srv.Close)
	a := newAPI(t, b, store.Options{Prefix: st.Options().Prefix})
	token, _ := a.signUp("carol")
	q := url.Values{"query": {`{ posts(first: 1) { totalCount } }`}}
	unknown, _ := json.Marshal(persistedExt(store.QueryHash("{ nothing }")))
	for _, tc := range []struct {
		name, method, url, token, want string
	}{
		{"anonymous GET", http.MethodGet, srv.URL + "/query?" + q.Encode(), "", "public, max-age=60"},
		{"anonymous GET, no max age set", http.MethodGet, a.srv.URL + "/query?" + q.Encode(), "", "no-store"},
		{"signed-in GET", http.MethodGet, srv.URL + "/query?" + q.Encode(), token, "private, no-store"},
		{"anonymous POST", http.MethodPost, srv.URL + "/query", "", "no-store"},
		{"an error before execution", http.MethodGet, srv.URL + "/query?" + url.Values{"extensions": {string(unknown)}}.Encode(), "", "no-store"},
		{"an error in execution", http.MethodGet, srv.URL + "/query?" + url.Values{"query": {`{ post(id: "garbage") { id } }`}}.Encode(), "", "no-store"},
		{"a validation error", http.MethodGet, srv.URL + "/query?" + url.Values{"query": {`{ nosuchfield }`}}.Encode(), "", "no-store"},
	} {
		var body *bytes.Reader
		if tc.method == http.MethodPost {
			raw, _ := json.Marshal(map[string]any{"query": q.Get("query")})
			body = bytes.NewReader(raw)
		} else {
			body = bytes.NewReader(nil)
		}
		req, _ := http.NewRequest(tc.method, tc.url, body)
		req.Header.Set("Content-Type", "application/json")
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got := res.Header.Get("Cache-Control"); got != tc.want {
			t.Errorf("%s: Cache-Control %q, want %q", tc.name, got, tc.want)
		}
		if vary := strings.Join(res.Header.Values("Vary"), ", "); !strings.Contains(vary, "Authorization") || !strings.Contains(vary, "Accept") {
			t.Errorf("%s: Vary %q", tc.name, vary)
		}
	}
}
