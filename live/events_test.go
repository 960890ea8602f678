package live_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// eventWait bounds how long a test waits for an event that must come; it is a liveness bound,
// not a timing assertion.
const eventWait = 10 * time.Second

// newHub returns the live events of st, closed when the test ends.
func newHub(t testing.TB, st *store.Store, opts live.Options) *live.Hub {
	t.Helper()
	h := live.New(st, opts)
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// peer returns a second store on b's Redis with the same prefix as s, over its own client: to the
// live events it is another server process.
func peer(t *testing.T, b storetest.Backend, s *store.Store) *store.Store {
	t.Helper()
	ps, err := store.New(context.Background(), b.NewClient(t), s.Options())
	if err != nil {
		t.Fatalf("peer store: %v", err)
	}
	return ps
}

func next(t *testing.T, sub *live.EventStream) live.Event {
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
	return live.Event{}
}

func liveUser(t *testing.T, s *store.Store, name string) store.UserKey {
	t.Helper()
	sess, err := s.SignUp(context.Background(), name, "password1")
	if err != nil {
		t.Fatalf("sign up %s: %v", name, err)
	}
	return sess.User.Key()
}

// livePost publishes a post by author and returns it.
func livePost(t *testing.T, s *store.Store, author store.UserKey, title string) *store.Post {
	t.Helper()
	p, err := s.CreatePost(context.Background(), author, store.NewPost{Title: title})
	if err != nil {
		t.Fatalf("create post: %v", err)
	}
	return p
}

// comment adds a comment by author to post, which announces commentAdded and postChanged.
func comment(t testing.TB, s *store.Store, author store.UserKey, post *store.Post) *store.Comment {
	t.Helper()
	c, err := s.CreateComment(context.Background(), author, store.NewComment{PostID: post.ID, Body: "a comment"})
	if err != nil {
		t.Errorf("comment: %v", err) // Errorf: helpers call it from goroutines of their own
	}
	return c
}

func TestLiveEventsReachAnotherProcess(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := b.NewStore(t, store.Options{})
		a := newHub(t, st, live.Options{})
		w := peer(t, b, st) // the writer: another process on the same Redis
		alice, bob := liveUser(t, w, "alice"), liveUser(t, w, "bob")
		post, err := w.CreatePost(ctx, alice, store.NewPost{Title: "first", Groups: []string{"go"}})
		if err != nil {
			t.Fatal(err)
		}
		ids := func(post, comment string, author store.UserKey) live.Event {
			return live.Event{EventIDs: store.EventIDs{Post: post, Comment: comment, Author: author}}
		}

		tests := []struct {
			name      string
			subscribe func() (*live.EventStream, error)
			write     func() error
			want      live.Event
			check     func(t *testing.T, ev live.Event)
		}{
			{
				name:      "vote changes the post",
				subscribe: func() (*live.EventStream, error) { return a.SubscribePostChanged(ctx, post.ID) },
				write:     func() error { _, err := w.VotePost(ctx, bob, post.ID, 1); return err },
				want:      ids(post.ID, "", ""),
				check: func(t *testing.T, ev live.Event) {
					p, err := ev.Loader.Post(ctx, ev.Post)
					if err != nil || p == nil || p.Upvotes != 1 {
						t.Errorf("the event's loader reads %+v, %v; want the post with its new vote", p, err)
					}
				},
			},
			{
				name:      "groups change the post",
				subscribe: func() (*live.EventStream, error) { return a.SubscribePostChanged(ctx, post.ID) },
				write: func() error {
					_, err := w.SetPostGroups(ctx, alice, post.ID, []string{"redis"}, nil)
					return err
				},
				want: ids(post.ID, "", ""),
				check: func(t *testing.T, ev live.Event) {
					p, _ := ev.Loader.Post(ctx, ev.Post)
					if p == nil || len(p.GroupNames) != 2 {
						t.Errorf("the event's loader reads %+v; want the post in two groups", p)
					}
				},
			},
			{
				name:      "a comment is added",
				subscribe: func() (*live.EventStream, error) { return a.SubscribeCommentAdded(ctx, post.ID) },
				write:     func() error { comment(t, w, bob, post); return nil },
				want:      ids(post.ID, "comment:"+post.Key()+":1", ""),
				check: func(t *testing.T, ev live.Event) {
					c, err := ev.Loader.Comment(ctx, ev.Comment)
					if err != nil || c == nil {
						t.Errorf("the event's loader reads %+v, %v; want the new comment", c, err)
					}
				},
			},
			{
				name:      "a comment changes the post's count",
				subscribe: func() (*live.EventStream, error) { return a.SubscribePostChanged(ctx, post.ID) },
				write:     func() error { comment(t, w, bob, post); return nil },
				want:      ids(post.ID, "", ""),
				check: func(t *testing.T, ev live.Event) {
					p, _ := ev.Loader.Post(ctx, ev.Post)
					if p == nil || p.CommentCount != 2 {
						t.Errorf("the event's loader reads %+v; want the post with two comments", p)
					}
				},
			},
			{
				name:      "a new post, all groups",
				subscribe: func() (*live.EventStream, error) { return a.SubscribePostPublished(ctx, "") },
				write: func() error {
					_, err := w.CreatePost(ctx, bob, store.NewPost{Title: "second"})
					return err
				},
				want: ids("post:2", "", "bob"),
			},
			{
				name:      "a new post in a group",
				subscribe: func() (*live.EventStream, error) { return a.SubscribePostPublished(ctx, "Go") },
				write: func() error {
					// A post outside the group first: the subscriber must see only the second.
					if _, err := w.CreatePost(ctx, bob, store.NewPost{Title: "third", Groups: []string{"rust"}}); err != nil {
						return err
					}
					_, err := w.CreatePost(ctx, bob, store.NewPost{Title: "fourth", Groups: []string{"go"}})
					return err
				},
				want: ids("post:4", "", "bob"),
			},
			{
				name:      "the post is deleted",
				subscribe: func() (*live.EventStream, error) { return a.SubscribePostChanged(ctx, post.ID) },
				write:     func() error { return w.DeletePost(ctx, alice, post.ID) },
				want:      ids(post.ID, "", ""),
				check: func(t *testing.T, ev live.Event) {
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
				if ev.ID == "" {
					t.Error("the event has no cursor")
				}
				if ev.EventIDs != tc.want.EventIDs || ev.Gap != tc.want.Gap {
					t.Errorf("event = %+v, want %+v", ev.EventIDs, tc.want.EventIDs)
				}
				if ev.LoaderFor(true) != ev.Loader || ev.LoaderFor(false) == ev.Loader || ev.LoaderFor(false) != ev.LoaderFor(false) {
					t.Error("the event's loaders: want Loader for those who show NSFW posts, and one other for those who do not")
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
		h := newHub(t, b.NewStore(t, store.Options{}), live.Options{})
		for name, f := range map[string]func() (*live.EventStream, error){
			"post id":    func() (*live.EventStream, error) { return h.SubscribePostChanged(ctx, "user:bob") },
			"comment id": func() (*live.EventStream, error) { return h.SubscribeCommentAdded(ctx, "post:x") },
			"group":      func() (*live.EventStream, error) { return h.SubscribePostPublished(ctx, "no spaces") },
			"viewer":     func() (*live.EventStream, error) { return h.SubscribeFeed(ctx, "post:1") },
		} {
			if _, err := f(); !store.IsKind(err, store.KindInvalid) {
				t.Errorf("%s: err = %v, want KindInvalid", name, err)
			}
		}
		if st := h.Stats(); st.Subscribers != 0 {
			t.Errorf("stats = %+v, want no subscribers", st)
		}
	})
}

// numsub returns how many connections Redis counts on a channel. On a cluster the store uses
// sharded pub/sub, which the channel's master counts.
func numsub(t *testing.T, c rdb.UniversalClient, channel string) int64 {
	t.Helper()
	if cc, ok := c.(*rdb.ClusterClient); ok {
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
		h := newHub(t, s, live.Options{})
		alice := liveUser(t, s, "alice")
		post := livePost(t, s, alice, "post")
		channel := s.Options().Prefix + "{p:" + post.Key() + "}:ev:changed"
		var subs []*live.EventStream
		for range 20 {
			sub, err := h.SubscribePostChanged(ctx, post.ID)
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, sub)
		}
		if n := numsub(t, b.Client, channel); n != 1 {
			t.Errorf("Redis counts %d subscriptions of the channel, want 1", n)
		}
		if st := h.Stats(); st.Channels != 1 || st.Subscribers != 20 {
			t.Errorf("stats = %+v, want 1 channel, 20 subscribers", st)
		}
		for _, sub := range subs[1:] {
			sub.Close()
		}
		if n := numsub(t, b.Client, channel); n != 1 {
			t.Errorf("with one subscriber left Redis counts %d subscriptions, want 1", n)
		}
		// The remaining subscriber still receives, once.
		comment(t, s, alice, post)
		if ev := next(t, subs[0]); ev.Post != post.ID {
			t.Errorf("event = %+v", ev)
		}
		subs[0].Close()
		subs[0].Close() // idempotent
		waitFor(t, "the channel to be unsubscribed", func() bool { return numsub(t, b.Client, channel) == 0 })
		if st := h.Stats(); st.Channels != 0 || st.Subscribers != 0 {
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
		s := b.NewStore(t, store.Options{})
		h := newHub(t, s, live.Options{EventBuffer: 2})
		alice := liveUser(t, s, "alice")
		post := livePost(t, s, alice, "post")
		slow, err := h.SubscribePostChanged(ctx, post.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Close()
		fast, err := h.SubscribePostChanged(ctx, post.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer fast.Close()
		const n = 5
		var ids []string
		for range n {
			comment(t, s, alice, post)
			ids = append(ids, next(t, fast).ID) // the hub keeps delivering to the reader that keeps up
		}
		// The last event reaches the fast subscriber while its dispatch may still be on its way to
		// the slow one: read the slow one once that is done, or its freed buffer takes the gap early.
		waitFor(t, "the last event's dispatch", func() bool { return h.Stats().Dropped >= n-2 })
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
			if ev.Post != post.ID || ev.Loader == nil {
				t.Errorf("replayed %+v, want the post's event with a loader", ev)
			}
		}
		if want := ids[2:]; !slices.Equal(got, want) {
			t.Errorf("replayed %v, want %v", got, want)
		}
		if err := slow.Err(); err != nil {
			t.Errorf("Err = %v, want nil: a slow subscriber is not dropped", err)
		}
		if st := h.Stats(); st.Dropped != 3 {
			t.Errorf("stats = %+v, want 3 events dropped", st)
		}
	})
}

// TestReplayChecksItsCursor checks the replay of a channel's log: from the head taken before any
// event, every event; a malformed cursor is KindInvalid; one from before what the log keeps is
// KindResync.
func TestReplayChecksItsCursor(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		h := newHub(t, s, live.Options{})
		alice := liveUser(t, s, "alice")
		post := livePost(t, s, alice, "post")
		sub, err := h.SubscribeCommentAdded(ctx, post.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		head, err := sub.Head(ctx)
		if err != nil || head != store.FromStart {
			t.Fatalf("head of an empty log = %q, %v; want %q", head, err, store.FromStart)
		}
		c1, c2 := comment(t, s, alice, post), comment(t, s, alice, post)
		if c1 == nil || c2 == nil {
			t.FailNow()
		}
		evs, err := sub.Replay(ctx, head)
		if err != nil || len(evs) != 2 || evs[0].Comment != c1.ID || evs[1].Comment != c2.ID {
			t.Fatalf("replay from the head: %+v, %v; want %s and %s", evs, err, c1.ID, c2.ID)
		}
		if !live.CursorBefore(evs[0].ID, evs[1].ID) || live.CursorBefore(evs[1].ID, evs[0].ID) {
			t.Errorf("cursors %s, %s out of order", evs[0].ID, evs[1].ID)
		}
		if head, err := sub.Head(ctx); err != nil || head != evs[1].ID {
			t.Errorf("head = %q, %v; want the last event's cursor %s", head, err, evs[1].ID)
		}
		if _, err := sub.Replay(ctx, "not a cursor"); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("replay after a malformed cursor: %v, want KindInvalid", err)
		}
		if _, err := sub.Replay(ctx, "1-0"); !store.IsKind(err, store.KindResync) {
			t.Errorf("replay after a cursor older than the log: %v, want KindResync", err)
		}
	})
}

// TestEventLogSettings checks Options.EventLogLength and EventLogAge: a thread's log keeps only the
// last EventLogLength events (a cursor older than the oldest event kept is KindResync, one of the
// events kept resumes), and every log expires EventLogAge after its last event.
func TestEventLogSettings(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, EventLogLength: 2, EventLogAge: 90 * time.Second})
		h := newHub(t, s, live.Options{})
		alice := liveUser(t, s, "alice")
		post := livePost(t, s, alice, "post")
		sub, err := h.SubscribeCommentAdded(ctx, post.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		head, err := sub.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var cursors []string
		for range 4 {
			if comment(t, s, alice, post) == nil {
				t.FailNow()
			}
			c, err := sub.Head(ctx)
			if err != nil {
				t.Fatal(err)
			}
			cursors = append(cursors, c)
		}
		evs, err := sub.Replay(ctx, cursors[2])
		if err != nil || len(evs) != 1 || evs[0].ID != cursors[3] {
			t.Errorf("replay after the third of four events, two kept: %+v, %v; want the last", evs, err)
		}
		for _, c := range []string{head, cursors[0], cursors[1]} {
			if _, err := sub.Replay(ctx, c); !store.IsKind(err, store.KindResync) {
				t.Errorf("replay after %q, whose next event is no longer kept: %v, want KindResync", c, err)
			}
		}
		var logs []string
		var mu sync.Mutex
		scan := func(ctx context.Context, c rdb.Cmdable) error {
			ks, err := c.Keys(ctx, prefix+"*:log").Result()
			mu.Lock()
			logs = append(logs, ks...)
			mu.Unlock()
			return err
		}
		if cc, ok := b.Client.(*rdb.ClusterClient); ok { // every master's
			err = cc.ForEachMaster(ctx, func(ctx context.Context, c *rdb.Client) error { return scan(ctx, c) })
		} else {
			err = scan(ctx, b.Client)
		}
		if err != nil || len(logs) == 0 {
			t.Fatalf("logs %v, %v", logs, err)
		}
		for _, k := range logs {
			if ttl, err := b.Client.TTL(ctx, k).Result(); err != nil || ttl <= 0 || ttl > 90*time.Second {
				t.Errorf("log %s expires in %s (%v), want at most 90s", k, ttl, err)
			}
		}
	})
}

