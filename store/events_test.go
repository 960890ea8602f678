package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// eventWait bounds how long a test waits for an event that must come; it is a liveness bound,
// not a timing assertion.
const eventWait = 10 * time.Second

// peer returns a second store on b's Redis with the same prefix as s, over its own client: to the
// live events it is another server process.
func peer(t *testing.T, b storetest.Backend, s *store.Store) *store.Store {
	t.Helper()
	c, ok := b.Client.(*redis.Client)
	if !ok {
		t.Skip("needs a single-node backend")
	}
	rc := redis.NewClient(&redis.Options{Addr: c.Options().Addr})
	t.Cleanup(func() { _ = rc.Close() })
	ps, err := store.New(context.Background(), rc, s.Options())
	if err != nil {
		t.Fatalf("peer store: %v", err)
	}
	t.Cleanup(func() { _ = ps.Close() })
	return ps
}

func next(t *testing.T, sub *store.EventStream) store.Event {
	t.Helper()
	select {
	case ev, ok := <-sub.Events():
		if !ok {
			t.Fatalf("subscription ended: %v", sub.Err())
		}
		return ev
	case <-time.After(eventWait):
		t.Fatalf("no event within %s", eventWait)
	}
	return store.Event{}
}

func liveUser(t *testing.T, s *store.Store, name string) string {
	t.Helper()
	sess, err := s.SignUp(context.Background(), name, "password1")
	if err != nil {
		t.Fatalf("sign up %s: %v", name, err)
	}
	return string(sess.User.Key())
}

func TestLiveEventsReachAnotherProcess(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		a := b.NewStore(t, store.Options{})
		t.Cleanup(func() { _ = a.Close() })
		w := peer(t, b, a) // the writer: another process on the same Redis
		alice, bob := liveUser(t, w, "alice"), liveUser(t, w, "bob")
		post, err := w.CreatePost(ctx, uk(alice), store.NewPost{Title: "first", Groups: []string{"go"}})
		if err != nil {
			t.Fatal(err)
		}

		tests := []struct {
			name      string
			subscribe func() (*store.EventStream, error)
			write     func() error
			want      store.Event
			check     func(t *testing.T, ev store.Event)
		}{
			{
				name:      "vote changes the post",
				subscribe: func() (*store.EventStream, error) { return a.SubscribePostChanged(ctx, post.ID) },
				write:     func() error { _, err := w.VotePost(ctx, uk(bob), post.ID, 1); return err },
				want:      store.Event{Post: post.ID},
				check: func(t *testing.T, ev store.Event) {
					p, err := ev.Loader.Post(ctx, ev.Post)
					if err != nil || p == nil || p.Upvotes != 1 {
						t.Errorf("the event's loader reads %+v, %v; want the post with its new vote", p, err)
					}
				},
			},
			{
				name:      "groups change the post",
				subscribe: func() (*store.EventStream, error) { return a.SubscribePostChanged(ctx, post.ID) },
				write: func() error {
					_, err := w.SetPostGroups(ctx, uk(alice), post.ID, []string{"redis"}, nil)
					return err
				},
				want: store.Event{Post: post.ID},
				check: func(t *testing.T, ev store.Event) {
					p, _ := ev.Loader.Post(ctx, ev.Post)
					if p == nil || len(p.GroupNames) != 2 {
						t.Errorf("the event's loader reads %+v; want the post in two groups", p)
					}
				},
			},
			{
				name:      "a comment is added",
				subscribe: func() (*store.EventStream, error) { return a.SubscribeCommentAdded(ctx, post.ID) },
				write: func() error {
					w.PublishCommentAdded(ctx, post.Key(), "comment:"+post.Key()+":1")
					return nil
				},
				want: store.Event{Post: post.ID, Comment: "comment:" + post.Key() + ":1"},
			},
			{
				name:      "a comment changes the post's count",
				subscribe: func() (*store.EventStream, error) { return a.SubscribePostChanged(ctx, post.ID) },
				write: func() error {
					w.PublishCommentAdded(ctx, post.Key(), "comment:"+post.Key()+":2")
					return nil
				},
				want: store.Event{Post: post.ID},
			},
			{
				name:      "a new post, all groups",
				subscribe: func() (*store.EventStream, error) { return a.SubscribePostPublished(ctx, "") },
				write: func() error {
					_, err := w.CreatePost(ctx, uk(bob), store.NewPost{Title: "second"})
					return err
				},
				want: store.Event{Post: "post:2", Author: "bob"},
			},
			{
				name:      "a new post in a group",
				subscribe: func() (*store.EventStream, error) { return a.SubscribePostPublished(ctx, "Go") },
				write: func() error {
					// A post outside the group first: the subscriber must see only the second.
					if _, err := w.CreatePost(ctx, uk(bob), store.NewPost{Title: "third", Groups: []string{"rust"}}); err != nil {
						return err
					}
					_, err := w.CreatePost(ctx, uk(bob), store.NewPost{Title: "fourth", Groups: []string{"go"}})
					return err
				},
				want: store.Event{Post: "post:4", Author: "bob"},
			},
			{
				name:      "the post is deleted",
				subscribe: func() (*store.EventStream, error) { return a.SubscribePostChanged(ctx, post.ID) },
				write:     func() error { return w.DeletePost(ctx, uk(alice), post.ID) },
				want:      store.Event{Post: post.ID},
				check: func(t *testing.T, ev store.Event) {
					if p, err := ev.Loader.Post(ctx, ev.Post); err != nil || p != nil {
						t.Errorf("the event's loader reads %+v, %v; want no post", p, err)
					}
				},
			},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				sub, err := tc.subscribe()
				if err != nil {
					t.Fatalf("subscribe: %v", err)
				}
				defer sub.Close()
				if err := tc.write(); err != nil {
					t.Fatalf("write: %v", err)
				}
				ev := next(t, sub)
				if ev.Loader == nil {
					t.Fatal("the event has no loader")
				}
				got := ev
				got.Loader = nil
				if got.ID == "" {
					t.Error("the event has no cursor")
				}
				got.ID = ""
				if got != tc.want {
					t.Errorf("event = %+v, want %+v", got, tc.want)
				}
				if tc.check != nil {
					tc.check(t, ev)
				}
			})
		}
	})
}

