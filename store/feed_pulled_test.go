package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// feedTitlesBackward reads a whole feed backwards, page by page from its end, and returns the
// titles in feed order.
func feedTitlesBackward(t *testing.T, s *store.Store, viewer string, pageSize int) []string {
	t.Helper()
	var out []string
	before := ""
	for range 100 {
		p, err := s.NewLoader().Feed(context.Background(), uk(viewer), store.Window{Last: pageSize, Before: before}, nil)
		if err != nil {
			t.Fatalf("feed of %s: %v", viewer, err)
		}
		titles := make([]string, len(p.Items))
		for i, it := range p.Items {
			titles[i] = it.Title
		}
		out = append(titles, out...)
		if !p.HasPrev {
			return out
		}
		before = p.StartCursor()
	}
	t.Fatal("feed does not end")
	return nil
}

// checkFeedBothWays checks a feed read forwards and backwards in pages of several sizes.
func checkFeedBothWays(t *testing.T, s *store.Store, viewer string, want []string) {
	t.Helper()
	checkFeed(t, s, viewer, want...)
	for _, size := range []int{1, 3, 50} {
		if got := feedTitlesBackward(t, s, viewer, size); !slices.Equal(got, want) {
			t.Errorf("feed of %s backwards in pages of %d: %v, want %v", viewer, size, got, want)
		}
	}
}

// TestFeedPulledAuthorsBounded follows more popular authors (whose push sets are full) than a
// feed may pull: the authors beyond the bound push to the reader instead, so the feed stays exact
// in both directions and a page issues as many Redis commands whatever the number of followees.
func TestFeedPulledAuthorsBounded(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		b, hook := b.Counted(t)
		const maxPulled = 2
		s := b.NewStore(t, store.Options{Now: tickingClock(), WriteLimit: -1,
			Feed: store.FeedOptions{FanoutLimit: 1, MaxPulledAuthors: maxPulled}})
		measure := func(n int) (cmds []int64) {
			reader, filler := fmt.Sprintf("reader%d", n), fmt.Sprintf("filler%d", n)
			signUp(t, s, reader, filler)
			authors := make([]string, n)
			for i := range authors {
				authors[i] = fmt.Sprintf("star%d_%d", n, i)
				signUp(t, s, authors[i])
				// The filler fills the author's push set: later followers are beyond FanoutLimit.
				if _, err := s.Follow(ctx, uk(filler), uk(authors[i])); err != nil {
					t.Fatal(err)
				}
			}
			var want []string // newest first
			for i, a := range authors {
				title := fmt.Sprintf("%s old", a)
				post(t, s, a, title)
				want = append([]string{title}, want...)
				if i%2 == 0 {
					title = fmt.Sprintf("%s older", a)
					post(t, s, a, title)
					want = append([]string{title}, want...)
				}
			}
			settle(t, s)
			for _, a := range authors {
				if _, err := s.Follow(ctx, uk(reader), uk(a)); err != nil {
					t.Fatal(err)
				}
			}
			for i := len(authors) - 1; i >= 0; i-- {
				title := fmt.Sprintf("%s new", authors[i])
				post(t, s, authors[i], title)
				want = append([]string{title}, want...)
			}
			settle(t, s)
			g, err := s.GraphOf(ctx, reader)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Pull) > maxPulled {
				t.Errorf("%s pulls %d authors %v, at most %d", reader, len(g.Pull), g.Pull, maxPulled)
			}
			pushed := 0
			for _, a := range authors {
				ga, _ := s.GraphOf(ctx, a)
				if slices.Contains(ga.Push, reader) {
					pushed++
				}
			}
			if pushed+len(g.Pull) != n {
				t.Errorf("%s is pushed to by %d and pulls %d of %d authors", reader, pushed, len(g.Pull), n)
			}
			checkFeedBothWays(t, s, reader, want)
			for _, w := range []store.Window{{First: 5}, {Last: 5}} { // as many posts in each feed
				before := hook.Commands()
				if _, err := s.NewLoader().Feed(ctx, uk(reader), w, nil); err != nil {
					t.Fatal(err)
				}
				cmds = append(cmds, hook.Commands()-before)
			}
			return cmds
		}
		small, large := measure(3), measure(9)
		if !slices.Equal(small, large) {
			t.Errorf("Redis commands of a feed page (first, last) grew from %v to %v", small, large)
		}

		// Unfollowing a pulled author makes room: the next popular author followed is pulled, and
		// one that pushed stops pushing when unfollowed.
		g, _ := s.GraphOf(ctx, "reader9")
		if _, err := s.Unfollow(ctx, "reader9", uk(g.Pull[0])); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Unfollow(ctx, "reader9", "star9_8"); err != nil {
			t.Fatal(err)
		}
		if ga, _ := s.GraphOf(ctx, "star9_8"); slices.Contains(ga.Push, "reader9") {
			t.Errorf("star9_8 still pushes to reader9 after the unfollow: %v", ga.Push)
		}
		if _, err := s.Follow(ctx, "reader9", "star3_0"); err != nil {
			t.Fatal(err)
		}
		if g, _ := s.GraphOf(ctx, "reader9"); len(g.Pull) != maxPulled || !slices.Contains(g.Pull, "star3_0") {
			t.Errorf("reader9 pulls %v, want star3_0 among %d", g.Pull, maxPulled)
		}
	})
}

