package store_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// votedComment is a comment of the BEST and CONTROVERSIAL fixture: its votes, and its scores
// computed by hand (Python, from the textbook form of the Wilson bound with z = 1.96).
type votedComment struct {
	name     string
	up, down int
	best     float64
	con      float64
}

// votedComments are written in this order (each newer than the one before).
var votedComments = []votedComment{
	{"a", 0, 0, 0, 0},
	{"b", 1, 0, 0.20654329147389294, 0},
	{"c", 3, 1, 0.30063605244263664, 1.5874010519681994}, // 4^(1/3)
	{"d", 2, 2, 0.15003570882017145, 4},
	{"e", 5, 5, 0.2365895936154873, 10},
	{"f", 0, 3, 0, 0},
	{"g", 10, 2, 0.5519636426153274, 1.6437518295172258}, // 12^(1/5)
	{"h", 1, 0, 0.20654329147389294, 0},                  // ties b: newer, so first
	{"i", 6, 2, 0.40926987910258916, 2},
	{"j", 2, 6, 0.07147768885802765, 2}, // ties i in CONTROVERSIAL: newer, so first
}

// The orders the hand-computed scores give, ties newest first.
var (
	wantBest          = []string{"g", "i", "c", "e", "h", "b", "d", "j", "f", "a"}
	wantControversial = []string{"e", "d", "j", "i", "g", "c", "h", "f", "b", "a"}
)

// voteFixture writes votedComments under parent (nil for top level) and returns them by name.
// Some votes are switched or withdrawn on the way, so the scores must follow the counts, not the
// history.
func (th *thread) voteFixture(parent *store.Comment) map[string]*store.Comment {
	th.t.Helper()
	ctx := context.Background()
	out := map[string]*store.Comment{}
	for _, vc := range votedComments {
		c := th.add("author", parent, vc.name)
		vote := func(voter, dir int) {
			th.t.Helper()
			if _, err := th.s.VoteComment(ctx, uk(fmt.Sprintf("voter%d", voter)), c.ID, dir); err != nil {
				th.t.Fatalf("vote on %s: %v", vc.name, err)
			}
		}
		// One extra voter first votes up, then down, then withdraws.
		extra := vc.up + vc.down
		vote(extra, 1)
		vote(extra, -1)
		for v := range vc.up + vc.down {
			vote(v, 1)
		}
		for v := vc.up; v < vc.up+vc.down; v++ {
			vote(v, -1) // switched from up
		}
		vote(extra, 0)
		vote(extra, 0) // a repeat changes nothing
		out[vc.name] = c
	}
	return out
}

// names maps comments back to their fixture names (their bodies), leaving out the padding
// (padTop).
func names(cs []*store.Comment) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		if c.Text != padText {
			out = append(out, c.Text)
		}
	}
	return out
}

// padText is the body of the comments padTop adds.
const padText = "pad"

// padding is how many comments padTop adds.
var padding = store.ReplyOrdersAt - len(votedComments)

// padTop adds top-level comments without votes to the top-level fixture top, up to
// ReplyOrdersAt, so that the post keeps its reply orders. They tie a and f (no votes), newer
// than both; names leaves them out, which keeps the fixture's orders.
func (th *thread) padTop(top map[string]*store.Comment) {
	th.t.Helper()
	for range store.ReplyOrdersAt - len(top) {
		th.add("author", nil, padText)
	}
}

// allBackward pages through every reply of parent from the end, last n at a time, and returns
// them in list order.
func (th *thread) allBackward(parent *store.Comment, sort store.CommentSort, n int) []*store.Comment {
	th.t.Helper()
	var out []*store.Comment
	before := ""
	for {
		w := store.Window{Last: n, Before: before}
		var p *store.Page[*store.Comment]
		var err error
		if parent == nil {
			p, err = th.s.NewLoader().PostComments(context.Background(), th.reloadPost(), sort, w, nil)
		} else {
			p, err = th.s.NewLoader().Replies(context.Background(), th.get(parent.ID), sort, w, nil)
		}
		if err != nil {
			th.t.Fatalf("page: %v", err)
		}
		out = append(slices.Clone(p.Items), out...)
		if !p.HasPrev {
			return out
		}
		before = p.StartCursor()
	}
}

// checkVoteOrders checks that the replies of parent page in the hand-computed BEST and
// CONTROVERSIAL orders, forwards and backwards, and that the stored scores are the hand-computed
// ones.
func (th *thread) checkVoteOrders(b storetest.Backend, parent *store.Comment, byName map[string]*store.Comment) {
	th.t.Helper()
	ctx := context.Background()
	if parent != nil {
		parent = th.get(parent.ID) // with its reply count now
	}
	for _, tc := range []struct {
		sort   store.CommentSort
		suffix string
		want   []string
		score  func(vc votedComment) float64
	}{
		{store.CommentsBest, ":rb", wantBest, func(vc votedComment) float64 { return vc.best }},
		{store.CommentsControversial, ":rc", wantControversial, func(vc votedComment) float64 { return vc.con }},
	} {
		if got := names(th.all(parent, tc.sort, 3)); !slices.Equal(got, tc.want) {
			th.t.Errorf("sort %d forwards: %v, want %v", tc.sort, got, tc.want)
		}
		if got := names(th.allBackward(parent, tc.sort, 3)); !slices.Equal(got, tc.want) {
			th.t.Errorf("sort %d backwards: %v, want %v", tc.sort, got, tc.want)
		}
		num := "0" // the post's top-level orders
		if parent != nil {
			num = commentNum(parent.ID)
		}
		key := th.s.ThreadKeyForTest(th.post.Key(), num, tc.suffix)
		n, err := b.Client.ZCard(ctx, key).Result()
		if err != nil {
			th.t.Fatal(err)
		}
		if n == 0 {
			// A parent below replyOrdersAt replies keeps no such order: the reader ranks its
			// replies (CheckThread checks which parents keep them).
			continue
		}
		for _, vc := range votedComments {
			got, err := b.Client.ZScore(ctx, key, commentNum(byName[vc.name].ID)).Result()
			if err != nil {
				th.t.Fatalf("score of %s in %s: %v", vc.name, key, err)
			}
			if want := tc.score(vc); math.Abs(got-want) > 1e-12*max(1, want) {
				th.t.Errorf("sort %d: %s (%d up, %d down) scores %.17g, want %.17g", tc.sort, vc.name, vc.up, vc.down, got, want)
			}
			// One formula for posts and comments (up to the last bit of pow).
			if post := store.Controversy(vc.up, vc.down); tc.sort == store.CommentsControversial && math.Abs(got-post) > 1e-12*max(1, post) {
				th.t.Errorf("%s: CONTROVERSIAL %.17g, the posts' Controversy %.17g", vc.name, got, post)
			}
		}
	}
}

