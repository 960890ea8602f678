package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// post publishes a post by uid and returns its id.
func post(t *testing.T, s *store.Store, uid, title string) string {
	t.Helper()
	p, err := s.CreatePost(context.Background(), uk(uid), store.NewPost{Title: title})
	if err != nil {
		t.Fatalf("create post %q: %v", title, err)
	}
	return p.ID
}

// feedTitles reads a whole feed, page by page, and returns the titles in order.
func feedTitles(t *testing.T, s *store.Store, viewer string, pageSize int) []string {
	t.Helper()
	settle(t, s)
	var out []string
	after := ""
	for range 100 {
		settle(t, s)
		p, err := s.NewLoader().Feed(context.Background(), uk(viewer), store.Window{First: pageSize, After: after}, nil)
		if err != nil {
			t.Fatalf("feed of %s: %v", viewer, err)
		}
		for _, it := range p.Items {
			out = append(out, it.Title)
		}
		if !p.HasNext {
			return out
		}
		after = p.EndCursor()
	}
	t.Fatal("feed does not end")
	return nil
}

func checkFeed(t *testing.T, s *store.Store, viewer string, want ...string) {
	t.Helper()
	for _, size := range []int{1, 2, 20} {
		if got := feedTitles(t, s, viewer, size); !slices.Equal(got, want) {
			t.Errorf("feed of %s in pages of %d: %v, want %v", viewer, size, got, want)
		}
	}
}

func TestFeedPushed(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock()})
		ids := signUp(t, s, "rita", "amy", "ben", "cyd")
		rita, amy, bo := ids[0], ids[1], ids[2]

		post(t, s, "amy", "a1")
		p2 := post(t, s, "amy", "a2")
		post(t, s, "ben", "b1")
		checkFeed(t, s, rita)

		if _, err := s.Follow(ctx, "rita", uk(amy)); err != nil {
			t.Fatal(err)
		}
		checkFeed(t, s, rita, "a2", "a1") // a new followee's recent posts appear
		if _, err := s.Follow(ctx, "rita", uk(bo)); err != nil {
			t.Fatal(err)
		}
		post(t, s, "amy", "a3")
		post(t, s, "cyd", "c1") // not followed
		checkFeed(t, s, rita, "a3", "b1", "a2", "a1")

		// A cursor stays valid while newer posts arrive and the cursor's own post goes.
		settle(t, s)
		first, err := s.NewLoader().Feed(ctx, uk(rita), store.Window{First: 2}, nil)
		if err != nil {
			t.Fatal(err)
		}
		post(t, s, "amy", "a4")
		if err := s.DeletePost(ctx, "ben", first.Items[1].ID); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		rest, err := s.NewLoader().Feed(ctx, uk(rita), store.Window{First: 20, After: first.EndCursor()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, p := range rest.Items {
			titles = append(titles, p.Title)
		}
		if !slices.Equal(titles, []string{"a2", "a1"}) || !rest.HasPrev {
			t.Errorf("second page %v (hasPrev %v), want [a2 a1]", titles, rest.HasPrev)
		}

		if err := s.DeletePost(ctx, "amy", p2); err != nil {
			t.Fatal(err)
		}
		checkFeed(t, s, rita, "a4", "a3", "a1")
		if g, _ := s.GraphOf(ctx, "rita"); len(g.Feed) != 3 {
			t.Errorf("deleted posts still stored in the feed: %v", g.Feed)
		}

		if _, err := s.Unfollow(ctx, "rita", uk(amy)); err != nil {
			t.Fatal(err)
		}
		checkFeed(t, s, rita)
		post(t, s, "amy", "a5")
		checkFeed(t, s, rita)
		if g, _ := s.GraphOf(ctx, "rita"); len(g.Feed) != 0 {
			t.Errorf("unfollowed user's posts still stored in the feed: %v", g.Feed)
		}
		if _, err := s.Follow(ctx, "rita", uk(amy)); err != nil {
			t.Fatal(err)
		}
		checkFeed(t, s, rita, "a5", "a4", "a3", "a1")
	})
}

