package store_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// allPostSorts is every order of PostSort.
var allPostSorts = []store.PostSort{store.SortHot, store.SortNew, store.SortTop, store.SortTopHour, store.SortTopDay,
	store.SortTopWeek, store.SortTopMonth, store.SortTopYear, store.SortActive, store.SortControversial,
	store.SortMostComments}

// userPage reads one page of a user's posts, as a viewer who hides NSFW posts or not.
func (f *fixture) userPage(uid string, hide bool, sort store.PostSort, w store.Window) (*store.Page[*store.Post], []string) {
	f.t.Helper()
	l := f.s.NewLoader()
	l.HideNSFW(hide)
	p, err := l.UserPosts(f.ctx, uk(uid), sort, w, nil)
	if err != nil {
		f.t.Fatalf("user posts sort %d %+v: %v", sort, w, err)
	}
	return p, ids(p.Items)
}

// userAll lists a user's posts in order by paging n at a time, forwards or backwards, and checks
// that every page tells the whole list's size and the ends right.
func (f *fixture) userAll(uid string, hide bool, sort store.PostSort, n int, backward bool) (out []string, total int) {
	f.t.Helper()
	cur := ""
	for range 1000 {
		w := store.Window{First: n, After: cur}
		if backward {
			w = store.Window{Last: n, Before: cur}
		}
		p, got := f.userPage(uid, hide, sort, w)
		total = p.Total
		if backward {
			out = append(slices.Clone(got), out...)
			if (cur != "") != p.HasNext {
				f.t.Fatalf("sort %d backwards: hasNext %v after the cursor %q", sort, p.HasNext, cur)
			}
			if !p.HasPrev {
				return out, total
			}
			cur = p.StartCursor()
		} else {
			out = append(out, got...)
			if (cur != "") != p.HasPrev {
				f.t.Fatalf("sort %d forwards: hasPrev %v after the cursor %q", sort, p.HasPrev, cur)
			}
			if !p.HasNext {
				return out, total
			}
			cur = p.EndCursor()
		}
	}
	f.t.Fatalf("sort %d: paging does not end", sort)
	return nil, 0
}

// siteOf lists the site's posts in the order sort, as a viewer who hides NSFW posts or not,
// keeping those by uid: what the user's list in that order must be.
func (f *fixture) siteOf(uid string, hide bool, sort store.PostSort) []string {
	f.t.Helper()
	var out []string
	after := ""
	for {
		l := f.s.NewLoader()
		l.HideNSFW(hide)
		p, err := l.Posts(f.ctx, sort, "", store.Window{First: 7, After: after}, nil)
		if err != nil {
			f.t.Fatal(err)
		}
		for _, it := range p.Items {
			if string(it.Author) == string(uk(uid)) {
				out = append(out, it.ID)
			}
		}
		if !p.HasNext {
			return out
		}
		after = p.EndCursor()
	}
}

