package resolvers

import (
	"context"

	"github.com/agora/agora/store"
)

// Request is the per-request state resolvers read from the context: who is asking and the
// request's loader.
type Request struct {
	ViewerID string        // global user id; "" when anonymous
	Token    string        // the bearer token the viewer used
	AuthErr  error         // set when a token was sent but is invalid or expired
	Loader   *store.Loader // batches and caches this request's reads

	// events is set on the request state of a subscription: each event's response reads
	// through the event's own loader (see live.go).
	events *eventSlot
}

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

func viewerFrom(ctx context.Context) string { return requestFrom(ctx).ViewerID }

// requireViewer returns the viewer's id, or UNAUTHENTICATED for an anonymous request.
func requireViewer(ctx context.Context) (string, error) {
	r := requestFrom(ctx)
	if r.ViewerID != "" {
		return r.ViewerID, nil
	}
	if r.AuthErr != nil {
		return "", r.AuthErr
	}
	return "", &store.Error{Kind: store.KindUnauthenticated, Msg: "sign in to do this"}
}

// requireViewerKey is requireViewer returning the user key the store's writes take.
func requireViewerKey(ctx context.Context) (string, error) {
	id, err := requireViewer(ctx)
	if err != nil {
		return "", err
	}
	return store.UserKey(id)
}

// wrote clears the request's cached reads after a mutation so that its result is read fresh.
func wrote(ctx context.Context) { loaderFrom(ctx).Clear() }
