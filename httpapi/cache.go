package httpapi

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agora/agora/resolvers"
	"github.com/agora/agora/store"
)

// The response cache keeps whole query responses and serves one again only after a single round
// trip to Redis has proven that nothing it read has changed.
//
//   - While a query runs, its loader records the revision of every aggregate it reads (a post
//     with its thread, a user, a ranking…), read in the same pipeline just before the data
//     (store.Revisions). Every write script raises the revision of what it changes in the same
//     script. A cached response is served only when every recorded revision is still current, so
//     it is never stale — no TTL, no window — on any number of replicas sharing the Redis.
//   - A response that read nothing about the viewer (no viewerVote, viewer, feed…) is shared by
//     every reader, signed in or not; one that did is kept per viewer. Resolvers report reading
//     the viewer (resolvers.Recording), so a field added later cannot leak another's answer. An
//     answer kept per viewer is kept per standing as a site admin too (store.IsAdmin): what an
//     admin may read depends on it, and no revision records it.
//   - Blocks: a viewer who blocks anyone is never served a shared answer, and an answer that
//     their block list changed is theirs alone; an answer kept for a viewer that consulted their
//     list records their user revision, which blocking and unblocking raise (store.Blocks).
//   - Concurrent misses of one entry run the query once; the others then check its revisions
//     like any hit, so a reader who arrived after a write never gets an answer older than it.
//   - Read state (unreadCommentCount, viewerHasRead) is left out of the entry: a query the cache
//     computes writes holes in its place (store.ReadStateSplice), and every answer served from
//     the entry fills them with the reader's values, read with the revision check in one round
//     trip (store.RevisionsAndMarks). Reading a thread with read state keeps it shared.
//   - Memory is bounded by bytes, least recently used out first. Only complete answers to queries
//     are kept: no errors, status 200.
//   - When Redis cannot be reached, nothing is served from the cache.

// responseCache is the cache; the zero value is not usable, see newResponseCache.
type responseCache struct {
	st  *store.Store
	log *slog.Logger
	max int64 // bytes

	mu      sync.Mutex
	size    int64
	lru     *list.List               // of *cacheEntry, most recently used first
	entries map[string]*list.Element // by entry key
	flights map[string]*flight       // misses being computed, by flight key

	hits, misses atomic.Uint64 // answers served from an entry; answers computed (metrics)
}

// cacheEntry is one kept response.
type cacheEntry struct {
	key         string
	body        []byte
	contentType string
	revKeys     []string
	revVals     []string
	// splice and holes are the read state the body leaves to fill per reader; nil without.
	splice *store.ReadStateHoles
	holes  []store.Hole
}

func (e *cacheEntry) bytes() int64 {
	n := len(e.key) + len(e.body) + len(e.contentType) + 64
	for i := range e.revKeys {
		n += len(e.revKeys[i]) + len(e.revVals[i]) + 32
	}
	if e.splice != nil {
		n += e.splice.Bytes() + 40*len(e.holes)
	}
	return int64(n)
}

// flight is a miss being computed; entry is set when it could be cached.
type flight struct {
	done  chan struct{}
	entry *cacheEntry
}

func newResponseCache(st *store.Store, log *slog.Logger, maxBytes int64) *responseCache {
	return &responseCache{st: st, log: log, max: maxBytes, lru: list.New(),
		entries: make(map[string]*list.Element), flights: make(map[string]*flight)}
}

// wrap serves queries from the cache in front of next (the GraphQL handler). The request state
// (the viewer) is already in the context.
func (c *responseCache) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(streamingKey{}) != nil {
			next.ServeHTTP(w, r) // WebSocket and SSE: live, never cached
			return
		}
		base, ok := c.baseKey(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		req := resolvers.RequestFrom(r.Context())
		if req.ShowNSFW {
			// One shared answer per setting (store/labels.go): those who show NSFW posts share
			// theirs, everyone else (anonymous readers included) the other.
			base += "\x00nsfw"
		}
		viewerKey := base + "\x00v:" + string(req.Viewer)
		// What a site admin may read (another user's email, every report) is decided by this
		// process's admin set, which no revision records: an answer kept for a viewer is kept
		// per standing, so that a grant or a revoke stops their answers of the other one.
		admin := req.Viewer != "" && c.st.IsAdmin(req.Viewer)
		if admin {
			viewerKey += "\x00admin"
		}
		// Serve a kept answer that is still current; otherwise join the flight computing this
		// answer, or be it. The entries are looked up again under the lock that creates flights,
		// so a request never starts a second computation of an answer just kept.
		var tried *cacheEntry
		var f *flight
		joined := false
		// A viewer who blocks anyone is never served a shared answer: theirs may leave things out.
		blocking := req.Blocks.Len() > 0
		for f == nil {
			c.mu.Lock()
			var e *cacheEntry
			if !blocking {
				e = c.peek(base)
			}
			if e == nil {
				e = c.peek(viewerKey)
			}
			if e != nil && e != tried {
				c.mu.Unlock()
				tried = e
				if marks, ok := c.current(r.Context(), e, req.Viewer); ok {
					c.touch(e)
					c.serve(w, e, req.Viewer, marks)
					return
				}
				continue
			}
			if f, joined = c.flights[viewerKey]; !joined {
				f = &flight{done: make(chan struct{})}
				c.flights[viewerKey] = f
			}
			c.mu.Unlock()
		}
		if joined {
			select {
			case <-f.done:
			case <-r.Context().Done():
				return
			}
			if e := f.entry; e != nil && e != tried {
				if marks, ok := c.current(r.Context(), e, req.Viewer); ok {
					c.serve(w, e, req.Viewer, marks)
					return
				}
			}
			c.compute(w, r, next, req, base, viewerKey, admin, func(*cacheEntry) {})
			return
		}
		// The flight ends as soon as the answer is made, before it is written to this client:
		// the others must not wait for a client that reads slowly, or not at all.
		var once sync.Once
		land := func(e *cacheEntry) {
			once.Do(func() {
				c.mu.Lock()
				f.entry = e
				delete(c.flights, viewerKey)
				c.mu.Unlock()
				close(f.done)
			})
		}
		defer land(nil) // a compute that panics or fails lets the others compute their own
		c.compute(w, r, next, req, base, viewerKey, admin, land)
	})
}

