package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// inboxWorld is a store with users and a post by ann to comment on.
type inboxWorld struct {
	t     *testing.T
	s     *store.Store
	users []string
	post  *store.Post
}

func newInboxWorld(t *testing.T, b storetest.Backend, opts store.Options, users ...string) *inboxWorld {
	t.Helper()
	if opts.Now == nil {
		opts.Now = tickingClock() // every event a later millisecond: newest first is creation order
	}
	return newInboxWorldOn(t, b.NewStore(t, opts), users...)
}

// newInboxWorldOn is newInboxWorld on a store of the caller's.
func newInboxWorldOn(t *testing.T, s *store.Store, users ...string) *inboxWorld {
	t.Helper()
	w := &inboxWorld{t: t, s: s, users: append([]string{"ann"}, users...)}
	signUp(t, w.s, w.users...)
	var err error
	if w.post, err = w.s.CreatePost(context.Background(), "ann", store.NewPost{Title: "ann's post"}); err != nil {
		t.Fatal(err)
	}
	return w
}

// comment adds a comment by uid under parent (nil: top level) of ann's post.
func (w *inboxWorld) comment(uid string, parent *store.Comment, body string) *store.Comment {
	w.t.Helper()
	in := store.NewComment{PostID: w.post.ID, Body: body}
	if parent != nil {
		in.ParentID = parent.ID
	}
	c, err := w.s.CreateComment(context.Background(), uk(uid), in)
	if err != nil {
		w.t.Fatalf("%s comments %q: %v", uid, body, err)
	}
	return c
}

func (w *inboxWorld) follow(a, b string) {
	w.t.Helper()
	if _, err := w.s.Follow(context.Background(), uk(a), uk(b)); err != nil {
		w.t.Fatalf("%s follows %s: %v", a, b, err)
	}
}

func (w *inboxWorld) settle() { w.t.Helper(); settle(w.t, w.s) }

// inbox reads uid's whole inbox (or its unread part), newest first, in pages of size.
func (w *inboxWorld) inbox(uid string, unreadOnly bool, size int) []*store.Notification {
	w.t.Helper()
	var out []*store.Notification
	after := ""
	for range store.NotificationCap + 1 {
		p, err := w.s.NewLoader().Notifications(context.Background(), uk(uid), store.Window{First: size, After: after}, unreadOnly, nil)
		if err != nil {
			w.t.Fatalf("notifications of %s: %v", uid, err)
		}
		out = append(out, p.Items...)
		if !p.HasNext {
			return out
		}
		after = p.EndCursor()
	}
	w.t.Fatal("the inbox does not end")
	return nil
}

// summary is uid's inbox as "KIND actor" entries, newest first.
func (w *inboxWorld) summary(uid string) []string {
	w.t.Helper()
	var out []string
	for _, n := range w.inbox(uid, false, 100) {
		out = append(out, string(n.Kind)+" "+string(n.Actor))
	}
	return out
}

func (w *inboxWorld) unread(uid string) int {
	w.t.Helper()
	n, err := w.s.NewLoader().UnreadNotificationCount(context.Background(), uk(uid))
	if err != nil {
		w.t.Fatal(err)
	}
	return n
}

// checkInbox checks that uid's inbox agrees with itself: its records and ids are as many as
// listed, no id repeats, and the records that say they are unread, the unread list and the unread
// count are as many as the unread entries listed.
func (w *inboxWorld) checkInbox(uid string) {
	w.t.Helper()
	all := w.inbox(uid, false, 100)
	unread := w.inbox(uid, true, 100)
	seen := map[string]bool{}
	listedUnread := 0
	for _, n := range all {
		if seen[n.ID] {
			w.t.Errorf("%s: %s listed twice", uid, n.ID)
		}
		seen[n.ID] = true
		if !n.Read {
			listedUnread++
		}
	}
	for _, n := range unread {
		if n.Read || !seen[n.ID] {
			w.t.Errorf("%s: unread list has %+v", uid, n)
		}
	}
	notes, inbox, unreadSet, err := w.s.InboxSizes(context.Background(), uk(uid))
	if err != nil {
		w.t.Fatal(err)
	}
	count := w.unread(uid)
	if int(notes) != len(all) || int(inbox) != len(all) || int(unreadSet) != listedUnread ||
		len(unread) != listedUnread || count != listedUnread {
		w.t.Errorf("%s: %d listed (%d unread, unread list %d), keys hold %d/%d/%d, unread count %d",
			uid, len(all), listedUnread, len(unread), notes, inbox, unreadSet, count)
	}
}

