package resolvers

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
)

// Operations is the gqlgen extension that gives every operation its own request state: a copy
// of the connection's viewer with a fresh Loader, so that an operation on a long-lived WebSocket
// never reads what an earlier one cached. For a subscription it also makes every event's
// response read through that event's own Loader.
//
// How gqlgen runs a subscription: the resolver runs once and returns a channel; the transport
// then calls the operation's response handler in a loop on one goroutine, and each call waits
// for one value on the channel and resolves the selection set below it before returning. So the
// fields of event n are resolved, start to finish, inside call n. Operations hands the event's
// Loader over at the only safe moment: call n first gives the stream goroutine a token saying
// call n−1 is over, and the stream goroutine, holding the token, installs event n's Loader and
// only then sends the value that call n resolves. No two events' responses ever share a Loader,
// and a Loader is never swapped while a response is using it.
//
// Subscriptions that would compute the same responses share one execution (see shared.go).
type Operations struct {
	store   *store.Store
	shared  *sharing
	running atomic.Int64 // subscriptions running, shared or not
	needs   *needsCache  // what the fields of kept documents read, for every operation
}

// Subscriptions returns how many subscriptions are running in the process: each client
// subscription counts, whether it shares an execution or not.
func (o *Operations) Subscriptions() int { return int(o.running.Load()) }

// count counts a running subscription until ctx ends or h reports its end.
func (o *Operations) count(ctx context.Context, h graphql.ResponseHandler) graphql.ResponseHandler {
	o.running.Add(1)
	var once sync.Once
	done := func() { once.Do(func() { o.running.Add(-1) }) }
	context.AfterFunc(ctx, done)
	return func(ctx context.Context) *graphql.Response {
		resp := h(ctx)
		if resp == nil {
			done()
		}
		return resp
	}
}

// NewOperations returns the extension for st. present is the executor's error presenter, which
// presents the error that ends a subscriber of a shared execution; buffer is how many responses
// such a subscriber may fall behind before it is ended.
func NewOperations(st *store.Store, present graphql.ErrorPresenterFunc, buffer int) *Operations {
	return &Operations{store: st, needs: newNeedsCache(), shared: &sharing{buffer: buffer, present: present, runs: map[string]*sharedRun{}}}
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = (*Operations)(nil)

// ExtensionName names the extension for gqlgen.
func (*Operations) ExtensionName() string { return "AgoraOperations" }

// Validate accepts any schema.
func (*Operations) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation installs the operation's own request state; a subscription joins the shared
// execution of its key, or starts it.
func (o *Operations) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	r := *requestFrom(ctx)
	r.Loader = o.loader(&r, nil)
	r.events = nil
	r.shown = &shownMemo{}
	r.needs = o.needs
	oc := graphql.GetOperationContext(ctx)
	switch {
	case oc.Operation != nil && oc.Operation.Operation == ast.Subscription:
		r.Recording = nil
		key, perViewer, shared := shareKey(oc, &r)
		start := func(ctx context.Context) (graphql.ResponseHandler, *eventSlot) {
			run := r // each execution has its own event slot
			run.events = &eventSlot{ready: make(chan struct{}, 1)}
			if shared && !perViewer {
				// It serves every viewer: it reads none of their fields, and each subscriber's
				// block list applies to what it passes on (see sharing.pump).
				run.Viewer, run.Token, run.Blocks, run.Live = "", "", nil, nil
				run.Loader = o.loader(&run, nil)
			}
			h := next(WithRequest(ctx, &run))
			// Whoever calls the handler, its responses read the execution's request state.
			return func(ctx context.Context) *graphql.Response { return h(WithRequest(ctx, &run)) }, run.events
		}
		if !shared {
			h, _ := start(ctx)
			return o.count(ctx, h)
		}
		enc, _ := ctx.Value(encodedKey{}).(*Encoded)
		return o.count(ctx, o.shared.join(ctx, key, enc, &r, start))
	case oc.Operation != nil && oc.Operation.Operation == ast.Query && r.Recording != nil:
		r.Loader = o.loader(&r, r.Recording.Revisions)
		r.Recording.query.Store(true)
	default:
		r.Recording = nil
	}
	return next(WithRequest(ctx, &r))
}

