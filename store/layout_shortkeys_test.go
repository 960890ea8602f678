package store_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// shortKeysThread is a thread for the migration of comment keys: a parent that keeps its reply
// orders (ReplyOrdersAt replies, so that its TOP, BEST and CONTROVERSIAL orders exist), a parent
// with a few voted replies (ordered by the reader), and every listing of both as written.
type shortKeysThread struct {
	*thread
	big, small *store.Comment
	want       map[string]map[store.CommentSort]listed
	wantTexts  map[string]string // comment id → text
}

// remember records what the thread lists, and the text of every comment listed.
func (st *shortKeysThread) remember() {
	st.want, st.wantTexts = st.lists(), st.texts()
}

// texts reads the text of every comment the thread lists (its NEW order at every level).
func (st *shortKeysThread) texts() map[string]string {
	st.t.Helper()
	out := map[string]string{}
	l := st.s.NewLoader()
	for _, ls := range st.lists() {
		for _, id := range ls[store.CommentsNew].ids {
			c, err := l.Comment(context.Background(), id)
			if err != nil || c == nil {
				st.t.Fatalf("read %s: %+v, %v", id, c, err)
			}
			out[id] = c.Text
		}
	}
	return out
}

func newShortKeysThread(t *testing.T, th *thread) *shortKeysThread {
	t.Helper()
	st := &shortKeysThread{thread: th}
	st.big = th.voted(nil, votedComment{name: "big", up: 1})
	for i := range store.ReplyOrdersAt {
		vc := votedComments[i%len(votedComments)]
		vc.name = fmt.Sprintf("%s%d", vc.name, i)
		th.voted(st.big, vc)
	}
	st.small = th.voted(nil, votedComment{name: "small"})
	for _, vc := range votedComments[:4] {
		th.voted(st.small, vc)
	}
	st.remember()
	return st
}

// lists lists the top level and the replies of both parents in every sort.
func (st *shortKeysThread) lists() map[string]map[store.CommentSort]listed {
	return map[string]map[store.CommentSort]listed{"top level": st.listEvery(nil), "big": st.listEvery(st.big),
		"small": st.listEvery(st.small)}
}

// same checks every listing against want.
func (st *shortKeysThread) same(when string) {
	st.t.Helper()
	got := st.lists()
	for what, w := range st.want {
		sameLists(st.t, when+", "+what+" of "+st.post.ID, got[what], w)
	}
	if texts := st.texts(); !maps.Equal(texts, st.wantTexts) {
		st.t.Errorf("%s, the texts of %s: %v, want %v", when, st.post.ID, texts, st.wantTexts)
	}
}

// keysOf returns the thread's comment keys named by a padded number and by a short one.
func (st *shortKeysThread) keysOf() (padded, short []string) {
	st.t.Helper()
	for _, key := range matchingKeys(st.t, st.b.Client, st.prefix+"{p:"+st.post.Key()+"}:c:[0-9]*") {
		rest := key[strings.Index(key, "}:c:")+4:]
		num, _, _ := strings.Cut(rest, ":")
		switch {
		case strings.HasSuffix(rest, ":votes") || num == "0":
		case len(num) == 12:
			padded = append(padded, key)
		default:
			short = append(short, key)
		}
	}
	return padded, short
}

// TestMigrateShortCommentKeys writes threads, renames their comment keys to layout 5's names (by
// the padded number), and migrates: every listing reads the same before the migration (the first
// read of a thread renames it; a repeated deletion of a comment removed for good before it finds
// its marker), with writes during it (a reply that brings a parent of layout 5 to
// its reply orders, votes, a deletion) on a thread nothing had read, after a run cut in the
// middle, and after it; no key keeps its padded name, and a second run renames nothing.
// It runs from layout 5 and from layout 6, which wrote padded names too.
func TestMigrateShortCommentKeys(t *testing.T) {
	for _, from := range []int{5, 6} {
		t.Run(fmt.Sprintf("from layout %d", from), func(t *testing.T) { testMigrateShortCommentKeys(t, from) })
	}
}

