package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
)

// ErrSlowSubscriber ends a subscriber that fell so far behind that its queue filled: the shared
// executions of subscriptions end such a client (see resolvers). The hub itself ends nobody for
// falling behind; it owes them a Gap instead.
var ErrSlowSubscriber = errors.New("the subscriber fell too far behind; events were dropped, subscribe again")

// gapRetry is how soon the hub tries again to send a Gap event a full buffer could not take.
const gapRetry = 20 * time.Millisecond

// ErrClosed ends the subscriptions of a Hub that was closed, and refuses new ones: the server is
// stopping. It is the error of the hub's rdb.Subscription once closed too.
var ErrClosed = rdb.ErrClosed

// subscribeTimeout bounds how long a new subscription waits for Redis to confirm its channel,
// and unsubscribeTimeout how long the last subscriber to leave waits for the unsubscription.
const (
	subscribeTimeout   = 10 * time.Second
	unsubscribeTimeout = 2 * time.Second
)

// Hub holds the process's one pub/sub connection and shares each channel among all local
// subscribers: the first subscriber of a channel subscribes it, the last to leave unsubscribes it.
// One goroutine reads the connection and copies every message into the bounded buffer of each
// subscriber of its channel without ever blocking. A subscriber whose buffer is full misses
// events instead, and is owed a Gap event, sent as soon as its buffer has room: it then catches
// up from the channel's log, so falling behind costs it time, not events. The connection
// reconnects and resubscribes when it breaks; messages published meanwhile are not delivered by
// pub/sub: the connection then reports a gap for each channel it subscribed again, which the hub
// passes on as a Gap event, and subscribers catch up from the channel's log
// (EventStream.Replay).
//
// Create a Hub with New, subscribe with its Subscribe methods, and Close it when the server
// stops. It is safe for concurrent use.
type Hub struct {
	st   *store.Store
	ch   store.Channels
	opts Options

	// ctl serializes the lifecycle of channels: a topic is created, subscribed and confirmed, or
	// unsubscribed and dropped, under it, so Redis sees the commands in the order the topics
	// changed and a topic that others can join is always confirmed.
	ctl    sync.Mutex
	conn   pubsubConn // nil until the first subscription
	done   chan struct{}
	closed bool

	// mu guards topics; the reading goroutine takes it for each message.
	mu     sync.Mutex
	topics map[string]*topic

	delivered  atomic.Uint64
	dropped    atomic.Uint64
	subscribes atomic.Uint64 // SUBSCRIBEs sent (Stats)
	retries    atomic.Int64  // retries of owed Gaps scheduled and not yet run (payGaps)
}

// pubsubConn is the hub's pub/sub connection. Subscribe and Unsubscribe return once Redis has
// confirmed them; Messages delivers the messages of every subscribed channel until Close closes
// it; a message with an empty payload is not one but reports a gap: the channel was subscribed
// again after the connection broke, and messages of it may have been lost meanwhile. Its reader
// must keep up, or the readers behind it wait.
type pubsubConn interface {
	Subscribe(ctx context.Context, channels ...string) error
	Unsubscribe(ctx context.Context, channels ...string) error
	Messages() <-chan *rdb.Message
	Close() error
}

// boundedPubSub bounds the hub's waits for Redis to confirm a subscription or an unsubscription
// by the store's RedisTimeout, and makes a wait that ran out an Error of KindUnavailable
// (rdb.Runner.Bounded): a live subscription started while Redis does not answer fails as soon as a
// query does, with UNAVAILABLE. The wait for messages is not bounded: a subscription may stay
// quiet for hours.
type boundedPubSub struct {
	pubsubConn
	r *rdb.Runner
}

// Subscribe subscribes channels within the timeout.
func (b boundedPubSub) Subscribe(ctx context.Context, channels ...string) error {
	return b.r.Bounded(ctx, func(ctx context.Context) error { return b.pubsubConn.Subscribe(ctx, channels...) })
}

// Unsubscribe unsubscribes channels within the timeout.
func (b boundedPubSub) Unsubscribe(ctx context.Context, channels ...string) error {
	return b.r.Bounded(ctx, func(ctx context.Context) error { return b.pubsubConn.Unsubscribe(ctx, channels...) })
}

// topic is one subscribed channel and its local subscribers.
type topic struct {
	subs map[*EventStream]struct{}
	// retrying says that a retry of the Gaps owed to its subscribers is scheduled (payGaps):
	// one at a time, however many events find a subscriber's buffer full meanwhile. Guarded by
	// hub.mu.
	retrying bool
}

// EventStream is one local subscriber of one channel. Read its events from Events; when that
// channel closes, Err says why. Close it when done; Close is safe to call more than once and from
// any goroutine.
type EventStream struct {
	h       *Hub
	channel string
	ch      chan Event
	once    sync.Once // closes ch
	closing sync.Once // unregisters
	dead    atomic.Bool
	err     atomic.Pointer[error]
	owed    bool // a Gap is owed: events were dropped on a full buffer; guarded by hub.mu
	session bool // the subscriber is a SessionWatch
	// start is the head of the channel's log read before the subscription joined the channel
	// (Start); "" for a SessionWatch.
	start string
}

