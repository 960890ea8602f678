package rdb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pub/sub that works the same on one Redis, under Sentinel and on a Redis Cluster.
//
// On a Redis 7 cluster the store publishes with sharded pub/sub (SPUBLISH), which sends a message
// only to the shard that owns the channel's hash slot (see RunnerOptions.ShardedPubSub). A sharded
// subscription lives on the node of its channel's slot: a Subscription holds one connection per
// channel there, and when the slot moves (resharding) or its master fails over, Redis drops the
// subscription and the Subscription makes it again on the slot's new owner. Messages published
// meanwhile are lost, as pub/sub messages are whenever a subscriber is not connected: the
// Subscription reports the gap, and the hub's subscribers catch up from the channel's log.

// ErrClosed is the error of a Subscription used after Close. Package live gives it its own name
// (live.ErrClosed): a closed Hub ends its subscriptions with it.
var ErrClosed = errors.New("live events have stopped")

// subscriptionBuffer is how many messages a Subscription holds for a slow reader before its
// channels' readers wait.
const subscriptionBuffer = 1024

// Subscription receives the messages of a changing set of channels on one Go channel. Create it
// with NewSubscription, add and drop channels with Subscribe and Unsubscribe, read Messages, and
// Close it when done. Subscribe returns once Redis confirmed the subscriptions, so a message
// published after it returns is delivered; after Unsubscribe returns no message of the channels
// is delivered any more. Its methods are safe for concurrent use; the reader of Messages must keep
// up, or the readers behind it wait (Redis buffers for them up to its client-output-buffer-limit
// for pubsub and then drops the connection).
type Subscription struct {
	client redis.UniversalClient
	out    chan *redis.Message

	ctx    context.Context // ends with Close, stopping every reader
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	ps      *redis.PubSub              // the one connection on a single master
	waiting map[string][]chan struct{} // "subscribe:ch", "unsubscribe:ch" → confirmation waiters
	shards  map[string]*shardReader    // sharded: channel → its reader
}

// shardReader reads one sharded channel.
type shardReader struct {
	stop context.CancelFunc
	done chan struct{}
}

// NewSubscription returns an empty Subscription on the Redis of r, subscribing as r's users
// publish: with sharded pub/sub on a Redis 7 cluster (RunnerOptions.ShardedPubSub), on one
// classic pub/sub connection otherwise.
func NewSubscription(ctx context.Context, r *Runner) *Subscription {
	client, sharded := r.client, r.opts.ShardedPubSub
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	sub := &Subscription{client: client, out: make(chan *redis.Message, subscriptionBuffer), ctx: sctx,
		cancel: cancel, waiting: make(map[string][]chan struct{}), shards: make(map[string]*shardReader)}
	if !sharded {
		sub.ps = client.Subscribe(ctx)
		sub.wg.Add(1)
		go func() {
			defer sub.wg.Done()
			sub.forward(sctx, sub.ps, "")
		}()
	}
	return sub
}

// Messages delivers the messages of every subscribed channel. It is closed by Close. A message
// with an empty payload reports a gap instead: the connection broke and its channel was
// subscribed again, so messages published meanwhile were lost.
func (sub *Subscription) Messages() <-chan *redis.Message { return sub.out }

// Subscribe adds channels. It returns once Redis confirmed every one of them.
func (sub *Subscription) Subscribe(ctx context.Context, channels ...string) error {
	if len(channels) == 0 {
		return nil
	}
	sub.mu.Lock()
	if sub.closed {
		sub.mu.Unlock()
		return fmt.Errorf("subscribe: %w", ErrClosed)
	}
	if sub.ps != nil {
		waits := sub.expect("subscribe", channels)
		// Never a cancellable context: go-redis takes a cancelled write for a broken connection
		// and reconnects the connection every channel shares.
		err := sub.ps.Subscribe(context.WithoutCancel(ctx), channels...)
		sub.mu.Unlock()
		if err != nil {
			sub.forget("subscribe", channels, waits)
			return fmt.Errorf("subscribe: %w", err)
		}
		return sub.await(ctx, "subscribe", channels, waits)
	}
	defer sub.mu.Unlock()
	for _, ch := range channels {
		if _, ok := sub.shards[ch]; ok {
			continue
		}
		ps, err := sub.shardSubscribe(ctx, ch)
		if err != nil {
			return err
		}
		cctx, stop := context.WithCancel(sub.ctx)
		r := &shardReader{stop: stop, done: make(chan struct{})}
		sub.shards[ch] = r
		sub.wg.Add(1)
		go func() {
			defer sub.wg.Done()
			defer close(r.done)
			sub.shard(cctx, ch, ps)
		}()
	}
	return nil
}