// compute runs the query, keeps the answer when it can be, hands the entry kept (or nil) to
// made, and then answers it: made is called before the answer is written to this client, which
// may read it slowly. admin is the viewer's standing as a site admin when the request began,
// which viewerKey names.
func (c *responseCache) compute(w http.ResponseWriter, r *http.Request, next http.Handler, req *resolvers.Request, base, viewerKey string, admin bool, made func(*cacheEntry)) {
	c.misses.Add(1)
	rec := resolvers.NewRecording()
	own := *req
	own.Recording = rec
	w.Header().Set(CacheHeader, "miss")
	// The answer is held until it is complete: the read state it leaves as holes is filled in
	// for this reader before it goes out.
	sp := store.NewReadStateSplice()
	cw := &captureWriter{ResponseWriter: w, status: http.StatusOK, hold: true}
	ctx := store.WithReadStateSplice(resolvers.WithRequest(r.Context(), &own), sp)
	next.ServeHTTP(cw, r.WithContext(ctx))
	var holes []store.Hole
	var filling *store.ReadStateHoles
	if sp.Len() > 0 {
		holes, filling = store.FindHoles(cw.buf.Bytes()), sp.Freeze()
	}
	var marks []string
	if len(holes) > 0 && req.Viewer != "" {
		var err error
		if _, marks, err = c.st.RevisionsAndMarks(r.Context(), nil, nil, req.Viewer, filling.Posts); err != nil {
			c.log.WarnContext(r.Context(), "response cache: read marks", "err", err)
			made(nil)
			w.Header().Del("Content-Length") // the held answer's
			writeError(w, http.StatusServiceUnavailable, "the store is unavailable; retry", CodeUnavailable)
			return
		}
	}
	made(c.keep(cw, rec, req, base, viewerKey, admin, holes, filling))
	fill := newFilling(holes, filling, req.Viewer, marks)
	if len(holes) > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(fill.len(cw.buf.Bytes())))
	}
	w.WriteHeader(cw.status)
	fill.write(w, cw.buf.Bytes())
}

// keep keeps the answer compute captured when it can be, and returns its entry, or nil.
func (c *responseCache) keep(cw *captureWriter, rec *resolvers.Recording, req *resolvers.Request, base, viewerKey string, admin bool, holes []store.Hole, filling *store.ReadStateHoles) *cacheEntry {
	if cw.status != http.StatusOK || !rec.Query() || hasErrors(cw.buf.Bytes()) {
		return nil
	}
	key := base
	if rec.ViewerDependent() {
		key = viewerKey
		if req.Viewer != "" && c.st.IsAdmin(req.Viewer) != admin {
			return nil // the standing changed while the answer was made: it may mix both
		}
	}
	keys, vals, ok := rec.Revisions.Snapshot(key == viewerKey)
	if !ok {
		return nil
	}
	e := &cacheEntry{key: key, body: bytes.Clone(cw.buf.Bytes()), contentType: cw.Header().Get("Content-Type"), revKeys: keys, revVals: vals}
	if len(holes) > 0 {
		e.splice, e.holes = filling, holes
	}
	c.put(e)
	return e
}

// baseKey is the cache key of a query request, before the viewer: a digest of what decides its
// answer. ok is false for requests the cache does not handle.
func (c *responseCache) baseKey(r *http.Request) (string, bool) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		return "", false
	}
	raw, err := readRaw(r) // as the transport reads it: kept under the parameters it runs with
	if err != nil || raw.query == "" || !maybeQuery(raw.query) {
		return "", false
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(r.Header.Get("Accept")), []byte(raw.query), []byte(raw.operationName), raw.variables, raw.extensions} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// current reports whether an entry's revisions are all still current; false when Redis cannot
// say. For an entry with read state to fill, it reads the viewer's marks in the same round trip.
func (c *responseCache) current(ctx context.Context, e *cacheEntry, viewer store.UserKey) ([]string, bool) {
	var pids []string
	if e.splice != nil {
		pids = e.splice.Posts
	}
	ok, marks, err := c.st.RevisionsAndMarks(ctx, e.revKeys, e.revVals, viewer, pids)
	if err != nil {
		c.log.WarnContext(ctx, "response cache: check revisions", "err", err)
		return nil, false
	}
	return marks, ok
}

