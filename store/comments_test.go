package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// thread is a post to comment on, in a store of its own.
type thread struct {
	t      *testing.T
	b      storetest.Backend
	s      *store.Store
	prefix string
	post   *store.Post
}

func newThread(t *testing.T, b storetest.Backend, opts store.Options) *thread {
	t.Helper()
	if opts.Prefix == "" {
		opts.Prefix = storetest.Prefix()
	}
	s := b.NewStore(t, opts)
	p, err := s.CreatePost(context.Background(), "poster", store.NewPost{Title: "a post"})
	if err != nil {
		t.Fatalf("create post: %v", err)
	}
	return &thread{t: t, b: b, s: s, prefix: opts.Prefix, post: p}
}

// add creates a comment by uid under parent ("" for top level) and fails the test on error.
func (th *thread) add(uid string, parent *store.Comment, body string) *store.Comment {
	th.t.Helper()
	in := store.NewComment{PostID: th.post.ID, Body: body}
	if parent != nil {
		in.ParentID = parent.ID
	}
	c, err := th.s.CreateComment(context.Background(), uk(uid), in)
	if err != nil {
		th.t.Fatalf("create comment under %v: %v", in.ParentID, err)
	}
	return c
}

// get loads a comment afresh; nil when it is gone.
func (th *thread) get(id string) *store.Comment {
	th.t.Helper()
	c, err := th.s.NewLoader().Comment(context.Background(), id)
	if err != nil {
		th.t.Fatalf("load %s: %v", id, err)
	}
	return c
}

// reloadPost loads the post afresh.
func (th *thread) reloadPost() *store.Post {
	th.t.Helper()
	p, err := th.s.NewLoader().Post(context.Background(), th.post.ID)
	if err != nil || p == nil {
		th.t.Fatalf("load post: %v %v", p, err)
	}
	return p
}

// page loads one page of replies of parent (nil for the post's comments) with a fresh loader.
func (th *thread) page(parent *store.Comment, sort store.CommentSort, first int, after string) *store.Page[*store.Comment] {
	th.t.Helper()
	l := th.s.NewLoader()
	var p *store.Page[*store.Comment]
	var err error
	if parent == nil {
		// Read the index even where commentCount says there is nothing to read.
		probe := *th.post
		probe.CommentCount = 1
		p, err = l.PostComments(context.Background(), &probe, sort, store.Window{First: first, After: after}, nil)
	} else {
		p, err = l.Replies(context.Background(), parent, sort, store.Window{First: first, After: after}, nil)
	}
	if err != nil {
		th.t.Fatalf("page: %v", err)
	}
	return p
}

// all pages through every reply of parent in sort order.
func (th *thread) all(parent *store.Comment, sort store.CommentSort, first int) []*store.Comment {
	th.t.Helper()
	var out []*store.Comment
	after := ""
	for {
		p := th.page(parent, sort, first, after)
		out = append(out, p.Items...)
		if !p.HasNext {
			return out
		}
		after = p.EndCursor()
	}
}

// check walks the whole thread and verifies its invariants: every tombstone has replies, every
// replyCount and totalCount matches the replies found, depths and parents are right, and the
// post's commentCount is the number of live comments. It returns how many comments it found.
func (th *thread) check() int {
	th.t.Helper()
	live, seen := 0, 0
	var walk func(parent *store.Comment, depth int) int
	walk = func(parent *store.Comment, depth int) int {
		if parent != nil {
			// Read the indexes even where replyCount says there is nothing to read.
			probe := *parent
			probe.ReplyCount = 1
			parent = &probe
		}
		kids := th.all(parent, store.CommentsOld, 100)
		for _, c := range kids {
			seen++
			if c.Depth != depth {
				th.t.Errorf("%s: depth %d, want %d", c.ID, c.Depth, depth)
			}
			wantParent := ""
			if parent != nil {
				wantParent = parent.ID
			}
			if c.ParentID != wantParent {
				th.t.Errorf("%s: parent %q, want %q", c.ID, c.ParentID, wantParent)
			}
			n := walk(c, depth+1)
			if c.ReplyCount != n {
				th.t.Errorf("%s: replyCount %d, but %d replies found", c.ID, c.ReplyCount, n)
			}
			if c.Deleted {
				if n == 0 {
					th.t.Errorf("%s: an orphaned tombstone (deleted, no replies)", c.ID)
				}
				if c.Author != "" || c.Text != "" {
					th.t.Errorf("%s: a tombstone shows its author or text", c.ID)
				}
			} else {
				live++
			}
		}
		for _, sort := range []store.CommentSort{store.CommentsTop, store.CommentsBest, store.CommentsControversial} {
			if p := th.page(parent, sort, 1, ""); p.Total != len(kids) {
				th.t.Errorf("sort %d total %d, OLD has %d", sort, p.Total, len(kids))
			}
		}
		return len(kids)
	}
	walk(nil, 0)
	if got := th.reloadPost().CommentCount; got != live {
		th.t.Errorf("commentCount %d, but %d live comments found", got, live)
	}
	// The indexes and counters as stored, reply orders and their marks included.
	if err := th.s.CheckThread(context.Background(), th.post.Key()); err != nil {
		th.t.Error(err)
	}
	return seen
}

