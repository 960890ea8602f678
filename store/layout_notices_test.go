package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestMigratePackedNotices writes notifications of every common kind, puts their records back as
// layout 4 kept them (JSON, over 64 bytes with a long name: the inbox a hashtable), and migrates:
// the inboxes read the same before (the migration runs beside traffic), with a notification
// delivered in between, and after it; read states and the unread count are kept, mark-read and
// export work after it; the inbox's hash is listpack-encoded again; a second run packs nothing.
func TestMigratePackedNotices(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		long := "bartholomew_with_a_long_name_22"
		w := newInboxWorld(t, b, store.Options{Prefix: prefix, WriteLimit: -1}, long, "cyd")
		top := w.comment(long, nil, "a comment on ann's post")                                                         // ann: REPLY
		w.comment("cyd", top, "a reply to you, @ann")                                                                  // bartholomew: REPLY, ann: MENTION
		w.follow(long, "ann")                                                                                          // ann: FOLLOW
		if _, err := w.s.CreatePost(ctx, uk(long), store.NewPost{Title: "hi", Body: "hi @ann and @cyd"}); err != nil { // MENTIONs
			t.Fatal(err)
		}
		w.settle()
		first := w.inbox("ann", false, 100)
		if len(first) != 4 {
			t.Fatalf("ann's inbox: %v, want 4 notifications", w.summary("ann"))
		}
		if n, err := w.s.MarkNotificationsRead(ctx, "ann", []string{first[1].ID}, false); err != nil || n != 3 {
			t.Fatalf("mark one read: %d unread, %v", n, err)
		}
		type state struct {
			inbox, unread []string
			count         int
		}
		read := func(uid string) state {
			t.Helper()
			var st state
			for _, n := range w.inbox(uid, false, 2) {
				st.inbox = append(st.inbox, fmt.Sprintf("%s %s %s %d %v %s %s %s", n.ID, n.Kind, n.Actor, n.CreatedAt.UnixMilli(), n.Read, n.PostID, n.CommentID, n.ModActionID))
			}
			for _, n := range w.inbox(uid, true, 2) {
				st.unread = append(st.unread, n.ID)
			}
			c, err := w.s.NewLoader().UnreadNotificationCount(ctx, uk(uid))
			if err != nil {
				t.Fatal(err)
			}
			st.count = c
			return st
		}
		users := []string{"ann", long, "cyd"}
		want := map[string]state{}
		for _, u := range users {
			want[u] = read(u)
		}
		check := func(when string) {
			t.Helper()
			for _, u := range users {
				if got := read(u); !slices.Equal(got.inbox, want[u].inbox) || !slices.Equal(got.unread, want[u].unread) || got.count != want[u].count {
					t.Errorf("%s: %s's inbox\n%+v\nwant\n%+v", when, u, got, want[u])
				}
			}
		}
		notes := prefix + "{n:ann}:notes"
		encoding := func() string {
			if b.Name == "miniredis" {
				return "" // miniredis has no encodings
			}
			enc, err := b.Client.ObjectEncoding(ctx, notes).Result()
			if err != nil {
				t.Fatal(err)
			}
			return enc
		}
		if enc := encoding(); enc != "" && enc != "listpack" {
			t.Fatalf("ann's notifications are encoded %q before layout 4, want listpack", enc)
		}

		// Layout 4: every record as JSON.
		for _, u := range users {
			if _, err := w.s.NoticesAsLayout4(ctx, uk(u)); err != nil {
				t.Fatal(err)
			}
		}
		if raw := b.Client.HGet(ctx, notes, strings.TrimPrefix(first[0].ID, "notification:ann:")).Val(); !strings.HasPrefix(raw, "{") {
			t.Fatalf("layout 4's record %q", raw)
		}
		if enc := encoding(); enc != "" && enc != "hashtable" {
			t.Fatalf("layout 4's JSON with a long name is encoded %q, want hashtable", enc)
		}
		if err := b.Client.HSet(ctx, prefix+"{meta}:layout", "version", 4).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.s.CheckLayout(ctx); err != nil { // the process reads inboxes of layout 6
			t.Fatal(err)
		}
		check("layout 4")
		// Beside traffic: a notification delivered before the migration is packed already.
		w.follow("cyd", "ann")
		w.settle()
		want["ann"] = read("ann")
		if len(want["ann"].inbox) != 5 || want["ann"].count != 4 {
			t.Fatalf("a new follow: %+v", want["ann"])
		}

		ran, err := w.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != store.Layout-4 || ran[0].From != 4 {
			t.Fatalf("ran %+v, %v; want the migration from layout 4", ran, err)
		}
		check("migrated")
		for _, u := range users {
			recs, err := b.Client.HGetAll(ctx, prefix+"{n:"+u+"}:notes").Result()
			if err != nil {
				t.Fatal(err)
			}
			for cause, raw := range recs {
				if strings.HasPrefix(raw, "{") || len(raw) > 64 {
					t.Errorf("%s's record %s is still %q", u, cause, raw)
				}
			}
		}
		if enc := encoding(); enc != "" && enc != "listpack" {
			t.Errorf("migrated: ann's notifications are encoded %q, want listpack", enc)
		}
		if n, err := w.s.PackNoticesForTest(ctx); err != nil || n != 0 {
			t.Errorf("second run: packed %d, %v; want 0", n, err)
		}
		check("second run")
		if n, err := w.s.MarkNotificationsRead(ctx, "ann", nil, true); err != nil || n != 0 {
			t.Errorf("mark all read after the migration: %d unread, %v", n, err)
		}
		for _, n := range w.inbox("ann", false, 10) {
			if !n.Read {
				t.Errorf("%s unread after mark-all", n.ID)
			}
		}
	})
}
