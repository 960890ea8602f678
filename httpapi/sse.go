package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/agora/agora/live"
	"github.com/agora/agora/resolvers"
)

// sseTransport serves an operation, a subscription as a rule, as server-sent events on a POST
// with Accept: text/event-stream: a comment line first, then "event: next" with the response as
// its data for each result, "event: complete" at the end, and a comment line every keep-alive
// interval. A result with a cursor (extensions.cursor) has it as its event's id, which an
// EventSource sends back as Last-Event-ID when it reconnects. Like wsTransport it writes a shared
// subscription's result as the bytes encoded once for all its subscribers (resolvers.Encoded),
// and bounds each write by WriteTimeout with one watch per stream, not a deadline per write.
type sseTransport struct {
	cfg Config
}

var _ graphql.Transport = sseTransport{}

// Supports takes a POST of a JSON body that accepts an event stream.
func (sseTransport) Supports(r *http.Request) bool {
	return wantsEventStream(r) && isJSON(header(r, "Content-Type"))
}

// Do runs the operation and streams its results.
func (t sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	begin := graphql.Now()
	// The body is read as every transport reads it (readParams): one JSON object and nothing
	// after it, refused with the same code and message as a plain POST's.
	params, err := readParams(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), CodeBadUserInput)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: begin, End: graphql.Now()}
	oc, errs := exec.CreateOperationContext(r.Context(), params)
	if errs != nil {
		errs = capRequestErrors(errs)
	}
	ctx := graphql.WithOperationContext(r.Context(), oc)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	s := newSSEStream(w, t.cfg.Live)
	defer s.close()
	if !s.send([]byte(":\n\n")) {
		return
	}
	if errs != nil {
		if _, err := s.next(exec.DispatchError(ctx, errs), nil); err != nil {
			t.cfg.Log.ErrorContext(ctx, "server-sent event", "err", err)
		}
	} else {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		session, err := t.watchSession(ctx, oc, cancel)
		if err != nil {
			logFailure(ctx, t.cfg.Log, "watch the event stream's session", err)
			_, _ = s.next(&graphql.Response{Errors: gqlerror.List{limitError(CodeInternal, "internal server error")}}, nil)
			s.send([]byte("event: complete\n\n"))
			return
		}
		if session != nil {
			defer session.Close()
			// The stream's events are filtered with the viewer's block list and NSFW setting as
			// they are at each event, which the session watch follows.
			r := *resolvers.RequestFrom(ctx)
			r.Live = session
			ctx = resolvers.WithRequest(ctx, &r)
		}
		var enc resolvers.Encoded
		responses, ctx := exec.DispatchOperation(resolvers.WithEncoded(ctx, &enc), oc)
		for resp := responses(ctx); resp != nil; resp = responses(ctx) {
			ok, err := s.next(resp, enc.Take())
			if err != nil {
				t.cfg.Log.ErrorContext(ctx, "server-sent event", "err", err)
			}
			if !ok {
				return
			}
		}
		if session != nil && isClosed(session.Ended()) {
			_, _ = s.next(&graphql.Response{Errors: gqlerror.List{limitError(CodeUnauthenticated, "the session has ended: sign in again")}}, nil)
		}
	}
	s.send([]byte("event: complete\n\n"))
}

// watchSession follows the session of a signed-in subscription (nil for anything else): when
// the session ends — logOut, logOutEverywhere or changePassword, on any replica — stop is called,
// which ends the stream.
func (t sseTransport) watchSession(ctx context.Context, oc *graphql.OperationContext, stop func()) (*live.SessionWatch, error) {
	req := resolvers.RequestFrom(ctx)
	if req == nil || req.Token == "" || oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
		return nil, nil
	}
	w, err := t.cfg.Hub.WatchSession(ctx, req.Token, t.cfg.Live.KeepAlive)
	if err != nil {
		return nil, err
	}
	go func() {
		select {
		case <-w.Ended():
			stop()
		case <-ctx.Done():
		}
	}()
	return w, nil
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// sseStream writes the events of one stream, one at a time.
type sseStream struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	watch *writeWatch

	mu        sync.Mutex
	buf       []byte // the event being written
	failed    bool   // a write failed: the stream is over
	closed    bool
	keepAlive *time.Timer
}

func newSSEStream(w http.ResponseWriter, l Live) *sseStream {
	rc := http.NewResponseController(w)
	s := &sseStream{w: w, rc: rc}
	// A write past its deadline fails, and so ends the stream; net/http clears the deadline
	// when the response ends, before the connection serves another request.
	s.watch = watchWrites(l.WriteTimeout, func() { _ = rc.SetWriteDeadline(time.Now()) })
	s.mu.Lock()
	s.keepAlive = time.AfterFunc(l.KeepAlive, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.closed && s.writeLocked([]byte(": ping\n\n")) {
			s.keepAlive.Reset(l.KeepAlive)
		}
	})
	s.mu.Unlock()
	return s
}

// next writes a result: payload, the response's encoding, or else the response encoded here. It
// reports whether the stream goes on.
func (s *sseStream) next(resp *graphql.Response, payload []byte) (bool, error) {
	if payload == nil {
		var err error
		if payload, err = encodeResponse(resp); err != nil {
			return false, fmt.Errorf("encode the response: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = s.buf[:0]
	if c, ok := resp.Extensions["cursor"].(string); ok && live.CheckCursor(c) == nil {
		s.buf = append(append(append(s.buf, "id: "...), c...), '\n')
	}
	s.buf = append(append(append(s.buf, "event: next\ndata: "...), payload...), "\n\n"...)
	ok := s.writeLocked(s.buf)
	if cap(s.buf) > 64<<10 {
		s.buf = nil // a large result does not stay with the stream
	}
	return ok, nil
}

// send writes b.
func (s *sseStream) send(b []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked(b)
}

// writeLocked writes b and flushes it, under mu.
func (s *sseStream) writeLocked(b []byte) bool {
	if s.failed {
		return false
	}
	s.watch.start()
	_, err := s.w.Write(b)
	if err == nil {
		err = s.rc.Flush()
	}
	s.watch.end()
	s.failed = err != nil
	return !s.failed
}

// close stops the stream's timers.
func (s *sseStream) close() {
	s.mu.Lock()
	s.closed = true
	s.keepAlive.Stop()
	s.mu.Unlock()
	s.watch.stop()
}
