package store_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestMigrateUnreadFromLayout6 writes inboxes with notifications read and unread, puts them back
// as layout 6 kept them (the unread ids in a sorted set apart, no count, the creation time in
// every record), and migrates: the
// inboxes read the same — every notification with its read state, the unread list page by page
// with the same cursors, the unread count — before the migration, beside it (a notification and
// a mark-read on an inbox of layout 6, then on one folded while another is not: a run cut in the
// middle), after the step, after a second run that changes nothing, and after Migrate; no sorted
// set of unread ids is left, no record keeps its time, and a process of layout 6's later write is folded by running the step
// again.
func TestMigrateUnreadFromLayout6(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		w := newInboxWorld(t, b, store.Options{Prefix: prefix, WriteLimit: -1}, "bob", "cyd", "dee")
		var last *store.Comment
		for i, u := range []string{"bob", "cyd", "dee", "bob", "cyd", "dee", "bob"} {
			last = w.comment(u, last, fmt.Sprintf("reply %d, @ann", i)) // ann: REPLY or MENTION; each author: a REPLY
		}
		w.follow("bob", "ann")
		w.follow("cyd", "ann")
		w.settle()
		if n := w.unread("ann"); n < 8 {
			t.Fatalf("ann has %d unread, want 8 or more", n)
		}
		first := w.inbox("ann", false, 100)
		if n, err := w.s.MarkNotificationsRead(ctx, "ann", []string{first[1].ID, first[4].ID}, false); err != nil || n != len(first)-2 {
			t.Fatalf("mark two read: %d unread, %v", n, err)
		}
		if _, err := w.s.MarkNotificationsRead(ctx, "dee", nil, true); err != nil {
			t.Fatal(err)
		}
		users := w.users
		type state struct {
			inbox, unread, cursors []string
			count                  int
		}
		read := func(uid string) state {
			t.Helper()
			var st state
			for _, n := range w.inbox(uid, false, 3) {
				st.inbox = append(st.inbox, fmt.Sprintf("%s %s %s %d %v", n.ID, n.Kind, n.Actor, n.CreatedAt.UnixMilli(), n.Read))
			}
			after := ""
			for {
				p, err := w.s.NewLoader().Notifications(ctx, uk(uid), store.Window{First: 2, After: after}, true, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range p.Items {
					st.unread = append(st.unread, n.ID)
				}
				st.cursors = append(st.cursors, p.Cursors...)
				if !p.HasNext {
					break
				}
				after = p.EndCursor()
			}
			p, err := w.s.NewLoader().Notifications(ctx, uk(uid), store.Window{Last: 2}, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			st.cursors = append(st.cursors, fmt.Sprint(p.Cursors, p.Total, p.HasPrev))
			st.count = w.unread(uid)
			return st
		}
		want := map[string]state{}
		for _, u := range users {
			want[u] = read(u)
			w.checkInbox(u)
		}
		check := func(when string) {
			t.Helper()
			for _, u := range users {
				got := read(u)
				if !slices.Equal(got.inbox, want[u].inbox) || !slices.Equal(got.unread, want[u].unread) ||
					!slices.Equal(got.cursors, want[u].cursors) || got.count != want[u].count {
					t.Errorf("%s: %s's inbox\n%+v\nwant\n%+v", when, u, got, want[u])
				}
			}
		}
		legacySets := func() int { return len(matchingKeys(t, b.Client, prefix+"{n:*}:unread")) }

		// Layout 6.
		unread := 0
		for _, u := range users {
			n, err := w.s.UnreadAsLayout6(ctx, uk(u))
			if err != nil {
				t.Fatal(err)
			}
			unread += n
		}
		if err := b.Client.HSet(ctx, prefix+"{meta}:layout", "version", 6).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.s.CheckLayout(ctx); err != nil {
			t.Fatal(err)
		}
		if counts := want["ann"].count + want["bob"].count + want["cyd"].count + want["dee"].count; unread != counts {
			t.Fatalf("layout 6 keeps %d unread ids, want %d", unread, counts)
		}
		if n := legacySets(); n != 3 { // dee read all
			t.Fatalf("layout 6 has %d sets of unread ids, want 3", n)
		}
		check("layout 6")

		// Beside the migration: writes on an inbox of layout 6, then on one folded beside one not.
		w.follow("dee", "ann")
		w.settle()
		if _, err := w.s.MarkNotificationsRead(ctx, "bob", []string{w.inbox("bob", true, 10)[0].ID}, false); err != nil {
			t.Fatal(err)
		}
		for _, u := range users {
			want[u] = read(u)
		}
		if top := want["ann"].inbox[0]; want["ann"].count != len(first)-2+1 ||
			!strings.HasPrefix(top, "notification:ann:f:dee FOLLOW dee ") || !strings.HasSuffix(top, " false") {
			t.Fatalf("a follow of ann's inbox of layout 6: %+v", want["ann"])
		}
		if n := legacySets(); n != 3 {
			t.Fatalf("writes on inboxes of layout 6 left %d sets of unread ids, want 3", n)
		}
		folded, err := w.s.FoldInboxForTest(ctx, "ann") // the step, cut after ann's inbox
		if err != nil || folded != want["ann"].count {
			t.Fatalf("folding ann's inbox marked %d unread (%v), want %d", folded, err, want["ann"].count)
		}
		check("ann's inbox folded, the others not")
		w.follow("dee", "bob")
		w.follow("cyd", "dee")
		w.settle()
		if _, err := w.s.MarkNotificationsRead(ctx, "ann", []string{w.inbox("ann", true, 10)[1].ID}, false); err != nil {
			t.Fatal(err)
		}
		for _, u := range users {
			want[u] = read(u)
		}
		w.checkInbox("ann") // folded (its records say its count); bob's and cyd's are of layout 6
		w.checkInbox("dee") // no unread set to fold: written as layout 7
		check("written beside the migration")

		records := func() map[string]string { // every inbox's hash, field by field
			out := map[string]string{}
			for _, u := range users {
				for f, v := range b.Client.HGetAll(ctx, prefix+"{n:"+u+"}:notes").Val() {
					out[u+" "+f] = v
				}
			}
			return out
		}
		timed := 0 // records of layout 6, their creation time after the kind's code
		for _, v := range records() {
			if len(v) > 1 && v[1] != ' ' && v[0] != '#' {
				timed++
			}
		}
		if timed == 0 {
			t.Fatal("no record of layout 6 keeps its creation time")
		}
		left := want["bob"].count + want["cyd"].count
		var after map[string]string
		for run, wantN := range []int{left, 0} {
			n, err := w.s.FoldInboxesForTest(ctx)
			if err != nil || n != wantN {
				t.Fatalf("run %d folded %d, %v; want %d", run, n, err, wantN)
			}
			if n := legacySets(); n != 0 {
				t.Fatalf("run %d left %d sets of unread ids", run, n)
			}
			recs := records()
			for f, v := range recs {
				if len(v) > 1 && v[1] != ' ' && !strings.HasSuffix(f, " #u") {
					t.Errorf("run %d: record %s keeps its time: %q", run, f, v)
				}
			}
			if run == 1 && !maps.Equal(recs, after) {
				t.Errorf("the second run changed the records:\n%v\nwas\n%v", recs, after)
			}
			after = recs
			check(fmt.Sprintf("after run %d", run))
		}
		ran, err := w.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != store.Layout-6 || ran[0].From != 6 {
			t.Fatalf("ran %+v, %v; want the migration from layout 6", ran, err)
		}
		check("after Migrate")
		for _, u := range users {
			w.checkInbox(u) // the records say the unread count
		}

		// A process of layout 6 writes a folded inbox as layout 6 did; the step folds it again.
		if err := w.s.NotifyAsLayout6ForTest(ctx, "dee", "f:bob", time.Now()); err != nil {
			t.Fatal(err)
		}
		if n, err := w.s.FoldInboxesForTest(ctx); err != nil || n != 1 {
			t.Fatalf("folding a write of layout 6 marked %d unread, %v; want 1", n, err)
		}
		if n := w.unread("dee"); n != want["dee"].count+1 {
			t.Errorf("dee has %d unread after a write of layout 6 folded, want %d", n, want["dee"].count+1)
		}
		w.checkInbox("dee")
		if n, err := w.s.MarkNotificationsRead(ctx, "ann", nil, true); err != nil || n != 0 {
			t.Errorf("mark all read: %d unread, %v", n, err)
		}
		w.checkInbox("ann")
	})
}
