package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

const (
	jsonType = "application/json"
	gqlType  = "application/graphql-response+json"
)

// httpResult is what the GraphQL-over-HTTP tests look at in a response.
type httpResult struct {
	status      int
	contentType string // the media type, parameters dropped
	hasData     bool   // the body has a data entry (null included)
	errors      int
	code        string // extensions.code of the first error
	cache       string // X-Agora-Cache
	body        string
}

// sendGraphQL makes one request to the API and reads what the tests check.
func sendGraphQL(t *testing.T, a *api, method, query, body string, header map[string]string) httpResult {
	t.Helper()
	u := a.srv.URL + "/query"
	if query != "" {
		u += "?" + query
	}
	var rd io.Reader
	if method == http.MethodPost {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := a.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := httpResult{status: res.StatusCode, cache: res.Header.Get(httpapi.CacheHeader), body: string(b)}
	if ct := res.Header.Get("Content-Type"); ct != "" {
		if r.contentType, _, err = mime.ParseMediaType(ct); err != nil {
			t.Fatalf("Content-Type %q: %v", ct, err)
		}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatalf("%s %s: the body is not a JSON object: %s", method, u, b)
	}
	_, r.hasData = fields["data"]
	var errs []gqlError
	if raw, ok := fields["errors"]; ok {
		if err := json.Unmarshal(raw, &errs); err != nil {
			t.Fatalf("errors %s: %v", raw, err)
		}
	}
	r.errors = len(errs)
	if len(errs) > 0 {
		r.code, _ = errs[0].Extensions["code"].(string)
	}
	return r
}

// gqlBody is a JSON body of a query with optional variables.
func gqlBody(query string, vars map[string]any) string {
	b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return string(b)
}

// TestGraphQLOverHTTP checks status, Content-Type and the data entry of responses to every kind
// of request and failure, for each Accept header, as the GraphQL-over-HTTP spec has them.
func TestGraphQLOverHTTP(t *testing.T) {
	accepts := []struct {
		accept string // "" sends no Accept header
		want   string // the media type of the response
	}{
		{"", jsonType},
		{"application/json", jsonType},
		{"*/*", jsonType},
		{"application/*", jsonType},
		{"application/graphql-response+json", gqlType},
		{"application/graphql-response+json, application/json;q=0.9", gqlType},
		{"application/json;q=0.5, application/graphql-response+json", gqlType},
		{"application/json, application/graphql-response+json", jsonType},
		{"application/graphql-response+json;q=0, */*", jsonType},
		{"text/html, */*;q=0.1", jsonType},
		{"application/graphql-response+json; charset=utf-8", gqlType},
	}
	aliases := ""
	for i := range 150 {
		aliases += fmt.Sprintf("a%d: __typename ", i)
	}
	const (
		ok           = iota // executed: 200, data
		fieldError          // executed with a field error: 200, data (null)
		requestError        // not executed: no data; 400 in graphql-response+json, 200 in json
		invalid             // not a well-formed request: 400, no data
	)
	cases := []struct {
		name   string
		method string
		query  string // GET's query string
		body   string // POST's body
		kind   int
		code   string // extensions.code of the first error, when there is one
	}{
		{name: "query", method: http.MethodPost, body: gqlBody(`{ __typename }`, nil), kind: ok},
		{name: "query over GET", method: http.MethodGet, query: url.Values{"query": {`{ __typename }`}}.Encode(), kind: ok},
		{name: "GET with variables", method: http.MethodGet, kind: ok,
			query: url.Values{"query": {`query($n: String!) { user(name: $n) { id } }`}, "variables": {`{"n":"nobody"}`}}.Encode()},
		{name: "null operationName, variables and extensions", method: http.MethodPost, kind: ok,
			body: `{"query":"{ __typename }","operationName":null,"variables":null,"extensions":null}`},
		{name: "field error", method: http.MethodPost, body: gqlBody(`mutation { createPost(input: {title: "x"}) { id } }`, nil), kind: fieldError, code: httpapi.CodeUnauthenticated},
		{name: "parse failure", method: http.MethodPost, body: gqlBody(`{`, nil), kind: requestError, code: "GRAPHQL_PARSE_FAILED"},
		{name: "parse failure over GET", method: http.MethodGet, query: url.Values{"query": {`{`}}.Encode(), kind: requestError, code: "GRAPHQL_PARSE_FAILED"},
		{name: "empty document", method: http.MethodPost, body: gqlBody(``, nil), kind: requestError, code: "GRAPHQL_VALIDATION_FAILED"},
		{name: "validation failure", method: http.MethodPost, body: gqlBody(`{ noSuchField }`, nil), kind: requestError, code: "GRAPHQL_VALIDATION_FAILED"},
		{name: "unused variable", method: http.MethodPost, body: `{"query":"query Q($id: ID!) { __typename }","variables":{"id":null}}`, kind: requestError, code: "GRAPHQL_VALIDATION_FAILED"},
		{name: "variable coercion failure", method: http.MethodPost, body: gqlBody(`query($n: String!) { user(name: $n) { id } }`, map[string]any{"n": nil}), kind: requestError, code: "GRAPHQL_VALIDATION_FAILED"},
		{name: "enum variable in the wrong case", method: http.MethodPost, body: gqlBody(`query($s: PostSort) { posts(sort: $s) { totalCount } }`, map[string]any{"s": "hot"}), kind: requestError, code: "GRAPHQL_VALIDATION_FAILED"},
		{name: "enum variable", method: http.MethodPost, body: gqlBody(`query($s: PostSort) { posts(sort: $s) { totalCount } }`, map[string]any{"s": "HOT"}), kind: ok},
		{name: "variable of the wrong type", method: http.MethodPost, body: gqlBody(`query($n: String!) { user(name: $n) { id } }`, map[string]any{"n": []int{1}}), kind: requestError, code: "GRAPHQL_VALIDATION_FAILED"},
		{name: "operation cannot be determined", method: http.MethodPost, body: gqlBody(`query A { __typename } query B { __typename }`, nil), kind: requestError, code: "GRAPHQL_VALIDATION_FAILED"},
		{name: "unknown operationName", method: http.MethodPost, body: `{"query":"query A { __typename }","operationName":"B"}`, kind: requestError, code: "GRAPHQL_VALIDATION_FAILED"},
		{name: "over a limit", method: http.MethodPost, body: gqlBody(`{ `+aliases+` }`, nil), kind: requestError, code: httpapi.CodeTooAliased},
		{name: "not JSON", method: http.MethodPost, body: `{ "not a JSON`, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "trailing data", method: http.MethodPost, body: `{"query":"{ __typename }"} {}`, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "empty body", method: http.MethodPost, body: ``, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "a JSON array", method: http.MethodPost, body: `[{"query":"{ __typename }"}]`, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "null body", method: http.MethodPost, body: `null`, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "missing query", method: http.MethodPost, body: `{"qeury":"{ __typename }"}`, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "null query", method: http.MethodPost, body: `{"query":null}`, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "number query", method: http.MethodPost, body: `{"query":1}`, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "object query", method: http.MethodPost, body: `{"query":{}}`, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "array operationName", method: http.MethodPost, body: `{"query":"{ __typename }","operationName":[]}`, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "array variables", method: http.MethodPost, body: `{"query":"{ __typename }","variables":[7]}`, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "string variables", method: http.MethodPost, body: `{"query":"{ __typename }","variables":"{}"}`, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "boolean extensions", method: http.MethodPost, body: `{"query":"{ __typename }","extensions":true}`, kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "GET without query", method: http.MethodGet, query: "", kind: invalid, code: httpapi.CodeBadUserInput},
		{name: "GET with variables that are not JSON", method: http.MethodGet, kind: invalid, code: httpapi.CodeBadUserInput,
			query: url.Values{"query": {`{ __typename }`}, "variables": {`{"n":`}}.Encode()},
		{name: "GET with array extensions", method: http.MethodGet, kind: invalid, code: httpapi.CodeBadUserInput,
			query: url.Values{"query": {`{ __typename }`}, "extensions": {`[]`}}.Encode()},
	}
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		for _, ac := range accepts {
			for _, tc := range cases {
				header := map[string]string{}
				if ac.accept != "" {
					header["Accept"] = ac.accept
				}
				got := sendGraphQL(t, a, tc.method, tc.query, tc.body, header)
				wantStatus, wantData := http.StatusOK, true
				switch tc.kind {
				case requestError:
					wantData = false
					if ac.want == gqlType {
						wantStatus = http.StatusBadRequest
					}
				case invalid:
					wantStatus, wantData = http.StatusBadRequest, false
				}
				if got.status != wantStatus || got.contentType != ac.want || got.hasData != wantData ||
					(tc.kind == ok) != (got.errors == 0) || got.code != tc.code {
					t.Errorf("%s, Accept %q: status %d, Content-Type %s, data entry %v, code %q; want %d, %s, %v, %q\n%s",
						tc.name, ac.accept, got.status, got.contentType, got.hasData, got.code, wantStatus, ac.want, wantData, tc.code, got.body)
				}
			}
		}
	})
}