// loader returns a new Loader for the request state r, reading for its viewer's block list, and
// recording revisions in revs when it is not nil.
func (o *Operations) loader(r *Request, revs *store.Revisions) *store.Loader {
	l := o.store.NewLoader()
	if revs != nil {
		l = o.store.NewRecordingLoader(revs)
	}
	l.SetBlocks(r.Blocks)
	l.HideNSFW(!r.ShowNSFW)
	return l
}

// InterceptResponse runs one call of a subscription's response loop: see Operations.
func (o *Operations) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	r, ok := ctx.Value(requestKey{}).(*Request)
	if !ok || r.events == nil {
		return next(ctx)
	}
	return r.events.respond(ctx, next)
}

// eventSlot coordinates a subscription's stream goroutine with its response loop.
type eventSlot struct {
	ready  chan struct{}                 // holds a token while the response loop waits for an event
	loader atomic.Pointer[store.Loader]  // the Loader of the event being resolved
	cursor atomic.Pointer[string]        // the cursor of the event being resolved
	author atomic.Pointer[store.UserKey] // the author of its post or comment, when blockable
	nsfw   atomic.Bool                   // it shows an NSFW post whole (a run of viewers who show them)
	err    atomic.Pointer[error]         // why the stream ended, when an error ended it
	over   bool                          // the stream has ended; only the response loop touches it
}

// respond is one call of the response loop.
func (e *eventSlot) respond(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if e.over {
		return nil
	}
	select {
	case e.ready <- struct{}{}:
	default:
	}
	if resp := next(ctx); resp != nil {
		if c := e.cursor.Load(); c != nil {
			if resp.Extensions == nil {
				resp.Extensions = map[string]any{}
			}
			resp.Extensions["cursor"] = *c
		}
		return resp
	}
	e.over = true
	if p := e.err.Load(); p != nil {
		// The stream ended with an error (it fell behind, or the server is stopping): say so in a
		// last response before the transport completes the operation.
		graphql.AddError(ctx, *p)
		return &graphql.Response{Errors: graphql.GetErrors(ctx)}
	}
	return nil
}

// errEndStream from a stream's load function ends the stream normally: its subject is gone.
var errEndStream = errors.New("end of stream")

// resume is how a subscription starts: after the cursor after ("" for live events only), and
// whether a catch-up delivers only the last event it finds (postChanged: each delivery reads the
// post as it is now, so the latest is all a client needs). blockable says that a subscriber does
// not get the events of posts or comments whose author they block.
type resume struct {
	after     string
	collapse  bool
	blockable bool
	// prefilter, when set, drops the events of a page read from the log that the stream would
	// skip, in one read for the page rather than one per event (the feed: the authors the viewer
	// does not follow); the events it keeps are loaded and checked one by one as usual.
	prefilter func(ctx context.Context, evs []live.Event) []live.Event
}

// authorOf returns the author of an event's post or comment; "" for other values.
func authorOf(v any) store.UserKey {
	switch v := v.(type) {
	case *store.Post:
		return v.Author
	case *store.Comment:
		return v.Author
	}
	return ""
}

// resumeFrom returns where a subscription starts: its after argument, or else the Last-Event-ID
// of its server-sent-events request. A malformed cursor is BAD_USER_INPUT.
func resumeFrom(ctx context.Context, after *string) (string, error) {
	a := deref(after)
	if a == "" {
		if r := RequestFrom(ctx); r != nil {
			a = r.LastEventID
		}
	}
	if a == "" {
		return "", nil
	}
	return a, live.CheckCursor(a)
}