func TestNotificationKindsAndRecipients(t *testing.T) {
	many := make([]string, 12)
	for i := range many {
		many[i] = fmt.Sprintf("u%02d", i+1)
	}
	mentionsOf := func(actor string, users []string) map[string][]string {
		m := map[string][]string{}
		for _, u := range users {
			m[u] = []string{"MENTION " + actor}
		}
		return m
	}
	with := func(m map[string][]string, k string, v ...string) map[string][]string {
		m[k] = v
		return m
	}
	for _, tc := range []struct {
		name string
		act  func(w *inboxWorld)
		want map[string][]string // recipient → "KIND actor", newest first; everyone else has none
	}{
		{"a comment on a post tells its author",
			func(w *inboxWorld) { w.comment("bob", nil, "nice") },
			map[string][]string{"ann": {"REPLY bob"}}},
		{"a reply tells the parent's author, not the post's",
			func(w *inboxWorld) { w.comment("cat", w.comment("bob", nil, "first"), "second") },
			map[string][]string{"ann": {"REPLY bob"}, "bob": {"REPLY cat"}}},
		{"nobody is told of their own comments",
			func(w *inboxWorld) { w.comment("ann", w.comment("ann", nil, "me"), "me again @ann") },
			nil},
		{"mentions: existing users once each, never yourself",
			func(w *inboxWorld) { w.comment("bob", nil, "hi @cat @CAT @bob @nobody @dan.") },
			map[string][]string{"ann": {"REPLY bob"}, "cat": {"MENTION bob"}, "dan": {"MENTION bob"}}},
		{"e-mail addresses and bad names are not mentions",
			func(w *inboxWorld) { w.comment("bob", nil, "mail bob@cat.org, @da or @"+strings.Repeat("d", 33)) },
			map[string][]string{"ann": {"REPLY bob"}}},
		{"at most 10 mentions per item",
			func(w *inboxWorld) { w.comment("bob", nil, "@"+strings.Join(many, " @")) },
			with(mentionsOf("bob", many[:store.MaxMentions]), "ann", "REPLY bob")},
		{"a reply that also mentions its recipient is one REPLY",
			func(w *inboxWorld) { w.comment("cat", w.comment("bob", nil, "@ann look"), "@bob @ann") },
			map[string][]string{"ann": {"MENTION cat", "REPLY bob"}, "bob": {"REPLY cat"}}},
		{"mentions in a post",
			func(w *inboxWorld) {
				if _, err := w.s.CreatePost(context.Background(), "cat", store.NewPost{Title: "t", Body: "@bob and @dan, not @cat"}); err != nil {
					w.t.Fatal(err)
				}
			},
			map[string][]string{"bob": {"MENTION cat"}, "dan": {"MENTION cat"}}},
		{"a follower is told once",
			func(w *inboxWorld) {
				w.follow("bob", "ann")
				w.follow("bob", "ann")
				w.settle()
				if _, err := w.s.Unfollow(context.Background(), "bob", "ann"); err != nil {
					w.t.Fatal(err)
				}
				w.follow("bob", "ann")
				w.follow("cat", "ann")
			},
			map[string][]string{"ann": {"FOLLOW cat", "FOLLOW bob"}}},
		{"a follow undone before its job ran tells nobody",
			func(w *inboxWorld) {
				w.follow("bob", "ann")
				if _, err := w.s.Unfollow(context.Background(), "bob", "ann"); err != nil {
					w.t.Fatal(err)
				}
			},
			nil},
		{"a comment deleted before its job ran tells nobody",
			func(w *inboxWorld) {
				c := w.comment("bob", nil, "@cat oops")
				if err := w.s.DeleteComment(context.Background(), "bob", c.ID); err != nil {
					w.t.Fatal(err)
				}
			},
			nil},
		{"a reply to a deleted comment tells no one of a REPLY",
			func(w *inboxWorld) {
				c := w.comment("bob", nil, "first")
				w.settle() // ann: REPLY bob
				w.comment("dan", c, "keeps it in the tree")
				if err := w.s.DeleteComment(context.Background(), "bob", c.ID); err != nil {
					w.t.Fatal(err)
				}
				w.comment("cat", c, "to a tombstone")
			},
			map[string][]string{"ann": {"REPLY bob"}}},
		{"comments on a post deleted before their jobs ran tell nobody",
			func(w *inboxWorld) {
				w.comment("bob", nil, "@cat")
				if err := w.s.DeletePost(context.Background(), "ann", w.post.ID); err != nil {
					w.t.Fatal(err)
				}
			},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				w := newInboxWorld(t, b, store.Options{}, append([]string{"bob", "cat", "dan"}, many...)...)
				tc.act(w)
				w.settle()
				for _, u := range w.users {
					if got := w.summary(u); !slices.Equal(got, tc.want[u]) {
						t.Errorf("%s's inbox: %q, want %q", u, got, tc.want[u])
					}
					if got := w.unread(u); got != len(tc.want[u]) {
						t.Errorf("%s's unread count %d, want %d", u, got, len(tc.want[u]))
					}
					w.checkInbox(u)
				}
			})
		})
	}
}