// TestGraphQLOverHTTPOutsideTheExecutor checks the answers written before a request reaches
// GraphQL: they come in the negotiated media type, never with a data entry, and with their own
// status whatever the Accept header; a client that accepts neither media type gets 406.
func TestGraphQLOverHTTPOutsideTheExecutor(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		body := gqlBody(`{ __typename }`, nil)
		for _, tc := range []struct {
			name   string
			method string
			header map[string]string
			body   string
			status int
			ctype  string
			code   string
		}{
			{"bad token", http.MethodPost, map[string]string{"Authorization": "Bearer nope"}, body, http.StatusUnauthorized, jsonType, httpapi.CodeUnauthenticated},
			{"bad token", http.MethodPost, map[string]string{"Authorization": "Bearer nope", "Accept": gqlType}, body, http.StatusUnauthorized, gqlType, httpapi.CodeUnauthenticated},
			{"malformed Authorization", http.MethodGet, map[string]string{"Authorization": "Basic x", "Accept": gqlType}, "", http.StatusUnauthorized, gqlType, httpapi.CodeUnauthenticated},
			{"body over the limit", http.MethodPost, map[string]string{"Accept": gqlType}, `{"query":"` + strings.Repeat(" ", 300<<10) + `{ __typename }"}`, http.StatusRequestEntityTooLarge, gqlType, httpapi.CodeTooLarge},
			{"not UTF-8", http.MethodPost, map[string]string{"Accept": gqlType}, "{\"query\":\"{ \xff }\"}", http.StatusBadRequest, gqlType, httpapi.CodeBadUserInput},
			{"mutation over GET", http.MethodGet, map[string]string{"Accept": gqlType}, "", http.StatusMethodNotAllowed, gqlType, httpapi.CodeMethodNotAllowed},
			{"PUT", http.MethodPut, map[string]string{"Accept": gqlType}, body, http.StatusMethodNotAllowed, gqlType, httpapi.CodeMethodNotAllowed},
			{"neither media type", http.MethodPost, map[string]string{"Accept": "text/html"}, body, http.StatusNotAcceptable, jsonType, httpapi.CodeBadUserInput},
			{"both refused", http.MethodGet, map[string]string{"Accept": "application/json;q=0, application/graphql-response+json;q=0"}, "", http.StatusNotAcceptable, jsonType, httpapi.CodeBadUserInput},
			{"event stream over GET", http.MethodGet, map[string]string{"Accept": "text/event-stream"}, "", http.StatusNotAcceptable, jsonType, httpapi.CodeBadUserInput},
		} {
			t.Run(tc.name, func(t *testing.T) {
				u := a.srv.URL + "/query?" + url.Values{"query": {`{ __typename }`}}.Encode()
				if tc.name == "mutation over GET" {
					u = a.srv.URL + "/query?" + url.Values{"query": {`mutation { logOut }`}}.Encode()
				}
				var rd io.Reader
				if tc.method != http.MethodGet {
					rd = strings.NewReader(tc.body)
				}
				req, _ := http.NewRequest(tc.method, u, rd)
				if tc.method != http.MethodGet {
					req.Header.Set("Content-Type", "application/json")
				}
				for k, v := range tc.header {
					req.Header.Set(k, v)
				}
				res, err := a.srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				var fields map[string]json.RawMessage
				if err := json.NewDecoder(res.Body).Decode(&fields); err != nil {
					t.Fatalf("status %d: the body is not JSON: %v", res.StatusCode, err)
				}
				var errs []gqlError
				_ = json.Unmarshal(fields["errors"], &errs)
				_, hasData := fields["data"]
				code := ""
				if len(errs) > 0 {
					code, _ = errs[0].Extensions["code"].(string)
				}
				if res.StatusCode != tc.status || res.Header.Get("Content-Type") != tc.ctype || hasData || code != tc.code {
					t.Errorf("status %d, Content-Type %q, data entry %v, code %q; want %d, %s, no data, %s",
						res.StatusCode, res.Header.Get("Content-Type"), hasData, code, tc.status, tc.ctype, tc.code)
				}
				// As every answer: no-store, and Vary on what decides it (docs/API.md, HTTP caching).
				if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
					t.Errorf("Cache-Control %q, want no-store", cc)
				}
				vary := strings.Join(res.Header.Values("Vary"), ", ")
				for _, v := range []string{"Authorization", "Accept"} {
					if !strings.Contains(vary, v) {
						t.Errorf("Vary %q lacks %s", vary, v)
					}
				}
			})
		}
	})
}