func TestFeedPulled(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock(), Feed: store.FeedOptions{FanoutLimit: 1}})
		ids := signUp(t, s, "amy", "ben", "rd1", "rd2", "rd3")
		amy, bo := ids[0], ids[1]

		post(t, s, "amy", "a1")
		for _, r := range []string{"rd1", "rd2"} { // r1 fills amy's push set; r2 pulls
			if _, err := s.Follow(ctx, uk(r), uk(amy)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Follow(ctx, "rd2", uk(bo)); err != nil { // bo has room: pushed
			t.Fatal(err)
		}
		post(t, s, "ben", "b1")
		a2 := post(t, s, "amy", "a2")
		post(t, s, "ben", "b2")
		post(t, s, "amy", "a3")

		ga, _ := s.GraphOf(ctx, "amy")
		g2, _ := s.GraphOf(ctx, "rd2")
		if !slices.Equal(ga.Push, []string{"rd1"}) || !slices.Equal(g2.Pull, []string{"amy"}) {
			t.Fatalf("amy pushes to %v, r2 pulls %v", ga.Push, g2.Pull)
		}
		if slices.ContainsFunc(g2.Feed, func(pid string) bool { return pid == a2[len("post:"):] }) {
			t.Fatalf("a pulled post was pushed: %v", g2.Feed)
		}
		checkFeed(t, s, "rd1", "a3", "a2", "a1")
		checkFeed(t, s, "rd2", "a3", "b2", "a2", "b1", "a1")
		settle(t, s)
		p, err := s.NewLoader().Feed(ctx, "rd2", store.Window{First: 2}, nil)
		if err != nil || p.Total != 5 {
			t.Errorf("total %v (%v), want 5", p, err)
		}

		if err := s.DeletePost(ctx, "amy", a2); err != nil {
			t.Fatal(err)
		}
		checkFeed(t, s, "rd1", "a3", "a1")
		checkFeed(t, s, "rd2", "a3", "b2", "b1", "a1")

		if _, err := s.Unfollow(ctx, "rd2", uk(amy)); err != nil {
			t.Fatal(err)
		}
		checkFeed(t, s, "rd2", "b2", "b1")

		// r1 leaves amy's push set, so the next follower is pushed to.
		if _, err := s.Unfollow(ctx, "rd1", uk(amy)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Follow(ctx, "rd3", uk(amy)); err != nil {
			t.Fatal(err)
		}
		if ga, _ := s.GraphOf(ctx, "amy"); !slices.Equal(ga.Push, []string{"rd3"}) {
			t.Errorf("amy pushes to %v, want [r3]", ga.Push)
		}
		checkFeed(t, s, "rd3", "a3", "a1")
	})
}

func TestFeedCap(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock(), Feed: store.FeedOptions{Cap: 3, FanoutLimit: 1, Backfill: 2}})
		ids := signUp(t, s, "amy", "ben", "xav", "reader")
		amy, bo := ids[0], ids[1]
		post(t, s, "amy", "a0")
		post(t, s, "amy", "a1")
		post(t, s, "amy", "a2")
		settle(t, s) // fanned out to nobody before the follows
		for _, f := range []struct{ who, whom string }{{"xav", bo}, {"reader", amy}, {"reader", bo}} {
			if _, err := s.Follow(ctx, uk(f.who), uk(f.whom)); err != nil {
				t.Fatal(err)
			}
		}
		checkFeed(t, s, "reader", "a2", "a1") // backfill of 2
		post(t, s, "ben", "b3")               // pulled: x fills bo's push set
		post(t, s, "amy", "a4")
		post(t, s, "amy", "a5")
		post(t, s, "amy", "a6")
		post(t, s, "ben", "b7")
		// The feed keeps a4..a6; b3 is older than the oldest entry kept, so it is left out too.
		checkFeed(t, s, "reader", "b7", "a6", "a5", "a4")
		if g, _ := s.GraphOf(ctx, "reader"); len(g.Feed) != 3 {
			t.Errorf("feed holds %d entries, cap 3", len(g.Feed))
		}
		settle(t, s)
		p, err := s.NewLoader().Feed(ctx, "reader", store.Window{First: 10}, nil)
		if err != nil || p.Total != 4 {
			t.Errorf("total %+v (%v), want 4", p, err)
		}
	})
}