// TestNotificationJobsAreIdempotent: jobs queued again, and scripts sent twice (as go-redis
// resends a command whose reply was lost), make no second notification and leave the counts
// exact.
func TestNotificationJobsAreIdempotent(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		w := newInboxWorld(t, b, store.Options{}, "bob", "cat", "dan")
		c := w.comment("bob", nil, "@cat")
		w.follow("dan", "ann")
		p, err := w.s.CreatePost(ctx, "dan", store.NewPost{Title: "t", Body: "@ann @bob"})
		if err != nil {
			t.Fatal(err)
		}
		w.settle()
		want := map[string][]string{"ann": {"MENTION dan", "FOLLOW dan", "REPLY bob"}, "bob": {"MENTION dan"}, "cat": {"MENTION bob"}}
		check := func(when string) {
			t.Helper()
			for _, u := range w.users {
				if got := w.summary(u); !slices.Equal(got, want[u]) {
					t.Errorf("%s: %s's inbox %q, want %q", when, u, got, want[u])
				}
				w.checkInbox(u)
			}
		}
		check("first run")

		for range 2 {
			if err := w.s.RequeueCommentNotice(ctx, c.ID, time.Time{}); err != nil {
				t.Fatal(err)
			}
			if err := w.s.RequeuePostNotice(ctx, p.ID); err != nil {
				t.Fatal(err)
			}
			if err := w.s.RequeueFollowNotice(ctx, "dan", "ann"); err != nil {
				t.Fatal(err)
			}
			w.settle()
		}
		check("jobs run again")

		twice := runTwice(b)
		w.comment("cat", c, "@ann and @dan") // bob: REPLY cat; ann, dan: MENTION cat
		w.settle()
		first := w.inbox("ann", true, 100)
		if n, err := w.s.MarkNotificationsRead(ctx, "ann", []string{first[0].ID, first[1].ID}, false); err != nil || n != 2 {
			t.Errorf("mark two of ann's four read, sent twice: %d, %v; want 2 left", n, err)
		}
		twice.Store(false)
		want["ann"] = append([]string{"MENTION cat"}, want["ann"]...)
		want["bob"] = append([]string{"REPLY cat"}, want["bob"]...)
		want["dan"] = []string{"MENTION cat"}
		check("scripts sent twice")
	})
}