// CacheHeader names the response header that says whether the response cache answered a query:
// "hit", or "miss" when the query ran.
const CacheHeader = "X-Agora-Cache"

// serve writes a kept answer, with viewer's read state (marks) in its holes.
func (c *responseCache) serve(w http.ResponseWriter, e *cacheEntry, viewer store.UserKey, marks []string) {
	c.hits.Add(1)
	if e.contentType != "" {
		w.Header().Set("Content-Type", e.contentType)
	}
	w.Header().Set(CacheHeader, "hit")
	if e.splice == nil {
		w.Header().Set("Content-Length", strconv.Itoa(len(e.body))) // one write, not chunks
		_, _ = w.Write(e.body)
		return
	}
	fill := newFilling(e.holes, e.splice, viewer, marks)
	w.Header().Set("Content-Length", strconv.Itoa(fill.len(e.body)))
	fill.write(w, e.body)
}

// filling is the reader's read state for the holes of a response.
type filling struct {
	holes        []store.Hole
	unread, read [][]byte // by post index: the JSON values
}

// newFilling computes the values of a response's holes for viewer, whose marks of the holes'
// posts are marks.
func newFilling(holes []store.Hole, h *store.ReadStateHoles, viewer store.UserKey, marks []string) filling {
	f := filling{holes: holes}
	if len(holes) > 0 {
		f.unread, f.read = h.Values(viewer != "", marks)
	}
	return f
}

// len is the length of body once its holes are filled.
func (f filling) len(body []byte) int {
	n := len(body)
	for _, h := range f.holes {
		n += len(f.value(h)) - (h.End - h.Start)
	}
	return n
}

// write writes body with its holes filled: the stretches between them as they are, without
// copying them.
func (f filling) write(w io.Writer, body []byte) {
	at := 0
	for _, h := range f.holes {
		if _, err := w.Write(body[at:h.Start]); err != nil {
			return // the client went away
		}
		if _, err := w.Write(f.value(h)); err != nil {
			return
		}
		at = h.End
	}
	_, _ = w.Write(body[at:])
}

// value is the JSON value of a hole.
func (f filling) value(h store.Hole) []byte {
	vals := f.unread
	if h.Kind == store.HoleRead {
		vals = f.read
	}
	if h.Post < 0 || h.Post >= len(vals) {
		return []byte("null") // cannot happen: holes name the splice's posts
	}
	return vals[h.Post]
}

// peek returns the entry of key, or nil; c.mu is held.
func (c *responseCache) peek(key string) *cacheEntry {
	if el, ok := c.entries[key]; ok {
		return el.Value.(*cacheEntry)
	}
	return nil
}

// touch marks an entry used, if it is still kept.
func (c *responseCache) touch(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.key]; ok && el.Value == e {
		c.lru.MoveToFront(el)
	}
}

// put keeps an entry, replacing the one of its key, and evicts the least recently used entries
// beyond the bound. An entry larger than the whole bound is not kept.
func (c *responseCache) put(e *cacheEntry) {
	n := e.bytes()
	if n > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.key]; ok {
		c.size -= el.Value.(*cacheEntry).bytes()
		c.lru.Remove(el)
	}
	c.entries[e.key] = c.lru.PushFront(e)
	c.size += n
	for c.size > c.max {
		el := c.lru.Back()
		old := el.Value.(*cacheEntry)
		c.lru.Remove(el)
		delete(c.entries, old.key)
		c.size -= old.bytes()
	}
}

// stats returns the number of entries and their bytes.
func (c *responseCache) stats() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.size
}

// hasErrors reports whether a GraphQL response carries errors: gqlgen writes them first.
func hasErrors(body []byte) bool {
	return !bytes.HasPrefix(body, []byte(`{"data":`))
}

// captureWriter passes a response through and keeps a copy of it; with hold, it only keeps it,
// for its caller to write.
type captureWriter struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
	hold   bool
}

func (w *captureWriter) WriteHeader(status int) {
	w.status = status
	if !w.hold {
		w.ResponseWriter.WriteHeader(status)
	}
}

func (w *captureWriter) Write(b []byte) (int, error) {
	w.buf.Write(b)
	if w.hold {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *captureWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// maybeQuery reports whether a document may hold a query: false when its first operation is
// plainly a mutation or a subscription, which the cache never keeps (it then stays out of their
// way). A document it cannot tell about is treated as a query; only queries are ever kept.
func maybeQuery(doc string) bool {
	for i := 0; i < len(doc); {
		switch c := doc[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			i++
		case c == '#':
			for i < len(doc) && doc[i] != '\n' && doc[i] != '\r' {
				i++
			}
		default:
			rest := doc[i:]
			return !strings.HasPrefix(rest, "mutation") && !strings.HasPrefix(rest, "subscription")
		}
	}
	return true
}