func TestSubscribeRejectsBadInput(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		t.Cleanup(func() { _ = s.Close() })
		for name, f := range map[string]func() (*store.EventStream, error){
			"post id":    func() (*store.EventStream, error) { return s.SubscribePostChanged(ctx, "user:bob") },
			"comment id": func() (*store.EventStream, error) { return s.SubscribeCommentAdded(ctx, "post:x") },
			"group":      func() (*store.EventStream, error) { return s.SubscribePostPublished(ctx, "no spaces") },
			"viewer":     func() (*store.EventStream, error) { return s.SubscribeFeed(ctx, "post:1") },
		} {
			if _, err := f(); !store.IsKind(err, store.KindInvalid) {
				t.Errorf("%s: err = %v, want KindInvalid", name, err)
			}
		}
	})
}

// numsub returns how many connections Redis counts on a channel. On a cluster the store uses
// sharded pub/sub, which the channel's master counts.
func numsub(t *testing.T, c redis.UniversalClient, channel string) int64 {
	t.Helper()
	if cc, ok := c.(*redis.ClusterClient); ok {
		node, err := cc.MasterForKey(context.Background(), channel)
		if err != nil {
			t.Fatal(err)
		}
		m, err := node.PubSubShardNumSub(context.Background(), channel).Result()
		if err != nil {
			t.Fatalf("pubsub shardnumsub: %v", err)
		}
		return m[channel]
	}
	m, err := c.PubSubNumSub(context.Background(), channel).Result()
	if err != nil {
		t.Fatalf("pubsub numsub: %v", err)
	}
	return m[channel]
}