// TestNotificationOfACommentWhoseWriteStopped: a comment's notification job is queued before the
// comment is written, due after a grace, and the write makes it due at once when it is done. If
// the write stops before that (here the second step fails), the job still runs after the grace;
// a job that runs before its comment exists does nothing.
func TestNotificationOfACommentWhoseWriteStopped(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := &driven{t: time.Now()}
		rdb := b.NewClient(t)
		var dropping atomic.Bool
		var dropped atomic.Int64
		rdb.AddHook(storetest.Drop(&dropping, errors.New("dropped by the test"), movesOfCommentNotices(&dropped)))
		s, err := store.New(ctx, rdb, store.Options{Prefix: storetest.Prefix(), Now: clk.Now,
			Password: storetest.FastPasswords, WriteLimit: -1})
		if err != nil {
			t.Fatal(err)
		}
		w := newInboxWorldOn(t, s, "bob", "cat")

		// A job for the post's next comment, run before that comment exists, finds nothing.
		next := strings.Replace(w.post.ID, "post:", "comment:", 1) + ":1"
		if err := w.s.RequeueCommentNotice(ctx, next, time.Time{}); err != nil {
			t.Fatal(err)
		}
		w.settle()
		c := w.comment("bob", nil, "@cat") // its number is 1: the job above was for it
		if c.ID != next {
			t.Fatalf("comment %s, want %s", c.ID, next)
		}
		w.settle()
		if got := w.summary("cat"); !slices.Equal(got, []string{"MENTION bob"}) {
			t.Fatalf("cat's inbox %q after the comment's own job", got)
		}

		// The write's last step (making the job due now) is lost: the job runs after the grace.
		dropping.Store(true)
		w.comment("cat", c, "reply")
		dropping.Store(false)
		if dropped.Load() == 0 {
			t.Fatal("no job move was dropped")
		}
		w.settle()
		if got := w.summary("bob"); len(got) != 0 {
			t.Fatalf("bob's inbox %q before the grace ended", got)
		}
		clk.Add(store.RepairGrace)
		w.settle()
		if got := w.summary("bob"); !slices.Equal(got, []string{"REPLY cat"}) {
			t.Fatalf("bob's inbox %q after the grace, want the REPLY", got)
		}
	})
}

// movesOfCommentNotices selects every script call whose last argument is "move" and that moves
// a comment's notification job: the job engine's move of that job to a new time (a write's repair
// note, moved the same way, is not selected). It counts those it selects in dropped.
func movesOfCommentNotices(dropped *atomic.Int64) func(c rdb.Cmder) bool {
	return func(c rdb.Cmder) bool {
		args := c.Args()
		if c.Name() == "evalsha" && args[len(args)-1] == "move" && movesCommentNotice(args) {
			dropped.Add(1)
			return true
		}
		return false
	}
}

// movesCommentNotice reports whether a jobs_enqueue call's arguments name a comment's
// notification job.
func movesCommentNotice(args []any) bool {
	for _, a := range args {
		if s, ok := a.(string); ok && strings.HasPrefix(s, "notify-comment:") {
			return true
		}
	}
	return false
}

// driven is a clock the test moves by hand; each reading is a millisecond after the last, so
// that events keep their order.
type driven struct {
	mu sync.Mutex
	t  time.Time
}

func (c *driven) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func (c *driven) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestNotificationInboxKeepsNewest: an inbox keeps the newest NotificationCap notifications; the
// oldest leave every key, read or not, and the unread count follows.
func TestNotificationInboxKeepsNewest(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		w := newInboxWorld(t, b, store.Options{}, "bob")
		var cs []*store.Comment
		for i := range store.NotificationCap + 5 {
			cs = append(cs, w.comment("bob", nil, fmt.Sprint("comment ", i)))
		}
		w.settle()
		all := w.inbox("ann", false, 100)
		if len(all) != store.NotificationCap {
			t.Fatalf("%d notifications kept, want %d", len(all), store.NotificationCap)
		}
		for i, n := range all {
			if want := cs[len(cs)-1-i].ID; n.CommentID != want {
				t.Fatalf("notification %d is of %s, want %s (newest first)", i, n.CommentID, want)
			}
		}
		gone := "notification:ann:c:" + strings.TrimPrefix(cs[4].ID, "comment:")
		if n, err := w.s.NewLoader().Notification(ctx, "ann", gone); err != nil || n != nil {
			t.Fatalf("a trimmed notification loads: %+v, %v", n, err)
		}
		w.checkInbox("ann")

		// The three newest read, two more in: the two oldest (unread) go.
		if n, err := w.s.MarkNotificationsRead(ctx, "ann", []string{all[0].ID, all[1].ID, all[2].ID}, false); err != nil || n != store.NotificationCap-3 {
			t.Fatalf("mark three read: %d, %v", n, err)
		}
		w.comment("bob", nil, "one more")
		w.comment("bob", nil, "and another")
		w.settle()
		if got := w.unread("ann"); got != store.NotificationCap-3 {
			t.Errorf("unread %d, want %d", got, store.NotificationCap-3)
		}
		w.checkInbox("ann")
	})
}