// TestGraphQLOverHTTPCache checks that the response cache answers a hit with the status and
// Content-Type of the miss, per Accept header, and never keeps a request error.
func TestGraphQLOverHTTPCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		for _, accept := range []string{"", jsonType, gqlType, "*/*"} {
			header := map[string]string{}
			if accept != "" {
				header["Accept"] = accept
			}
			body := gqlBody(`query Cached { posts(first: 3) { totalCount } }`, nil)
			miss := sendGraphQL(t, a, http.MethodPost, "", body, header)
			hit := sendGraphQL(t, a, http.MethodPost, "", body, header)
			if miss.cache != "miss" || hit.cache != "hit" || hit.status != miss.status || hit.contentType != miss.contentType ||
				hit.body != miss.body || miss.status != http.StatusOK || !miss.hasData {
				t.Errorf("Accept %q: miss %d %s %s %s, hit %d %s %s %s", accept, miss.status, miss.contentType, miss.cache, miss.body,
					hit.status, hit.contentType, hit.cache, hit.body)
			}
			for _, bad := range []string{gqlBody(`{ noSuchField }`, nil), gqlBody(`query($n: String!) { user(name: $n) { id } }`, map[string]any{"n": nil})} {
				first := sendGraphQL(t, a, http.MethodPost, "", bad, header)
				again := sendGraphQL(t, a, http.MethodPost, "", bad, header)
				if again.cache == "hit" || again.status != first.status || again.contentType != first.contentType || again.hasData {
					t.Errorf("Accept %q, %s: a request error was served from the cache: %+v then %+v", accept, bad, first, again)
				}
			}
		}
	})
}