func ids[T interface{ NodeID() string }](items []T) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.NodeID()
	}
	return out
}

func wantKind(t *testing.T, err error, k store.Kind, what string) {
	t.Helper()
	if !store.IsKind(err, k) {
		t.Errorf("%s: got %v, want kind %d", what, err, k)
	}
}

func TestCommentCreateAndRead(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{})
		top := th.add("alice", nil, "first!")
		reply := th.add("bob", top, "a reply")
		deeper := th.add("alice", reply, "deeper")

		if top.Depth != 0 || reply.Depth != 1 || deeper.Depth != 2 {
			t.Errorf("depths %d %d %d", top.Depth, reply.Depth, deeper.Depth)
		}
		if top.ParentID != "" || reply.ParentID != top.ID || deeper.ParentID != reply.ID {
			t.Errorf("parents %q %q %q", top.ParentID, reply.ParentID, deeper.ParentID)
		}
		if !strings.HasPrefix(top.ID, "comment:"+th.post.Key()+":") || top.PostID != th.post.ID {
			t.Errorf("ids %s %s", top.ID, top.PostID)
		}
		if _, _, err := store.ParseID(deeper.ID); err != nil {
			t.Errorf("the id %s does not parse: %v", deeper.ID, err)
		}
		got := th.get(reply.ID)
		if got == nil || got.Text != "a reply" || got.Author.ID() != "user:bob" || got.ReplyCount != 1 || got.Deleted {
			t.Errorf("loaded reply %+v", got)
		}
		if th.get(top.ID).ReplyCount != 1 {
			t.Errorf("top replyCount %d", th.get(top.ID).ReplyCount)
		}
		if got := th.reloadPost().CommentCount; got != 3 {
			t.Errorf("commentCount %d, want 3", got)
		}
		if n := th.check(); n != 3 {
			t.Errorf("walked %d comments, want 3", n)
		}
		// Missing ones load as nil; malformed ids are invalid.
		if c := th.get("comment:" + th.post.Key() + ":999"); c != nil {
			t.Errorf("a missing comment loaded: %+v", c)
		}
		if c := th.get("comment:424242:1"); c != nil {
			t.Errorf("a comment of a missing post loaded: %+v", c)
		}
		for _, bad := range []string{"comment:1", "comment:x:1", "comment:1:01", "post:1", "comment:1:1234567890123"} {
			_, err := th.s.NewLoader().Comment(ctx, bad)
			wantKind(t, err, store.KindInvalid, "load "+bad)
		}
	})
}

func TestCommentCreateRejects(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{})
		other, err := th.s.CreatePost(ctx, "poster", store.NewPost{Title: "another"})
		if err != nil {
			t.Fatal(err)
		}
		top := th.add("alice", nil, "x")
		gone, err := th.s.CreatePost(ctx, "poster", store.NewPost{Title: "to delete"})
		if err != nil {
			t.Fatal(err)
		}
		if err := th.s.DeletePost(ctx, "poster", gone.ID); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name string
			in   store.NewComment
			kind store.Kind
		}{
			{"empty body", store.NewComment{PostID: th.post.ID}, store.KindInvalid},
			{"long body", store.NewComment{PostID: th.post.ID, Body: strings.Repeat("é", store.MaxCommentBodyRunes+1)}, store.KindInvalid},
			{"bad utf-8", store.NewComment{PostID: th.post.ID, Body: "a\xffb"}, store.KindInvalid},
			{"malformed post id", store.NewComment{PostID: "post:x", Body: "b"}, store.KindInvalid},
			{"a user id for a post", store.NewComment{PostID: "user:alice", Body: "b"}, store.KindInvalid},
			{"malformed parent", store.NewComment{PostID: th.post.ID, ParentID: "comment:zz", Body: "b"}, store.KindInvalid},
			{"parent on another post", store.NewComment{PostID: other.ID, ParentID: top.ID, Body: "b"}, store.KindInvalid},
			{"long idempotency key", store.NewComment{PostID: th.post.ID, Body: "b", IdempotencyKey: strings.Repeat("k", 65)}, store.KindInvalid},
			{"missing post", store.NewComment{PostID: "post:999999", Body: "b"}, store.KindNotFound},
			{"deleted post", store.NewComment{PostID: gone.ID, Body: "b"}, store.KindNotFound},
			{"missing parent", store.NewComment{PostID: th.post.ID, ParentID: "comment:" + th.post.Key() + ":77", Body: "b"}, store.KindNotFound},
		}
		for _, c := range cases {
			_, err := th.s.CreateComment(ctx, "bob", c.in)
			wantKind(t, err, c.kind, c.name)
		}
		// The longest body is fine, counted in characters rather than bytes.
		th.add("bob", nil, strings.Repeat("é", store.MaxCommentBodyRunes))
		if got := th.reloadPost().CommentCount; got != 2 {
			t.Errorf("commentCount %d after rejected writes, want 2", got)
		}
	})
}

