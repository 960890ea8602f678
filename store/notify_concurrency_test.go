package store_test

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/jobs"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestNotificationCountsExactUnderConcurrencyAndCrash: users comment, reply, mention, follow and
// mark notifications read all at once, while two job runners (two server processes) deliver the
// notifications. Half-way through, one runner is killed — its Redis client closed under its
// running jobs, its context cancelled with a drain too short for them — and another starts.
// Once every job has run, each inbox holds exactly the notifications its causes make, each once,
// and its unread count is exactly the number of them not marked read.
func TestNotificationCountsExactUnderConcurrencyAndCrash(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		var skew atomic.Int64 // moves the clock forward at the end, so that every job is due
		opts := store.Options{Prefix: storetest.Prefix(), Password: storetest.FastPasswords, WriteLimit: -1,
			Now:  func() time.Time { return time.Now().Add(time.Duration(skew.Load())) },
			Jobs: jobs.Options{Poll: 5 * time.Millisecond, Drain: time.Millisecond, Lease: 2 * time.Second}}
		open := func() (*store.Store, func() error) {
			c := b.NewClient(t)
			s, err := store.New(ctx, c, opts)
			if err != nil {
				t.Fatal(err)
			}
			return s, c.Close
		}
		run := func(s *store.Store) (stop func()) {
			rctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); s.Jobs().Run(rctx) }()
			return func() { cancel(); <-done }
		}

		w, _ := open() // the writers' process
		users := []string{"ann", "bob", "cat", "dan", "eve", "fay"}
		signUp(t, w, users...)
		type item struct{ id, author string } // a post or comment to reply to
		var mu sync.Mutex
		posts := map[string]string{} // post id → author
		var comments []item
		for _, u := range users {
			p, err := w.CreatePost(ctx, uk(u), store.NewPost{Title: u + "'s post"})
			if err != nil {
				t.Fatal(err)
			}
			posts[p.ID] = u
		}
		postIDs := slices.Sorted(maps.Keys(posts))
		want := map[string]map[string]store.NotificationKind{} // recipient → notification id → kind
		marked := map[string]bool{}                            // notification ids marked read
		expect := func(to, cause string, k store.NotificationKind) {
			if want[to] == nil {
				want[to] = map[string]store.NotificationKind{}
			}
			id := "notification:" + to + ":" + cause
			if _, ok := want[to][id]; !ok {
				want[to][id] = k
			}
		}

		r1, kill1 := open()
		stop1 := run(r1)
		r2, _ := open()
		stop2 := run(r2)
		var stop3 func()
		var r3 *store.Store

		const actions = 40
		var doneActions atomic.Int64
		var killOnce sync.Once
		var wg sync.WaitGroup
		for i, me := range users {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(i), 7))
				for range actions {
					switch r := rng.IntN(8); {
					case r < 4: // a comment or reply that mentions up to three names
						mu.Lock()
						pid := postIDs[rng.IntN(len(postIDs))]
						parent, replyTo := "", posts[pid]
						if len(comments) > 0 && rng.IntN(2) == 0 {
							c := comments[rng.IntN(len(comments))]
							parent, replyTo = c.id, c.author
							pid = "post:" + strings.Split(c.id, ":")[1]
						}
						mu.Unlock()
						var names []string
						for range rng.IntN(4) {
							names = append(names, []string{"ann", "bob", "cat", "dan", "eve", "fay", "nobody", "Ghost1"}[rng.IntN(8)])
						}
						c, err := w.CreateComment(ctx, uk(me), store.NewComment{PostID: pid, ParentID: parent,
							Body: "hi @" + strings.Join(names, " and @")})
						if err != nil {
							t.Error(err)
							return
						}
						cause := "c:" + strings.TrimPrefix(c.ID, "comment:")
						mu.Lock()
						comments = append(comments, item{c.ID, me})
						if replyTo != me {
							expect(replyTo, cause, store.NotificationReply)
						}
						for _, n := range names {
							if n != me && n != replyTo && slices.Contains(users, n) {
								expect(n, cause, store.NotificationMention)
							}
						}
						mu.Unlock()
					case r < 6: // a follow, maybe repeated
						to := users[rng.IntN(len(users))]
						if to == me {
							continue
						}
						if _, err := w.Follow(ctx, uk(me), uk(to)); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						expect(to, "f:"+me, store.NotificationFollow)
						mu.Unlock()
					default: // mark some of the unread read
						p, err := w.NewLoader().Notifications(ctx, uk(me), store.Window{First: 20}, true, nil)
						if err != nil {
							t.Error(err)
							return
						}
						ids := []string{}
						for _, n := range p.Items {
							if rng.IntN(2) == 0 {
								ids = append(ids, n.ID)
							}
						}
						left, err := w.MarkNotificationsRead(ctx, uk(me), ids, false)
						if err != nil || left < 0 {
							t.Errorf("mark read: %d, %v", left, err)
							return
						}
						mu.Lock()
						for _, id := range ids {
							marked[id] = true
						}
						mu.Unlock()
					}
					if doneActions.Add(1) == actions*int64(len(users))/2 {
						killOnce.Do(func() {
							_ = kill1() // the process dies under its running jobs
							stop1()
							r3, _ = open()
							stop3 = run(r3)
						})
					}
				}
			})
		}
		wg.Wait()
		killOnce.Do(func() { t.Fatal("the runner was never killed") })
		stop2()
		stop3()
		skew.Store(int64(time.Hour)) // leases of the dead runner's jobs have ended, retries are due
		late, err := w.Jobs().RunDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st1, st2, st3 := r1.Jobs().Stats(), r2.Jobs().Stats(), r3.Jobs().Stats()
		t.Logf("jobs done by the killed runner %d (failed %d), the others %d and %d, after the end %d",
			st1.Done, st1.Failed, st2.Done, st3.Done, late)
		if st2.Done+st3.Done == 0 {
			t.Error("the runners ran no job while the writers wrote")
		}

		iw := &inboxWorld{t: t, s: w}
		total := 0
		for _, u := range users {
			got := map[string]store.NotificationKind{}
			wantUnread := 0
			for id := range want[u] {
				if !marked[id] {
					wantUnread++
				}
			}
			for _, n := range iw.inbox(u, false, 100) {
				if _, dup := got[n.ID]; dup {
					t.Errorf("%s: %s twice", u, n.ID)
				}
				got[n.ID] = n.Kind
				if n.Read != marked[n.ID] {
					t.Errorf("%s: %s read %v, marked %v", u, n.ID, n.Read, marked[n.ID])
				}
			}
			if !maps.Equal(got, want[u]) {
				t.Errorf("%s's inbox:\n got %v\nwant %v", u, got, want[u])
			}
			if n := iw.unread(u); n != wantUnread {
				t.Errorf("%s's unread count %d, want %d", u, n, wantUnread)
			}
			iw.checkInbox(u)
			total += len(got)
		}
		t.Logf("%d notifications, %d marked read", total, len(marked))
		if dead, err := w.Jobs().Dead(ctx, 10); err != nil || len(dead) > 0 {
			t.Errorf("dead jobs: %v, %v", dead, err)
		}
	})
}
