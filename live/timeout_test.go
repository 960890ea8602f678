//go:build unix

package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// redisTimeout is the deadline of the tests below, short to keep them quick. A new subscription
// must fail within a few of it, a bound on behaviour, generous for a loaded machine: its
// SUBSCRIBE, and the UNSUBSCRIBE the hub sends after it fails, each wait for the shared pub/sub
// connection, which go-redis keeps trying to reconnect while holding it.
const (
	redisTimeout = 300 * time.Millisecond
	slowWithin   = 10 * redisTimeout
)

// TestFrozenRedisFailsSubscriptionsQuickly freezes Redis under two hubs, one that has not opened
// its pub/sub connection yet and one that has, and checks that a new live subscription on each
// fails within a few timeouts with KindUnavailable, as every call of the store does (store's
// TestFrozenRedisFailsEveryCallQuickly), and works again once Redis is back.
func TestFrozenRedisFailsSubscriptionsQuickly(t *testing.T) {
	for _, fr := range storetest.Freezables() {
		t.Run(fr.Name, func(t *testing.T) {
			t.Parallel()
			c, freeze := fr.Start(t)
			st := storetest.NewBoundedStore(t, c, redisTimeout)
			ctx := context.Background()
			subscribe := func(h *live.Hub) error {
				sub, err := h.SubscribePostPublished(ctx, "go")
				if err == nil {
					sub.Close()
				}
				return err
			}
			hubs := []struct {
				name string
				h    *live.Hub
			}{{"a new hub", newHub(t, st, live.Options{})}, {"a hub with its connection open", newHub(t, st, live.Options{})}}
			if err := subscribe(hubs[1].h); err != nil {
				t.Fatal(err)
			}

			thaw := freeze(t)
			for _, h := range hubs {
				start := time.Now()
				err := subscribe(h.h)
				took := time.Since(start)
				if !store.IsKind(err, store.KindUnavailable) {
					t.Errorf("%s on a frozen Redis: err = %v, want KindUnavailable", h.name, err)
				}
				if took > slowWithin {
					t.Errorf("%s on a frozen Redis took %s, want under %s", h.name, took, slowWithin)
				}
				t.Logf("%s on a frozen Redis: %s after %s", h.name, err, took.Round(time.Millisecond))
			}
			thaw()
			for _, h := range hubs {
				// The first subscriptions after the thaw may still meet a connection that timed out.
				var err error
				for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
					if err = subscribe(h.h); err == nil {
						break
					}
				}
				if err != nil {
					t.Errorf("%s after the thaw: %v", h.name, err)
				}
			}
		})
	}
}

// TestQuietSubscriptionOutlivesTheTimeout checks that the deadline bounds what the hub asks of
// Redis, not the wait for live events: a subscription that hears nothing for several timeouts
// still delivers the next event.
func TestQuietSubscriptionOutlivesTheTimeout(t *testing.T) {
	for _, fr := range storetest.Freezables() {
		t.Run(fr.Name, func(t *testing.T) {
			t.Parallel()
			c, _ := fr.Start(t)
			st := storetest.NewBoundedStore(t, c, redisTimeout)
			h := newHub(t, st, live.Options{})
			ctx := context.Background()
			sess, err := st.SignUp(ctx, "carol", "password1")
			if err != nil {
				t.Fatal(err)
			}
			sub, err := h.SubscribePostPublished(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			time.Sleep(4 * redisTimeout)
			// The write is bounded by the timeout too, which a loaded machine may pass: it is
			// retried, as a client would, with its idempotency key (one post, one event).
			var post *store.Post
			for attempt := 1; ; attempt++ {
				post, err = st.CreatePost(ctx, sess.User.Key(), store.NewPost{Title: "after a quiet while", IdempotencyKey: "quiet"})
				if err == nil || !store.IsKind(err, store.KindUnavailable) || attempt == 5 {
					break
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			select {
			case ev, ok := <-sub.Events():
				if !ok {
					t.Fatalf("the subscription ended: %v", sub.Err())
				}
				if ev.Post != post.ID {
					t.Fatalf("event %+v, want post %s", ev, post.ID)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no event")
			}
		})
	}
}