// commentNum is the 12-digit number of a comment id "comment:<post>:<n>", as the reply orders
// hold it.
func commentNum(id string) string {
	var pid, n int
	if _, err := fmt.Sscanf(id, "comment:%d:%d", &pid, &n); err != nil {
		panic(err)
	}
	return fmt.Sprintf("%012d", n)
}

func TestCommentBestAndControversialSorts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{WriteLimit: -1})
		top := th.voteFixture(nil)
		th.checkVoteOrders(b, nil, top)
		th.padTop(top) // the top level keeps its orders, the replies of a are ranked by the reader
		th.checkVoteOrders(b, nil, top)
		parent := th.get(top["a"].ID)
		replies := th.voteFixture(parent)
		th.checkVoteOrders(b, parent, replies)

		// A removed reply leaves both orders and comes back with its scores on restore; a deleted
		// one leaves them.
		sess, err := th.s.SignUp(ctx, "root", "password1")
		if err != nil {
			t.Fatal(err)
		}
		if err := th.s.GrantAdmin(ctx, "root"); err != nil {
			t.Fatal(err)
		}
		root := sess.User.Key()
		without := func(parent *store.Comment, what, name string) {
			t.Helper()
			if parent != nil {
				parent = th.get(parent.ID)
			}
			for _, sort := range []store.CommentSort{store.CommentsBest, store.CommentsControversial} {
				if got := names(th.all(parent, sort, 4)); slices.Contains(got, name) || len(got) != len(votedComments)-1 {
					t.Errorf("sort %d after %s %s: %v", sort, what, name, got)
				}
			}
		}
		if _, err := th.s.RemoveComment(ctx, root, replies["g"].ID, "spam"); err != nil {
			t.Fatal(err)
		}
		without(parent, "removing", "g")
		th.check()
		if _, err := th.s.RestoreComment(ctx, root, replies["g"].ID); err != nil {
			t.Fatal(err)
		}
		th.checkVoteOrders(b, parent, replies)
		if err := th.s.DeleteComment(ctx, "author", replies["h"].ID); err != nil {
			t.Fatal(err)
		}
		without(parent, "deleting", "h")
		th.check()

		// The same at the top level, which keeps its orders: the deletion leaves it below
		// ReplyOrdersAt, still keeping them.
		if _, err := th.s.RemoveComment(ctx, root, top["g"].ID, "spam"); err != nil {
			t.Fatal(err)
		}
		without(nil, "removing", "g")
		th.check()
		if _, err := th.s.RestoreComment(ctx, root, top["g"].ID); err != nil {
			t.Fatal(err)
		}
		th.checkVoteOrders(b, nil, top)
		if err := th.s.DeleteComment(ctx, "author", top["h"].ID); err != nil {
			t.Fatal(err)
		}
		without(nil, "deleting", "h")
		th.check()
	})
}

func TestCommentVoteOrdersBackfilledByRebuild(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{WriteLimit: -1})
		top := th.voteFixture(nil)
		parent := top["c"]
		replies := th.voteFixture(parent)
		// The top level made big enough to keep its orders (replyOrdersAt replies: fillers
		// without votes, older than the fixture's), then, as written before the orders existed,
		// every BEST and CONTROVERSIAL set missing.
		th.padTop(top)
		var gone []string
		for _, c := range append(slices.Collect(maps.Values(top)), nil) {
			num := "0" // the post's top-level orders
			if c != nil {
				num = commentNum(c.ID)
			}
			gone = append(gone, th.s.ThreadKeyForTest(th.post.Key(), num, ":rb"), th.s.ThreadKeyForTest(th.post.Key(), num, ":rc"))
		}
		for _, k := range gone {
			if err := b.Client.Del(ctx, k).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if got := th.all(nil, store.CommentsBest, 5); len(got) != 0 {
			t.Fatalf("BEST before the rebuild: %v", names(got))
		}
		for range 2 { // a second rebuild changes nothing
			st, err := th.s.Rebuild(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := 2*len(votedComments) + padding; st.Scored != want {
				t.Errorf("rebuild scored %d comments, want %d", st.Scored, want)
			}
			th.checkVoteOrders(b, nil, top)
			th.checkVoteOrders(b, parent, replies)
		}
		th.check()
	})
}
