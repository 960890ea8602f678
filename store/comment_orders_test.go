package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// listed is a list of replies as pages show it: each reply's id and cursor, in list order.
type listed struct {
	ids, cursors []string
}

// without returns l without the reply id.
func (l listed) without(id string) listed {
	var out listed
	for i, x := range l.ids {
		if x != id {
			out.ids, out.cursors = append(out.ids, x), append(out.cursors, l.cursors[i])
		}
	}
	return out
}

// after returns the part of l after the reply whose cursor is cur.
func (l listed) after(cur string) []string {
	i := slices.Index(l.cursors, cur)
	return l.ids[i+1:]
}

var allCommentSorts = []store.CommentSort{store.CommentsNew, store.CommentsOld, store.CommentsTop,
	store.CommentsBest, store.CommentsControversial}

// listAll pages through every reply of parent (nil for the post's comments) in sort, n at a time,
// forwards and backwards, and returns the list, failing the test when the two directions, or
// the totals, disagree.
func (th *thread) listAll(parent *store.Comment, sort store.CommentSort, n int) listed {
	th.t.Helper()
	ctx := context.Background()
	load := func(w store.Window) *store.Page[*store.Comment] {
		th.t.Helper()
		l := th.s.NewLoader()
		var p *store.Page[*store.Comment]
		var err error
		if parent == nil {
			p, err = l.PostComments(ctx, th.reloadPost(), sort, w, nil)
		} else {
			p, err = l.Replies(ctx, th.get(parent.ID), sort, w, nil)
		}
		if err != nil {
			th.t.Fatalf("sort %d page %+v: %v", sort, w, err)
		}
		return p
	}
	var fwd listed
	total := -1
	for w := (store.Window{First: n}); ; {
		p := load(w)
		if total >= 0 && p.Total != total {
			th.t.Errorf("sort %d: total %d, then %d", sort, total, p.Total)
		}
		total = p.Total
		for i, c := range p.Items {
			fwd.ids, fwd.cursors = append(fwd.ids, c.ID), append(fwd.cursors, p.Cursors[i])
		}
		if !p.HasNext {
			break
		}
		w.After = p.EndCursor()
	}
	if total != len(fwd.ids) {
		th.t.Errorf("sort %d: total %d, %d listed", sort, total, len(fwd.ids))
	}
	var back listed
	for w := (store.Window{Last: n}); ; {
		p := load(w)
		var part listed
		for i, c := range p.Items {
			part.ids, part.cursors = append(part.ids, c.ID), append(part.cursors, p.Cursors[i])
		}
		back.ids, back.cursors = append(part.ids, back.ids...), append(part.cursors, back.cursors...)
		if !p.HasPrev {
			break
		}
		w.Before = p.StartCursor()
	}
	if !slices.Equal(fwd.ids, back.ids) || !slices.Equal(fwd.cursors, back.cursors) {
		th.t.Errorf("sort %d: forwards %v, backwards %v", sort, fwd.ids, back.ids)
	}
	return fwd
}

// listEvery lists the replies of parent in every sort.
func (th *thread) listEvery(parent *store.Comment) map[store.CommentSort]listed {
	th.t.Helper()
	out := map[store.CommentSort]listed{}
	for _, sort := range allCommentSorts {
		out[sort] = th.listAll(parent, sort, 4)
	}
	return out
}

// voted adds a reply to parent with the votes of vc (voters voter0...), as voteFixture does.
func (th *thread) voted(parent *store.Comment, vc votedComment) *store.Comment {
	th.t.Helper()
	c := th.add("author", parent, vc.name)
	for v := range vc.up + vc.down {
		dir := 1
		if v >= vc.up {
			dir = -1
		}
		if _, err := th.s.VoteComment(context.Background(), uk(fmt.Sprintf("voter%d", v)), c.ID, dir); err != nil {
			th.t.Fatal(err)
		}
	}
	return c
}

// keepsOrders reports whether the reply orders of parent exist besides its time order.
func (th *thread) keepsOrders(parent *store.Comment) bool {
	th.t.Helper()
	num := "0"
	if parent != nil {
		num = commentNum(parent.ID)
	}
	// Under its name of this layout, or of layout 5 in a keyspace not yet migrated.
	pid := th.post.Key()
	n, err := th.b.Client.Exists(context.Background(), th.s.ThreadKeyForTest(pid, num, ":rb"), th.s.PaddedThreadKeyForTest(pid, num, ":rb")).Result()
	if err != nil {
		th.t.Fatal(err)
	}
	return n >= 1
}