// TestFeedRoundTripsDoNotGrow checks that reading a feed page, a followers page and the leaderboard,
// forwards and backwards, costs the same number of round trips whatever the number of followees,
// pulled authors and users.
func TestFeedRoundTripsDoNotGrow(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		// A client of its own, so that the tests running beside this one are not counted.
		b, hook := b.Counted(t)
		// A long loader wait makes the batches independent of goroutine scheduling.
		s := b.NewStore(t, store.Options{Feed: store.FeedOptions{FanoutLimit: 1}})
		measure := func(n int) []int64 {
			reader := fmt.Sprintf("reader%d", n)
			signUp(t, s, reader)
			for i := range n {
				pushed, pulled := fmt.Sprintf("pushed%d_%d", n, i), fmt.Sprintf("pulled%d_%d", n, i)
				ids := signUp(t, s, pushed, pulled)
				// pushed fills pulled's push set first, so the reader pulls pulled's posts.
				for _, f := range [][2]string{{pushed, ids[1]}, {reader, ids[0]}, {reader, ids[1]}} {
					if _, err := s.Follow(ctx, uk(f[0]), uk(f[1])); err != nil {
						t.Fatal(err)
					}
				}
				post(t, s, pushed, "by "+pushed)
				post(t, s, pulled, "by "+pulled)
			}
			id := "user:" + reader
			var out []int64
			for _, w := range []store.Window{{First: 20}, {Last: 20}} {
				for _, read := range []func(l *store.Loader) error{
					func(l *store.Loader) error { _, err := l.Feed(ctx, uk(id), w, nil); return err },
					func(l *store.Loader) error { _, err := l.Following(ctx, uk(id), w, nil); return err },
					func(l *store.Loader) error { _, err := l.Leaderboard(ctx, w, nil); return err },
				} {
					before := hook.Count()
					if err := read(s.NewLoader()); err != nil {
						t.Fatal(err)
					}
					out = append(out, hook.Count()-before)
				}
			}
			return out
		}
		small, large := measure(2), measure(8)
		if !slices.Equal(small, large) {
			t.Errorf("round trips (feed, following, leaderboard; first, then last) grew from %v to %v", small, large)
		}
		if small[0] > 3 || small[3] > 3 {
			t.Errorf("a feed page with pulled authors took %d round trips forwards and %d backwards, want at most 3", small[0], small[3])
		}
	})
}

// TestFeedBackwardFromBeyondTheHorizon pages a full feed backwards from a cursor that new posts
// have since pushed past the horizon (the oldest entry the feed keeps): the page is the feed's
// last items before the cursor, pulled posts near the horizon included, not pulled posts older
// than the horizon that the feed no longer shows.
func TestFeedBackwardFromBeyondTheHorizon(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock(), WriteLimit: -1, Feed: store.FeedOptions{Cap: 6, FanoutLimit: 1}})
		signUp(t, s, "reader", "pushed", "pulled", "other")
		// other fills pulled's push set, so the reader reads pulled's posts; pushed's fill the feed.
		for _, f := range [][2]store.UserKey{{"other", "pulled"}, {"reader", "pushed"}, {"reader", "pulled"}} {
			if _, err := s.Follow(ctx, f[0], f[1]); err != nil {
				t.Fatal(err)
			}
		}
		write := func(n int) {
			for i := range n {
				post(t, s, "pushed", fmt.Sprint("pushed ", i))
				post(t, s, "pulled", fmt.Sprint("pulled ", i))
			}
			settle(t, s)
		}
		read := func(w store.Window) []string {
			t.Helper()
			p, err := s.NewLoader().Feed(ctx, "reader", w, nil)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, it := range p.Items {
				out = append(out, it.ID)
			}
			return out
		}
		write(8)
		before, err := s.NewLoader().Feed(ctx, "reader", store.Window{Last: 1}, nil)
		if err != nil || len(before.Items) != 1 {
			t.Fatalf("the oldest entry: %+v %v", before, err)
		}
		write(3) // the horizon moves past the cursor
		all := read(store.Window{First: 100})
		for _, n := range []int{1, 3, 5} {
			if got, want := read(store.Window{Last: n, Before: before.EndCursor()}), all[len(all)-n:]; !slices.Equal(got, want) {
				t.Errorf("last %d before a cursor beyond the horizon: %v, want %v (of %v)", n, got, want, all)
			}
		}
	})
}
