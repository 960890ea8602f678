package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// page reads one page of a listing and the ids on it.
func (f *fixture) page(sort store.PostSort, group string, w store.Window) (*store.Page[*store.Post], []string) {
	f.t.Helper()
	p, err := f.s.NewLoader().Posts(f.ctx, sort, group, w, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	ids := make([]string, len(p.Items))
	for i, it := range p.Items {
		ids[i] = it.ID
	}
	return p, ids
}

// A post is in a windowed TOP until the millisecond its window ends and out from the next one, on
// the site and in its group, without any write in between to trim it: reads filter.
func TestWindowedTopEndsAtTheSecond(t *testing.T) {
	for _, w := range store.TopWindows {
		t.Run(w.Name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				clk := storetest.NewClock()
				f := newFixture(t, b, store.Options{Now: clk.Now, WriteLimit: -1, VotingWindow: 400 * 24 * time.Hour})
				alice, bob := f.user("alice"), f.user("bob")
				old := f.post(alice, "old", "g")
				if _, err := f.s.JoinGroup(f.ctx, uk(bob), "g"); err != nil {
					t.Fatal(err)
				}
				f.vote(bob, old.ID, 1)
				clk.Add(w.Length / 2)
				young := f.post(alice, "young", "g")
				clk.Add(w.Length - w.Length/2) // old is exactly w.Length old
				for _, g := range []string{"", "g"} {
					p, ids := f.page(w.Sort, g, store.Window{First: 10})
					if !slices.Equal(ids, []string{old.ID, young.ID}) || p.Total != 2 {
						t.Fatalf("group %q at the window's end: %v (total %d), want [old young]", g, ids, p.Total)
					}
				}
				clk.Add(time.Millisecond)
				for _, g := range []string{"", "g"} {
					p, ids := f.page(w.Sort, g, store.Window{First: 10})
					if !slices.Equal(ids, []string{young.ID}) || p.Total != 1 || p.HasNext || p.HasPrev {
						t.Fatalf("group %q past the window: %v (total %d, next %v, prev %v), want [young]", g, ids, p.Total, p.HasNext, p.HasPrev)
					}
					if _, ids := f.page(w.Sort, g, store.Window{Last: 10}); !slices.Equal(ids, []string{young.ID}) {
						t.Fatalf("group %q past the window, backwards: %v", g, ids)
					}
				}
				gf, err := f.s.NewLoader().GroupFeed(f.ctx, uk(bob), w.Sort, store.Window{First: 10}, nil)
				if err != nil || len(gf.Items) != 1 || gf.Items[0].ID != young.ID || gf.Total != 1 {
					t.Fatalf("group feed past the window: %+v, %v", gf, err)
				}
				// A vote on the old post, and a new post (both trim), leave it out too.
				f.vote(bob, young.ID, 1)
				f.vote(bob, old.ID, -1)
				f.post(alice, "new", "g")
				if ids := f.ids(w.Sort, "", 1); len(ids) != 2 || slices.Contains(ids, old.ID) {
					t.Fatalf("after writes: %v", ids)
				}
				if ids := f.ids(store.SortTop, "", 10); len(ids) != 3 {
					t.Fatalf("TOP keeps every post: %v", ids)
				}
			})
		})
	}
}

