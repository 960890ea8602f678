package resolvers

import (
	"context"
	"sync/atomic"

	"github.com/agora/agora/store"
)

// Request is the per-request state resolvers read from the context: who is asking and the
// request's loader.
type Request struct {
	Viewer store.UserKey // "" when anonymous
	Token  string        // the bearer token the viewer used
	Blocks *store.Blocks // the users the viewer blocks, read with the session; nil when anonymous
	// Live, on a signed-in live stream (WebSocket or server-sent events), follows the viewer's
	// block list and NSFW setting while the stream runs (a live.SessionWatch): the stream's
	// events are filtered with them rather than with Blocks and ShowNSFW, which are what they
	// were when the operation began.
	Live LiveFilters
	// ShowNSFW: the viewer shows NSFW posts (read with the session; false when anonymous). The
	// request's loader hides NSFW posts unless it is set, and the response cache keys on it.
	ShowNSFW bool
	Loader   *store.Loader // batches and caches this request's reads
	// LastEventID is the Last-Event-ID header of a server-sent-events request: the cursor its
	// subscription resumes from when it gives no after argument.
	LastEventID string

	// Recording is set when the response cache may keep this request's response: queries then
	// read through a loader that records the revisions of what they read, and note whether they
	// read anything that depends on the viewer.
	Recording *Recording

	// events is set on the request state of a subscription: each event's response reads
	// through the event's own loader (see live.go).
	events *eventSlot

	// shown remembers what the connections of the operation show (see unshown); nil outside an
	// operation.
	shown *shownMemo
	// needs keeps the Needs of the selections of kept documents, across requests (see
	// needsCache); nil outside an operation.
	needs *needsCache
}

// LiveFilters give a viewer's block list and NSFW setting as they are now.
type LiveFilters interface {
	Blocks() *store.Blocks
	ShowNSFW() bool
}

// blocksNow returns the list of users the viewer blocks as it is now: Live's when the request
// has it, else Blocks.
func (r *Request) blocksNow() *store.Blocks {
	if r.Live != nil {
		return r.Live.Blocks()
	}
	return r.Blocks
}

// showNSFWNow reports whether the viewer shows NSFW posts now: Live's setting when the request
// has it, else ShowNSFW.
func (r *Request) showNSFWNow() bool {
	if r.Live != nil {
		return r.Live.ShowNSFW()
	}
	return r.ShowNSFW
}

// Recording is what the response cache learns about a response while it is being made.
type Recording struct {
	Revisions *store.Revisions
	viewer    atomic.Bool // the response depends on who asks
	query     atomic.Bool // the request ran a query (not a mutation or subscription)
}

// NewRecording returns an empty Recording.
func NewRecording() *Recording { return &Recording{Revisions: store.NewRevisions()} }

// ViewerDependent reports whether the response read anything that depends on the viewer: a
// viewer field, or a block list that left something out or collapsed it.
func (r *Recording) ViewerDependent() bool { return r.viewer.Load() || r.Revisions.ViewerDependent() }

// Query reports whether the request was a query, and only queries.
func (r *Recording) Query() bool { return r.query.Load() }

type requestKey struct{}

// WithRequest returns ctx carrying r.
func WithRequest(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// requestFrom returns the request state; handlers always install one.
func requestFrom(ctx context.Context) *Request {
	if r, ok := ctx.Value(requestKey{}).(*Request); ok {
		return r
	}
	panic("resolvers: no request state in context") // a wiring bug, caught by every test
}

// RequestFrom returns the request state the handler installed, or nil.
func RequestFrom(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// loaderFrom returns the loader of the current operation, or, while a subscription resolves one
// of its events, that event's loader.
func loaderFrom(ctx context.Context) *store.Loader {
	r := requestFrom(ctx)
	if r.events != nil {
		if l := r.events.loader.Load(); l != nil {
			return l
		}
	}
	return r.Loader
}

// viewerFrom returns the viewer ("" when anonymous). Every read of the viewer goes through it,
// so that the response cache knows the response depends on who asks.
func viewerFrom(ctx context.Context) store.UserKey {
	r := requestFrom(ctx)
	if r.Recording != nil {
		r.Recording.viewer.Store(true)
	}
	return r.Viewer
}

// requireViewer returns the viewer, or UNAUTHENTICATED for an anonymous request.
func requireViewer(ctx context.Context) (store.UserKey, error) {
	r := requestFrom(ctx)
	if r.Recording != nil {
		r.Recording.viewer.Store(true)
	}
	if r.Viewer != "" {
		return r.Viewer, nil
	}
	return "", &store.Error{Kind: store.KindUnauthenticated, Msg: "sign in to do this"}
}

// wrote clears the request's cached reads after a mutation so that its result is read fresh.
func wrote(ctx context.Context) { loaderFrom(ctx).Clear() }