// subscribe adds a local subscriber to channel. It returns once Redis has confirmed the channel's
// subscription, so that every event published after it returns is delivered.
func (h *Hub) subscribe(ctx context.Context, channel string) (*EventStream, error) {
	return h.subscribeAs(ctx, channel, false)
}

// subscribeAs is subscribe for an event subscriber (session false) or a SessionWatch (session
// true), which Stats counts apart.
func (h *Hub) subscribeAs(ctx context.Context, channel string, session bool) (*EventStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sub := &EventStream{h: h, channel: channel, ch: make(chan Event, h.opts.EventBuffer), session: session}
	if !session {
		// Read before the subscription joins, so that every event published after it joined is
		// after its start, also those a break of the pub/sub connection loses before the first
		// event arrives (Start).
		head, err := h.st.LogHead(ctx, channel)
		if err != nil {
			return nil, err
		}
		sub.start = head
	}
	if h.join(channel, sub) {
		return sub, nil // the common case: a channel already subscribed, without waiting on ctl
	}
	h.ctl.Lock()
	defer h.ctl.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	if h.join(channel, sub) {
		return sub, nil // subscribed by another while this one waited for ctl
	}
	if h.conn == nil {
		h.conn = boundedPubSub{rdb.NewSubscription(context.Background(), h.st.Runner()), h.st.Runner()}
		h.done = make(chan struct{})
		go h.read(h.conn.Messages())
	}
	// The wait ignores the caller's cancellation (a confirmation that is abandoned would later be
	// taken for another's) but not for ever.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), subscribeTimeout)
	defer cancel()
	h.subscribes.Add(1)
	if err := h.conn.Subscribe(cctx, channel); err != nil {
		// The command may have reached Redis, or be repeated by a reconnect: take it back.
		uctx, ucancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
		_ = h.conn.Unsubscribe(uctx, channel)
		ucancel()
		return nil, fmt.Errorf("subscribe to live events: %w", err)
	}
	h.mu.Lock()
	h.topics[channel] = &topic{subs: map[*EventStream]struct{}{sub: {}}}
	h.mu.Unlock()
	return sub, nil
}

// join adds sub to the topic of channel, if it has one. A topic in the map is always confirmed.
func (h *Hub) join(channel string, sub *EventStream) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.topics[channel]; t != nil {
		t.subs[sub] = struct{}{}
		return true
	}
	return false
}

// read dispatches every message of the connection until it closes.
func (h *Hub) read(msgs <-chan *rdb.Message) {
	defer close(h.done)
	for m := range msgs {
		h.dispatch(m)
	}
}

// dispatch copies one message to every local subscriber of its channel, never blocking: a
// subscriber whose buffer is full misses it and is owed a Gap. Every subscriber receives the
// same Event, with one fresh Loader (one per NSFW setting: Event.LoaderFor), so their reads of
// the event's data share pipelines and cache.
func (h *Hub) dispatch(m *rdb.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.topics[m.Channel]
	if t == nil {
		return
	}
	var ev Event
	if m.Payload == "" {
		ev.Gap = true // see pubsubConn
	} else if err := json.Unmarshal([]byte(m.Payload), &ev); err != nil {
		h.opts.Log.Error("live event: bad payload", "channel", m.Channel, "err", err)
		return
	} else {
		ev = newEvent(h.st, ev.ID, ev.EventIDs)
	}
	owed := false
	for sub := range t.subs {
		if sub.dead.Load() {
			continue
		}
		if sub.owed {
			// The Gap replays this event too: it is in the log before it is published.
			if sub.sendGap() {
				continue
			}
			h.dropped.Add(1)
			owed = true
			continue
		}
		select {
		case sub.ch <- ev:
			h.delivered.Add(1)
		default:
			h.dropped.Add(1)
			sub.owed, owed = true, true
		}
	}
	if owed && !t.retrying {
		t.retrying = true
		h.retryGaps(m.Channel, t)
	}
}

// retryGaps schedules a payGaps of topic t of channel; hub.mu is held.
func (h *Hub) retryGaps(channel string, t *topic) {
	h.retries.Add(1)
	time.AfterFunc(gapRetry, func() {
		h.retries.Add(-1)
		h.payGaps(channel, t)
	})
}

// sendGap tries to send the Gap a subscriber is owed; hub.mu is held.
func (s *EventStream) sendGap() bool {
	select {
	case s.ch <- Event{Gap: true}:
		s.owed = false
		return true
	default:
		return false
	}
}