func TestCommentDepthLimit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		for _, max := range []int{0, 3} { // 0 selects the default, 100
			th := newThread(t, b, store.Options{MaxCommentDepth: max})
			want := max
			if max == 0 {
				want = store.DefaultMaxCommentDepth
			}
			var c *store.Comment
			for d := 0; d <= want; d++ {
				c = th.add("alice", c, fmt.Sprintf("depth %d", d))
				if c.Depth != d {
					t.Fatalf("depth %d, want %d", c.Depth, d)
				}
			}
			_, err := th.s.CreateComment(context.Background(), "bob", store.NewComment{PostID: th.post.ID, ParentID: c.ID, Body: "too deep"})
			wantKind(t, err, store.KindInvalid, fmt.Sprintf("a reply at depth %d", want+1))
			if err != nil && !strings.Contains(err.Error(), fmt.Sprint(want)) {
				t.Errorf("the message %q does not name the limit", err)
			}
			// The chain reads back level by level, each comment with one reply.
			if n := th.check(); n != want+1 {
				t.Errorf("walked %d comments, want %d", n, want+1)
			}
		}
	})
}

func TestCommentIdempotentCreate(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{})
		in := store.NewComment{PostID: th.post.ID, Body: "once", IdempotencyKey: "k-1"}
		first, err := th.s.CreateComment(ctx, "alice", in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := th.s.CreateComment(ctx, "alice", in)
		if err != nil || again.ID != first.ID {
			t.Fatalf("repeat: %v %v, want %s", again, err, first.ID)
		}
		// The same key by another user is another request.
		other, err := th.s.CreateComment(ctx, "bob", in)
		if err != nil || other.ID == first.ID {
			t.Fatalf("another user's key: %v %v", other, err)
		}
		if got := th.reloadPost().CommentCount; got != 2 {
			t.Errorf("commentCount %d, want 2", got)
		}
		if p := th.page(nil, store.CommentsNew, 10, ""); p.Total != 2 {
			t.Errorf("%d top-level comments, want 2", p.Total)
		}
		// Once the comment is removed, its key no longer names a comment.
		if err := th.s.DeleteComment(ctx, "alice", first.ID); err != nil {
			t.Fatal(err)
		}
		_, err = th.s.CreateComment(ctx, "alice", in)
		wantKind(t, err, store.KindNotFound, "repeat after delete")
	})
}

// TestUnkeyedCommentKeepsNoKey checks that a comment created without a client's idempotency key,
// its script sent twice, is one comment and leaves no idempotency key behind, while a client's key
// is kept (and names the comment).
func TestUnkeyedCommentKeepsNoKey(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{})
		twice := runTwice(b)
		defer twice.Store(false)
		idemKeys := func() []string {
			t.Helper()
			return matchingKeys(t, b.Client, th.prefix+"*:idem:*")
		}
		th.add("alice", nil, "no key")
		if ks := idemKeys(); len(ks) != 0 {
			t.Errorf("a comment without a client's key kept %v", ks)
		}
		in := store.NewComment{PostID: th.post.ID, Body: "keyed", IdempotencyKey: "k1"}
		first, err := th.s.CreateComment(ctx, "alice", in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := th.s.CreateComment(ctx, "alice", in)
		if err != nil {
			t.Fatal(err)
		}
		if again.ID != first.ID {
			t.Errorf("the key's second request made %s, want %s", again.ID, first.ID)
		}
		if ks := idemKeys(); len(ks) != 1 {
			t.Errorf("idempotency keys %v, want the client's one", ks)
		}
		if n := th.reloadPost().CommentCount; n != 2 {
			t.Errorf("commentCount %d, want 2", n)
		}
	})
}

func TestCommentWritesSafeToRepeat(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{})
		twice := runTwice(b)
		defer twice.Store(false)

		top := th.add("alice", nil, "top")      // no client key: the comment's number makes the resend safe
		r1 := th.add("bob", top, "reply one")   //
		r2 := th.add("carol", top, "reply two") //
		leaf := th.add("alice", r1, "leaf")     //
		for _, v := range []struct {
			uid string
			dir int
		}{{"bob", 1}, {"carol", 1}, {"dave", -1}, {"dave", 1}, {"carol", 0}} {
			if _, err := th.s.VoteComment(ctx, uk(v.uid), top.ID, v.dir); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := th.s.EditComment(ctx, "bob", r1.ID, "edited"); err != nil {
			t.Fatal(err)
		}
		if err := th.s.DeleteComment(ctx, "bob", r1.ID); err != nil { // a tombstone: leaf replies
			t.Fatal(err)
		}
		if err := th.s.DeleteComment(ctx, "carol", r2.ID); err != nil { // removed
			t.Fatal(err)
		}
		twice.Store(false)

		got := th.get(top.ID)
		if got.Upvotes != 2 || got.Downvotes != 0 || got.ReplyCount != 1 {
			t.Errorf("top: up %d down %d replies %d, want 2 0 1", got.Upvotes, got.Downvotes, got.ReplyCount)
		}
		if c := th.get(r1.ID); c == nil || !c.Deleted || c.ReplyCount != 1 {
			t.Errorf("r1: %+v, want a tombstone with one reply", c)
		}
		if c := th.get(r2.ID); c != nil {
			t.Errorf("r2 still loads: %+v", c)
		}
		if c := th.get(leaf.ID); c == nil || c.Deleted {
			t.Errorf("leaf: %+v", c)
		}
		if n := th.check(); n != 3 {
			t.Errorf("walked %d comments, want 3", n)
		}
		if got := th.reloadPost().CommentCount; got != 2 {
			t.Errorf("commentCount %d, want 2", got)
		}
	})
}

