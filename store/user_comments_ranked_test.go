package store_test

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// rankedCommentSorts are the orders of a user's comments ranked by votes.
var rankedCommentSorts = []store.CommentSort{store.CommentsTop, store.CommentsBest, store.CommentsControversial}

// userCommentIDs pages through uid's comments in sort, n at a time, forwards (first/after) or
// backwards (last/before), and returns their ids in list order, with the total of the first page.
func (f *fixture) userCommentIDs(uid string, sort store.CommentSort, n int, backward bool) ([]string, int) {
	f.t.Helper()
	var out []string
	total := -1
	cursor := ""
	for range 100 {
		w := store.Window{First: n, After: cursor}
		if backward {
			w = store.Window{Last: n, Before: cursor}
		}
		p, err := f.s.NewLoader().UserComments(f.ctx, uk(uid), sort, w)
		if err != nil {
			f.t.Fatalf("sort %d, window %+v: %v", sort, w, err)
		}
		if total < 0 {
			total = p.Total
		}
		if len(p.Items) != len(p.Cursors) {
			f.t.Fatalf("sort %d: %d items, %d cursors", sort, len(p.Items), len(p.Cursors))
		}
		var page []string
		for _, c := range p.Items {
			page = append(page, c.ID)
		}
		if backward {
			out = append(page, out...)
			if !p.HasPrev {
				return out, total
			}
			cursor = p.StartCursor()
		} else {
			out = append(out, page...)
			if !p.HasNext {
				return out, total
			}
			cursor = p.EndCursor()
		}
	}
	f.t.Fatal("too many pages")
	return nil, 0
}

// userVotedComment is a comment of the test's user and the votes it is given.
type userVotedComment struct {
	id       string
	up, down int
}

// rankedCommentIDs returns the ids of cs in sort as the reply orders rank them: by replyScore,
// highest first, ties by member ("<post>:<number>") bytes descending.
func rankedCommentIDs(sort store.CommentSort, cs []userVotedComment) []string {
	cs = slices.Clone(cs)
	member := func(id string) string { return strings.TrimPrefix(id, store.TypeComment+":") }
	slices.SortFunc(cs, func(a, b userVotedComment) int {
		sa, sb := store.ReplyScoreForTest(sort, a.up, a.down), store.ReplyScoreForTest(sort, b.up, b.down)
		if c := cmp.Compare(sb, sa); c != 0 {
			return c
		}
		return strings.Compare(member(b.id), member(a.id))
	})
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.id
	}
	return out
}

// TestUserCommentsRanked lists a user's comments in TOP, BEST and CONTROVERSIAL (issue 26): the
// order is the reply orders' score, highest first, ties by member descending; paging forwards and
// backwards at every page size gives the same sequence; a cursor of one order is refused by
// every other; deleted and removed comments, and those on a removed post, stay out as in NEW.
func TestUserCommentsRanked(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{Now: tickingClock(), WriteLimit: -1})
		ann, ben, root := f.user("ann"), f.user("ben"), uk(f.admin("root"))
		var voters []string
		for i := range 5 {
			voters = append(voters, f.user(fmt.Sprint("voter", i)))
		}
		posts := []*store.Post{f.post(ben, "one", "go"), f.post(ben, "two"), f.post(ben, "three")}
		// Ties in every order: 0/0 twice, 3/1 twice, 2/2 twice; 1/3 and 3/1 tie in CONTROVERSIAL,
		// 0/2 and 0/0 in BEST and CONTROVERSIAL.
		votes := [][2]int{{0, 0}, {0, 0}, {3, 1}, {1, 3}, {2, 2}, {3, 1}, {1, 0}, {0, 2}, {4, 0}, {2, 2}, {5, 0}, {2, 1}}
		var cs []userVotedComment
		for i, v := range votes {
			c, err := f.s.CreateComment(f.ctx, uk(ann), store.NewComment{PostID: posts[i%3].ID, Body: fmt.Sprint("c", i)})
			if err != nil {
				t.Fatal(err)
			}
			for j := range v[0] + v[1] {
				dir := 1
				if j >= v[0] {
					dir = -1
				}
				if _, err := f.s.VoteComment(f.ctx, uk(voters[j]), c.ID, dir); err != nil {
					t.Fatal(err)
				}
			}
			cs = append(cs, userVotedComment{c.ID, v[0], v[1]})
		}
		if _, err := f.s.CreateComment(f.ctx, uk(ben), store.NewComment{PostID: posts[0].ID, Body: "not ann's"}); err != nil {
			t.Fatal(err)
		}
		check := func(step string, live []userVotedComment, total int, sizes ...int) {
			t.Helper()
			for _, sort := range rankedCommentSorts {
				want := rankedCommentIDs(sort, live)
				for _, n := range sizes {
					for _, backward := range []bool{false, true} {
						got, gotTotal := f.userCommentIDs(ann, sort, n, backward)
						if !slices.Equal(got, want) || gotTotal != total {
							t.Errorf("%s: sort %d (page %d, backward %v) = %v (total %d), want %v (total %d)",
								step, sort, n, backward, got, gotTotal, want, total)
						}
					}
				}
			}
		}
		check("voted", cs, len(cs), 1, 2, 5, 100)

		// Every order's cursor is refused by every other order.
		all := append([]store.CommentSort{store.CommentsNew, store.CommentsOld}, rankedCommentSorts...)
		for _, from := range all {
			p, err := f.s.NewLoader().UserComments(f.ctx, uk(ann), from, store.Window{First: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, to := range all {
				for _, w := range []store.Window{{First: 2, After: p.EndCursor()}, {Last: 2, Before: p.StartCursor()}} {
					_, err := f.s.NewLoader().UserComments(f.ctx, uk(ann), to, w)
					if from == to && err != nil {
						t.Errorf("sort %d's own cursor: %v", from, err)
					}
					if from != to && !store.IsKind(err, store.KindInvalid) {
						t.Errorf("sort %d's cursor in sort %d: %v, want BAD_USER_INPUT", from, to, err)
					}
				}
			}
		}

		// A deleted comment and a removed one leave the lists; the comments on a removed post
		// stay in the list (the total) but out of its pages. They are read in one page: a page
		// all of whose comments are left out has no cursor to go on from, in NEW as in the
		// ranked orders (the contract of UserComments).
		if err := f.s.DeleteComment(f.ctx, uk(ann), cs[2].id); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RemoveComment(f.ctx, root, cs[8].id, "spam"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RemovePost(f.ctx, root, posts[1].ID, "spam"); err != nil {
			t.Fatal(err)
		}
		settle(t, f.s)
		var live []userVotedComment
		onRemoved := 0
		for i, c := range cs {
			switch {
			case i == 2 || i == 8:
			case i%3 == 1:
				onRemoved++
			default:
				live = append(live, c)
			}
		}
		check("deleted and removed", live, len(live)+onRemoved, 100)
		newest := slices.Clone(live)
		slices.Reverse(newest)
		if got, _ := f.userCommentIDs(ann, store.CommentsNew, 100, false); !slices.Equal(got, rankedIDs(newest)) {
			t.Errorf("NEW = %v, want %v", got, rankedIDs(newest))
		}
	})
}

