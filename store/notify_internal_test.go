package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

func TestMentionedUsers(t *testing.T) {
	twelve := make([]string, 12)
	for i := range twelve {
		twelve[i] = fmt.Sprintf("user%02d", i+1)
	}
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"none", "no mentions here", nil},
		{"one", "hi @alice!", []string{"alice"}},
		{"case folds, repeats once", "@Alice and @ALICE and @alice", []string{"alice"}},
		{"order of appearance", "@cat, @bob; (@dan)", []string{"cat", "bob", "dan"}},
		{"the author is left out", "@me and @bob", []string{"bob"}},
		{"e-mail addresses are not mentions", "mail bob@example.org or x.@cat", []string{"cat"}},
		{"too short or too long", "@ab @" + strings.Repeat("n", 33) + " @abc", []string{"abc"}},
		{"a bare @", "@ @@ @.", nil},
		{"name characters", "@a_b-c9.", []string{"a_b-c9"}},
		{"two in a row: the second is part of a word", "@alice@bob", []string{"alice"}},
		{"at most MaxMentions", "@" + strings.Join(twelve, " @"), twelve[:MaxMentions]},
		{"the author's own name does not count toward the cap", strings.Repeat("@me ", 20) + "@" + strings.Join(twelve, " @"), twelve[:MaxMentions]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mentionedUsers(tc.text, "me"); !slices.Equal(got, tc.want) {
				t.Errorf("mentionedUsers(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}

func TestNotificationIDs(t *testing.T) {
	for _, tc := range []struct {
		id, recipient, cause string
		ok                   bool
	}{
		{"notification:alice:c:17:4", "alice", "c:17:4", true},
		{"notification:alice:p:17", "alice", "p:17", true},
		{"notification:alice:f:bob", "alice", "f:bob", true},
		{"notification:alice:c:17", "", "", false},
		{"notification:alice:c:017:4", "", "", false},
		{"notification:alice:c:17:0", "", "", false},
		{"notification:alice:p:x", "", "", false},
		{"notification:alice:f:b", "", "", false},
		{"notification:alice:x:1", "", "", false},
		{"notification:al:p:1", "", "", false},
		{"notification:alice", "", "", false},
		{"user:alice", "", "", false},
	} {
		r, c, err := ParseNotificationID(tc.id)
		if ok := err == nil; ok != tc.ok || string(r) != tc.recipient || c != tc.cause {
			t.Errorf("ParseNotificationID(%q) = %q, %q, %v; want %q, %q, ok %v", tc.id, r, c, err, tc.recipient, tc.cause, tc.ok)
		}
		if !tc.ok && !IsKind(err, KindInvalid) {
			t.Errorf("ParseNotificationID(%q): %v, want KindInvalid", tc.id, err)
		}
	}
	if got := notificationID("alice", commentCause("17", padNum("4"))); got != "notification:alice:c:17:4" {
		t.Errorf("notification id %q", got)
	}
}

// TestNotifyScriptsAreSafeToRunTwice sends notify.lua and mark_read.lua twice with the same
// arguments, as go-redis does when a reply is lost: the second run changes nothing, and the
// unread count stays that of the entries.
func TestNotifyScriptsAreSafeToRunTwice(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	defer rdb.Close()
	s, err := New(ctx, rdb, Options{Prefix: "x:", WriteLimit: -1, Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{s.k.inboxNotes("ann"), s.k.inbox("ann"), s.k.legacyInboxUnread("ann"), s.k.inboxUnannounced("ann")}
	added := func(v any) any { // the first element of notify's reply
		if arr, ok := v.([]any); ok && len(arr) > 0 {
			return arr[0]
		}
		return v
	}
	twice := func(name string, keys []string, args ...any) []any {
		t.Helper()
		var out []any
		for i := 0; i < 2; i++ {
			v, err := s.run(ctx, name, keys, args...)
			if err != nil {
				t.Fatalf("%s run %d: %v", name, i+1, err)
			}
			out = append(out, v)
		}
		return out
	}
	sizes := func() [3]int64 { // records, ids, the unread count
		n, _ := rdb.HGet(ctx, keys[0], unreadField).Int64()
		return [3]int64{rdb.HLen(ctx, keys[0]).Val() - 1, rdb.ZCard(ctx, keys[1]).Val(), n}
	}
	for i := 1; i <= 3; i++ {
		got := twice("notify", keys, fmt.Sprintf("f:user%d", i), 1000*i, "F1", 2)
		if added(got[0]) != int64(1) || added(got[1]) != int64(0) {
			t.Fatalf("notify %d replied %v, want [1 0]", i, got)
		}
	}
	if got := sizes(); got != [3]int64{2, 2, 2} {
		t.Fatalf("after three notifications into an inbox of 2: sizes %v", got)
	}
	if got := twice("notify", keys, "f:user0", 500, "F1", 2); added(got[0]) != int64(0) {
		t.Fatalf("a notification older than a full inbox keeps was kept: %v", got)
	}
	if got := twice("mark_read", []string{keys[0], keys[2]}, "ids", "f:user3", "f:user9"); got[0] != int64(1) || got[1] != int64(1) {
		t.Fatalf("mark_read replied %v, want [1 1]", got)
	}
	if got := sizes(); got != [3]int64{2, 2, 1} {
		t.Fatalf("after marking one read: sizes %v", got)
	}
	if got := twice("mark_read", []string{keys[0], keys[2]}, "all"); got[0] != int64(0) || got[1] != int64(0) {
		t.Fatalf("mark_read all replied %v", got)
	}
	if got := rdb.Get(ctx, s.k.revOf(keys[0])).Val(); got != "12" {
		t.Fatalf("inbox revision %s after 12 script runs, want 12: every run raises it", got)
	}
}

// TestNotificationAnnouncedAfterACutOffDelivery: a delivery that stopped after adding a
// notification, before announcing it, leaves it unannounced; the job's next run announces it.
func TestNotificationAnnouncedAfterACutOffDelivery(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := New(ctx, rdb, Options{Prefix: "x:", WriteLimit: -1, Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"amy", "bob"} {
		if _, err := s.SignUp(ctx, n, "password1"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Follow(ctx, "bob", "amy"); err != nil {
		t.Fatal(err)
	}
	// The first run of the follow's job: the notification is added, then the process dies.
	at, _ := rdb.ZScore(ctx, s.k.following("bob"), "amy").Result()
	if _, err := s.run(ctx, "notify", []string{s.k.inboxNotes("amy"), s.k.inbox("amy"), s.k.legacyInboxUnread("amy"), s.k.inboxUnannounced("amy")},
		"f:bob", int64(at), `{"k":"FOLLOW","t":1,"a":"bob"}`, NotificationCap); err != nil {
		t.Fatal(err)
	}
	if _, err := s.jobs.RunDue(ctx); err != nil { // the job runs again
		t.Fatal(err)
	}
	events := rdb.XRange(ctx, s.k.logOf(s.k.chanNotifications("amy")), "-", "+").Val()
	announced := 0
	for _, e := range events {
		if e.Values["e"] != "" {
			announced++
		}
	}
	if announced != 1 {
		t.Fatalf("%d announcements of the cut-off delivery, want 1", announced)
	}
	if n := rdb.SCard(ctx, s.k.inboxUnannounced("amy")).Val(); n != 0 {
		t.Fatalf("%d notifications left unannounced", n)
	}
}

// TestConcurrentDeliveriesAnnounceEachNotificationOnce: two deliveries into one inbox at once —
// two jobs, each with its own notification — both see the other's notification unannounced
// (notify.lua replies every unannounced id of the inbox); however their steps interleave, each
// notification is announced once on notificationAdded, not once per delivery that saw it.
func TestConcurrentDeliveriesAnnounceEachNotificationOnce(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := New(ctx, rdb, Options{Prefix: "x:", WriteLimit: -1, Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"amy", "bob", "cat"} {
		if _, err := s.SignUp(ctx, n, "password1"); err != nil {
			t.Fatal(err)
		}
	}
	follow := func(a string) notice {
		return notice{to: "amy", cause: followCause(a), rec: noticeRecord{Kind: NotificationFollow, At: s.now().UnixMilli(), Actor: a}}
	}
	// The first job adds bob's notification; before it announces, the second job delivers cat's,
	// whose script replies bob's as unannounced too, and announces both.
	first := follow("bob")
	v, err := s.run(ctx, "notify", []string{s.k.inboxNotes("amy"), s.k.inbox("amy"), s.k.legacyInboxUnread("amy"), s.k.inboxUnannounced("amy")},
		first.cause, first.rec.At, first.rec.pack(first.cause), NotificationCap)
	if err != nil {
		t.Fatal(err)
	}
	if arr, ok := v.([]any); !ok || len(arr) != 2 || arr[1] != first.cause {
		t.Fatalf("notify replied %v, want bob's notification unannounced", v)
	}
	if err := s.deliver(ctx, []notice{follow("cat")}); err != nil {
		t.Fatal(err)
	}
	// The first job goes on with what its script replied.
	s.announceNotifications(ctx, map[string]map[string]bool{"amy": {first.cause: true}})

	announced := map[string]int{}
	for _, e := range rdb.XRange(ctx, s.k.logOf(s.k.chanNotifications("amy")), "-", "+").Val() {
		if raw, _ := e.Values["e"].(string); raw != "" {
			announced[raw]++
		}
	}
	if len(announced) != 2 {
		t.Errorf("announced %v, want bob's and cat's notifications", announced)
	}
	for ev, n := range announced {
		if n != 1 {
			t.Errorf("%s announced %d times, want once", ev, n)
		}
	}
	if n := rdb.SCard(ctx, s.k.inboxUnannounced("amy")).Val(); n != 0 {
		t.Fatalf("%d notifications left unannounced", n)
	}
}
