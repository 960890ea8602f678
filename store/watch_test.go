package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestWatchModes: ALL, REPLIES and MUTED, on threads and on groups, each make exactly the
// notifications they promise, also when every job runs again.
func TestWatchModes(t *testing.T) {
	ctx := context.Background()
	watchPost := func(w *inboxWorld, uid, postID string, m store.WatchMode) {
		w.t.Helper()
		if err := w.s.WatchPost(ctx, uk(uid), postID, m); err != nil {
			w.t.Fatalf("%s watches %s %s: %v", uid, postID, m, err)
		}
	}
	watchGroup := func(w *inboxWorld, uid, group string, m store.WatchMode) {
		w.t.Helper()
		if err := w.s.WatchGroup(ctx, uk(uid), group, m); err != nil {
			w.t.Fatalf("%s watches %s %s: %v", uid, group, m, err)
		}
	}
	post := func(w *inboxWorld, uid, body string, groups ...string) *store.Post {
		w.t.Helper()
		p, err := w.s.CreatePost(ctx, uk(uid), store.NewPost{Title: "t", Body: body, Groups: groups})
		if err != nil {
			w.t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		act  func(w *inboxWorld) []*store.Comment // the comments whose jobs to repeat
		want map[string][]string
	}{
		{"ALL: every new comment, once, and the REPLY or MENTION wins",
			func(w *inboxWorld) []*store.Comment {
				watchPost(w, "dan", w.post.ID, store.WatchAll)
				watchPost(w, "cat", w.post.ID, store.WatchAll)
				a := w.comment("bob", nil, "first")
				b := w.comment("cat", a, "@dan hi") // bob: REPLY; dan: MENTION, not also WATCHED
				c := w.comment("dan", nil, "mine")  // not told of their own
				return []*store.Comment{a, b, c}
			},
			map[string][]string{
				"ann": {"REPLY dan", "REPLY bob"},
				"bob": {"REPLY cat"},
				"cat": {"WATCHED_COMMENT dan", "WATCHED_COMMENT bob"},
				"dan": {"MENTION cat", "WATCHED_COMMENT bob"},
			}},
		{"REPLIES is the default, and undoes ALL",
			func(w *inboxWorld) []*store.Comment {
				watchPost(w, "dan", w.post.ID, store.WatchAll)
				watchPost(w, "dan", w.post.ID, store.WatchReplies)
				return []*store.Comment{w.comment("bob", nil, "hi")}
			},
			map[string][]string{"ann": {"REPLY bob"}}},
		{"MUTED: no replies and no mentions from the thread",
			func(w *inboxWorld) []*store.Comment {
				watchPost(w, "ann", w.post.ID, store.WatchMuted)
				watchPost(w, "cat", w.post.ID, store.WatchMuted)
				a := w.comment("cat", nil, "top")
				return []*store.Comment{a, w.comment("bob", a, "@ann @cat @dan")}
			},
			map[string][]string{"dan": {"MENTION bob"}}},
		{"a muted group silences its posts' threads and mentions, unless the post says otherwise, as its author's own does",
			func(w *inboxWorld) []*store.Comment {
				watchGroup(w, "ann", "golang", store.WatchMuted)
				watchGroup(w, "cat", "golang", store.WatchMuted)
				p := post(w, "ann", "@cat look", "golang") // cat: a muted mention
				d := post(w, "dan", "dan's", "golang")
				q := post(w, "dan", "dan's other", "golang")
				watchPost(w, "ann", q.ID, store.WatchReplies)
				comment := func(uid string, p *store.Post, parent *store.Comment, body string) *store.Comment {
					w.t.Helper()
					in := store.NewComment{PostID: p.ID, Body: body}
					if parent != nil {
						in.ParentID = parent.ID
					}
					c, err := w.s.CreateComment(ctx, uk(uid), in)
					if err != nil {
						w.t.Fatal(err)
					}
					return c
				}
				onD, onQ := comment("ann", d, nil, "on d"), comment("ann", q, nil, "on q") // dan: two REPLYs
				return []*store.Comment{onD, onQ,
					comment("bob", p, nil, "heard: ann's own post"),
					comment("bob", d, onD, "muted: a thread of the group"),
					comment("bob", q, onQ, "heard: ann chose REPLIES for it"),
				}
			},
			map[string][]string{"ann": {"REPLY bob", "REPLY bob"}, "dan": {"REPLY ann", "REPLY ann"}}},
		{"ALL on a group: every new post in it",
			func(w *inboxWorld) []*store.Comment {
				watchGroup(w, "dan", "golang", store.WatchAll)
				watchGroup(w, "bob", "golang", store.WatchAll)
				post(w, "cat", "in", "golang")
				post(w, "cat", "@dan out")
				post(w, "bob", "own", "golang")
				return nil
			},
			map[string][]string{"dan": {"WATCHED_POST bob", "MENTION cat", "WATCHED_POST cat"}, "bob": {"WATCHED_POST cat"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				w := newInboxWorld(t, b, store.Options{}, "bob", "cat", "dan")
				if _, err := w.s.CreatePost(ctx, "ann", store.NewPost{Title: "makes the group", Groups: []string{"golang"}}); err != nil {
					t.Fatal(err)
				}
				w.settle()
				cs := tc.act(w)
				w.settle()
				check := func(when string) {
					t.Helper()
					for _, u := range w.users {
						if got := w.summary(u); !slices.Equal(got, tc.want[u]) {
							t.Errorf("%s: %s's inbox %q, want %q", when, u, got, tc.want[u])
						}
						if got := w.unread(u); got != len(tc.want[u]) {
							t.Errorf("%s: %s's unread count %d, want %d", when, u, got, len(tc.want[u]))
						}
						w.checkInbox(u)
					}
				}
				check("first run")
				for _, c := range cs {
					if err := w.s.RequeueWatchFanout(ctx, c.ID); err != nil {
						t.Fatal(err)
					}
					if err := w.s.RequeueCommentNotice(ctx, c.ID, time.Time{}); err != nil {
						t.Fatal(err)
					}
				}
				w.settle()
				check("jobs run again")
			})
		})
	}
}