func TestMarkNotificationsRead(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ids      func(ns []*store.Notification) []string // ann's four notifications, newest first
		all      bool
		want     int // unread left
		wantKind *store.Kind
		read     []int // which of the four are read after
	}{
		{"some", func(ns []*store.Notification) []string { return []string{ns[0].ID, ns[2].ID} }, false, 2, nil, []int{0, 2}},
		{"some, repeated", func(ns []*store.Notification) []string { return []string{ns[1].ID, ns[1].ID} }, false, 3, nil, []int{1}},
		{"all", func([]*store.Notification) []string { return nil }, true, 0, nil, []int{0, 1, 2, 3}},
		{"all, ids aside", func(ns []*store.Notification) []string { return []string{ns[0].ID} }, true, 0, nil, []int{0, 1, 2, 3}},
		{"none", func([]*store.Notification) []string { return []string{} }, false, 4, nil, nil},
		{"no longer kept", func([]*store.Notification) []string {
			return []string{"notification:ann:c:999:1", "notification:ann:f:zed"}
		}, false, 4, nil, nil},
		{"neither ids nor all", func([]*store.Notification) []string { return nil }, false, 0, kind(store.KindInvalid), nil},
		{"malformed", func([]*store.Notification) []string { return []string{"post:1"} }, false, 0, kind(store.KindInvalid), nil},
		{"someone else's", func([]*store.Notification) []string { return []string{"notification:bob:f:ann"} }, false, 0, kind(store.KindForbidden), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				w := newInboxWorld(t, b, store.Options{}, "bob", "cat", "dan")
				w.comment("bob", nil, "one")
				w.follow("cat", "ann")
				w.comment("dan", nil, "two")
				if _, err := w.s.CreatePost(ctx, "bob", store.NewPost{Title: "t", Body: "@ann"}); err != nil {
					t.Fatal(err)
				}
				w.settle()
				ns := w.inbox("ann", false, 100)
				if len(ns) != 4 {
					t.Fatalf("ann has %d notifications, want 4", len(ns))
				}
				n, err := w.s.MarkNotificationsRead(ctx, "ann", tc.ids(ns), tc.all)
				if tc.wantKind != nil {
					var se *store.Error
					if !asStoreError(err, &se) || se.Kind != *tc.wantKind {
						t.Fatalf("err %v, want kind %v", err, *tc.wantKind)
					}
					n = 4
				} else if err != nil {
					t.Fatal(err)
				}
				if n != tc.want && tc.wantKind == nil {
					t.Errorf("unread left %d, want %d", n, tc.want)
				}
				for i, n := range w.inbox("ann", false, 100) {
					if want := slices.Contains(tc.read, i); n.Read != want {
						t.Errorf("notification %d (%s) read %v, want %v", i, n.Kind, n.Read, want)
					}
				}
				w.checkInbox("ann")
			})
		})
	}
}

func kind(k store.Kind) *store.Kind { return &k }