// A user's posts in every order are the site's listing in that order kept to the user's posts,
// forwards and backwards, for a viewer who shows NSFW posts and one who does not: the NSFW, the
// removed, deleted and scheduled posts and the TOP windows all as the site's listing has them.
func TestUserPostsEveryOrder(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		f := newFixture(t, b, store.Options{Now: clk.Now, WriteLimit: -1, VotingWindow: 800 * 24 * time.Hour})
		alice, bob, mod := f.user("alice"), f.user("bob"), f.admin("mod")
		voters := []string{f.user("vv1"), f.user("vv2"), f.user("vv3"), f.user("vv4"), f.user("vv5")}
		if _, err := f.s.CreateGroupLabelled(f.ctx, uk(alice), "spicy", nil, true); err != nil {
			t.Fatal(err)
		}
		type spec struct {
			age       time.Duration // before the end of the set-up
			up, down  int
			comments  int
			nsfw      bool
			group     string
			by        string
			remove    bool
			deleteIt  bool
			scheduled bool
		}
		day := 24 * time.Hour
		specs := []spec{
			{age: 500 * day, up: 5, comments: 1},
			{age: 400 * day, by: bob, up: 4},
			{age: 200 * day, up: 3, down: 2, comments: 2},
			{age: 100 * day, up: 1, down: 1, nsfw: true},
			{age: 40 * day, up: 2, comments: 3},
			{age: 20 * day, up: 4, remove: true},
			{age: 10 * day, up: 2, down: 3, group: "spicy"},
			{age: 6 * day, up: 3},
			{age: 3 * day, up: 5, deleteIt: true},
			{age: 2 * day, by: bob, up: 5, comments: 1},
			{age: 30 * time.Hour, comments: 1},
			{age: 20 * time.Hour, up: 1, down: 4},
			{age: 5 * time.Hour, up: 3, nsfw: true, comments: 2},
			{age: 50 * time.Minute, up: 1},
			{age: 20 * time.Minute, up: 1}, // ties the one before by votes
			{age: 10 * time.Minute, scheduled: true},
			{age: 5 * time.Minute},
		}
		start := clk.Now()
		end := start.Add(specs[0].age)
		var posts []*store.Post
		for _, sp := range specs {
			clk.Set(end.Add(-sp.age))
			by := alice
			if sp.by != "" {
				by = sp.by
			}
			in := store.NewPost{Title: fmt.Sprintf("aged %s", sp.age), NSFW: sp.nsfw}
			if sp.group != "" {
				in.Groups = []string{sp.group}
			}
			if sp.scheduled {
				in.PublishAt = end.Add(time.Hour)
			}
			p, err := f.s.CreatePost(f.ctx, uk(by), in)
			if err != nil {
				t.Fatal(err)
			}
			if sp.scheduled {
				continue
			}
			posts = append(posts, p)
			for i := range sp.up + sp.down {
				f.vote(voters[i%len(voters)], p.ID, map[bool]int{true: 1, false: -1}[i < sp.up])
			}
			for i := range sp.comments {
				clk.Add(time.Second)
				if _, err := f.s.CreateComment(f.ctx, uk(voters[i]), store.NewComment{PostID: p.ID, Body: "hi"}); err != nil {
					t.Fatal(err)
				}
			}
			switch {
			case sp.remove:
				if _, err := f.s.RemovePost(f.ctx, uk(mod), p.ID, "spam"); err != nil {
					t.Fatal(err)
				}
			case sp.deleteIt:
				if err := f.s.DeletePost(f.ctx, uk(alice), p.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		clk.Set(end)
		// At the end of the set-up, and when the oldest of the hour's posts and of the day's
		// are exactly at their windows' ends, and a millisecond later.
		for _, at := range []time.Time{end, end.Add(10 * time.Minute), end.Add(10*time.Minute + time.Millisecond),
			end.Add(4 * time.Hour), end.Add(4*time.Hour + time.Millisecond)} {
			clk.Set(at)
			for _, sort := range allPostSorts {
				for _, hide := range []bool{false, true} {
					want := f.siteOf(alice, hide, sort)
					fwd, total := f.userAll(alice, hide, sort, 2, false)
					back, btotal := f.userAll(alice, hide, sort, 3, true)
					if !slices.Equal(fwd, want) || !slices.Equal(back, want) {
						t.Fatalf("at +%s sort %d hides NSFW %v:\nforwards  %v\nbackwards %v\nwant      %v",
							at.Sub(end), sort, hide, fwd, back, want)
					}
					if total != len(want) || btotal != len(want) {
						t.Fatalf("at +%s sort %d hides NSFW %v: totals %d and %d, want %d", at.Sub(end), sort, hide, total, btotal, len(want))
					}
				}
			}
		}
		// The checks above can fail: the hour's TOP holds the posts of the last hour, and hides
		// the NSFW one from who hides them; the removed, deleted and scheduled ones are nowhere.
		clk.Set(end)
		_, hour := f.userPage(alice, false, store.SortTopHour, store.Window{First: 10})
		if slices.Sort(hour); !slices.Equal(hour, sorted(ids(posts[13:16]))) {
			t.Fatalf("TOP_HOUR: %v, want the last hour's %v", hour, ids(posts[13:16]))
		}
		_, day1 := f.userPage(alice, false, store.SortTopDay, store.Window{First: 10})
		_, day2 := f.userPage(alice, true, store.SortTopDay, store.Window{First: 10})
		if !slices.Contains(day1, posts[12].ID) || slices.Contains(day2, posts[12].ID) || len(day1) != len(day2)+1 {
			t.Fatalf("TOP_DAY shows %v, hides NSFW %v", day1, day2)
		}
		all, _ := f.userAll(alice, false, store.SortTop, 100, false)
		for _, i := range []int{5, 8} {
			if slices.Contains(all, posts[i].ID) {
				t.Fatalf("TOP lists the removed or deleted post %d: %v", i, all)
			}
		}
		if len(all) != 12 {
			t.Fatalf("TOP: %d posts %v, want alice's 12 live ones", len(all), all)
		}
	})
}

// A post is in a user's windowed TOP until the millisecond its window ends, with no write.
func TestUserPostsWindowEndsAtTheMillisecond(t *testing.T) {
	for _, w := range store.TopWindows {
		t.Run(w.Name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				clk := storetest.NewClock()
				f := newFixture(t, b, store.Options{Now: clk.Now, WriteLimit: -1, VotingWindow: 400 * 24 * time.Hour})
				alice, bob := f.user("alice"), f.user("bob")
				old := f.post(alice, "old")
				f.vote(bob, old.ID, 1)
				clk.Add(w.Length / 2)
				young := f.post(alice, "young")
				f.post(bob, "bob's")
				clk.Add(w.Length - w.Length/2) // old is exactly w.Length old
				if p, got := f.userPage(alice, false, w.Sort, store.Window{First: 10}); !slices.Equal(got, []string{old.ID, young.ID}) || p.Total != 2 {
					t.Fatalf("at the window's end: %v (total %d)", got, p.Total)
				}
				clk.Add(time.Millisecond)
				for _, win := range []store.Window{{First: 10}, {Last: 10}} {
					if p, got := f.userPage(alice, false, w.Sort, win); !slices.Equal(got, []string{young.ID}) || p.Total != 1 || p.HasNext || p.HasPrev {
						t.Fatalf("past the window (%+v): %v (total %d)", win, got, p.Total)
					}
				}
				if _, got := f.userPage(alice, false, store.SortTop, store.Window{First: 10}); len(got) != 2 {
					t.Fatalf("TOP keeps both: %v", got)
				}
			})
		})
	}
}