// sameLists checks that two listings of the same replies agree, sort by sort, ids and cursors.
func sameLists(t *testing.T, what string, got, want map[store.CommentSort]listed) {
	t.Helper()
	for _, sort := range allCommentSorts {
		if !slices.Equal(got[sort].ids, want[sort].ids) || !slices.Equal(got[sort].cursors, want[sort].cursors) {
			t.Errorf("%s, sort %d:\n got %v\nwant %v", what, sort, got[sort].ids, want[sort].ids)
		}
	}
}

// withoutAll returns every list of ls without the reply id.
func withoutAll(ls map[store.CommentSort]listed, id string) map[store.CommentSort]listed {
	out := map[store.CommentSort]listed{}
	for s, l := range ls {
		out[s] = l.without(id)
	}
	return out
}

// TestReplyOrdersAcrossTheThreshold holds the reader's ranking of a parent below ReplyOrdersAt
// replies to the sorted sets of one at or past it: the same orders and cursors in every sort, for
// replies with the fixture's votes (ties included), across the reply that builds the sets, a
// deletion that brings the parent back below, a removal and a restore, and pages whose cursor
// was read before the parent crossed.
func TestReplyOrdersAcrossTheThreshold(t *testing.T) {
	for _, top := range []bool{true, false} {
		t.Run(fmt.Sprintf("top=%v", top), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				th := newThread(t, b, store.Options{WriteLimit: -1})
				var parent *store.Comment
				if !top {
					parent = th.add("author", nil, "parent")
				}
				var replies []*store.Comment
				for i := range store.ReplyOrdersAt - 1 {
					vc := votedComments[i%len(votedComments)]
					vc.name = fmt.Sprintf("%s%d", vc.name, i)
					replies = append(replies, th.voted(parent, vc))
				}
				if th.keepsOrders(parent) {
					t.Fatalf("%d replies: the parent keeps its orders", store.ReplyOrdersAt-1)
				}
				small := th.listEvery(parent)
				if got := len(small[store.CommentsBest].ids); got != store.ReplyOrdersAt-1 {
					t.Fatalf("BEST lists %d replies", got)
				}
				// A first page whose cursor outlives the crossing.
				firsts := map[store.CommentSort]string{}
				for _, sort := range allCommentSorts {
					firsts[sort] = small[sort].cursors[4]
				}

				// The reply that builds the orders.
				last := th.voted(parent, votedComment{name: "last", up: 2, down: 1})
				if !th.keepsOrders(parent) {
					t.Fatalf("%d replies: the parent keeps no orders", store.ReplyOrdersAt)
				}
				th.check()
				big := th.listEvery(parent)
				sameLists(t, "past the threshold, without the last reply", withoutAll(big, last.ID), small)
				fresh := parent
				if parent != nil {
					fresh = th.get(parent.ID) // with its reply count
				}
				for _, sort := range allCommentSorts {
					p := th.page(fresh, sort, 100, firsts[sort])
					if got, want := ids(p.Items), big[sort].after(firsts[sort]); !slices.Equal(got, want) {
						t.Errorf("sort %d after a cursor read below the threshold: %v, want %v", sort, got, want)
					}
				}

				// Votes move a reply in the sets; the reader ranks the same once the parent is
				// below the threshold again (a deletion), keeping its orders.
				if _, err := th.s.VoteComment(ctx, uk("voter9"), replies[0].ID, 1); err != nil {
					t.Fatal(err)
				}
				if _, err := th.s.VoteComment(ctx, uk("voter9"), replies[5].ID, -1); err != nil {
					t.Fatal(err)
				}
				big = th.listEvery(parent)
				if err := th.s.DeleteComment(ctx, "author", last.ID); err != nil {
					t.Fatal(err)
				}
				if !th.keepsOrders(parent) {
					t.Fatal("below the threshold again: the parent dropped its orders")
				}
				th.check()
				sameLists(t, "back below the threshold", th.listEvery(parent), withoutAll(big, last.ID))

				// A removal and a restore, on a parent that keeps its orders.
				sess, err := th.s.SignUp(ctx, "root", "password1")
				if err != nil {
					t.Fatal(err)
				}
				if err := th.s.GrantAdmin(ctx, "root"); err != nil {
					t.Fatal(err)
				}
				root := sess.User.Key()
				before := th.listEvery(parent)
				if _, err := th.s.RemoveComment(ctx, root, replies[3].ID, "spam"); err != nil {
					t.Fatal(err)
				}
				th.check()
				sameLists(t, "after a removal", th.listEvery(parent), withoutAll(before, replies[3].ID))
				if _, err := th.s.RestoreComment(ctx, root, replies[3].ID); err != nil {
					t.Fatal(err)
				}
				th.check()
				sameLists(t, "after a restore", th.listEvery(parent), before)
			})
		})
	}
}