// Paging a windowed TOP forwards and backwards visits every post in the window once, in order,
// while votes land and the oldest posts leave the window between pages.
func TestWindowedTopPaging(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		f := newFixture(t, b, store.Options{Now: clk.Now, WriteLimit: -1})
		alice := f.user("alice")
		voters := []string{f.user("vv1"), f.user("vv2"), f.user("vv3"), f.user("vv4"), f.user("vv5")}
		var posts []*store.Post // published a minute apart, the oldest first
		for i := range 6 {
			posts = append(posts, f.post(alice, "p"+string(rune('a'+i))))
			for _, v := range voters[:i%5] {
				f.vote(v, posts[i].ID, 1)
			}
			clk.Add(time.Minute)
		}
		clk.Add(time.Hour - 6*time.Minute) // posts[0] is exactly an hour old
		// Votes by net desc: e(4) d(3) c(2) b(1) a(0) f(0); ties by id descending.
		want := []string{posts[4].ID, posts[3].ID, posts[2].ID, posts[1].ID, posts[5].ID, posts[0].ID}
		if got := f.ids(store.SortTopHour, "", 2); !slices.Equal(got, want) {
			t.Fatalf("TOP_HOUR: %v, want %v", got, want)
		}
		// Forwards: a first page, then votes and a minute pass, then the rest.
		p, ids := f.page(store.SortTopHour, "", store.Window{First: 2})
		if !slices.Equal(ids, want[:2]) || !p.HasNext || p.Total != 6 {
			t.Fatalf("first page: %v total %d", ids, p.Total)
		}
		f.vote(voters[4], posts[1].ID, 1)       // b moves up, behind the cursor
		clk.Add(time.Minute + time.Millisecond) // a and b leave the window
		var rest []string
		for after := p.EndCursor(); ; {
			p, ids := f.page(store.SortTopHour, "", store.Window{First: 2, After: after})
			rest = append(rest, ids...)
			if !p.HasNext {
				break
			}
			after = p.EndCursor()
		}
		if w := []string{posts[2].ID, posts[5].ID}; !slices.Equal(rest, w) {
			t.Fatalf("after the cursor: %v, want %v", rest, w)
		}
		// Backwards from the end.
		var back []string
		for before := ""; ; {
			p, ids := f.page(store.SortTopHour, "", store.Window{Last: 2, Before: before})
			back = append(ids, back...)
			if p.Total != 4 {
				t.Fatalf("total %d, want 4", p.Total)
			}
			if !p.HasPrev {
				break
			}
			before = p.StartCursor()
		}
		if w := []string{posts[4].ID, posts[3].ID, posts[2].ID, posts[5].ID}; !slices.Equal(back, w) {
			t.Fatalf("backwards: %v, want %v", back, w)
		}
	})
}

// ACTIVE, CONTROVERSIAL and MOST_COMMENTS order by what their descriptions say.
func TestActivityAndControversySorts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		f := newFixture(t, b, store.Options{Now: clk.Now, WriteLimit: -1})
		alice := f.user("alice")
		var vs []string
		for _, n := range []string{"vv1", "vv2", "vv3", "vv4", "vv5"} {
			vs = append(vs, f.user(n))
		}
		a, bp, c := f.post(alice, "a", "g"), f.post(alice, "b", "g"), f.post(alice, "c", "g")
		clk.Add(time.Second)
		// a: 3 up 2 down (5^(2/3) ≈ 2.92); b: 1 up 1 down (2^1 = 2); c: 4 up (0).
		for i, v := range vs {
			f.vote(v, a.ID, map[bool]int{true: 1, false: -1}[i < 3])
		}
		f.vote(vs[0], bp.ID, 1)
		f.vote(vs[1], bp.ID, -1)
		for _, v := range vs[:4] {
			f.vote(v, c.ID, 1)
		}
		comment := func(p *store.Post) *store.Comment {
			t.Helper()
			clk.Add(time.Second)
			cm, err := f.s.CreateComment(f.ctx, uk(alice), store.NewComment{PostID: p.ID, Body: "hi"})
			if err != nil {
				t.Fatal(err)
			}
			return cm
		}
		comment(bp)
		comment(bp)
		last := comment(a)
		for _, g := range []string{"", "g"} {
			for _, tc := range []struct {
				sort store.PostSort
				want []string
			}{
				{store.SortControversial, []string{a.ID, bp.ID, c.ID}},
				{store.SortMostComments, []string{bp.ID, a.ID, c.ID}},
				{store.SortActive, []string{a.ID, bp.ID, c.ID}},
			} {
				if got := f.ids(tc.sort, g, 2); !slices.Equal(got, tc.want) {
					t.Errorf("group %q sort %d: %v, want %v", g, tc.sort, got, tc.want)
				}
			}
		}
		// Deleting a comment lowers the count but leaves the activity where it was.
		if err := f.s.DeleteComment(f.ctx, uk(alice), last.ID); err != nil {
			t.Fatal(err)
		}
		if got := f.ids(store.SortMostComments, "", 5); !slices.Equal(got, []string{bp.ID, c.ID, a.ID}) {
			t.Errorf("MOST_COMMENTS after a deletion: %v", got)
		}
		if got := f.ids(store.SortActive, "", 5); !slices.Equal(got, []string{a.ID, bp.ID, c.ID}) {
			t.Errorf("ACTIVE after a deletion: %v", got)
		}
	})
}