func TestCommentPagingAcrossInsertsAndDeletes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		// A clock that moves 1 ms per comment keeps NEW and OLD easy to predict; equal times are
		// covered by TestCommentSameMillisecond.
		var ms atomic.Int64
		ms.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
		now := func() time.Time { return time.UnixMilli(ms.Add(1)) }
		th := newThread(t, b, store.Options{Now: now})
		parent := th.add("alice", nil, "parent")
		var made []*store.Comment
		for i := range 10 {
			made = append(made, th.add(fmt.Sprintf("user%d", i), parent, fmt.Sprintf("r%d", i)))
		}
		parent = th.get(parent.ID)

		// OLD: read 3, then a reply arrives and the item at the cursor is deleted, then read on.
		p1 := th.page(parent, store.CommentsOld, 3, "")
		if want := ids(made[:3]); fmt.Sprint(ids(p1.Items)) != fmt.Sprint(want) || !p1.HasNext || p1.HasPrev || p1.Total != 10 {
			t.Fatalf("OLD page 1: %v next %v prev %v total %d", ids(p1.Items), p1.HasNext, p1.HasPrev, p1.Total)
		}
		late := th.add("zed", parent, "late")
		if err := th.s.DeleteComment(ctx, "user2", made[2].ID); err != nil {
			t.Fatal(err)
		}
		if err := th.s.DeleteComment(ctx, "user4", made[4].ID); err != nil {
			t.Fatal(err)
		}
		rest := th.page(parent, store.CommentsOld, 100, p1.EndCursor())
		want := append(append(ids(made[3:4]), ids(made[5:])...), late.ID)
		if fmt.Sprint(ids(rest.Items)) != fmt.Sprint(want) || rest.HasNext || !rest.HasPrev {
			t.Errorf("OLD after the cursor: %v (next %v prev %v), want %v", ids(rest.Items), rest.HasNext, rest.HasPrev, want)
		}

		// NEW: newest first; a new reply lands before the cursor and is not repeated.
		n1 := th.page(parent, store.CommentsNew, 4, "")
		if fmt.Sprint(ids(n1.Items)) != fmt.Sprint([]string{late.ID, made[9].ID, made[8].ID, made[7].ID}) {
			t.Fatalf("NEW page 1: %v", ids(n1.Items))
		}
		th.add("zed", parent, "later still")
		if err := th.s.DeleteComment(ctx, "user7", made[7].ID); err != nil {
			t.Fatal(err)
		}
		var got []string
		after := n1.EndCursor()
		for {
			p := th.page(parent, store.CommentsNew, 2, after)
			got = append(got, ids(p.Items)...)
			if !p.HasNext {
				break
			}
			after = p.EndCursor()
		}
		want = []string{made[6].ID, made[5].ID, made[3].ID, made[1].ID, made[0].ID}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("NEW after the cursor: %v, want %v", got, want)
		}

		// TOP: net votes first, ties newest first; the cursor survives its item's deletion.
		votes := map[int]int{0: 3, 1: 1, 3: 1, 5: 2, 6: -1}
		for i, n := range votes {
			for v := range abs(n) {
				dir := 1
				if n < 0 {
					dir = -1
				}
				if _, err := th.s.VoteComment(ctx, uk(fmt.Sprintf("voter%d", v)), made[i].ID, dir); err != nil {
					t.Fatal(err)
				}
			}
		}
		top := th.all(parent, store.CommentsTop, 100)
		// Live: made 0 (3), 5 (2), 3 (1), 1 (1), late and "later still" (0), 8 and 9 (0), 6 (-1).
		wantTop := []string{made[0].ID, made[5].ID, made[3].ID, made[1].ID}
		if fmt.Sprint(ids(top[:4])) != fmt.Sprint(wantTop) {
			t.Errorf("TOP head %v, want %v", ids(top[:4]), wantTop)
		}
		if last := top[len(top)-1]; last.ID != made[6].ID {
			t.Errorf("TOP last %s, want %s", last.ID, made[6].ID)
		}
		zeros := ids(top[4 : len(top)-1])
		for i := 1; i < len(zeros); i++ {
			if numOf(zeros[i-1]) < numOf(zeros[i]) {
				t.Errorf("TOP ties not newest first: %v", zeros)
			}
		}
		t1 := th.page(parent, store.CommentsTop, 2, "")
		if err := th.s.DeleteComment(ctx, "user5", made[5].ID); err != nil {
			t.Fatal(err)
		}
		t2 := th.page(parent, store.CommentsTop, 2, t1.EndCursor())
		if fmt.Sprint(ids(t2.Items)) != fmt.Sprint([]string{made[3].ID, made[1].ID}) {
			t.Errorf("TOP after a deleted cursor item: %v", ids(t2.Items))
		}

		// A cursor of one list is refused by another.
		l := th.s.NewLoader()
		if _, err := l.Replies(ctx, parent, store.CommentsNew, store.Window{First: 2, After: t1.EndCursor()}, nil); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("a TOP cursor on NEW: %v", err)
		}
		if _, err := l.PostComments(ctx, th.post, store.CommentsOld, store.Window{First: 2, After: p1.EndCursor()}, nil); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("a reply cursor on the top level: %v", err)
		}
		for _, first := range []int{0, 101} {
			if _, err := l.Replies(ctx, parent, store.CommentsNew, store.Window{First: first}, nil); !store.IsKind(err, store.KindInvalid) {
				t.Errorf("first=%d: %v", first, err)
			}
		}
		if _, err := l.Replies(ctx, parent, store.CommentsNew, store.Window{First: 2, After: "garbage"}, nil); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("a garbage cursor: %v", err)
		}
		th.check()
	})
}

