package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// benchStore returns a Store on the package's real redis-server.
func benchStore(b *testing.B, opts store.Options) *store.Store {
	b.Helper()
	srv := storetest.RealServer(b)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	b.Cleanup(func() { _ = rdb.Close() })
	opts.Prefix = storetest.Prefix()
	opts.Password = storetest.FastPasswords
	opts.WriteLimit = -1
	s, err := store.New(context.Background(), rdb, opts)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// followers signs up n users who follow author.
func followers(b *testing.B, s *store.Store, author string, n int) {
	b.Helper()
	ctx := context.Background()
	for i := range n {
		name := fmt.Sprintf("%s_f%d", author, i)
		if _, err := s.SignUp(ctx, name, "password1"); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Follow(ctx, uk(name), uk(author)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreatePostFanout measures publishing a post whose author pushes to n followers:
// "write" is createPost alone (the fan-out is queued as jobs), "lastFeed" is createPost until the
// last follower's feed shows the post, with one process running the jobs.
func BenchmarkCreatePostFanout(b *testing.B) {
	for _, n := range []int{0, 1000, 10000} {
		ctx := context.Background()
		s := benchStore(b, store.Options{Feed: store.FeedOptions{FanoutLimit: 10000}})
		if _, err := s.SignUp(ctx, "author", "password1"); err != nil {
			b.Fatal(err)
		}
		followers(b, s, "author", n)
		b.Run(fmt.Sprintf("followers=%d/write", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := s.CreatePost(ctx, "author", store.NewPost{Title: fmt.Sprint("post ", i)}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if _, err := s.Jobs().RunDue(ctx); err != nil { // the queued fan-outs, off the clock
				b.Fatal(err)
			}
		})
		if n == 0 {
			continue
		}
		b.Run(fmt.Sprintf("followers=%d/lastFeed", n), func(b *testing.B) {
			run, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); s.RunBackground(run) }()
			defer func() { stop(); <-done }()
			last := uk(fmt.Sprintf("author_f%d", n-1))
			for i := 0; b.Loop(); i++ {
				p, err := s.CreatePost(ctx, "author", store.NewPost{Title: fmt.Sprint("fanned ", i)})
				if err != nil {
					b.Fatal(err)
				}
				for {
					page, err := s.NewLoader().Feed(ctx, last, store.Window{First: 1}, nil)
					if err != nil {
						b.Fatal(err)
					}
					if len(page.Items) == 1 && page.Items[0].ID == p.ID {
						break
					}
				}
			}
		})
	}
}

// BenchmarkFeedPage measures reading the first 20 posts of a full feed that also pulls from k
// authors.
func BenchmarkFeedPage(b *testing.B) {
	for _, k := range []int{0, 10, 50} {
		b.Run(fmt.Sprintf("pulled=%d", k), func(b *testing.B) {
			ctx := context.Background()
			s := benchStore(b, store.Options{Feed: store.FeedOptions{FanoutLimit: 1}})
			if _, err := s.SignUp(ctx, "reader", "password1"); err != nil {
				b.Fatal(err)
			}
			// One pushed author fills the feed; k authors whose push set is full are pulled.
			if _, err := s.SignUp(ctx, "pushed", "password1"); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Follow(ctx, "reader", "pushed"); err != nil {
				b.Fatal(err)
			}
			for i := range 520 {
				if _, err := s.CreatePost(ctx, "pushed", store.NewPost{Title: fmt.Sprint("p", i)}); err != nil {
					b.Fatal(err)
				}
			}
			for i := range k {
				name := fmt.Sprintf("pulled%d", i)
				if _, err := s.SignUp(ctx, name, "password1"); err != nil {
					b.Fatal(err)
				}
				followers(b, s, name, 1)
				if _, err := s.Follow(ctx, "reader", uk(name)); err != nil {
					b.Fatal(err)
				}
				for j := range 5 {
					if _, err := s.CreatePost(ctx, uk(name), store.NewPost{Title: fmt.Sprint(name, j)}); err != nil {
						b.Fatal(err)
					}
				}
			}
			for b.Loop() {
				p, err := s.NewLoader().Feed(ctx, "reader", store.Window{First: 20}, nil)
				if err != nil || len(p.Items) != 20 {
					b.Fatalf("feed: %d items, %v", len(p.Items), err)
				}
			}
		})
	}
}

// BenchmarkFollowUnfollow measures one follow followed by one unfollow.
func BenchmarkFollowUnfollow(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b, store.Options{})
	for _, n := range []string{"ann", "ben"} {
		if _, err := s.SignUp(ctx, n, "password1"); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, err := s.Follow(ctx, "ann", "ben"); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Unfollow(ctx, "ann", "ben"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVoteWithKarma measures a vote on a post, including its rankings, the author's karma and
// the leaderboard.
func BenchmarkVoteWithKarma(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b, store.Options{})
	for _, n := range []string{"ann", "ben"} {
		if _, err := s.SignUp(ctx, n, "password1"); err != nil {
			b.Fatal(err)
		}
	}
	p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "t"})
	if err != nil {
		b.Fatal(err)
	}
	dir := 1
	for b.Loop() {
		if _, err := s.VotePost(ctx, "ben", p.ID, dir); err != nil {
			b.Fatal(err)
		}
		dir = -dir
	}
}

// BenchmarkLeaderboardAndSuggest measures a leaderboard page and a user autocomplete among 2,000
// users.
func BenchmarkLeaderboardAndSuggest(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b, store.Options{})
	for i := range 2000 {
		if _, err := s.SignUp(ctx, fmt.Sprintf("user%04d", i), "password1"); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("leaderboard", func(b *testing.B) {
		for b.Loop() {
			if p, err := s.NewLoader().Leaderboard(ctx, store.Window{First: 20}, nil); err != nil || len(p.Items) != 20 {
				b.Fatal(err)
			}
		}
	})
	b.Run("suggestUsers", func(b *testing.B) {
		for b.Loop() {
			if us, err := s.NewLoader().SuggestUsers(ctx, "USER01", 10, nil); err != nil || len(us) != 10 {
				b.Fatal(err)
			}
		}
	})
}