// TestGraphQLOverHTTPLeavesStreamsAlone checks that server-sent events keep their own media type
// whatever else the Accept header lists.
func TestGraphQLOverHTTPLeavesStreamsAlone(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		for _, accept := range []string{"text/event-stream", "text/event-stream, application/graphql-response+json"} {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.srv.URL+"/query",
				strings.NewReader(gqlBody(`subscription { postPublished { id } }`, nil)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", accept)
			res, err := a.srv.Client().Do(req)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("Accept %q: status %d, Content-Type %q", accept, res.StatusCode, ct)
			}
			res.Body.Close()
			cancel()
		}
	})
}

// TestResponsesCarryTheirLength: an answer goes out with its Content-Length, not in chunks, from
// the executor and from the response cache alike.
func TestResponsesCarryTheirLength(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		tok, _ := a.signUp("writer")
		for i := range 20 {
			a.createPost(tok, fmt.Sprintf("a post with a title long enough to fill the page %d", i))
		}
		body := `{"query":"{ posts(first: 20) { edges { cursor node { id title createdAt author { name } } } } }"}`
		for _, want := range []string{"miss", "hit"} {
			res, err := http.Post(a.srv.URL+"/query", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != http.StatusOK || len(got) < 2048 {
				t.Fatalf("%s: status %d, %d bytes (the test wants more than net/http buffers)", want, res.StatusCode, len(got))
			}
			if res.Header.Get(httpapi.CacheHeader) != want {
				t.Fatalf("cache %q, want %q", res.Header.Get(httpapi.CacheHeader), want)
			}
			if res.ContentLength != int64(len(got)) || len(res.TransferEncoding) > 0 {
				t.Fatalf("%s: Content-Length %d, Transfer-Encoding %v, for %d bytes", want, res.ContentLength, res.TransferEncoding, len(got))
			}
		}
	})
}

// TestEveryTransportRefusesABadBody checks that a server-sent-events request refuses a body that
// is not one JSON object with a query exactly as a plain POST does: the same status, code and
// message, trailing bytes after the object included.
func TestEveryTransportRefusesABadBody(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		for _, tc := range []struct{ name, body string }{
			{"trailing garbage", `{"query":"subscription { postPublished { id } }"} garbage`},
			{"trailing object", `{"query":"subscription { postPublished { id } }"} {}`},
			{"not an object", `["subscription { postPublished { id } }"]`},
			{"no query", `{"operationName":"x"}`},
			{"query not a string", `{"query":1}`},
			{"variables not an object", `{"query":"subscription { postPublished { id } }","variables":[1]}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				plain := sendGraphQL(t, a, http.MethodPost, "", tc.body, nil)
				if plain.status != http.StatusBadRequest || plain.code != httpapi.CodeBadUserInput || plain.hasData {
					t.Fatalf("plain POST: %+v, want 400 BAD_USER_INPUT", plain)
				}
				// Read by hand, not with sendGraphQL: a stream that was started never ends.
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.srv.URL+"/query", strings.NewReader(tc.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "text/event-stream")
				res, err := a.srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				if res.StatusCode != plain.status {
					t.Fatalf("event stream: status %d (%s), want %d as a plain POST", res.StatusCode, res.Header.Get("Content-Type"), plain.status)
				}
				body, err := io.ReadAll(res.Body)
				if err != nil {
					t.Fatal(err)
				}
				if string(body) != plain.body {
					t.Errorf("event stream: %s; plain POST: %s", body, plain.body)
				}
			})
		}
	})
}