// TestWatchModeShown: the viewer's mode is REPLIES unless set, and unknown posts and groups are
// not found.
func TestWatchModeShown(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		w := newInboxWorld(t, b, store.Options{}, "bob")
		pid := w.post.Key()
		mode := func(uid string) store.WatchMode {
			m, err := w.s.NewLoader().PostWatch(ctx, uk(uid), pid)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		if m := mode("bob"); m != store.WatchReplies {
			t.Errorf("default %q", m)
		}
		if m := mode(""); m != "" {
			t.Errorf("anonymous %q", m)
		}
		for _, m := range []store.WatchMode{store.WatchAll, store.WatchMuted, store.WatchReplies} {
			if err := w.s.WatchPost(ctx, "bob", w.post.ID, m); err != nil {
				t.Fatal(err)
			}
			if got := mode("bob"); got != m {
				t.Errorf("set %q, read %q", m, got)
			}
		}
		if err := w.s.WatchPost(ctx, "bob", "post:99999", store.WatchAll); !store.IsKind(err, store.KindNotFound) {
			t.Errorf("watch a missing post: %v", err)
		}
		if err := w.s.WatchGroup(ctx, "bob", "nosuchgroup", store.WatchAll); !store.IsKind(err, store.KindNotFound) {
			t.Errorf("watch a missing group: %v", err)
		}
		if err := w.s.WatchPost(ctx, "bob", w.post.ID, "LOUD"); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("an unknown mode: %v", err)
		}
	})
}

// TestWatchFanoutChunks: a comment on a thread watched by more watchers than one chunk takes
// reaches each of them exactly once, also when the fan-out runs again from its start, as after
// a crash mid-chunk.
func TestWatchFanoutChunks(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		w := newInboxWorld(t, b, store.Options{WriteLimit: -1}, "bob")
		const watchers = 1100 // three chunks of at most 500
		names := make([]string, watchers)
		for i := range names {
			names[i] = fmt.Sprintf("watcher%04d", i)
			if err := w.s.WatchPost(ctx, uk(names[i]), w.post.ID, store.WatchAll); err != nil {
				t.Fatal(err)
			}
		}
		c := w.comment("bob", nil, "to everyone")
		check := func(when string) {
			t.Helper()
			for _, n := range names {
				notes, inbox, unread, err := w.s.InboxSizes(ctx, uk(n))
				if err != nil {
					t.Fatal(err)
				}
				if notes != 1 || inbox != 1 || unread != 1 {
					t.Fatalf("%s: %s has %d/%d/%d notifications, want one", when, n, notes, inbox, unread)
				}
			}
		}
		w.settle()
		w.settle() // each chunk queues the next
		w.settle()
		check("first run")
		for range 2 {
			if err := w.s.RequeueWatchFanout(ctx, c.ID); err != nil {
				t.Fatal(err)
			}
			w.settle()
			w.settle()
			w.settle()
		}
		check("run again")
	})
}