// stream turns a live subscription into the channel a subscription resolver returns. For each
// event, load returns the value to send (ok false skips the event, errEndStream ends the stream);
// it reads through ev.Loader — the event's loader of the subscriber's NSFW setting
// (live.Event.LoaderFor) — which the event's response then reads through too, and the event's
// cursor goes with the response (extensions.cursor). Other load errors are logged and the event
// is skipped: one failed read should not end every subscriber's stream at once. The subscription
// is closed when the stream ends, whether the client left, the hub ended it, or its subject
// is gone.
//
// Nothing is lost and nothing is sent twice: a subscription resumed from a cursor first replays
// the channel's log after it; a gap (the process's Redis subscription was interrupted) replays
// the log after the last event handled, or, when there was none, after the log's head read just
// before the subscription was made (EventStream.Start); and a live event at or before the last event handled is one a replay sent already.
// A replay that finds the events no longer kept ends the stream with RESYNC_REQUIRED.
func stream[T any](ctx context.Context, log *slog.Logger, sub *live.EventStream, from resume,
	load func(ctx context.Context, ev live.Event) (v T, ok bool, err error)) (<-chan T, error) {
	slot := requestFrom(ctx).events
	if slot == nil {
		sub.Close()
		return nil, errors.New("subscription without per-event state: install resolvers.Operations")
	}
	// The subscriber's request state when the execution is theirs alone; a shared execution's
	// has no viewer, and the NSFW setting that all its subscribers had when they joined (each
	// subscriber's own filters then apply in sharing.pump).
	req := requestFrom(ctx)
	last := from.after // the last event handled, delivered or skipped; "" before the first
	head := last       // where a catch-up starts before the first event
	if head == "" {
		head = sub.Start()
	}
	out := make(chan T)
	go func() {
		defer close(out)
		defer sub.Close()
		end := func(err error) { slot.err.Store(&err) }
		// handle sends one event; false ends the stream.
		handle := func(ev live.Event) bool {
			last = ev.ID
			// The event's data, and whatever its response reads below it, as the subscriber's
			// queries read it: the loader of their NSFW setting now (a shared execution's is its
			// subscribers'), and of their block list now (a shared execution has none: its
			// subscribers block nobody, see shareKey).
			ev.Loader = ev.LoaderOf(req.showNSFWNow(), req.blocksNow())
			v, ok, err := load(ctx, ev)
			switch {
			case errors.Is(err, errEndStream):
				return false
			case err != nil:
				if ctx.Err() != nil {
					return false
				}
				log.ErrorContext(ctx, "live event: load", "post", ev.Post, "comment", ev.Comment, "err", err)
				return true
			case !ok:
				return true
			}
			// The viewer's filters as they are now: a block, or a change of the NSFW setting, made
			// while the stream runs applies to the events after it (Request.Live).
			nsfw := false
			if p, isPost := any(v).(*store.Post); isPost && p.NSFW {
				switch {
				case req.showNSFWNow():
					nsfw = true
				case !from.collapse:
					return true // a new NSFW post: not delivered to those who do not show them
				default:
					v = any(store.Withheld(p)).(T) // postChanged of a post asked for by id: withheld, as post(id)
				}
			}
			if c, isComment := any(v).(*store.Comment); isComment && c.OnNSFWPost() {
				if !req.showNSFWNow() {
					return true // the thread of an NSFW post is withheld with it (Loader.Comment)
				}
				nsfw = true
			}
			var by store.UserKey
			if from.blockable {
				if c, isComment := any(v).(*store.Comment); isComment && c.BlockedByViewer {
					return true // by a user they block: their own loader collapsed it (LoaderOf)
				}
				if by = authorOf(v); req.blocksNow().Has(by) {
					return true
				}
			}
			select {
			case <-slot.ready: // the previous event's response is complete
			case <-ctx.Done():
				return false
			}
			slot.loader.Store(ev.Loader)
			slot.cursor.Store(&ev.ID)
			slot.author.Store(&by)
			slot.nsfw.Store(nsfw)
			select {
			case out <- v:
				return true
			case <-ctx.Done():
				return false
			}
		}
		// catchUp sends what the channel's log has after the last event handled, a page at a
		// time: the next page is read once the last is delivered (or, collapsed, skipped over),
		// so a stream resumed from far back holds one page, not the whole log, while its client
		// reads.
		catchUp := func() bool {
			start := last
			if start == "" {
				start = head
			}
			var latest *live.Event // collapse: the last event found
			page := live.ReplayPage
			if from.collapse {
				page *= 8 // nothing is kept but the last event: fewer, larger reads
			}
			for {
				evs, more, err := sub.ReplayPage(ctx, start, page)
				if err != nil {
					if ctx.Err() == nil {
						end(err)
					}
					return false
				}
				if len(evs) == 0 {
					break
				}
				start = evs[len(evs)-1].ID
				switch {
				case from.collapse:
					latest = &evs[len(evs)-1]
				default:
					if from.prefilter != nil {
						evs = from.prefilter(ctx, evs)
					}
					for _, ev := range evs {
						if !handle(ev) {
							return false
						}
					}
					last = start // the events dropped are handled too
				}
				if !more {
					break
				}
			}
			return latest == nil || handle(*latest)
		}
		if from.after != "" && !catchUp() {
			return
		}
		for {
			var ev live.Event
			select {
			case e, open := <-sub.Events():
				if !open {
					if err := sub.Err(); err != nil {
						end(err)
					}
					return
				}
				ev = e
			case <-ctx.Done():
				return
			}
			switch {
			case ev.Gap:
				if !catchUp() {
					return
				}
			case last != "" && !live.CursorBefore(last, ev.ID):
				// A replay sent it already.
			case !handle(ev):
				return
			}
		}
	}()
	return out, nil
}

