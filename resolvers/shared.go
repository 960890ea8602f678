package resolvers

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
)

// Subscriptions that would compute the same responses share one execution: subscribers whose
// document, operation name and variables are the same, and — when the document reads a field that
// depends on the viewer (viewerFields), or when the subscriber blocks anyone (whose loader
// collapses the comments of the users they block: live.Event.LoaderOf) — who are the same viewer,
// join one run of the operation in the process. A run whose document reads no viewer field executes as an anonymous viewer and
// serves every viewer. The run executes
// each event once, encodes the response to JSON once, and hands both to every subscriber's own
// bounded queue; a transport then writes the same bytes to each client (see Encoded), at that
// client's pace. A subscriber whose queue is full is ended with SLOW_SUBSCRIBER, and only it; the run goes
// on while it has subscribers and stops with the last. A subscription resumed from a cursor
// replays its own past, so it runs alone.

// sharing holds the process's shared runs by key.
type sharing struct {
	buffer  int                        // responses a subscriber may fall behind
	present graphql.ErrorPresenterFunc // presents the error that ends a subscriber early

	mu   sync.Mutex
	runs map[string]*sharedRun
}

// sharedRun is one execution of a subscription and its subscribers.
type sharedRun struct {
	key    string
	cancel context.CancelFunc
	subs   map[*sharedSub]struct{}
	ended  bool
}

// sharedResponse is one response of a shared run and its JSON encoding (nil when it could not be
// encoded: a transport then reports the failure as it would for a response of its own), and the
// author of its post or comment when a subscriber who blocks them must not get it.
type sharedResponse struct {
	resp   *graphql.Response
	json   []byte
	author store.UserKey
	nsfw   bool // it shows an NSFW post whole
}

// sharedSub is one subscriber's queue of a shared run's responses.
type sharedSub struct {
	ch chan *sharedResponse
	// viewer is the subscriber's request state, whose filters as they are now (blocksNow,
	// showNSFWNow) say which responses are not queued for them.
	viewer *Request
	once   sync.Once
	err    error // why the queue was closed early; read after ch is closed
}

func (s *sharedSub) close(err error) {
	s.once.Do(func() {
		s.err = err
		close(s.ch)
	})
}

// viewerFields are the fields whose value depends on who asks: every resolver that reads the
// viewer (viewerFrom, requireViewer) belongs to one of them, or to a mutation, or to a field no
// subscription's selection reaches (Query's own: no shared run executes them; the response cache
// records a read of the viewer as it happens, see viewerFrom), or is an exception that says why
// a shared run, which executes as an anonymous viewer, answers it rightly for every subscriber
// (viewerFieldExceptions; TestResolversReadingTheViewerAreViewerFields checks all this). By
// convention their names say so (TestViewerFieldsAreNamedSo checks the schema against this
// list), but for the ones named before the convention, below.
var viewerFields = map[string]bool{"viewer": true, "viewerVote": true, "viewerFollows": true, "followsViewer": true, "feed": true,
	"notifications": true, "unreadNotificationCount": true, "notificationAdded": true,
	"viewerBlocks": true, "viewerSaved": true, "viewerIsMember": true, "viewerIsModerator": true, "blockedByViewer": true,
	"groupFeed": true, "savedPosts": true, "reports": true, "reportCount": true, "showNsfw": true,
	"unreadCommentCount": true, "viewerHasRead": true, "viewerWatch": true,
	"conversations": true, "messageRequests": true, "messages": true, "conversation": true, "unreadMessageCount": true, "messageAdded": true,
	// Report.reporter is null to the moderator whose own post or comment was reported: named
	// before the convention, and kept for the clients that read it.
	"reporter": true,
	// User.email and emailVerified show the user's own address to them (and to admins) only;
	// Group.bans is its moderators' (UNAUTHENTICATED to an anonymous viewer); ModAction.target
	// may be a ban, a report or a removed item, each shown to those who may see it (loadNode);
	// ModAction.noticeId is its notice's recipient's only.
	"email": true, "emailVerified": true, "bans": true, "target": true, "noticeId": true}

// readsViewer reports whether a selection set reads a viewer field at any depth, fragments
// included.
func readsViewer(doc *ast.QueryDocument, set ast.SelectionSet, seen map[string]bool) bool {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if viewerFields[s.Name] || readsViewer(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.InlineFragment:
			if readsViewer(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if f := doc.Fragments.ForName(s.Name); f != nil && readsViewer(doc, f.SelectionSet, seen) {
				return true
			}
		}
	}
	return false
}

// shareKey returns the key of the run a subscription may share, or false when it runs alone,
// and whether the run is the viewer's own.
func shareKey(oc *graphql.OperationContext, r *Request) (key string, perViewer, ok bool) {
	if r.LastEventID != "" {
		return "", false, false
	}
	vars, err := json.Marshal(oc.Variables) // map keys in order
	if err != nil {
		return "", false, false
	}
	if resumes(oc) {
		return "", false, false
	}
	viewer := ""
	// A subscriber who blocks anyone runs with their own block list, as the response cache never
	// serves them a shared answer: an execution that serves every viewer has none, and would
	// show them, below an event's top-level item (which pump filters), the comments of the users
	// they block.
	perViewer = r.blocksNow().Len() > 0 || readsViewer(oc.Doc, oc.Operation.SelectionSet, map[string]bool{})
	if perViewer {
		viewer = "v:" + string(r.Viewer)
	}
	if r.ShowNSFW {
		viewer += "\x00nsfw" // one run per setting: each delivers what its setting lets through
	}
	return viewer + "\x00" + oc.OperationName + "\x00" + string(vars) + "\x00" + oc.RawQuery, perViewer, true
}

