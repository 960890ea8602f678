// Package live delivers agora's live events to subscribers: the process's one shared pub/sub
// connection and its hub (one Redis subscription per channel, shared by every local subscriber),
// the events with their cursors, and the replay of a channel's log for a subscriber that resumes
// or fell behind. Writes publish the events (package store, publish.lua); live only subscribes,
// and reads the logs and builds the channel names through the store, which owns every key and
// script.
package live

import (
	"context"
	"log/slog"
	"sync"

	"github.com/agora/agora/store"
)

// Options configures a Hub. The zero value of each field selects its default.
type Options struct {
	// EventBuffer is how many events a subscriber may fall behind. Past it the subscriber misses
	// events and is owed a Gap, from which it catches up from the channel's log. Default 64.
	EventBuffer int
	// Log receives what the hub cannot report to a subscriber, such as a message it cannot
	// decode. Default: discarded.
	Log *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.EventBuffer <= 0 {
		o.EventBuffer = 64
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// New returns a Hub for the live events of st. It opens its pub/sub connection on the first
// subscription; Close it when the server stops.
func New(st *store.Store, opts Options) *Hub {
	return &Hub{st: st, ch: st.Channels(), opts: opts.withDefaults(), topics: make(map[string]*topic)}
}

// Options returns the options in effect, defaults filled in.
func (h *Hub) Options() Options { return h.opts }

// Event is one live event: the ids of what changed.
type Event struct {
	// ID is the event's cursor, its id in its channel's log: ids rise with every event of a
	// channel, and Replay returns the events after one.
	ID string `json:"id,omitempty"`
	store.EventIDs

	// Loader reads the event's data. It is fresh for each event and shared by every subscriber
	// of the event in this process, so that each piece of data is read once: the first
	// subscriber to ask reads it and the others join that read. It caches raw Redis replies
	// only; whatever depends on the viewer is computed from them per subscriber. It hides no
	// NSFW post (the store's own view); LoaderFor gives the loader of each setting.
	Loader *store.Loader `json:"-"`

	// loaders are the event's loaders by NSFW setting (LoaderFor).
	loaders *eventLoaders

	// Gap says that the process's subscription to the channel was interrupted (its Redis
	// connection broke and was made again), or that the subscriber's buffer was full: events
	// may have been published meanwhile that only the channel's log has. A Gap event carries
	// nothing else; catch up with Replay.
	Gap bool `json:"-"`
}

// newEvent returns the event of ids with a fresh Loader, and its loaders by NSFW setting.
func newEvent(st *store.Store, id string, ids store.EventIDs) Event {
	l := &eventLoaders{st: st}
	return Event{ID: id, EventIDs: ids, Loader: l.get(true), loaders: l}
}

// LoaderFor returns the event's loader for subscribers who show NSFW posts (showNSFW) or who do
// not: one per setting, made when first asked for and shared by every subscriber of that
// setting, reading as their queries read (store.Loader.HideNSFW) — whatever the response reads
// below the event's top-level value, an author's posts for instance. A Gap event has none.
func (ev Event) LoaderFor(showNSFW bool) *store.Loader {
	if ev.loaders == nil {
		return ev.Loader
	}
	return ev.loaders.get(showNSFW)
}

// LoaderOf returns the loader a subscriber reads the event through: for one who blocks nobody, the
// event's loader of their NSFW setting (LoaderFor), shared with every such subscriber; for one who
// blocks anyone, a loader of their own, which reads as their queries read — a comment of a user
// they block comes collapsed wherever the response shows it, a listing leaves out such a user's
// posts — since a loader shared by viewers must not have a block list (store.Loader.SetBlocks).
func (ev Event) LoaderOf(showNSFW bool, blocks *store.Blocks) *store.Loader {
	if blocks.Len() == 0 || ev.loaders == nil {
		return ev.LoaderFor(showNSFW)
	}
	l := ev.loaders.st.NewLoader()
	l.HideNSFW(!showNSFW)
	l.SetBlocks(blocks)
	return l
}

// eventLoaders are one event's loaders, by NSFW setting.
type eventLoaders struct {
	st   *store.Store
	mu   sync.Mutex
	show *store.Loader // hides nothing: Event.Loader
	hide *store.Loader // hides NSFW posts, made when first asked for
}

func (l *eventLoaders) get(showNSFW bool) *store.Loader {
	l.mu.Lock()
	defer l.mu.Unlock()
	if showNSFW {
		if l.show == nil {
			l.show = l.st.NewLoader()
		}
		return l.show
	}
	if l.hide == nil {
		l.hide = l.st.NewLoader()
		l.hide.HideNSFW(true)
	}
	return l.hide
}

// Stats counts a process's live-event subscriptions.
type Stats struct {
	Channels    int    // Redis channels subscribed (and confirmed)
	Subscribers int    // local subscribers over all channels
	Sessions    int    // sessions watched for their streams (SessionWatch), not in Subscribers
	Delivered   uint64 // events handed to local subscribers since start
	Dropped     uint64 // events a full buffer could not take (caught up from the log instead)
	Subscribes  uint64 // SUBSCRIBEs sent to Redis since start: a channel's first local subscriber
}

// SubscribePostChanged subscribes to the changes of one post: votes, score, comment count,
// groups, and its deletion. The Post of each event is the post's id.
func (h *Hub) SubscribePostChanged(ctx context.Context, postID string) (*EventStream, error) {
	pid, err := store.PostKey(postID)
	if err != nil {
		return nil, err
	}
	return h.subscribe(ctx, h.ch.PostChanged(pid))
}

// SubscribeCommentAdded subscribes to the new comments and replies anywhere in one post's
// thread. Each event names the post and the comment; an event without a comment says the post
// was deleted.
func (h *Hub) SubscribeCommentAdded(ctx context.Context, postID string) (*EventStream, error) {
	pid, err := store.PostKey(postID)
	if err != nil {
		return nil, err
	}
	return h.subscribe(ctx, h.ch.Comments(pid))
}

// SubscribePostPublished subscribes to new posts: all of them when group is "", else those
// published in that group. Each event names the post and its author.
func (h *Hub) SubscribePostPublished(ctx context.Context, group string) (*EventStream, error) {
	if group != "" {
		var err error
		if group, err = store.NormalizeGroupName(group); err != nil {
			return nil, err
		}
	}
	return h.subscribe(ctx, h.ch.Published(group))
}

// SubscribeFeed subscribes to the candidates of a viewer's live feed: every new post. Pass each
// event's author through Loader.FeedIncludes, which keeps the posts of the users the viewer
// follows at the moment the event arrives, so that a user followed after subscribing counts at
// once.
//
// One channel for all feeds keeps the subscription independent of the follow graph: a follow or
// unfollow needs no resubscription, and a process holds one Redis subscription for all its feed
// subscribers whatever they follow. The price is one follow check (a ZSCORE) per feed subscriber
// per new post, each its own round trip since the loader has no batch window.
func (h *Hub) SubscribeFeed(ctx context.Context, viewer store.UserKey) (*EventStream, error) {
	if _, err := store.ParseUserID(viewer.ID()); err != nil {
		return nil, err
	}
	return h.subscribe(ctx, h.ch.Published(""))
}

// SubscribeNotificationAdded subscribes to the new notifications of viewer. Each event's
// Notification is the new notification's global id; read it with Loader.Notification.
func (h *Hub) SubscribeNotificationAdded(ctx context.Context, viewer store.UserKey) (*EventStream, error) {
	if _, err := store.ParseUserID(viewer.ID()); err != nil {
		return nil, err
	}
	return h.subscribe(ctx, h.ch.Notifications(string(viewer)))
}

// SubscribeMessageAdded subscribes to the private messages sent to and by viewer. Each event's
// Message is the new message's global id; read it with Loader.Message.
func (h *Hub) SubscribeMessageAdded(ctx context.Context, viewer store.UserKey) (*EventStream, error) {
	if _, err := store.ParseUserID(viewer.ID()); err != nil {
		return nil, err
	}
	return h.subscribe(ctx, h.ch.Messages(string(viewer)))
}

// ReplayPage is how many events a subscriber that resumes, or catches up after a gap, reads from
// its channel's log at a time (EventStream.ReplayPage): it reads the next page once it has
// delivered the last, so a resume from far back — ten thousand new posts — holds a page in
// memory, not the whole log, however slowly its client reads.
const ReplayPage = 32

// replay returns the events of channel after the cursor after, oldest first, each with a fresh
// Loader; store.KindResync when some of them may no longer be kept.
func (h *Hub) replay(ctx context.Context, channel, after string) ([]Event, error) {
	if err := CheckCursor(after); err != nil {
		return nil, err
	}
	logged, err := h.st.ReplayLog(ctx, channel, after)
	if err != nil {
		return nil, err
	}
	return h.events(logged), nil
}

// replayPage returns at most max events of channel after the cursor after, oldest first, each
// with a fresh Loader, and whether more may follow; store.KindResync when some of them may no
// longer be kept.
func (h *Hub) replayPage(ctx context.Context, channel, after string, max int) ([]Event, bool, error) {
	if err := CheckCursor(after); err != nil {
		return nil, false, err
	}
	logged, more, err := h.st.ReplayLogPage(ctx, channel, after, max)
	if err != nil {
		return nil, false, err
	}
	return h.events(logged), more, nil
}

// events makes the events of logged, each with a fresh Loader.
func (h *Hub) events(logged []store.LoggedEvent) []Event {
	out := make([]Event, len(logged))
	for i, e := range logged {
		out[i] = newEvent(h.st, e.ID, e.EventIDs)
	}
	return out
}