// Unsubscribe drops channels. It returns once no message of theirs can be delivered any more.
func (sub *Subscription) Unsubscribe(ctx context.Context, channels ...string) error {
	if len(channels) == 0 {
		return nil
	}
	sub.mu.Lock()
	if sub.closed {
		sub.mu.Unlock()
		return nil
	}
	if sub.ps != nil {
		waits := sub.expect("unsubscribe", channels)
		err := sub.ps.Unsubscribe(context.WithoutCancel(ctx), channels...)
		sub.mu.Unlock()
		if err != nil {
			sub.forget("unsubscribe", channels, waits)
			return fmt.Errorf("unsubscribe: %w", err)
		}
		return sub.await(ctx, "unsubscribe", channels, waits)
	}
	var readers []*shardReader
	for _, ch := range channels {
		if r, ok := sub.shards[ch]; ok {
			r.stop()
			delete(sub.shards, ch)
			readers = append(readers, r)
		}
	}
	sub.mu.Unlock()
	for _, r := range readers {
		select {
		case <-r.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// expect registers waiters for the confirmations of kind for channels; sub.mu is held.
func (sub *Subscription) expect(kind string, channels []string) []chan struct{} {
	waits := make([]chan struct{}, len(channels))
	for i, ch := range channels {
		waits[i] = make(chan struct{})
		sub.waiting[kind+":"+ch] = append(sub.waiting[kind+":"+ch], waits[i])
	}
	return waits
}

// confirm releases the waiters of one confirmation. It reports whether nobody waited for a
// subscription's: a reconnect subscribed the channel again.
func (sub *Subscription) confirm(kind, ch string) (again bool) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	k := kind + ":" + ch
	ws := sub.waiting[k]
	for _, w := range ws {
		close(w)
	}
	delete(sub.waiting, k)
	return kind == "subscribe" && len(ws) == 0 && !sub.closed
}

// gap reports on Messages that messages of ch may have been lost.
func (sub *Subscription) gap(ctx context.Context, ch string) bool {
	select {
	case sub.out <- &redis.Message{Channel: ch}:
		return true
	case <-ctx.Done():
		return false
	}
}

// await waits for the confirmations of kind for channels, or until ctx ends. It fails when the
// Subscription was closed meanwhile.
func (sub *Subscription) await(ctx context.Context, kind string, channels []string, waits []chan struct{}) error {
	for i, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
			sub.forget(kind, channels[i:], waits[i:])
			return fmt.Errorf("wait for redis to confirm %s: %w", kind, ctx.Err())
		}
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.closed {
		return fmt.Errorf("%s: %w", kind, ErrClosed)
	}
	return nil
}

// forget drops waiters that gave up.
func (sub *Subscription) forget(kind string, channels []string, waits []chan struct{}) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for i, ch := range channels {
		k := kind + ":" + ch
		ws := sub.waiting[k]
		for j, w := range ws {
			if w == waits[i] {
				ws = append(ws[:j], ws[j+1:]...)
				break
			}
		}
		if len(ws) == 0 {
			delete(sub.waiting, k)
		} else {
			sub.waiting[k] = ws
		}
	}
}

// Close drops every channel, waits for the readers to stop and closes Messages.
func (sub *Subscription) Close() error {
	sub.mu.Lock()
	if sub.closed {
		sub.mu.Unlock()
		return nil
	}
	sub.closed = true
	sub.cancel()
	for k, ws := range sub.waiting {
		for _, w := range ws {
			close(w)
		}
		delete(sub.waiting, k)
	}
	var err error
	if sub.ps != nil {
		err = sub.ps.Close()
	}
	sub.mu.Unlock()
	sub.wg.Wait()
	close(sub.out)
	if err != nil {
		return fmt.Errorf("close subscription: %w", err)
	}
	return nil
}

// shardSubscribe subscribes to one sharded channel on the master of its slot and waits for the
// confirmation. A stale slot map (MOVED) is refreshed and the subscription tried again.
func (sub *Subscription) shardSubscribe(ctx context.Context, ch string) (*redis.PubSub, error) {
	cc := sub.client.(*redis.ClusterClient)
	var err error
	for attempt := 0; attempt < MaxRedirectAttempts; attempt++ {
		if attempt > 0 {
			cc.ReloadState(ctx)
			if werr := Pause(ctx, RetryPause(attempt)); werr != nil {
				return nil, werr
			}
		}
		ps := cc.SSubscribe(ctx, ch)
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var msg any
		msg, err = ps.Receive(rctx)
		cancel()
		if s, ok := msg.(*redis.Subscription); ok && err == nil && s.Kind == "ssubscribe" {
			return ps, nil
		}
		if err == nil {
			err = fmt.Errorf("unexpected reply %v", msg)
		}
		_ = ps.Close()
	}
	return nil, fmt.Errorf("subscribe to %s: %w", ch, err)
}

// shard reads one sharded channel until ctx ends, subscribing again on the slot's current owner
// whenever Redis drops the subscription because the slot moved or its master changed.
func (sub *Subscription) shard(ctx context.Context, ch string, ps *redis.PubSub) {
	for {
		dropped := sub.forward(ctx, ps, ch)
		_ = ps.Close()
		if !dropped || ctx.Err() != nil {
			return
		}
		for {
			var err error
			if ps, err = sub.shardSubscribe(ctx, ch); err == nil {
				break
			}
			if Pause(ctx, time.Second) != nil {
				return
			}
		}
		if !sub.gap(ctx, ch) {
			_ = ps.Close()
			return
		}
	}
}

// forward copies the messages of ps to sub.out until ctx ends or ps closes. For a sharded
// channel ch it reports whether Redis dropped the subscription (a "sunsubscribe" that Unsubscribe
// did not ask for).
func (sub *Subscription) forward(ctx context.Context, ps *redis.PubSub, ch string) (dropped bool) {
	in := ps.ChannelWithSubscriptions(redis.WithChannelSize(subscriptionBuffer))
	for {
		select {
		case <-ctx.Done():
			return false
		case m, ok := <-in:
			if !ok {
				return false
			}
			switch m := m.(type) {
			case *redis.Message:
				select {
				case sub.out <- m:
				case <-ctx.Done():
					return false
				}
			case *redis.Subscription:
				if ch == "" {
					if sub.confirm(m.Kind, m.Channel) && !sub.gap(ctx, m.Channel) {
						return false
					}
				} else if m.Kind == "sunsubscribe" && m.Channel == ch {
					return true
				}
			}
		}
	}
}