func TestCloseEndsSubscriptions(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		h := live.New(b.NewStore(t, store.Options{}), live.Options{})
		sub, err := h.SubscribePostPublished(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		if _, ok := <-sub.Events(); ok {
			t.Fatal("an event after Close")
		}
		if !errors.Is(sub.Err(), live.ErrClosed) {
			t.Errorf("Err = %v, want ErrClosed", sub.Err())
		}
		sub.Close()
		if _, err := h.SubscribePostPublished(context.Background(), ""); !errors.Is(err, live.ErrClosed) {
			t.Errorf("subscribe after Close: %v, want ErrClosed", err)
		}
		if err := h.Close(); err != nil {
			t.Errorf("a second Close: %v", err)
		}
	})
}

func TestSubscribeHonoursCancellation(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		h := newHub(t, b.NewStore(t, store.Options{}), live.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := h.SubscribePostChanged(ctx, "post:1"); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if st := h.Stats(); st.Subscribers != 0 {
			t.Errorf("stats = %+v, want no subscribers", st)
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
			h := live.New(s, live.Options{})
			defer func() { _ = h.Close() }()
			alice := liveUser(t, s, "alice")
			var posts []*store.Post
			for i := range 4 {
				posts = append(posts, livePost(t, s, alice, fmt.Sprint("post ", i)))
			}
			// Warm up: the hub's connection and its reader live as long as the hub.
			warm, err := h.SubscribePostChanged(ctx, posts[0].ID)
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
						post := posts[(w+i)%len(posts)]
						sub, err := h.SubscribePostChanged(ctx, post.ID)
						if err != nil {
							t.Error(err)
							return
						}
						if i%5 == 0 {
							comment(t, s, alice, post)
						}
						sub.Close()
					}
				}()
			}
			wg.Wait()
			if st := h.Stats(); st.Subscribers != 0 || st.Channels != 0 {
				t.Errorf("stats after churn = %+v, want none", st)
			}
			for _, post := range posts {
				channel := s.Options().Prefix + "{p:" + post.Key() + "}:ev:changed"
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
	s, rc, h := privateHub(t)
	ctx := context.Background()
	alice := liveUser(t, s, "alice")
	post := livePost(t, s, alice, "post")
	sub, err := h.SubscribePostChanged(ctx, post.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	channel := s.Options().Prefix + "{p:" + post.Key() + "}:ev:changed"

	for round := range 3 {
		killed, err := rc.ClientKillByFilter(ctx, "TYPE", "pubsub").Result()
		if err != nil || killed != 1 {
			t.Fatalf("round %d: CLIENT KILL TYPE pubsub = %d, %v; want 1 connection", round, killed, err)
		}
		waitFor(t, "the resubscription", func() bool { return numsub(t, rc, channel) == 1 })
		comment(t, s, alice, post)
		// The resubscription is reported as a gap (events may have been missed), then events
		// flow again.
		if ev := next(t, sub); !ev.Gap {
			t.Fatalf("round %d: event = %+v, want the gap", round, ev)
		}
		if ev := next(t, sub); ev.Post != post.ID {
			t.Fatalf("round %d: event = %+v", round, ev)
		}
	}
	if err := sub.Err(); err != nil {
		t.Errorf("the subscription reports %v", err)
	}
}

// privateHub starts a redis-server of its own (a test that kills its connections would disturb
// the others), with a store and a hub on it, all stopped when the test ends; it skips the test
// (or fails under REQUIRE_REAL_REDIS=1) without redis-server.
func privateHub(t *testing.T) (*store.Store, *rdb.Client, *live.Hub) {
	t.Helper()
	storetest.RealServer(t)
	srv, err := storetest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	rc := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rc.Close() })
	s, err := store.New(context.Background(), rc, store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	h := live.New(s, live.Options{})
	t.Cleanup(func() { _ = h.Close() })
	return s, rc, h
}