// TestNotificationPaging: pages newest first whose cursors stay valid while notifications come and
// are read; the unread list pages alike; first is 1..100; a cursor of one list fails on the other.
func TestNotificationPaging(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		w := newInboxWorld(t, b, store.Options{}, "bob")
		var cs []*store.Comment
		for i := range 5 {
			cs = append(cs, w.comment("bob", nil, fmt.Sprint(i)))
		}
		w.settle()
		l := w.s.NewLoader()
		p1, err := l.Notifications(ctx, "ann", store.Window{First: 2}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(p1.Items) != 2 || p1.Total != 5 || !p1.HasNext || p1.HasPrev || p1.Items[0].CommentID != cs[4].ID {
			t.Fatalf("first page: %+v", p1)
		}
		w.comment("bob", nil, "newer")
		w.settle()
		if _, err := w.s.MarkNotificationsRead(ctx, "ann", []string{p1.Items[1].ID}, false); err != nil {
			t.Fatal(err)
		}
		p2, err := w.s.NewLoader().Notifications(ctx, "ann", store.Window{First: 10, After: p1.EndCursor()}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range p2.Items {
			got = append(got, n.CommentID)
		}
		if want := []string{cs[2].ID, cs[1].ID, cs[0].ID}; !slices.Equal(got, want) || p2.HasNext || !p2.HasPrev || p2.Total != 6 {
			t.Errorf("second page %v (next %v prev %v total %d), want %v", got, p2.HasNext, p2.HasPrev, p2.Total, want)
		}
		unread := w.inbox("ann", true, 1)
		if len(unread) != 5 || slices.ContainsFunc(unread, func(n *store.Notification) bool { return n.ID == p1.Items[1].ID }) {
			t.Errorf("unread list %d long, want 5 without the one read", len(unread))
		}
		for _, first := range []int{0, 101} {
			if _, err := l.Notifications(ctx, "ann", store.Window{First: first}, false, nil); !store.IsKind(err, store.KindInvalid) {
				t.Errorf("first %d: %v, want KindInvalid", first, err)
			}
		}
		if _, err := l.Notifications(ctx, "ann", store.Window{First: 2, After: p1.EndCursor()}, true, nil); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("a cursor of the whole inbox on the unread list: %v, want KindInvalid", err)
		}
		if n, err := l.Notification(ctx, "bob", p1.Items[0].ID); err != nil || n != nil {
			t.Errorf("bob reads ann's notification: %+v, %v", n, err)
		}
		if n, err := l.Notification(ctx, "ann", p1.Items[0].ID); err != nil || n == nil || n.ID != p1.Items[0].ID {
			t.Errorf("ann reads her notification: %+v, %v", n, err)
		}
	})
}

// TestNotificationAddedAnnouncesNewOnes: a new notification is announced on its recipient's
// channel once; a job that runs again announces nothing.
func TestNotificationAddedAnnouncesNewOnes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		w := newInboxWorld(t, b, store.Options{}, "bob")
		hub := live.New(w.s, live.Options{})
		defer func() { _ = hub.Close() }()
		sub, err := hub.SubscribeNotificationAdded(ctx, "ann")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		c := w.comment("bob", nil, "one")
		w.settle()
		ev := nextEvent(t, sub)
		n, err := ev.Loader.Notification(ctx, "ann", ev.Notification)
		if err != nil || n == nil || n.CommentID != c.ID || n.Kind != store.NotificationReply || n.Read {
			t.Fatalf("event %+v loads %+v, %v", ev, n, err)
		}
		if err := w.s.RequeueCommentNotice(ctx, c.ID, time.Time{}); err != nil {
			t.Fatal(err)
		}
		w.settle()
		c2 := w.comment("bob", nil, "two")
		w.settle()
		if ev := nextEvent(t, sub); !strings.HasSuffix(ev.Notification, strings.TrimPrefix(c2.ID, "comment:")) {
			t.Fatalf("next event %+v, want the second comment's (the rerun announced again?)", ev)
		}
	})
}

// nextEvent waits for the next event of sub.
func nextEvent(t *testing.T, sub *live.EventStream) live.Event {
	t.Helper()
	select {
	case ev, ok := <-sub.Events():
		if !ok {
			t.Fatalf("subscription ended: %v", sub.Err())
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return live.Event{}
}