// TestNotificationsSkipWhatLeftView: the fan-out to the watchers with ALL reads its item again
// when it runs, and delivers nothing about one that left the watchers' view since it was
// written: a comment whose post a moderator removed (as for a comment removed itself), a post
// erased with its author's account. Moderation stops a fan-out under way. The REPLY and
// MENTION notifications of a comment or post removed (or under a post removed) before they went
// out are not sent either.
func TestNotificationsSkipWhatLeftView(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		act  func(t *testing.T, w *inboxWorld) // what watchers dan and eve watch, what is written, what then happens to it
	}{
		{"a comment's post removed", func(t *testing.T, w *inboxWorld) {
			for _, u := range []string{"dan", "eve"} {
				if err := w.s.WatchPost(ctx, uk(u), w.post.ID, store.WatchAll); err != nil {
					t.Fatal(err)
				}
			}
			w.comment("bob", nil, "spam")
			if _, err := w.s.RemovePost(ctx, "root", w.post.ID, "spam"); err != nil {
				t.Fatal(err)
			}
		}},
		{"a comment removed", func(t *testing.T, w *inboxWorld) {
			for _, u := range []string{"dan", "eve"} {
				if err := w.s.WatchPost(ctx, uk(u), w.post.ID, store.WatchAll); err != nil {
					t.Fatal(err)
				}
			}
			c := w.comment("bob", nil, "spam")
			if _, err := w.s.RemoveComment(ctx, "root", c.ID, "spam"); err != nil {
				t.Fatal(err)
			}
		}},
		// The REPLY and MENTION of a comment likewise: a moderator who removes mention spam, or
		// the post it was written under, before its job runs stops them.
		{"mentions in a removed comment", func(t *testing.T, w *inboxWorld) {
			c := w.comment("bob", nil, "spam for @dan and @eve")
			if _, err := w.s.RemoveComment(ctx, "root", c.ID, "spam"); err != nil {
				t.Fatal(err)
			}
		}},
		{"a reply and a mention under a removed post", func(t *testing.T, w *inboxWorld) {
			dans := w.comment("dan", nil, "a question")
			w.settle()
			w.comment("bob", dans, "spam, and @eve")
			if _, err := w.s.RemovePost(ctx, "root", w.post.ID, "spam"); err != nil {
				t.Fatal(err)
			}
		}},
		{"mentions in a removed post", func(t *testing.T, w *inboxWorld) {
			p, err := w.s.CreatePost(ctx, "bob", store.NewPost{Title: "spam", Body: "for @dan and @eve"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.s.RemovePost(ctx, "root", p.ID, "spam"); err != nil {
				t.Fatal(err)
			}
		}},
		{"a post erased with its author's account", func(t *testing.T, w *inboxWorld) {
			for _, u := range []string{"dan", "eve"} {
				if err := w.s.WatchGroup(ctx, uk(u), "golang", store.WatchAll); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := w.s.CreatePost(ctx, "bob", store.NewPost{Title: "spam", Groups: []string{"golang"}}); err != nil {
				t.Fatal(err)
			}
			if err := w.s.DeleteAccount(ctx, "bob", "password1", true); err != nil {
				t.Fatal(err)
			}
			for range 20 { // the deletion's chain erases the post
				w.settle()
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				w := newInboxWorld(t, b, store.Options{WriteLimit: -1}, "bob", "dan", "eve", "root")
				if err := w.s.GrantAdmin(ctx, "root"); err != nil {
					t.Fatal(err)
				}
				if _, err := w.s.CreatePost(ctx, "ann", store.NewPost{Title: "makes the group", Groups: []string{"golang"}}); err != nil {
					t.Fatal(err)
				}
				w.settle()
				tc.act(t, w)
				for range 3 { // the notification's job, then the fan-out's
					w.settle()
				}
				for _, u := range []string{"dan", "eve"} {
					if got := w.summary(u); len(got) != 0 {
						t.Errorf("%s's inbox %q, want nothing", u, got)
					}
					if got := w.unread(u); got != 0 {
						t.Errorf("%s's unread count %d, want 0", u, got)
					}
				}
			})
		})
	}
}