// resumes reports whether the subscription resumes from a cursor: its field's after argument,
// however the document gives it — a variable of any name, or a literal — is not empty. Such a
// subscription replays its own past, so it must not join a run that replayed (or did not) for
// another client before it came: clients that resume from one cursor with one document, as the
// clients of a stopped server do, would get nothing of what they missed.
func resumes(oc *graphql.OperationContext) bool {
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Subscription"}) {
		if v := f.ArgumentMap(oc.Variables)["after"]; v != nil && v != "" {
			return true
		}
	}
	return false
}

// join adds the subscriber of request state viewer to the run of key, starting the run with start
// when there is none, and returns the subscriber's response handler, which leaves each
// response's encoding in enc (when not nil). The responses the subscriber's filters leave out,
// as they are at each response, are not queued for them (see pump).
func (sh *sharing) join(ctx context.Context, key string, enc *Encoded, viewer *Request,
	start func(ctx context.Context) (graphql.ResponseHandler, *eventSlot)) graphql.ResponseHandler {
	sub := &sharedSub{ch: make(chan *sharedResponse, sh.buffer), viewer: viewer}
	sh.mu.Lock()
	run := sh.runs[key]
	if run == nil {
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		run = &sharedRun{key: key, cancel: cancel, subs: map[*sharedSub]struct{}{}}
		sh.runs[key] = run
		run.subs[sub] = struct{}{}
		sh.mu.Unlock()
		h, slot := start(runCtx)
		go sh.pump(runCtx, run, h, slot)
	} else {
		run.subs[sub] = struct{}{}
		sh.mu.Unlock()
	}
	context.AfterFunc(ctx, func() { sh.leave(run, sub) })
	// The queue alone says when the subscriber is done: leave closes it when the subscriber's
	// context ends, the run when the operation ends — after the responses already queued, which
	// the subscriber still gets. (The context a transport passes here may be the run's.)
	return func(ctx context.Context) *graphql.Response {
		if r, ok := <-sub.ch; ok {
			if enc != nil {
				enc.json = r.json
			}
			return r.resp
		}
		if sub.err != nil {
			ctx = graphql.WithResponseContext(ctx, sh.present, nil)
			graphql.AddError(ctx, sub.err)
			return &graphql.Response{Errors: graphql.GetErrors(ctx)}
		}
		return nil
	}
}

// pump runs a shared execution: it asks the operation for each response, encodes it, and queues
// both for every subscriber, never waiting for one — except a subscriber who blocks the author of
// the response's post or comment (slot.author), who does not get it. When the operation ends,
// every subscriber's queue is closed after the last response.
func (sh *sharing) pump(ctx context.Context, run *sharedRun, h graphql.ResponseHandler, slot *eventSlot) {
	defer run.cancel()
	for {
		resp := h(ctx)
		var item *sharedResponse
		if resp != nil {
			// gqlgen encodes every response of a subscription into one reused buffer; queued
			// responses must keep their own bytes.
			resp.Data = bytes.Clone(resp.Data)
			b, _ := json.Marshal(resp) // nil on failure: a transport then encodes it and reports why
			item = &sharedResponse{resp: resp, json: b}
			// The stream set the author before sending the event this response resolved, and sets
			// the next one only after the next call of h has begun.
			if a := slot.author.Load(); a != nil && len(resp.Errors) == 0 {
				item.author = *a
			}
			item.nsfw = slot.nsfw.Load() && len(resp.Errors) == 0
		}
		sh.mu.Lock()
		if resp == nil || len(resp.Errors) > 0 {
			// An error may be the run's last response (a subscription that could not start
			// answers with one error and ends): a subscriber who comes now starts its own run,
			// rather than join one that ends before it sees anything.
			if sh.runs[run.key] == run {
				delete(sh.runs, run.key)
			}
		}
		if resp == nil {
			run.ended = true
			for sub := range run.subs {
				sub.close(nil)
			}
			sh.mu.Unlock()
			return
		}
		for sub := range run.subs {
			if item.author != "" && sub.viewer.blocksNow().Has(item.author) {
				continue
			}
			if item.nsfw && !sub.viewer.showNSFWNow() {
				continue // a subscriber who stopped showing NSFW posts since joining
			}
			select {
			case sub.ch <- item:
			default:
				delete(run.subs, sub)
				sub.close(live.ErrSlowSubscriber)
			}
		}
		sh.mu.Unlock()
	}
}

// leave removes a subscriber; the run stops with its last one.
func (sh *sharing) leave(run *sharedRun, sub *sharedSub) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	delete(run.subs, sub)
	sub.close(nil)
	if len(run.subs) == 0 && !run.ended {
		run.ended = true
		if sh.runs[run.key] == run {
			delete(sh.runs, run.key)
		}
		run.cancel()
	}
}

// Encoded carries the JSON encoding of each response of a shared subscription from the run that
// made it, once for all its subscribers, to the transport that writes it: every subscriber's
// client then gets the same bytes and no transport encodes the response again. A transport
// installs one per subscription with WithEncoded before it dispatches the operation, and calls
// Take after each response; Take returns nil after a response that was not shared, which the
// transport then encodes itself.
type Encoded struct{ json []byte }

// Take returns the encoding of the response just returned, or nil, and forgets it.
func (e *Encoded) Take() []byte {
	b := e.json
	e.json = nil
	return b
}

type encodedKey struct{}

// WithEncoded returns ctx carrying e, for an operation about to be dispatched on it.
func WithEncoded(ctx context.Context, e *Encoded) context.Context {
	return context.WithValue(ctx, encodedKey{}, e)
}