func TestOneRedisSubscriptionPerChannel(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		t.Cleanup(func() { _ = s.Close() })
		channel := s.Options().Prefix + "{p:7}:ev:changed"
		var subs []*store.EventStream
		for range 20 {
			sub, err := s.SubscribePostChanged(ctx, "post:7")
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, sub)
		}
		if n := numsub(t, b.Client, channel); n != 1 {
			t.Errorf("Redis counts %d subscriptions of the channel, want 1", n)
		}
		if st := s.LiveStats(); st.Channels != 1 || st.Subscribers != 20 {
			t.Errorf("stats = %+v, want 1 channel, 20 subscribers", st)
		}
		for _, sub := range subs[1:] {
			sub.Close()
		}
		if n := numsub(t, b.Client, channel); n != 1 {
			t.Errorf("with one subscriber left Redis counts %d subscriptions, want 1", n)
		}
		// The remaining subscriber still receives, once.
		s.PublishCommentAdded(ctx, "7", "comment:7:1")
		if ev := next(t, subs[0]); ev.Post != "post:7" {
			t.Errorf("event = %+v", ev)
		}
		subs[0].Close()
		subs[0].Close() // idempotent
		waitFor(t, "the channel to be unsubscribed", func() bool { return numsub(t, b.Client, channel) == 0 })
		if st := s.LiveStats(); st.Channels != 0 || st.Subscribers != 0 {
			t.Errorf("stats = %+v, want none", st)
		}
		if _, ok := <-subs[0].Events(); ok {
			t.Error("a closed subscription's channel is open")
		}
		if err := subs[0].Err(); err != nil {
			t.Errorf("Err after Close = %v, want nil", err)
		}
	})
}

// TestSlowSubscriberCatchesUp checks that a subscriber that falls behind is not dropped: the
// events its full buffer could not take are replaced by one Gap event, sent as soon as it has
// room, from which it catches up with Replay.
func TestSlowSubscriberCatchesUp(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{EventBuffer: 2})
		t.Cleanup(func() { _ = s.Close() })
		slow, err := s.SubscribePostChanged(ctx, "post:9")
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Close()
		fast, err := s.SubscribePostChanged(ctx, "post:9")
		if err != nil {
			t.Fatal(err)
		}
		defer fast.Close()
		const n = 5
		var ids []string
		for i := range n {
			s.PublishCommentAdded(ctx, "9", fmt.Sprintf("comment:9:%d", i+1))
			ids = append(ids, next(t, fast).ID) // the hub keeps delivering to the reader that keeps up
		}
		first, second := next(t, slow), next(t, slow)
		if first.ID != ids[0] || second.ID != ids[1] {
			t.Fatalf("the slow subscriber's buffer held %s, %s; want %s, %s", first.ID, second.ID, ids[0], ids[1])
		}
		if gap := next(t, slow); !gap.Gap {
			t.Fatalf("after its buffer: %+v, want the gap", gap)
		}
		missed, err := slow.Replay(ctx, second.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range missed {
			got = append(got, ev.ID)
		}
		if want := ids[2:]; !slices.Equal(got, want) {
			t.Errorf("replayed %v, want %v", got, want)
		}
		if err := slow.Err(); err != nil {
			t.Errorf("Err = %v, want nil: a slow subscriber is not dropped", err)
		}
		if st := s.LiveStats(); st.Dropped != 3 {
			t.Errorf("stats = %+v, want 3 events dropped", st)
		}
	})
}

func TestCloseEndsSubscriptions(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		s := b.NewStore(t, store.Options{})
		sub, err := s.SubscribePostPublished(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		if _, ok := <-sub.Events(); ok {
			t.Fatal("an event after Close")
		}
		if !errors.Is(sub.Err(), store.ErrStoreClosed) {
			t.Errorf("Err = %v, want ErrStoreClosed", sub.Err())
		}
		sub.Close()
		if _, err := s.SubscribePostPublished(context.Background(), ""); !errors.Is(err, store.ErrStoreClosed) {
			t.Errorf("subscribe after Close: %v, want ErrStoreClosed", err)
		}
	})
}

func TestSubscribeHonoursCancellation(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		s := b.NewStore(t, store.Options{})
		t.Cleanup(func() { _ = s.Close() })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s.SubscribePostChanged(ctx, "post:1"); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if st := s.LiveStats(); st.Subscribers != 0 {
			t.Errorf("stats = %+v, want no subscribers", st)
		}
	})
}