// TestFollowCap refuses a follow beyond MaxFollowing with LIMIT_REACHED, and keeps the follows
// already made (a repeat of one of them included).
func TestFollowCap(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{WriteLimit: -1})
		signUp(t, s, "ann", "ben", "cat")
		if err := s.FillFollowing(ctx, "ann", store.MaxFollowing-1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Follow(ctx, "ann", "ben"); err != nil {
			t.Fatalf("follow number %d: %v", store.MaxFollowing, err)
		}
		if _, err := s.Follow(ctx, "ann", "ben"); err != nil {
			t.Fatalf("a repeated follow at the cap: %v", err)
		}
		_, err := s.Follow(ctx, "ann", "cat")
		if !store.IsKind(err, store.KindLimitReached) {
			t.Fatalf("follow beyond the cap: %v, want LIMIT_REACHED", err)
		}
		if want := fmt.Sprintf("you may follow at most %d users", store.MaxFollowing); err.Error() != want {
			t.Errorf("message %q, want %q", err.Error(), want)
		}
		if g, _ := s.GraphOf(ctx, "cat"); len(g.Followers) != 0 {
			t.Errorf("cat has followers %v after a refused follow", g.Followers)
		}
		if _, err := s.Unfollow(ctx, "ann", "ben"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Follow(ctx, "ann", "cat"); err != nil {
			t.Errorf("follow after an unfollow made room: %v", err)
		}
	})
}

// TestPulledAuthorsRepaired completes a follow cut off before the followee was made to push to a
// reader whose pull set is full, by a repeat of the follow and by RebuildUsers, and brings a pull
// set over the bound (from before it) within it with RebuildUsers, the feed exact throughout.
func TestPulledAuthorsRepaired(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock(), WriteLimit: -1,
			Feed: store.FeedOptions{FanoutLimit: 1, MaxPulledAuthors: 1}})
		signUp(t, s, "reader", "old", "filler", "st1", "st2", "st3")
		for _, a := range []string{"st1", "st2", "st3"} {
			if _, err := s.Follow(ctx, "filler", uk(a)); err != nil {
				t.Fatal(err)
			}
			post(t, s, a, "by "+a)
		}
		settle(t, s)
		if _, err := s.Follow(ctx, "reader", "st1"); err != nil {
			t.Fatal(err)
		}
		for _, a := range []string{"st2", "st3"} {
			if err := s.FollowCutBeforePush(ctx, "reader", a); err != nil {
				t.Fatal(err)
			}
		}
		checkFeed(t, s, "reader", "by st1") // st2 and st3 neither pushed nor pulled yet
		if _, err := s.Follow(ctx, "reader", "st2"); err != nil {
			t.Fatal(err)
		}
		checkFeed(t, s, "reader", "by st2", "by st1")
		if _, err := s.RebuildUsers(ctx); err != nil {
			t.Fatal(err)
		}
		checkFeed(t, s, "reader", "by st3", "by st2", "by st1")
		for _, a := range []string{"st2", "st3"} {
			if g, _ := s.GraphOf(ctx, a); !slices.Contains(g.Push, "reader") {
				t.Errorf("%s pushes to %v, want reader among them", a, g.Push)
			}
		}

		// A pull set over the bound, as a user who followed before it may have: a page reads
		// only its latest authors until RebuildUsers moves the others to pushes.
		for _, a := range []string{"st1", "st2", "st3"} {
			if _, err := s.Follow(ctx, "old", uk(a)); err != nil {
				t.Fatal(err)
			}
			if err := s.PullInstead(ctx, "old", a); err != nil {
				t.Fatal(err)
			}
		}
		if g, _ := s.GraphOf(ctx, "old"); len(g.Pull) != 3 {
			t.Fatalf("old pulls %v, want 3 authors", g.Pull)
		}
		if _, err := s.RebuildUsers(ctx); err != nil {
			t.Fatal(err)
		}
		if g, _ := s.GraphOf(ctx, "old"); len(g.Pull) != 1 {
			t.Errorf("old pulls %v after a rebuild, at most 1", g.Pull)
		}
		checkFeed(t, s, "old", "by st3", "by st2", "by st1")
	})
}