// payGaps sends the Gaps owed to the subscribers of topic t of channel that have room, and tries
// again later for the others. A topic has one retry scheduled at a time (topic.retrying): a
// subscriber whose client reads slowly stays owed while events keep coming, and a retry per
// event, each rescheduling itself every gapRetry and taking hub.mu to go over every subscriber
// of the channel, would pile up by the hundreds.
func (h *Hub) payGaps(channel string, t *topic) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.topics[channel] != t {
		return // dropped: a topic made for the channel since has retries of its own
	}
	again := false
	for sub := range t.subs {
		if sub.owed && !sub.dead.Load() && !sub.sendGap() {
			again = true
		}
	}
	if again {
		h.retryGaps(channel, t)
	} else {
		t.retrying = false
	}
}

// unsubscribe removes sub from its topic and unsubscribes the channel when sub was its last
// local subscriber.
func (h *Hub) unsubscribe(sub *EventStream) {
	h.ctl.Lock()
	defer h.ctl.Unlock()
	h.mu.Lock()
	last := false
	if t := h.topics[sub.channel]; t != nil {
		if _, ok := t.subs[sub]; ok {
			delete(t.subs, sub)
			if len(t.subs) == 0 {
				delete(h.topics, sub.channel)
				last = true
			}
		}
	}
	sub.end(nil) // under mu, so dispatch cannot be sending to it
	h.mu.Unlock()
	if last && !h.closed {
		// Nothing depends on the confirmation (a later SUBSCRIBE follows on the same connection,
		// and messages of a dropped topic are ignored), so the wait is short.
		ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
		defer cancel()
		if err := h.conn.Unsubscribe(ctx, sub.channel); err != nil {
			// The channel stays subscribed on a connection that is failing anyway; its
			// messages find no topic and are dropped.
			h.opts.Log.Warn("live events: unsubscribe", "channel", sub.channel, "err", err)
		}
	}
}

// Close ends every subscription with ErrClosed, refuses new ones and closes the pub/sub
// connection. It is safe to call more than once; the store and its Redis client stay open.
func (h *Hub) Close() error {
	h.ctl.Lock()
	defer h.ctl.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	h.mu.Lock()
	for _, t := range h.topics {
		for sub := range t.subs {
			sub.end(ErrClosed)
		}
	}
	h.topics = make(map[string]*topic)
	h.mu.Unlock()
	if h.conn == nil {
		return nil
	}
	err := h.conn.Close()
	<-h.done
	if err != nil {
		return fmt.Errorf("close live events: %w", err)
	}
	return nil
}

// Stats counts the hub's channels, subscribers and events.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := Stats{Channels: len(h.topics), Delivered: h.delivered.Load(), Dropped: h.dropped.Load(), Subscribes: h.subscribes.Load()}
	for _, t := range h.topics {
		for sub := range t.subs {
			if sub.session {
				st.Sessions++
			} else {
				st.Subscribers++
			}
		}
	}
	return st
}

// Events returns the subscription's events. The channel closes when the subscription ends; Err
// then says why.
func (s *EventStream) Events() <-chan Event { return s.ch }

// Err returns why the subscription ended: ErrClosed when its Hub was closed, or nil when it was
// closed by Close or is still open.
func (s *EventStream) Err() error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Head returns the cursor of the last event of the subscription's channel now, or
// store.FromStart when its log is empty.
func (s *EventStream) Head(ctx context.Context) (string, error) {
	return s.h.st.LogHead(ctx, s.channel)
}

// Start returns the head of the subscription's channel's log (as Head) read just before the
// subscription joined the channel: where a subscriber that has received nothing yet catches up
// from after a gap. Every event published once the subscription is made comes after it; a head
// read after the subscription was made would pass over the events published meanwhile, which a
// break of the pub/sub connection may have lost. A catch-up from Start may deliver events
// published just before the subscription was made.
func (s *EventStream) Start() string { return s.start }

// Replay returns the events of the subscription's channel after the cursor after, oldest first,
// from the channel's log, each with a fresh Loader. It fails with store.KindResync when some of
// those events are no longer kept, and with store.KindInvalid when after is not a cursor.
func (s *EventStream) Replay(ctx context.Context, after string) ([]Event, error) {
	return s.h.replay(ctx, s.channel, after)
}

// ReplayPage is Replay a page at a time: at most max events (ReplayPage when max is not
// positive) after the cursor after, oldest first, and whether more may follow, to ask for after
// the last one. Each page is one round trip; a later page fails with store.KindResync when the
// log was trimmed past its cursor meanwhile.
func (s *EventStream) ReplayPage(ctx context.Context, after string, max int) ([]Event, bool, error) {
	if max <= 0 {
		max = ReplayPage
	}
	return s.h.replayPage(ctx, s.channel, after, max)
}

// Close ends the subscription; the hub drops the channel's Redis subscription with its last
// local subscriber.
func (s *EventStream) Close() {
	s.closing.Do(func() { s.h.unsubscribe(s) })
}

// end closes the events channel once, recording err. The hub calls it with h.mu held.
func (s *EventStream) end(err error) {
	s.once.Do(func() {
		if err != nil {
			s.err.Store(&err)
		}
		s.dead.Store(true)
		close(s.ch)
	})
}