func testMigrateShortCommentKeys(t *testing.T, from int) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clock := tickingClock()
		th := newThread(t, b, store.Options{WriteLimit: -1, Now: clock})
		read := newShortKeysThread(t, th)
		written := newShortKeysThread(t, newThreadOn(t, th, "written during the migration"))
		cut := newShortKeysThread(t, newThreadOn(t, th, "renamed in part by a run cut off"))
		// A comment removed for good leaves a marker, out of the ids set, that a repeated deletion
		// finds.
		doomed := read.add("author", nil, "doomed")
		if err := th.s.DeleteComment(ctx, uk("author"), doomed.ID); err != nil {
			t.Fatal(err)
		}
		read.remember()
		doomedPid, doomedNum, _ := store.CommentKey(doomed.ID)
		if err := b.Client.Rename(ctx, th.s.ThreadKeyForTest(doomedPid, doomedNum, ""),
			th.s.PaddedThreadKeyForTest(doomedPid, doomedNum, "")).Err(); err != nil {
			t.Fatalf("the removal marker: %v", err)
		}
		// Layout 5: every comment key of the three threads by the padded number.
		for _, st := range []*shortKeysThread{read, written, cut} {
			if n, err := th.s.PadThreadKeysForTest(ctx, st.post.Key()); err != nil || n == 0 {
				t.Fatalf("pad the keys of %s: %d, %v", st.post.ID, n, err)
			}
			if _, short := st.keysOf(); len(short) != 0 {
				t.Fatalf("short keys left in %s: %v", st.post.ID, short)
			}
		}
		if err := b.Client.HSet(ctx, th.prefix+"{meta}:layout", "version", from).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := th.s.CheckLayout(ctx); err != nil {
			t.Fatal(err)
		}

		// Reads before the migration: the same, and the thread read is renamed whole.
		read.same("before the migration")
		read.check()
		if padded, _ := read.keysOf(); len(padded) != 1 {
			t.Errorf("a thread read keeps padded keys %v, want the removal marker's alone", padded)
		}
		if err := th.s.DeleteComment(ctx, uk("author"), doomed.ID); err != nil {
			t.Errorf("a repeated deletion of a comment removed before the migration: %v", err)
		}
		if padded, _ := read.keysOf(); len(padded) != 0 {
			t.Errorf("padded keys left after the repeated deletion: %v", padded)
		}

		// Writes before the migration reaches a thread nothing has read.
		for i := range store.ReplyOrdersAt - 4 - 1 {
			written.voted(written.small, votedComment{name: fmt.Sprintf("late%d", i), up: i % 3})
		}
		last := written.voted(written.small, votedComment{name: "threshold", down: 1}) // builds its orders
		if !written.keepsOrders(written.small) {
			t.Error("the reply that brought a parent of layout 5 to ReplyOrdersAt built no orders")
		}
		if _, err := th.s.VoteComment(ctx, uk("voter9"), written.big.ID, -1); err != nil {
			t.Fatal(err)
		}
		if err := th.s.DeleteComment(ctx, uk("author"), last.ID); err != nil {
			t.Fatal(err)
		}
		written.remember()
		written.check()
		if padded, _ := written.keysOf(); len(padded) != 0 {
			t.Errorf("a thread written keeps padded keys: %v", padded)
		}
		if got := written.get(written.big.ID); got == nil || got.Upvotes != 1 || got.Downvotes != 1 {
			t.Errorf("the parent voted on during the migration reads %+v", got)
		}

		// A run cut off: some of the third thread's keys renamed, the rest not.
		padded, _ := cut.keysOf()
		for _, key := range padded[:len(padded)/2] {
			i := strings.Index(key, "}:c:") + 4
			num, suffix, _ := strings.Cut(key[i:], ":")
			if suffix != "" {
				suffix = ":" + suffix
			}
			if err := b.Client.Rename(ctx, key, th.s.ThreadKeyForTest(cut.post.Key(), num, suffix)).Err(); err != nil {
				t.Fatal(err)
			}
		}
		ran, err := th.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != store.Layout-from || ran[0].From != from {
			t.Fatalf("ran %+v, %v; want the migrations from layout %d", ran, err, from)
		}
		for _, st := range []*shortKeysThread{read, written, cut} {
			st.same("after the migration")
			st.check()
			if padded, short := st.keysOf(); len(padded) != 0 || len(short) == 0 {
				t.Errorf("%s after the migration: padded keys %v, %d short ones", st.post.ID, padded, len(short))
			}
		}
		if n, err := th.s.ShortenCommentKeysForTest(ctx); err != nil || n != 0 {
			t.Errorf("a second run renamed %d keys (%v), want 0", n, err)
		}
		// Every comment key is short now: a process that starts now reads the same.
		again := b.NewStore(t, store.Options{Prefix: th.prefix, WriteLimit: -1, Now: clock})
		if _, err := again.CheckLayout(ctx); err != nil {
			t.Fatal(err)
		}
		fresh := *cut
		fresh.thread = &thread{t: t, b: b, s: again, prefix: th.prefix, post: cut.post}
		fresh.same("read by a process started after the migration")
	})
}