func TestFeedIncludesFollowedAuthorsOnly(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		t.Cleanup(func() { _ = s.Close() })
		for _, name := range []string{"alice", "bob", "carol"} {
			if _, err := s.SignUp(ctx, name, "password1"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Follow(ctx, "bob", "alice"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			author string
			want   bool
		}{
			{"user:alice", true},
			{"user:carol", false},
			{"user:bob", false}, // one's own posts are not in one's feed
			{"", false},
		} {
			in, err := s.NewLoader().FeedIncludes(ctx, "bob", store.Event{Post: "post:1", Author: uk(tc.author)})
			if err != nil || in != tc.want {
				t.Errorf("author %q: FeedIncludes = %v, %v; want %v", tc.author, in, err, tc.want)
			}
		}
	})
}

// waitFor polls cond until it holds, failing the test after eventWait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(eventWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSubscribeChurnLeaksNothing runs hundreds of concurrent subscribe/close cycles over a few
// channels and checks that the goroutines, the local subscribers and the Redis subscriptions all
// return to where they were. It is not parallel: it counts the process's goroutines.
func TestSubscribeChurnLeaksNothing(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s := b.NewStore(t, store.Options{})
			defer func() { _ = s.Close() }()
			// Warm up: the hub's connection and its reader live as long as the store.
			warm, err := s.SubscribePostChanged(ctx, "post:1")
			if err != nil {
				t.Fatal(err)
			}
			warm.Close()
			base, _ := storetest.Goroutines()

			var wg sync.WaitGroup
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 50 {
						pid := fmt.Sprint(1 + (w+i)%4)
						sub, err := s.SubscribePostChanged(ctx, "post:"+pid)
						if err != nil {
							t.Error(err)
							return
						}
						if i%5 == 0 {
							s.PublishCommentAdded(ctx, pid, "comment:"+pid+":1")
						}
						sub.Close()
					}
				}()
			}
			wg.Wait()
			if st := s.LiveStats(); st.Subscribers != 0 || st.Channels != 0 {
				t.Errorf("stats after churn = %+v, want none", st)
			}
			for pid := 1; pid <= 4; pid++ {
				channel := fmt.Sprintf("%s{p:%d}:ev:changed", s.Options().Prefix, pid)
				waitFor(t, "Redis to drop "+channel, func() bool { return numsub(t, b.Client, channel) == 0 })
			}
			storetest.WaitGoroutines(t, base, eventWait)
		})
	}
}

// TestResubscribesAfterKilledConnectionRealRedis kills the hub's pub/sub connection on a
// redis-server of its own (CLIENT KILL would disturb other tests) and checks that go-redis
// reconnects, resubscribes, and the subscriber receives later events.
func TestResubscribesAfterKilledConnectionRealRedis(t *testing.T) {
	storetest.RealServer(t) // skips (or fails under REQUIRE_REAL_REDIS=1) without redis-server
	srv, err := storetest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rc.Close()
	ctx := context.Background()
	s, err := store.New(ctx, rc, store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sub, err := s.SubscribePostChanged(ctx, "post:5")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	channel := s.Options().Prefix + "{p:5}:ev:changed"

	for round := range 3 {
		killed, err := rc.ClientKillByFilter(ctx, "TYPE", "pubsub").Result()
		if err != nil || killed != 1 {
			t.Fatalf("round %d: CLIENT KILL TYPE pubsub = %d, %v; want 1 connection", round, killed, err)
		}
		waitFor(t, "the resubscription", func() bool { return numsub(t, rc, channel) == 1 })
		cid := fmt.Sprintf("comment:5:%d", round+1)
		s.PublishCommentAdded(ctx, "5", cid)
		// The resubscription is reported as a gap (events may have been missed), then events
		// flow again.
		if ev := next(t, sub); !ev.Gap {
			t.Fatalf("round %d: event = %+v, want the gap", round, ev)
		}
		if ev := next(t, sub); ev.Post != "post:5" {
			t.Fatalf("round %d: event = %+v", round, ev)
		}
	}
	if err := sub.Err(); err != nil {
		t.Errorf("the subscription reports %v", err)
	}
}