func TestCommentSameMillisecond(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		th := newThread(t, b, store.Options{Now: func() time.Time { return fixed }})
		var made []string
		for i := range 12 { // past 9 → 10, where unpadded numbers would sort wrongly
			made = append(made, th.add("alice", nil, fmt.Sprint(i)).ID)
		}
		old := ids(th.all(nil, store.CommentsOld, 5))
		if fmt.Sprint(old) != fmt.Sprint(made) {
			t.Errorf("OLD %v, want %v", old, made)
		}
		newest := ids(th.all(nil, store.CommentsNew, 5))
		for i := range made {
			if newest[i] != made[len(made)-1-i] {
				t.Fatalf("NEW %v, want the reverse of %v", newest, made)
			}
		}
		top := ids(th.all(nil, store.CommentsTop, 5))
		if fmt.Sprint(top) != fmt.Sprint(newest) {
			t.Errorf("TOP with no votes %v, want newest first %v", top, newest)
		}
	})
}

func TestCommentTombstonesAndRemoval(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{})
		a := th.add("alice", nil, "a")
		b1 := th.add("bob", a, "b1")
		c1 := th.add("carol", b1, "c1")
		b2 := th.add("bob", a, "b2")

		// b1 has a reply: it becomes a tombstone and keeps it.
		if err := th.s.DeleteComment(ctx, "bob", b1.ID); err != nil {
			t.Fatal(err)
		}
		got := th.get(b1.ID)
		if got == nil || !got.Deleted || got.Author != "" || got.Text != "" || got.ReplyCount != 1 {
			t.Fatalf("b1 after delete: %+v", got)
		}
		if got := th.reloadPost().CommentCount; got != 3 {
			t.Errorf("commentCount %d, want 3", got)
		}
		if th.get(a.ID).ReplyCount != 2 {
			t.Errorf("a's replyCount %d, want 2 (tombstones with replies count)", th.get(a.ID).ReplyCount)
		}
		// Deleting again is fine and changes nothing; a tombstone can be neither edited nor voted.
		if err := th.s.DeleteComment(ctx, "bob", b1.ID); err != nil {
			t.Errorf("repeat delete: %v", err)
		}
		_, err := th.s.EditComment(ctx, "bob", b1.ID, "back")
		wantKind(t, err, store.KindNotFound, "edit a tombstone")
		_, err = th.s.VoteComment(ctx, "dave", b1.ID, 1)
		wantKind(t, err, store.KindNotFound, "vote on a tombstone")
		// A tombstone can still be replied to.
		c2 := th.add("dave", b1, "c2")
		if th.get(b1.ID).ReplyCount != 2 {
			t.Errorf("b1's replyCount %d, want 2", th.get(b1.ID).ReplyCount)
		}
		th.check()

		// Removing c1 leaves b1 with c2; removing c2 then removes b1 too.
		if err := th.s.DeleteComment(ctx, "carol", c1.ID); err != nil {
			t.Fatal(err)
		}
		if th.get(c1.ID) != nil || th.get(b1.ID) == nil {
			t.Fatalf("after c1: c1 %v b1 %v", th.get(c1.ID), th.get(b1.ID))
		}
		if err := th.s.DeleteComment(ctx, "dave", c2.ID); err != nil {
			t.Fatal(err)
		}
		if th.get(c2.ID) != nil || th.get(b1.ID) != nil {
			t.Fatalf("after c2: c2 %v b1 %v", th.get(c2.ID), th.get(b1.ID))
		}
		if got := th.get(a.ID); got.ReplyCount != 1 || got.Deleted {
			t.Errorf("a: %+v, want live with 1 reply", got)
		}
		// A cascade climbs as far as the tombstones go: delete a (tombstone over b2), then b2.
		if err := th.s.DeleteComment(ctx, "alice", a.ID); err != nil {
			t.Fatal(err)
		}
		if !th.get(a.ID).Deleted {
			t.Fatal("a is not a tombstone")
		}
		if err := th.s.DeleteComment(ctx, "bob", b2.ID); err != nil {
			t.Fatal(err)
		}
		if th.get(a.ID) != nil {
			t.Errorf("a outlived its last reply")
		}
		if n := th.check(); n != 0 {
			t.Errorf("%d comments left", n)
		}
		if got := th.reloadPost().CommentCount; got != 0 {
			t.Errorf("commentCount %d, want 0", got)
		}
		// Removed comments: deleting again succeeds for the author and is NOT_FOUND for others.
		if err := th.s.DeleteComment(ctx, "bob", b2.ID); err != nil {
			t.Errorf("repeat delete of a removed comment: %v", err)
		}
		wantKind(t, th.s.DeleteComment(ctx, "alice", b2.ID), store.KindNotFound, "delete another's removed comment")
		wantKind(t, th.s.DeleteComment(ctx, "alice", "comment:"+th.post.Key()+":999"), store.KindNotFound, "delete a missing comment")
		_, err = th.s.CreateComment(ctx, "eve", store.NewComment{PostID: th.post.ID, ParentID: a.ID, Body: "hello?"})
		wantKind(t, err, store.KindNotFound, "reply to a removed comment")
	})
}