// Paging a user's posts by votes after a cursor is stable while votes land: a post that moves
// ahead of the cursor is not shown again, the others follow in order. A cursor of another order
// is refused.
func TestUserPostsPagingWhileVoting(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		voters := []string{f.user("vv1"), f.user("vv2"), f.user("vv3"), f.user("vv4"), f.user("vv5")}
		var posts []*store.Post
		for i := range 5 {
			posts = append(posts, f.post(alice, fmt.Sprint("p", i)))
			for _, v := range voters[:i] {
				f.vote(v, posts[i].ID, 1)
			}
		}
		// By votes: 4 3 2 1 0.
		p, got := f.userPage(alice, false, store.SortTop, store.Window{First: 2})
		if !slices.Equal(got, []string{posts[4].ID, posts[3].ID}) || !p.HasNext || p.HasPrev || p.Total != 5 {
			t.Fatalf("first page: %v %+v", got, p)
		}
		for _, v := range voters[:4] { // post 0 overtakes the cursor
			f.vote(v, posts[0].ID, 1)
		}
		p2, got := f.userPage(alice, false, store.SortTop, store.Window{First: 10, After: p.EndCursor()})
		if !slices.Equal(got, []string{posts[2].ID, posts[1].ID}) || p2.HasNext || !p2.HasPrev {
			t.Fatalf("after the cursor: %v %+v", got, p2)
		}
		// Backwards from the second page's start: what now comes before it.
		_, got = f.userPage(alice, false, store.SortTop, store.Window{Last: 10, Before: p2.StartCursor()})
		if !slices.Equal(got, []string{posts[4].ID, posts[0].ID, posts[3].ID}) {
			t.Fatalf("before the cursor: %v", got)
		}
		// Between two cursors.
		_, got = f.userPage(alice, false, store.SortTop, store.Window{First: 10, After: p.StartCursor(), Before: p2.EndCursor()})
		if !slices.Equal(got, []string{posts[0].ID, posts[3].ID, posts[2].ID}) {
			t.Fatalf("between the cursors: %v", got)
		}
		pn, newest := f.userPage(alice, false, store.SortNew, store.Window{First: 1})
		if !slices.Equal(newest, []string{posts[4].ID}) {
			t.Fatalf("NEW: %v", newest)
		}
		for _, tc := range []struct {
			sort   store.PostSort
			cursor string
		}{{store.SortHot, p.EndCursor()}, {store.SortTop, pn.EndCursor()}, {store.SortNew, p.EndCursor()}} {
			l := f.s.NewLoader()
			_, err := l.UserPosts(f.ctx, uk(alice), tc.sort, store.Window{First: 2, After: tc.cursor}, nil)
			var se *store.Error
			if !errors.As(err, &se) || se.Kind != store.KindInvalid {
				t.Fatalf("sort %d with another order's cursor: %v", tc.sort, err)
			}
		}
	})
}

