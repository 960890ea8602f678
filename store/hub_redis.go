package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// redisPubSub is a pubsubConn on one go-redis PubSub connection (classic SUBSCRIBE), which
// go-redis reconnects and resubscribes when it breaks. The confirmation of a subscription that a
// reconnect made again releases whoever waits for it, so a wait cut by a reconnect ends too.
type redisPubSub struct {
	ps   *redis.PubSub
	out  chan *redis.Message
	done chan struct{} // closed when forward has stopped

	mu      sync.Mutex
	waiting map[string][]chan struct{} // "subscribe:<channel>" or "unsubscribe:<channel>" → waiters
	closed  bool
}

func newRedisPubSub(rdb redis.UniversalClient) *redisPubSub {
	c := &redisPubSub{
		ps:      rdb.Subscribe(context.Background()),
		out:     make(chan *redis.Message, 1024),
		done:    make(chan struct{}),
		waiting: make(map[string][]chan struct{}),
	}
	go c.forward(c.ps.ChannelWithSubscriptions(redis.WithChannelSize(1024)))
	return c
}

// forward passes messages on and releases the waiters of confirmations, until the PubSub closes.
func (c *redisPubSub) forward(in <-chan any) {
	defer close(c.done)
	defer close(c.out)
	for m := range in {
		switch m := m.(type) {
		case *redis.Message:
			c.out <- m
		case *redis.Subscription:
			c.release(m.Kind + ":" + m.Channel)
		}
	}
}

func (c *redisPubSub) Messages() <-chan *redis.Message { return c.out }

func (c *redisPubSub) Subscribe(ctx context.Context, channels ...string) error {
	return c.change(ctx, "subscribe", channels)
}

func (c *redisPubSub) Unsubscribe(ctx context.Context, channels ...string) error {
	return c.change(ctx, "unsubscribe", channels)
}

// change sends SUBSCRIBE or UNSUBSCRIBE and waits for Redis to confirm every channel.
func (c *redisPubSub) change(ctx context.Context, kind string, channels []string) error {
	if len(channels) == 0 {
		return nil
	}
	c.mu.Lock()
	waits := make([]chan struct{}, len(channels))
	for i, ch := range channels {
		waits[i] = make(chan struct{})
		c.waiting[kind+":"+ch] = append(c.waiting[kind+":"+ch], waits[i])
	}
	// Never a cancellable context: go-redis takes a cancelled write for a broken connection and
	// reconnects the connection every subscriber shares.
	var err error
	if kind == "subscribe" {
		err = c.ps.Subscribe(context.WithoutCancel(ctx), channels...)
	} else {
		err = c.ps.Unsubscribe(context.WithoutCancel(ctx), channels...)
	}
	if err != nil {
		for _, ch := range channels {
			delete(c.waiting, kind+":"+ch)
		}
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", kind, err)
	}
	c.mu.Unlock()
	for i, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
			c.forget(kind, channels[i:], waits[i:])
			return fmt.Errorf("wait for Redis to confirm %s: %w", kind, ctx.Err())
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fmt.Errorf("%s: %w", kind, ErrStoreClosed)
	}
	return nil
}

// forget drops waiters that gave up.
func (c *redisPubSub) forget(kind string, channels []string, waits []chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, ch := range channels {
		key := kind + ":" + ch
		ws := c.waiting[key]
		for j, w := range ws {
			if w == waits[i] {
				ws = append(ws[:j], ws[j+1:]...)
				break
			}
		}
		if len(ws) == 0 {
			delete(c.waiting, key)
		} else {
			c.waiting[key] = ws
		}
	}
}

// release frees the waiters of one confirmation.
func (c *redisPubSub) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.waiting[key] {
		close(w)
	}
	delete(c.waiting, key)
}

func (c *redisPubSub) Close() error {
	err := c.ps.Close()
	<-c.done
	c.mu.Lock()
	c.closed = true
	for key, ws := range c.waiting {
		for _, w := range ws {
			close(w)
		}
		delete(c.waiting, key)
	}
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("close pub/sub: %w", err)
	}
	return nil
}