func TestCommentPermissionsAndEdit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		var ms atomic.Int64
		ms.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
		th := newThread(t, b, store.Options{Now: func() time.Time { return time.UnixMilli(ms.Load()) }})
		c := th.add("alice", nil, "original")
		if c.EditedAt != nil {
			t.Errorf("a new comment has editedAt %v", c.EditedAt)
		}
		_, err := th.s.EditComment(ctx, "bob", c.ID, "hijacked")
		wantKind(t, err, store.KindForbidden, "edit by another")
		wantKind(t, th.s.DeleteComment(ctx, "bob", c.ID), store.KindForbidden, "delete by another")
		wantKind(t, th.s.DeleteComment(ctx, "poster", c.ID), store.KindForbidden, "delete by the post's author")
		_, err = th.s.EditComment(ctx, "alice", c.ID, "")
		wantKind(t, err, store.KindInvalid, "edit to empty")
		_, err = th.s.EditComment(ctx, "alice", "comment:"+th.post.Key()+":55", "x")
		wantKind(t, err, store.KindNotFound, "edit a missing comment")

		ms.Add(60_000)
		e, err := th.s.EditComment(ctx, "alice", c.ID, "better")
		if err != nil {
			t.Fatal(err)
		}
		if e.Text != "better" || e.EditedAt == nil || !e.EditedAt.Equal(time.UnixMilli(ms.Load()).UTC()) || !e.CreatedAt.Equal(c.CreatedAt) {
			t.Errorf("edited: %+v", e)
		}
		// The same text again changes nothing, editedAt included.
		ms.Add(60_000)
		e2, err := th.s.EditComment(ctx, "alice", c.ID, "better")
		if err != nil || !e2.EditedAt.Equal(*e.EditedAt) {
			t.Errorf("a no-op edit: %+v %v", e2, err)
		}
		if got := th.get(c.ID); got.Text != "better" || got.EditedAt == nil {
			t.Errorf("reloaded: %+v", got)
		}
	})
}

