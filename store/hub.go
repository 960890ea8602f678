package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrSlowSubscriber ends a subscription whose reader fell so far behind that its buffer filled:
// the hub never waits for a reader, so it drops the reader instead of the events.
var ErrSlowSubscriber = errors.New("the subscriber fell too far behind; events were dropped, subscribe again")

// ErrStoreClosed ends the subscriptions of a store that was closed.
var ErrStoreClosed = errors.New("the store is closed")

// subscribeTimeout bounds how long a new subscription waits for Redis to confirm its channel.
const subscribeTimeout = 10 * time.Second

// hub holds the process's one Redis pub/sub connection and shares each channel among all local
// subscribers: the first subscriber of a channel sends SUBSCRIBE, the last to leave sends
// UNSUBSCRIBE. One goroutine reads the connection and copies every message into the bounded
// buffer of each subscriber of its channel without ever blocking; a subscriber whose buffer is
// full is closed with ErrSlowSubscriber. go-redis reconnects the connection when it breaks and
// resubscribes every channel in its set; messages published while it was down are lost (pub/sub
// delivers at most once).
//
// All subscribe and unsubscribe commands go through subscribeCmd and unsubscribeCmd, so that
// moving to sharded pub/sub on a cluster (SSUBSCRIBE) changes two lines.
type hub struct {
	rdb       redis.UniversalClient
	buffer    int
	log       *slog.Logger
	newLoader func() *Loader

	// ctl serializes the lifecycle of channels: creating or dropping a topic and sending its
	// SUBSCRIBE or UNSUBSCRIBE happen under it, so Redis sees them in the order the topics
	// changed.
	ctl    sync.Mutex
	ps     *redis.PubSub // nil until the first subscription
	done   chan struct{} // closed when the reading goroutine exits
	closed bool

	// mu guards the topics and the pending counts; the reading goroutine takes it per message.
	mu      sync.Mutex
	topics  map[string]*topic
	pending map[string]int // SUBSCRIBE commands sent for a channel and not yet confirmed

	delivered atomic.Uint64
	dropped   atomic.Uint64
}

// topic is one subscribed channel and its local subscribers.
type topic struct {
	subs    map[*EventStream]struct{}
	ready   chan struct{} // closed once Redis has confirmed the subscription
	isReady bool
}

// EventStream is one local subscriber of one channel. Read its events from Events; when that
// channel closes, Err says why. Close it when done; Close is safe to call more than once and from
// any goroutine.
type EventStream struct {
	h       *hub
	channel string
	ch      chan Event
	once    sync.Once // closes ch
	closing sync.Once // unregisters
	dead    atomic.Bool
	err     atomic.Pointer[error]
}

func newHub(rdb redis.UniversalClient, buffer int, log *slog.Logger, newLoader func() *Loader) *hub {
	return &hub{
		rdb: rdb, buffer: buffer, log: log, newLoader: newLoader,
		topics: make(map[string]*topic), pending: make(map[string]int),
	}
}

// subscribeCmd and unsubscribeCmd are the only places that send subscription commands.
func subscribeCmd(ctx context.Context, ps *redis.PubSub, channel string) error {
	return ps.Subscribe(ctx, channel)
}

func unsubscribeCmd(ctx context.Context, ps *redis.PubSub, channel string) error {
	return ps.Unsubscribe(ctx, channel)
}

// subscribe adds a local subscriber to channel and returns once Redis has confirmed the
// channel's subscription, so that every event published after it returns is delivered.
func (h *hub) subscribe(ctx context.Context, channel string) (*EventStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sub := &EventStream{h: h, channel: channel, ch: make(chan Event, h.buffer)}

	h.ctl.Lock()
	if h.closed {
		h.ctl.Unlock()
		return nil, ErrStoreClosed
	}
	if h.ps == nil {
		h.start()
	}
	h.mu.Lock()
	t := h.topics[channel]
	first := t == nil
	if first {
		t = &topic{subs: make(map[*EventStream]struct{}), ready: make(chan struct{})}
		h.topics[channel] = t
		h.pending[channel]++
	}
	t.subs[sub] = struct{}{}
	h.mu.Unlock()
	if first {
		// Never the caller's context: go-redis treats a cancelled write as a broken connection
		// and would reconnect the connection every subscriber shares.
		cctx, cancel := context.WithTimeout(context.Background(), subscribeTimeout)
		err := subscribeCmd(cctx, h.ps, channel)
		cancel()
		if err != nil {
			h.mu.Lock()
			if h.pending[channel]--; h.pending[channel] <= 0 {
				delete(h.pending, channel) // no confirmation will come for a write that failed
			}
			h.mu.Unlock()
			h.ctl.Unlock()
			sub.Close()
			return nil, fmt.Errorf("subscribe to %s: %w", channel, err)
		}
	}
	h.ctl.Unlock()

	timer := time.NewTimer(subscribeTimeout)
	defer timer.Stop()
	select {
	case <-t.ready:
		return sub, nil
	case <-ctx.Done():
		sub.Close()
		return nil, ctx.Err()
	case <-timer.C:
		h.mu.Lock()
		if !t.isReady {
			// The confirmation was lost with a connection; forget it so that a later
			// subscription of this channel does not wait for it too.
			delete(h.pending, channel)
		}
		h.mu.Unlock()
		sub.Close()
		return nil, fmt.Errorf("subscribe to %s: Redis did not confirm within %s", channel, subscribeTimeout)
	}
}