// postChanged streams a post each time its votes, score, comment count or groups change, and
// ends when the post is deleted.
func (r *Resolver) postChanged(ctx context.Context, postID string, after *string) (<-chan *store.Post, error) {
	from, err := resumeFrom(ctx, after)
	if err != nil {
		return nil, err
	}
	// A post that does not exist costs no SUBSCRIBE; the check again after subscribing sees a
	// deletion in between.
	if err := r.requirePostBefore(ctx, postID); err != nil {
		return nil, err
	}
	sub, err := r.Live.SubscribePostChanged(ctx, postID)
	if err != nil {
		return nil, err
	}
	if err := requirePost(ctx, postID); err != nil {
		sub.Close()
		return nil, err
	}
	needs := onceNeeds(ctx, "Post")
	return stream(ctx, r.Log, sub, resume{after: from, collapse: true}, func(ctx context.Context, ev live.Event) (*store.Post, bool, error) {
		ev.Loader.WalkID(ctx, ev.Post, needs)
		p, err := ev.Loader.Post(ctx, ev.Post)
		if err == nil && (p == nil || p.Removed) {
			// Deleted, or removed: a shared run serves every viewer, so its stream ends for all,
			// its author and moderators included, who see it by querying it.
			return nil, false, errEndStream
		}
		return p, p != nil, err
	})
}

// commentAdded streams the new comments and replies of a post's thread.
func (r *Resolver) commentAdded(ctx context.Context, postID string, after *string) (<-chan *store.Comment, error) {
	from, err := resumeFrom(ctx, after)
	if err != nil {
		return nil, err
	}
	if err := r.requirePostBefore(ctx, postID); err != nil {
		return nil, err
	}
	sub, err := r.Live.SubscribeCommentAdded(ctx, postID)
	if err != nil {
		return nil, err
	}
	if err := requirePost(ctx, postID); err != nil {
		sub.Close()
		return nil, err
	}
	needs := onceNeeds(ctx, "Comment")
	return stream(ctx, r.Log, sub, resume{after: from, blockable: true}, func(ctx context.Context, ev live.Event) (*store.Comment, bool, error) {
		if ev.Comment == "" { // the post was deleted: the stream ends
			p, err := ev.Loader.Post(ctx, ev.Post)
			if err == nil && p == nil {
				err = errEndStream
			}
			return nil, false, err
		}
		ev.Loader.WalkID(ctx, ev.Comment, needs)
		c, err := ev.Loader.Comment(ctx, ev.Comment)
		if err == nil && c != nil && (c.Removed || c.Deleted) {
			// Removed or deleted before its event was read (a resumed stream reads old events):
			// skipped, also while it stays in the thread as a tombstone for its replies, and one
			// erased with its author's account (a tombstone by no author) alike.
			c = nil
		}
		return c, c != nil, err // a comment gone (with its post, or without replies) is skipped
	})
}