func TestCommentVotes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		var ms atomic.Int64
		start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		ms.Store(start.UnixMilli())
		th := newThread(t, b, store.Options{Now: func() time.Time { return time.UnixMilli(ms.Load()) }})
		c := th.add("alice", nil, "vote on me")
		steps := []struct {
			uid        string
			dir        int
			up, down   int
			viewerVote int
		}{
			{"bob", 1, 1, 0, 1},
			{"bob", 1, 1, 0, 1}, // repeat: nothing changes
			{"carol", -1, 1, 1, -1},
			{"bob", -1, 0, 2, -1}, // switch: both counters move
			{"carol", 0, 0, 1, 0}, // withdraw
			{"dave", 1, 1, 1, 1},
		}
		for i, st := range steps {
			got, err := th.s.VoteComment(ctx, uk(st.uid), c.ID, st.dir)
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if got.Upvotes != st.up || got.Downvotes != st.down {
				t.Errorf("step %d: %d/%d, want %d/%d", i, got.Upvotes, got.Downvotes, st.up, st.down)
			}
			v, err := th.s.NewLoader().CommentVote(ctx, got, uk(st.uid))
			if err != nil || v != st.viewerVote {
				t.Errorf("step %d: viewer vote %d %v, want %d", i, v, err, st.viewerVote)
			}
		}
		// The author counts as having voted up and cannot vote.
		_, err := th.s.VoteComment(ctx, "alice", c.ID, -1)
		wantKind(t, err, store.KindForbidden, "the author's vote")
		if v, _ := th.s.NewLoader().CommentVote(ctx, c, "alice"); v != 1 {
			t.Errorf("the author's viewer vote %d, want 1", v)
		}
		if v, _ := th.s.NewLoader().CommentVote(ctx, c, ""); v != 0 {
			t.Errorf("an anonymous viewer vote %d, want 0", v)
		}
		for _, dir := range []int{2, -2} {
			_, err := th.s.VoteComment(ctx, "bob", c.ID, dir)
			wantKind(t, err, store.KindInvalid, fmt.Sprint("direction ", dir))
		}
		_, err = th.s.VoteComment(ctx, "bob", "comment:"+th.post.Key()+":99", 1)
		wantKind(t, err, store.KindNotFound, "vote on a missing comment")

		// The window runs from the comment's creation, not the post's: a comment written on day
		// 6 takes votes on day 8, after the post's window has closed, and comments can still be
		// written then.
		ms.Store(start.Add(6 * 24 * time.Hour).UnixMilli())
		late := th.add("alice", nil, "day 6")
		ms.Store(start.Add(8 * 24 * time.Hour).UnixMilli())
		if _, err := th.s.VotePost(ctx, "bob", th.post.ID, 1); !store.IsKind(err, store.KindVotingClosed) {
			t.Fatalf("the post's window should be closed: %v", err)
		}
		th.add("bob", late, "day 8")
		if _, err := th.s.VoteComment(ctx, "bob", late.ID, 1); err != nil {
			t.Errorf("vote on a 2-day-old comment: %v", err)
		}
		_, err = th.s.VoteComment(ctx, "eve", c.ID, 1)
		wantKind(t, err, store.KindVotingClosed, "vote on an 8-day-old comment")
		if got := th.get(c.ID); got.Upvotes != 1 || got.Downvotes != 1 {
			t.Errorf("closed vote moved counters: %+v", got)
		}
	})
}

func TestCommentConcurrentRepliesExact(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{})
		parent := th.add("alice", nil, "popular")
		const n = 60
		var wg sync.WaitGroup
		errs := make(chan error, n+n/2)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := th.s.CreateComment(ctx, uk(fmt.Sprintf("u%d", i)), store.NewComment{PostID: th.post.ID, ParentID: parent.ID, Body: "me too"})
				errs <- err
			}()
		}
		// Votes race with the replies too.
		for i := range n / 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := th.s.VoteComment(ctx, uk(fmt.Sprintf("v%d", i)), parent.ID, 1)
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		got := th.get(parent.ID)
		if got.ReplyCount != n || got.Upvotes != n/2 {
			t.Errorf("replyCount %d upvotes %d, want %d %d", got.ReplyCount, got.Upvotes, n, n/2)
		}
		if p := th.page(got, store.CommentsNew, 1, ""); p.Total != n {
			t.Errorf("reply index holds %d, want %d", p.Total, n)
		}
		if c := th.reloadPost().CommentCount; c != n+1 {
			t.Errorf("commentCount %d, want %d", c, n+1)
		}
		seen := map[string]bool{}
		for _, c := range th.all(got, store.CommentsOld, 7) {
			if seen[c.ID] {
				t.Errorf("%s twice", c.ID)
			}
			seen[c.ID] = true
		}
		if len(seen) != n {
			t.Errorf("paged %d distinct replies, want %d", len(seen), n)
		}
	})
}

func TestCommentConcurrentDeletesAndReplies(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{})
		users := []string{"ann", "ben", "cat", "dan"}
		var mu sync.Mutex
		var pool []*store.Comment // every comment made, by whoever
		for i := range 8 {
			c := th.add(users[i%4], nil, "root")
			pool = append(pool, c)
			for d := range 3 {
				c = th.add(users[(i+d+1)%4], c, "chain")
				pool = append(pool, c)
			}
		}
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for range 40 {
					mu.Lock()
					target := pool[rng.IntN(len(pool))]
					mu.Unlock()
					if rng.IntN(2) == 0 {
						c, err := th.s.CreateComment(ctx, uk(users[w%4]), store.NewComment{PostID: th.post.ID, ParentID: target.ID, Body: "re"})
						if err == nil {
							mu.Lock()
							pool = append(pool, c)
							mu.Unlock()
						} else if !store.IsKind(err, store.KindNotFound) {
							t.Error(err)
						}
						continue
					}
					uid := strings.TrimPrefix(target.Author.ID(), "user:")
					if err := th.s.DeleteComment(ctx, uk(uid), target.ID); err != nil && !store.IsKind(err, store.KindNotFound) {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		th.check()

		// Now delete everything that is left, concurrently, in random order: nothing may remain.
		rand.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		work := make(chan *store.Comment)
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := range work {
					uid := strings.TrimPrefix(c.Author.ID(), "user:")
					if err := th.s.DeleteComment(ctx, uk(uid), c.ID); err != nil && !store.IsKind(err, store.KindNotFound) {
						t.Error(err)
					}
				}
			}()
		}
		for _, c := range pool {
			work <- c
		}
		close(work)
		wg.Wait()
		if n := th.check(); n != 0 {
			t.Errorf("%d comments left after deleting them all", n)
		}
		if p := th.page(nil, store.CommentsNew, 1, ""); p.Total != 0 {
			t.Errorf("%d top-level entries left", p.Total)
		}
		th.assertNoPermanentThreadKeys("after deleting every comment")
	})
}