// start opens the pub/sub connection and its reading goroutine; h.ctl is held.
func (h *hub) start() {
	h.ps = h.rdb.Subscribe(context.Background())
	msgs := h.ps.ChannelWithSubscriptions(redis.WithChannelSize(1024))
	h.done = make(chan struct{})
	go h.read(msgs)
}

// read dispatches every message of the pub/sub connection until it closes.
func (h *hub) read(msgs <-chan any) {
	defer close(h.done)
	for m := range msgs {
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				h.confirm(m.Channel)
			}
		case *redis.Message:
			h.dispatch(m)
		}
	}
}

// confirm marks a channel's topic ready once Redis has confirmed every SUBSCRIBE sent for it.
// Confirmations that follow a reconnect find no pending count and leave a ready topic as it is.
func (h *hub) confirm(channel string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := h.pending[channel]; n > 1 {
		h.pending[channel] = n - 1
		return
	}
	delete(h.pending, channel)
	if t := h.topics[channel]; t != nil && !t.isReady {
		t.isReady = true
		close(t.ready)
	}
}

// dispatch copies one message to every local subscriber of its channel, never blocking: a full
// buffer closes its subscriber. Every subscriber receives the same Event, with one fresh Loader,
// so their reads of the event's data share pipelines and cache.
func (h *hub) dispatch(m *redis.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.topics[m.Channel]
	if t == nil || len(t.subs) == 0 {
		return
	}
	var ev Event
	if err := json.Unmarshal([]byte(m.Payload), &ev); err != nil {
		h.log.Error("live event: bad payload", "channel", m.Channel, "err", err)
		return
	}
	ev.Loader = h.newLoader()
	for sub := range t.subs {
		if sub.dead.Load() {
			continue
		}
		select {
		case sub.ch <- ev:
			h.delivered.Add(1)
		default:
			h.dropped.Add(1)
			sub.end(ErrSlowSubscriber)
		}
	}
}

// unsubscribe removes sub from its topic and drops the channel's Redis subscription when sub
// was its last local subscriber.
func (h *hub) unsubscribe(sub *EventStream) {
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
		cctx, cancel := context.WithTimeout(context.Background(), subscribeTimeout)
		defer cancel()
		// go-redis drops the channel from its set before writing, so even if this write fails
		// the channel is not subscribed again after a reconnect.
		if err := unsubscribeCmd(cctx, h.ps, sub.channel); err != nil {
			h.log.Warn("live events: unsubscribe", "channel", sub.channel, "err", err)
		}
	}
}

// close ends every subscription with ErrStoreClosed and closes the pub/sub connection.
func (h *hub) close() error {
	h.ctl.Lock()
	defer h.ctl.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	h.mu.Lock()
	for _, t := range h.topics {
		for sub := range t.subs {
			sub.end(ErrStoreClosed)
		}
	}
	h.topics = make(map[string]*topic)
	h.mu.Unlock()
	if h.ps == nil {
		return nil
	}
	err := h.ps.Close()
	<-h.done
	if err != nil {
		return fmt.Errorf("close pub/sub: %w", err)
	}
	return nil
}

// stats counts the hub's channels and subscribers.
func (h *hub) stats() LiveStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := LiveStats{Delivered: h.delivered.Load(), Dropped: h.dropped.Load()}
	for _, t := range h.topics {
		if t.isReady {
			st.Channels++
		}
		st.Subscribers += len(t.subs)
	}
	return st
}

// Events returns the subscription's events. The channel closes when the subscription ends; Err
// then says why.
func (s *EventStream) Events() <-chan Event { return s.ch }

// Err returns why the subscription ended: ErrSlowSubscriber, ErrStoreClosed, or nil when it was
// closed by Close or is still open.
func (s *EventStream) Err() error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
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