// A sorted read ranks the user's newest posts up to the cap (of the window, for a TOP window).
func TestUserPostsRankTheNewestUpToTheCap(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		f := newFixture(t, b, store.UserRankCap(store.Options{Now: clk.Now, WriteLimit: -1}, 3))
		alice := f.user("alice")
		voters := []string{f.user("vv1"), f.user("vv2"), f.user("vv3"), f.user("vv4"), f.user("vv5")}
		var posts []*store.Post
		for i := range 5 {
			p := f.post(alice, fmt.Sprint("p", i), "g")
			if i%2 == 0 {
				p, _ = f.s.SetPostLabels(f.ctx, uk(alice), p.ID, ptr(true), nil, nil)
			}
			posts = append(posts, p)
			for _, v := range voters[:5-i] { // the oldest has the most votes
				f.vote(v, p.ID, 1)
			}
			clk.Add(time.Minute)
		}
		for _, tc := range []struct {
			hide bool
			sort store.PostSort
			want []*store.Post
		}{
			{false, store.SortTop, []*store.Post{posts[2], posts[3], posts[4]}},
			{false, store.SortTopHour, []*store.Post{posts[2], posts[3], posts[4]}},
			{true, store.SortTop, []*store.Post{posts[1], posts[3]}}, // the part without NSFW posts holds only these
		} {
			p, got := f.userPage(alice, tc.hide, tc.sort, store.Window{First: 10})
			if !slices.Equal(got, ids(tc.want)) || p.Total != len(tc.want) {
				t.Fatalf("sort %d hides NSFW %v: %v (total %d), want %v", tc.sort, tc.hide, got, p.Total, ids(tc.want))
			}
		}
		// Only the window's posts count against the cap: with an hour passed, none of them.
		clk.Add(time.Hour)
		if p, got := f.userPage(alice, false, store.SortTopHour, store.Window{First: 10}); len(got) != 0 || p.Total != 0 {
			t.Fatalf("TOP_HOUR an hour later: %v", got)
		}
	})
}