// assertNoPermanentThreadKeys fails unless every remaining key of the post's thread expires by
// itself (removal markers and idempotency keys do; comments, indexes and votes must be gone).
func (th *thread) assertNoPermanentThreadKeys(when string) {
	th.t.Helper()
	ctx := context.Background()
	pattern := th.prefix + "{p:" + th.post.Key() + "}:*"
	iter := th.b.Client.Scan(ctx, 0, pattern, 1000).Iterator()
	n := 0
	for iter.Next(ctx) {
		key := iter.Val()
		if strings.HasSuffix(key, "}:votes") {
			continue // the post's own votes
		}
		if strings.HasSuffix(key, "}:rev") {
			continue // the revision counter stays, so that revisions never go back (revisions.go)
		}
		ttl, err := th.b.Client.PTTL(ctx, key).Result()
		if err != nil {
			th.t.Fatal(err)
		}
		if ttl < 0 {
			n++
			if n <= 5 {
				th.t.Errorf("%s: %s has no TTL", when, key)
			}
		}
	}
	if err := iter.Err(); err != nil {
		th.t.Fatal(err)
	}
	if n > 5 {
		th.t.Errorf("%s: %d keys without TTL in all", when, n)
	}
}

func TestCommentThreadGoesWithPost(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{})
		// More comments than one sweep step drops, with votes and replies at several levels.
		var some []*store.Comment
		for i := range 30 {
			c := th.add("alice", nil, "top")
			for j := range 8 {
				r := th.add("bob", c, "reply")
				if j == 0 {
					if _, err := th.s.VoteComment(ctx, "carol", r.ID, 1); err != nil {
						t.Fatal(err)
					}
					th.add("carol", r, "deeper")
				}
			}
			if i%10 == 0 {
				some = append(some, c)
			}
		}
		if n := th.check(); n != 30*10 {
			t.Fatalf("thread of %d, want 300", n)
		}
		if err := th.s.DeletePost(ctx, "poster", th.post.ID); err != nil {
			t.Fatal(err)
		}
		for _, c := range some {
			if got := th.get(c.ID); got != nil {
				t.Errorf("%s loads after its post was deleted", c.ID)
			}
		}
		_, err := th.s.CreateComment(ctx, "bob", store.NewComment{PostID: th.post.ID, ParentID: some[0].ID, Body: "late"})
		wantKind(t, err, store.KindNotFound, "reply on a deleted post")
		th.assertNoPermanentThreadKeys("after deleting the post")
	})
}

// isSweep recognizes a run of sweep_thread: KEYS are the post, the thread's ids set and bodies, seven
// keys per comment and the revision counter, and ARGV the comments' 12-digit numbers.
func isSweep(args []any) bool {
	if len(args) < 5 || (args[0] != "evalsha" && args[0] != "eval") {
		return false
	}
	n, err := strconv.Atoi(fmt.Sprint(args[2]))
	if err != nil || n < 4 || (n-4)%7 != 0 || len(args) <= 3+n || !strings.HasSuffix(fmt.Sprint(args[4]), ":c:ids") {
		return false
	}
	first := fmt.Sprint(args[3+n])
	return len(first) == 12 && strings.Trim(first, "0123456789") == ""
}

func TestCommentRebuildFinishesInterruptedThreadDrop(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{})
		live := newThreadOn(t, th, "a live post")
		c := th.add("alice", nil, "x")
		th.add("bob", c, "y")
		keep := live.add("alice", nil, "stays")

		// The script runs that drop a deleted post's comments fail, as if the process stopped.
		var failing atomic.Bool
		b.Client.AddHook(storetest.Drop(&failing, errors.New("injected: process stopped"), func(c rdb.Cmder) bool { return isSweep(c.Args()) }))
		failing.Store(true)
		if err := th.s.DeletePost(ctx, "poster", th.post.ID); err == nil {
			t.Fatal("the injected failure did not surface")
		}
		failing.Store(false)
		if th.get(c.ID) != nil {
			t.Error("a comment of a deleted post loads while its keys remain")
		}
		if _, err := th.s.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		th.assertNoPermanentThreadKeys("after Rebuild")
		if got := live.get(keep.ID); got == nil {
			t.Error("Rebuild dropped a live post's comment")
		}
	})
}

// newThreadOn makes another post in th's store.
func newThreadOn(t *testing.T, th *thread, title string) *thread {
	t.Helper()
	p, err := th.s.CreatePost(context.Background(), "poster", store.NewPost{Title: title})
	if err != nil {
		t.Fatal(err)
	}
	return &thread{t: t, b: th.b, s: th.s, prefix: th.prefix, post: p}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// numOf returns the comment number of a comment id.
func numOf(id string) int {
	var pid, n int
	_, _ = fmt.Sscanf(id, "comment:%d:%d", &pid, &n)
	return n
}