// rankedIDs returns the ids of cs in their order.
func rankedIDs(cs []userVotedComment) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.id
	}
	return out
}

// TestUserCommentsRankTheNewestUpToTheCap checks that a ranked read of a user's comments ranks
// only their newest rankCap comments, and says so in its total.
func TestUserCommentsRankTheNewestUpToTheCap(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.UserRankCap(store.Options{Now: tickingClock(), WriteLimit: -1}, 3))
		ann, ben := f.user("ann"), f.user("ben")
		voters := []string{f.user("vv1"), f.user("vv2"), f.user("vv3"), f.user("vv4"), f.user("vv5")}
		p := f.post(ben, "one")
		var cs []userVotedComment
		for i := range 5 {
			c, err := f.s.CreateComment(f.ctx, uk(ann), store.NewComment{PostID: p.ID, Body: fmt.Sprint("c", i)})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range voters[:5-i] { // the oldest has the most votes
				if _, err := f.s.VoteComment(f.ctx, uk(v), c.ID, 1); err != nil {
					t.Fatal(err)
				}
			}
			cs = append(cs, userVotedComment{c.ID, 5 - i, 0})
		}
		for _, sort := range rankedCommentSorts {
			want := rankedCommentIDs(sort, cs[2:])
			if got, total := f.userCommentIDs(ann, sort, 10, false); !slices.Equal(got, want) || total != 3 {
				t.Errorf("sort %d: %v (total %d), want %v (total 3)", sort, got, total, want)
			}
		}
	})
}

// TestUserCommentsRankedRoundTrips checks that a ranked page of a user's comments costs one round
// trip more than NEW (the vote counts, read once the list's members are back), whatever the page
// size and however many posts the comments are on.
func TestUserCommentsRankedRoundTrips(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		counted, rt := b.Counted(t)
		f := newFixture(t, counted, store.Options{Now: tickingClock(), WriteLimit: -1})
		ann, ben := f.user("ann"), f.user("ben")
		var posts []*store.Post
		for i := range 7 {
			posts = append(posts, f.post(ben, fmt.Sprint("post ", i)))
		}
		for i := range 60 {
			if _, err := f.s.CreateComment(f.ctx, uk(ann), store.NewComment{PostID: posts[i%7].ID, Body: fmt.Sprint("c", i)}); err != nil {
				t.Fatal(err)
			}
		}
		trips := func(sort store.CommentSort, n int) int64 {
			t.Helper()
			rt.Reset()
			p, err := f.s.NewLoader().UserComments(f.ctx, uk(ann), sort, store.Window{First: n})
			if err != nil || len(p.Items) != n {
				t.Fatalf("sort %d, first %d: %d items, %v", sort, n, len(p.Items), err)
			}
			return rt.Count()
		}
		for _, n := range []int{1, 20, 50} {
			base := trips(store.CommentsNew, n)
			for _, sort := range rankedCommentSorts {
				if got := trips(sort, n); got != base+1 {
					t.Errorf("sort %d, first %d: %d round trips, NEW %d", sort, n, got, base)
				}
			}
		}
	})
}
