package httpapi

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"
)

// The GraphiQL IDE, served from the binary: the page, a small start script of agora's own, and a
// pinned GraphiQL release with its React (graphiql/vendor, refreshed from npm by
// scripts/graphiql-assets, licences in graphiql/vendor/LICENSES). Nothing is loaded from another
// origin, so the IDE works on a network with no internet access.
//
//go:embed graphiql/index.html graphiql/start.js graphiql/vendor/*.js graphiql/vendor/*.css
var graphiqlFiles embed.FS

// graphiqlAssetPrefix is the path under which the page's scripts and styles are served.
const graphiqlAssetPrefix = "/graphiql/"

// graphiqlAsset is one script or style sheet of the page.
type graphiqlAsset struct {
	body        []byte
	contentType string
	etag        string
}

// graphiqlSite serves the GraphiQL page and its assets. Asset names carry a hash of their content
// (graphiql.min.0123456789.js), so that browsers may keep them for a year: a new binary with
// different assets names them differently. The page itself is revalidated on every load.
type graphiqlSite struct {
	page   []byte
	assets map[string]graphiqlAsset // by the name the page uses, hash included
}

// newGraphiQL builds the page from the embedded files.
func newGraphiQL() (*graphiqlSite, error) {
	g := &graphiqlSite{assets: map[string]graphiqlAsset{}}
	names := map[string]string{} // embedded name (graphiql.min.js) → served name
	for _, pattern := range []string{"graphiql/start.js", "graphiql/vendor/*.js", "graphiql/vendor/*.css"} {
		files, err := fs.Glob(graphiqlFiles, pattern)
		if err != nil {
			return nil, fmt.Errorf("graphiql: list %s: %w", pattern, err)
		}
		for _, f := range files {
			body, err := graphiqlFiles.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("graphiql: read %s: %w", f, err)
			}
			sum := sha256.Sum256(body)
			hash := hex.EncodeToString(sum[:])[:12]
			base := path.Base(f)
			ext := path.Ext(base)
			served := strings.TrimSuffix(base, ext) + "." + hash + ext
			ctype := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}[ext]
			g.assets[served] = graphiqlAsset{body: body, contentType: ctype, etag: `"` + hash + `"`}
			names[base] = served
		}
	}
	tmpl, err := template.New("index.html").Funcs(template.FuncMap{
		"asset": func(name string) (string, error) {
			served, ok := names[name]
			if !ok {
				return "", fmt.Errorf("no embedded asset %q", name)
			}
			// Relative to the page, so that the IDE also works behind a proxy that serves agora
			// under a path prefix.
			return strings.TrimPrefix(graphiqlAssetPrefix, "/") + served, nil
		},
	}).ParseFS(graphiqlFiles, "graphiql/index.html")
	if err != nil {
		return nil, fmt.Errorf("graphiql: parse the page: %w", err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, nil); err != nil {
		return nil, fmt.Errorf("graphiql: render the page: %w", err)
	}
	g.page = buf.Bytes()
	return g, nil
}

// register adds GET / (the page) and GET /graphiql/{asset} to mux.
func (g *graphiqlSite) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", g.servePage)
	mux.HandleFunc("GET "+graphiqlAssetPrefix+"{asset}", g.serveAsset)
}

// wsHost is the shape of a Host header that may be written into the page's Content-Security-Policy
// (anything else, such as a ';', could add a directive of its own).
var wsHost = regexp.MustCompile(`^[A-Za-z0-9.-]+(:[0-9]+)?$|^\[[0-9A-Fa-f:.]+\](:[0-9]+)?$`)

// servePage serves the page with a Content-Security-Policy that lets it load scripts, styles and
// data only from this server: GraphiQL's inline styles and data: fonts and images are allowed, and
// so are WebSockets to this host, which 'self' covers only in browsers that follow CSP level 3.
func (g *graphiqlSite) servePage(w http.ResponseWriter, r *http.Request) {
	connect := "'self'"
	if wsHost.MatchString(r.Host) {
		connect += " ws://" + r.Host + " wss://" + r.Host
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "+
		"font-src 'self' data:; img-src 'self' data:; connect-src "+connect+"; "+
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(g.page))
}

// serveAsset serves one of the page's scripts or style sheets, to be cached for a year.
func (g *graphiqlSite) serveAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := g.assets[r.PathValue("asset")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", a.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
