package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestAPIExport: GET /export streams the account of the bearer token as a JSON document, refuses
// a missing or bad token with 401 UNAUTHENTICATED, and past the exports per day answers 429
// RATE_LIMITED with Retry-After.
func TestAPIExport(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: 100, ExportsPerDay: 2})
		token, id := a.signUp("ann")
		post := a.createPost(token, "hello")
		root, _ := a.signUp("root")
		a.grantAdmin("root")
		removed := a.createPost(token, "removed")
		if r := a.do(root, `mutation($p:ID!){removePost(id:$p,reason:"spam"){id}}`, map[string]any{"p": removed}); len(r.Errors) > 0 {
			t.Fatalf("removePost: %+v", r.Errors)
		}
		theirs := a.createPost(root, "theirs")
		if r := a.do(token, `mutation($p:ID!){reportPost(id:$p,reason:"rude"){id}}`, map[string]any{"p": theirs}); len(r.Errors) > 0 {
			t.Fatalf("reportPost: %+v", r.Errors)
		}
		get := func(method, auth string) (*http.Response, string) {
			t.Helper()
			req, _ := http.NewRequest(method, a.srv.URL+"/export", nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			res, err := a.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			return res, string(body)
		}
		code := func(body string) string {
			var e struct {
				Errors []struct{ Extensions struct{ Code string } }
			}
			if json.Unmarshal([]byte(body), &e) != nil || len(e.Errors) != 1 {
				return "not a JSON error: " + body
			}
			return e.Errors[0].Extensions.Code
		}
		for _, tc := range []struct{ name, auth string }{
			{"no token", ""},
			{"not bearer", "Basic YW5uOnBhc3N3b3JkMQ=="},
			{"bad token", "Bearer ann.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
			{"malformed token", "Bearer nonsense"},
		} {
			res, body := get(http.MethodGet, tc.auth)
			if res.StatusCode != http.StatusUnauthorized || code(body) != "UNAUTHENTICATED" || res.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: %d %s, want 401 UNAUTHENTICATED", tc.name, res.StatusCode, body)
			}
		}
		if res, body := get(http.MethodPost, "Bearer "+token); res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST: %d %s, want 405", res.StatusCode, body)
		}
		if res, _ := get(http.MethodHead, "Bearer "+token); res.StatusCode != http.StatusOK {
			t.Errorf("HEAD: %d, want 200", res.StatusCode)
		}

		res, body := get(http.MethodGet, "Bearer "+token)
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") ||
			!strings.Contains(res.Header.Get("Content-Disposition"), `filename="agora-ann-`) ||
			res.Header.Get("Cache-Control") != "private, no-store" {
			t.Fatalf("export: %d %v", res.StatusCode, res.Header)
		}
		var d struct {
			User            struct{ ID string }
			Posts           []struct{ ID string }
			RemovedPosts    []struct{ ID string }
			RemovedComments []struct{ ID string }
			Reports         []struct{ PostID, Reason, Status string }
			Sessions        []struct{ Current bool }
			Complete        bool
		}
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatalf("export is not JSON: %v\n%s", err, body)
		}
		if d.User.ID != id || len(d.Posts) != 1 || d.Posts[0].ID != post || len(d.Sessions) != 1 || !d.Sessions[0].Current || !d.Complete {
			t.Errorf("export = %s", body)
		}
		if len(d.RemovedPosts) != 1 || d.RemovedPosts[0].ID != removed || d.RemovedComments == nil ||
			len(d.Reports) != 1 || d.Reports[0] != (struct{ PostID, Reason, Status string }{theirs, "rude", "OPEN"}) {
			t.Errorf("removed posts %+v, removed comments %+v, reports %+v; want the removed post and the open report",
				d.RemovedPosts, d.RemovedComments, d.Reports)
		}
		if strings.Contains(body, strings.SplitN(token, ".", 2)[1]) {
			t.Error("the export holds the session's token")
		}

		get(http.MethodGet, "Bearer "+token) // the second of the day
		res, body = get(http.MethodGet, "Bearer "+token)
		if res.StatusCode != http.StatusTooManyRequests || code(body) != "RATE_LIMITED" || res.Header.Get("Retry-After") == "" {
			t.Errorf("third export in a day: %d %v %s, want 429 RATE_LIMITED with Retry-After", res.StatusCode, res.Header, body)
		}
		// RATE_LIMITED means one thing everywhere: extensions.retryAfter gives the seconds to
		// wait, the Retry-After header's.
		var limited struct {
			Errors []struct{ Extensions struct{ RetryAfter *int } }
		}
		if err := json.Unmarshal([]byte(body), &limited); err != nil || len(limited.Errors) != 1 ||
			limited.Errors[0].Extensions.RetryAfter == nil ||
			strconv.Itoa(*limited.Errors[0].Extensions.RetryAfter) != res.Header.Get("Retry-After") {
			t.Errorf("third export in a day: %s with Retry-After %q, want extensions.retryAfter the same", body, res.Header.Get("Retry-After"))
		}
	})
}

// TestExportCORS: a web app on an allowed origin may fetch the export.
func TestExportCORS(t *testing.T) {
	b := storetest.Backends(t)[0]
	st := b.NewStore(t, store.Options{})
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: newHub(t, st),
		Live: httpapi.Live{AllowedOrigins: []string{"https://app.example.org"}}}))
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/export", nil)
	req.Header.Set("Origin", "https://app.example.org")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "authorization")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.org" ||
		!strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", res.StatusCode, res.Header)
	}
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/export", nil)
	req.Header.Set("Origin", "https://app.example.org")
	res, err = srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.org" {
		t.Errorf("GET without a token: %d %v, want 401 the app can read", res.StatusCode, res.Header)
	}
}
