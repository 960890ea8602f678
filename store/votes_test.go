package store_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func TestVoteRules(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		author, voter := f.user("author"), f.user("voter")
		p := f.post(author, "p")
		steps := []struct {
			dir      int
			up, down int
		}{
			{1, 1, 0},  // up
			{1, 1, 0},  // repeating changes nothing
			{-1, 0, 1}, // switching moves both counts by exactly one
			{-1, 0, 1},
			{0, 0, 0}, // withdraw
			{0, 0, 0}, // withdrawing again changes nothing
			{-1, 0, 1},
			{1, 1, 0},
		}
		for i, st := range steps {
			got := f.vote(voter, p.ID, st.dir)
			if got.Upvotes != st.up || got.Downvotes != st.down {
				t.Fatalf("step %d (dir %d): up %d down %d, want %d %d", i, st.dir, got.Upvotes, got.Downvotes, st.up, st.down)
			}
		}
		if _, err := f.s.VotePost(f.ctx, uk(author), p.ID, 1); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("author's vote: %v", err)
		}
		if _, err := f.s.VotePost(f.ctx, uk(voter), "post:424242", 1); !store.IsKind(err, store.KindNotFound) {
			t.Fatalf("vote on missing post: %v", err)
		}
		if _, err := f.s.VotePost(f.ctx, uk(voter), "comment:1", 1); !store.IsKind(err, store.KindInvalid) {
			t.Fatalf("vote with a malformed id: %v", err)
		}
		l := f.s.NewLoader()
		got, _ := l.Post(f.ctx, p.ID)
		for who, want := range map[string]int{"user:voter": 1, "user:author": 1, "": 0, "user:nobody": 0} {
			v, err := l.PostVote(f.ctx, got, uk(who))
			if err != nil || v != want {
				t.Errorf("viewer vote of %q = %d, %v; want %d", who, v, err, want)
			}
		}
	})
}

func TestVotingWindow(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		f := newFixture(t, b, store.Options{Now: clock, VotingWindow: 48 * time.Hour})
		author, voter := f.user("author"), f.user("voter")
		p := f.post(author, "p")
		mu.Lock()
		now = now.Add(48*time.Hour - time.Millisecond)
		mu.Unlock()
		f.vote(voter, p.ID, 1)
		mu.Lock()
		now = now.Add(time.Millisecond)
		mu.Unlock()
		if _, err := f.s.VotePost(f.ctx, uk(voter), p.ID, -1); !store.IsKind(err, store.KindVotingClosed) {
			t.Fatalf("vote at the window's end: %v", err)
		}
		got, _ := f.s.NewLoader().Post(f.ctx, p.ID)
		if got.Upvotes != 1 || got.Downvotes != 0 {
			t.Fatalf("closed vote changed counts: %+v", got)
		}
	})
}

func TestConcurrentVotesAreExact(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		author := f.user("author")
		p := f.post(author, "contested")
		const n = 40
		users := make([]string, n)
		for i := range users {
			users[i] = f.user(fmt.Sprintf("user%02d", i))
		}
		var wg sync.WaitGroup
		// Every user votes up twice at once and the even ones switch to down: the final state is
		// known whatever the interleaving of one user's votes with others'.
		for i, u := range users {
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := f.s.VotePost(f.ctx, uk(u), p.ID, 1); err != nil {
						t.Error(err)
					}
				}()
			}
			_ = i
		}
		wg.Wait()
		got, _ := f.s.NewLoader().Post(f.ctx, p.ID)
		if got.Upvotes != n || got.Downvotes != 0 {
			t.Fatalf("after %d users voted up twice each: up %d down %d", n, got.Upvotes, got.Downvotes)
		}
		for i, u := range users {
			if i%2 == 1 {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := f.s.VotePost(f.ctx, uk(u), p.ID, -1); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		got, _ = f.s.NewLoader().Post(f.ctx, p.ID)
		if got.Upvotes != n/2 || got.Downvotes != n/2 {
			t.Fatalf("after switches: up %d down %d", got.Upvotes, got.Downvotes)
		}
		// The TOP ranking holds the final net, not a stale one.
		page, err := f.s.NewLoader().Posts(f.ctx, store.SortTop, "", store.Window{First: 1}, nil)
		if err != nil || len(page.Items) != 1 || page.Items[0].Net() != 0 {
			t.Fatalf("top ranking: %+v %v", page, err)
		}
	})
}

func TestRateLimit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: 3, WriteWindow: time.Minute})
		alice := f.user("alice")
		for i := 0; i < 3; i++ {
			f.post(alice, fmt.Sprint("p", i))
		}
		_, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: "one too many"})
		var se *store.Error
		if !store.IsKind(err, store.KindRateLimited) {
			t.Fatalf("fourth write: %v", err)
		}
		if ok := asStoreError(err, &se); !ok || se.RetryAfter <= 0 || se.RetryAfter > time.Minute {
			t.Fatalf("retry after %v", se)
		}
		// Other users are not affected.
		f.post(f.user("bob"), "fine")
	})
}
