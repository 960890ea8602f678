package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// newGraphiQLServer serves agora's handler with Config.GraphiQL set to on.
func newGraphiQLServer(t *testing.T, on bool) *httptest.Server {
	t.Helper()
	st := storetest.Backends(t)[0].NewStore(t, store.Options{})
	hub := newHub(t, st)
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: hub, GraphiQL: on}))
	t.Cleanup(srv.Close)
	return srv
}

// graphiqlGet GETs u with the request headers hdr (name, value, name, value, ...) and returns the
// response with its body read.
func graphiqlGet(t *testing.T, u string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

var (
	// pageRefs finds what the page loads: scripts, style sheets, icons.
	pageRefs = regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*"([^"]*)"`)
	// absoluteURL finds any URL with a scheme and a host in a text.
	absoluteURL = regexp.MustCompile(`(?i)\b(?:https?|wss?):\/\/[^\s"'<>)]+`)
	// cssURL finds what a style sheet loads.
	cssURL = regexp.MustCompile(`(?i)url\(\s*["']?([^"')]*)|@import\s+["']?([^"';\s]*)`)
	// hashedName is the name of an asset with the hash of its content: graphiql.min.0123456789ab.js.
	hashedName = regexp.MustCompile(`^[a-z.-]+\.([0-9a-f]{12})\.(js|css)$`)
)

// TestGraphiQLServedFromTheBinary loads the page and everything it references from the handler:
// all of it must come from the binary, from the page's own origin, with the right media types and
// cache headers, and the page must name no other origin.
func TestGraphiQLServedFromTheBinary(t *testing.T) {
	srv := newGraphiQLServer(t, true)
	page, body := graphiqlGet(t, srv.URL+"/")
	if page.StatusCode != http.StatusOK {
		t.Fatalf("GET / = %d %s", page.StatusCode, body)
	}
	if ct := page.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("GET / Content-Type %q", ct)
	}
	if cc := page.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("GET / Cache-Control %q: the page names the current assets, so it must be revalidated", cc)
	}
	csp := page.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self';", "style-src 'self' 'unsafe-inline';", "connect-src 'self' ws://" + page.Request.URL.Host + " wss://" + page.Request.URL.Host + ";", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if !strings.Contains(body, "<title>agora · GraphiQL</title>") {
		t.Errorf("GET / is not the GraphiQL page:\n%s", body)
	}
	if u := absoluteURL.FindAllString(body, -1); len(u) > 0 {
		t.Errorf("the page names URLs with a host, %q: it must load everything from its own origin", u)
	}

	base, err := url.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	seen := map[string]bool{}
	for _, m := range pageRefs.FindAllStringSubmatch(body, -1) {
		ref := m[1]
		if ref == "data:," {
			continue // the empty favicon, which keeps browsers from asking for /favicon.ico
		}
		u, err := base.Parse(ref)
		if err != nil || u.Scheme != base.Scheme || u.Host != base.Host {
			t.Errorf("the page references %q, not a path on its own origin", ref)
			continue
		}
		name := path.Base(u.Path)
		hm := hashedName.FindStringSubmatch(name)
		if hm == nil {
			t.Errorf("%s: the name of an asset cached for a year must carry a hash of its content", ref)
			continue
		}
		seen[strings.TrimSuffix(strings.TrimSuffix(name, "."+hm[2]), "."+hm[1])+"."+hm[2]] = true
		res, asset := graphiqlGet(t, u.String())
		if res.StatusCode != http.StatusOK || len(asset) == 0 {
			t.Errorf("GET %s = %d, %d bytes", u.Path, res.StatusCode, len(asset))
			continue
		}
		if ct, want := res.Header.Get("Content-Type"), wantTypes[path.Ext(name)]; ct != want {
			t.Errorf("GET %s Content-Type %q, want %q", u.Path, ct, want)
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=31536000") || !strings.Contains(cc, "immutable") {
			t.Errorf("GET %s Cache-Control %q", u.Path, cc)
		}
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s X-Content-Type-Options %q", u.Path, got)
		}
		sum := sha256.Sum256([]byte(asset))
		if hex.EncodeToString(sum[:])[:12] != hm[1] {
			t.Errorf("GET %s: the content does not have the hash its name carries", u.Path)
		}
		if path.Ext(name) == ".css" {
			for _, cm := range cssURL.FindAllStringSubmatch(asset, -1) {
				if ref := cm[1] + cm[2]; !strings.HasPrefix(ref, "data:") {
					t.Errorf("%s loads %q: a style sheet may only use data: URLs", u.Path, ref)
				}
			}
		}
		etag := res.Header.Get("ETag")
		if again, _ := graphiqlGet(t, u.String(), "If-None-Match", etag); etag == "" || again.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with If-None-Match %s = %d, want 304", u.Path, etag, again.StatusCode)
		}
	}
	for _, want := range []string{"react.production.min.js", "react-dom.production.min.js", "graphiql.min.js", "graphiql.min.css", "start.js"} {
		if !seen[want] {
			t.Errorf("the page does not load %s (it loads %v)", want, seen)
		}
	}

	for _, p := range []string{"/graphiql/graphiql.min.js", "/graphiql/nothing.0123456789ab.js", "/graphiql/", "/index.html"} {
		if res, _ := graphiqlGet(t, srv.URL+p); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, res.StatusCode)
		}
	}
}

// TestGraphiQLOff checks that without Config.GraphiQL neither the page nor its assets are served.
func TestGraphiQLOff(t *testing.T) {
	_, body := graphiqlGet(t, newGraphiQLServer(t, true).URL+"/")
	m := pageRefs.FindAllStringSubmatch(body, -1)
	if len(m) == 0 {
		t.Fatal("the page references nothing")
	}
	off := newGraphiQLServer(t, false)
	if res, body := graphiqlGet(t, off.URL+"/"); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET / = %d %s, want 404", res.StatusCode, body)
	}
	for _, ref := range m {
		if strings.HasPrefix(ref[1], "graphiql/") {
			if res, _ := graphiqlGet(t, off.URL+"/"+ref[1]); res.StatusCode != http.StatusNotFound {
				t.Errorf("GET /%s = %d, want 404", ref[1], res.StatusCode)
			}
		}
	}
	if res, body := graphiqlGet(t, off.URL+"/healthz"); res.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz = %d %s", res.StatusCode, body)
	}
}

// TestGraphiQLPolicyIgnoresStrangeHosts checks that a Host header that could add a directive of
// its own to the Content-Security-Policy is left out of it.
func TestGraphiQLPolicyIgnoresStrangeHosts(t *testing.T) {
	srv := newGraphiQLServer(t, true)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Host = "evil.example;script-src *"
	rec := httptest.NewRecorder()
	srv.Config.Handler.ServeHTTP(rec, req)
	csp := rec.Header().Get("Content-Security-Policy")
	if rec.Code != http.StatusOK || strings.Contains(csp, "evil") || !strings.Contains(csp, "connect-src 'self';") {
		t.Errorf("Host %q: %d, Content-Security-Policy %q", req.Host, rec.Code, csp)
	}
}