// TestRestoreBuildsReplyOrders: a restore that brings a parent that keeps no orders to
// ReplyOrdersAt replies builds them, as the reply that does so would.
func TestRestoreBuildsReplyOrders(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{WriteLimit: -1})
		parent := th.add("author", nil, "parent")
		var replies []*store.Comment
		for i := range store.ReplyOrdersAt - 1 {
			vc := votedComments[i%len(votedComments)]
			vc.name = fmt.Sprintf("%s%d", vc.name, i)
			replies = append(replies, th.voted(parent, vc))
		}
		sess, err := th.s.SignUp(ctx, "root", "password1")
		if err != nil {
			t.Fatal(err)
		}
		if err := th.s.GrantAdmin(ctx, "root"); err != nil {
			t.Fatal(err)
		}
		root := sess.User.Key()
		if _, err := th.s.RemoveComment(ctx, root, replies[7].ID, "spam"); err != nil {
			t.Fatal(err)
		}
		th.voted(parent, votedComment{name: "extra", up: 1, down: 3})
		if th.keepsOrders(parent) {
			t.Fatal("the parent keeps its orders below the threshold")
		}
		small := th.listEvery(parent)
		if _, err := th.s.RestoreComment(ctx, root, replies[7].ID); err != nil {
			t.Fatal(err)
		}
		if !th.keepsOrders(parent) {
			t.Fatal("the restore that brought the parent to the threshold built no orders")
		}
		th.check()
		sameLists(t, "after the restore, without the restored reply", withoutAll(th.listEvery(parent), replies[7].ID), small)
	})
}

// TestWalkRanksFewReplies: a thread page's walk reads the replies of parents below the threshold
// in the pipeline of each level, ranks them, and keeps the pages its resolvers then read: the
// same pages as a fresh read of each list, for a parent below the threshold and one past it.
func TestWalkRanksFewReplies(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{WriteLimit: -1})
		var tops []*store.Comment
		for i := range store.ReplyOrdersAt + 2 { // the top level keeps its orders
			tops = append(tops, th.voted(nil, votedComments[i%len(votedComments)]))
		}
		for i, vc := range votedComments { // the replies of one are ranked by the reader
			vc.name = fmt.Sprintf("r%d", i)
			th.voted(tops[6], vc)
		}
		post := th.reloadPost()
		trips := map[store.CommentSort]int64{}
		for _, sort := range allCommentSorts {
			rw := store.Window{First: 4}
			needs := &store.Needs{Lists: []store.List{{Kind: store.ListComments, Sort: sort, Window: rw}}}
			l := th.s.NewLoader()
			cctx, count := rdb.WithRedisCount(ctx)
			page, err := l.PostComments(cctx, post, sort, store.Window{First: 40}, func() *store.Needs { return needs })
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range page.Items {
				got, err := l.Replies(cctx, c, sort, rw, nil)
				if err != nil {
					t.Fatal(err)
				}
				want, err := th.s.NewLoader().Replies(ctx, th.get(c.ID), sort, rw, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ids(got.Items), ids(want.Items)) || !slices.Equal(got.Cursors, want.Cursors) ||
					got.HasNext != want.HasNext || got.Total != want.Total {
					t.Errorf("sort %d, replies of %s: walked %v, read %v", sort, c.ID, ids(got.Items), ids(want.Items))
				}
			}
			// The walk kept every page of replies: the resolvers read nothing more.
			trips[sort] = count.RoundTrips.Load()
			if trips[sort] != trips[store.CommentsNew] {
				t.Errorf("sort %d: %d round trips, NEW %d", sort, trips[sort], trips[store.CommentsNew])
			}
		}
	})
}