// postPublished streams new posts, all of them or one group's.
func (r *Resolver) postPublished(ctx context.Context, group string, after *string) (<-chan *store.Post, error) {
	from, err := resumeFrom(ctx, after)
	if err != nil {
		return nil, err
	}
	sub, err := r.Live.SubscribePostPublished(ctx, group)
	if err != nil {
		return nil, err
	}
	return stream(ctx, r.Log, sub, resume{after: from, blockable: true}, newPost(onceNeeds(ctx, "Post")))
}

// feed streams the new posts of the users the viewer follows at the time each post appears.
func (r *Resolver) feed(ctx context.Context, after *string) (<-chan *store.Post, error) {
	viewer, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	from, err := resumeFrom(ctx, after)
	if err != nil {
		return nil, err
	}
	sub, err := r.Live.SubscribeFeed(ctx, viewer)
	if err != nil {
		return nil, err
	}
	load := newPost(onceNeeds(ctx, "Post"))
	// A catch-up walks every new post of the site since its cursor (up to 10,000), few of them by
	// the viewer's follows: it drops the others a page at a time, with one read of the follows of
	// the page's authors, not one per post.
	prefilter := func(ctx context.Context, evs []live.Event) []live.Event {
		authors := make([]store.UserKey, len(evs))
		for i, ev := range evs {
			authors[i] = ev.Author
		}
		in, err := r.Store.NewLoader().FeedIncludesAny(ctx, viewer, authors)
		if err != nil {
			return evs // each is checked as it is delivered
		}
		return slices.DeleteFunc(evs, func(ev live.Event) bool { return !in[ev.Author] })
	}
	return stream(ctx, r.Log, sub, resume{after: from, blockable: true, prefilter: prefilter}, func(ctx context.Context, ev live.Event) (*store.Post, bool, error) {
		in, err := ev.Loader.FeedIncludes(ctx, viewer, ev.Author)
		if err != nil || !in {
			return nil, false, err
		}
		return load(ctx, ev)
	})
}

// newPost returns the loader of the post of a new-post event, which reads what needs says the
// event's response reads below it; a post deleted, removed or erased (a tombstone of a deleted
// account's erased content) since is skipped, also when a resumed stream replays its event.
func newPost(needs func() *store.Needs) func(ctx context.Context, ev live.Event) (*store.Post, bool, error) {
	return func(ctx context.Context, ev live.Event) (*store.Post, bool, error) {
		ev.Loader.WalkID(ctx, ev.Post, needs)
		p, err := ev.Loader.Post(ctx, ev.Post)
		if p != nil && (p.Removed || p.Erased) {
			p = nil // removed or erased since: not delivered
		}
		return p, p != nil, err
	}
}

// onceNeeds is what a subscription's selection reads below each event's object of type typ,
// worked out once for the whole stream.
func onceNeeds(ctx context.Context, typ string) func() *store.Needs {
	n := fieldNeeds(ctx, typ, false)()
	return func() *store.Needs { return n }
}

// requirePost fails with NOT_FOUND when postID names no live post, or a removed one.
func requirePost(ctx context.Context, postID string) error {
	return requirePostOn(ctx, loaderFrom(ctx), postID)
}

// requirePostBefore is requirePost on a loader of its own, for the check before a subscription's
// SUBSCRIBE: a stream of a post that does not exist is refused without one (each of them, and
// its UNSUBSCRIBE, waits for the hub's pub/sub connection, as every new channel's subscriber
// does), and the request's loader, not holding the post, reads it again after subscribing.
func (r *Resolver) requirePostBefore(ctx context.Context, postID string) error {
	return requirePostOn(ctx, r.Store.NewLoader(), postID)
}

// requirePostOn fails with KindNotFound when l finds no post postID, or a removed one.
func requirePostOn(ctx context.Context, l *store.Loader, postID string) error {
	p, err := l.Post(ctx, postID)
	if err == nil && (p == nil || p.Removed) {
		err = &store.Error{Kind: store.KindNotFound, Msg: "no such post"}
	}
	return err
}
