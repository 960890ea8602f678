package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// retryAfter returns the RetryAfter of a KindRateLimited error, 0 for nil; any other error fails.
func retryAfter(t *testing.T, err error) time.Duration {
	t.Helper()
	if err == nil {
		return 0
	}
	var se *store.Error
	if !asStoreError(err, &se) || se.Kind != store.KindRateLimited {
		t.Fatalf("want RATE_LIMITED or nothing, got %v", err)
	}
	return se.RetryAfter
}

func TestNewAccountLimits(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		ctx := context.Background()
		clock := storetest.NewClock()
		s := be.NewStore(t, store.Options{Now: clock.Now, WriteLimit: 10000,
			NewAccount: store.NewAccountLimits{Age: 24 * time.Hour, Posts: 3, Comments: 2}})
		signUp := func(name string) store.UserKey {
			t.Helper()
			if _, err := s.SignUp(ctx, name, "password1"); err != nil {
				t.Fatal(err)
			}
			return store.UserKey(name)
		}
		veteran := signUp("veteran")
		clock.Add(24 * time.Hour)
		newbie, mod, root := signUp("newbie"), signUp("moddy"), signUp("root")
		born := clock.Now()
		if err := s.GrantAdmin(ctx, "root"); err != nil {
			t.Fatal(err)
		}
		// A new account creates no group: as its moderator it would be exempt below.
		if got := retryAfter(t, ignore(s.CreateGroup(ctx, mod, "modg", nil))); got != 24*time.Hour {
			t.Fatalf("a new account creates a group: retry after %v, want 24h", got)
		}
		if _, err := s.CreateGroup(ctx, veteran, "modg", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddModerator(ctx, veteran, "modg", mod); err != nil {
			t.Fatal(err)
		}
		post := func(u store.UserKey, p store.NewPost) error {
			t.Helper()
			if p.Title == "" {
				p.Title = "a post"
			}
			_, err := s.CreatePost(ctx, u, p)
			return err
		}
		for i := range 5 {
			if err := post(veteran, store.NewPost{URL: "https://example.com"}); err != nil {
				t.Fatalf("an old account's post %d: %v", i, err)
			}
		}
		// A new account: three posts an hour, the fourth waits for the first to leave the window.
		for i := range 3 {
			if err := post(newbie, store.NewPost{}); err != nil {
				t.Fatalf("a new account's post %d: %v", i, err)
			}
			clock.Add(time.Minute)
		}
		if got := retryAfter(t, post(newbie, store.NewPost{})); got != 57*time.Minute {
			t.Errorf("the fourth post: retry after %v, want 57m", got)
		}
		// No links: not as a URL, not in the body or title; retry when the account is old enough.
		for _, p := range []store.NewPost{{URL: "https://example.com"}, {Body: "see http://x.example"}, {Title: "www.example.com deals"}} {
			if got := retryAfter(t, post(newbie, p)); got != 24*time.Hour-3*time.Minute {
				t.Errorf("a link %+v: retry after %v", p, got)
			}
		}
		// Comments: two an hour.
		target, err := s.CreatePost(ctx, veteran, store.NewPost{Title: "talk", Groups: []string{"modg"}})
		if err != nil {
			t.Fatal(err)
		}
		comment := func(u store.UserKey) error {
			_, err := s.CreateComment(ctx, u, store.NewComment{PostID: target.ID, Body: "hi"})
			return err
		}
		for range 2 {
			if err := comment(newbie); err != nil {
				t.Fatal(err)
			}
		}
		if retryAfter(t, comment(newbie)) == 0 {
			t.Error("a third comment within the hour was allowed")
		}
		// Moderators in their groups and admins are exempt.
		for i := range 4 {
			if err := post(mod, store.NewPost{Groups: []string{"modg"}, URL: "https://example.com"}); err != nil {
				t.Fatalf("a moderator's post %d in their group: %v", i, err)
			}
			if err := comment(mod); err != nil {
				t.Fatalf("a moderator's comment %d in their group: %v", i, err)
			}
			if err := post(root, store.NewPost{URL: "https://example.com"}); err != nil {
				t.Fatalf("an admin's post %d: %v", i, err)
			}
		}
		if retryAfter(t, post(mod, store.NewPost{Groups: []string{"modg", "other"}, URL: "https://example.com"})) == 0 {
			t.Error("a moderator's link into a group they do not moderate was allowed")
		}
		// The sliding window: the first post leaves it an hour after it was made.
		clock.Set(born.Add(time.Hour - time.Millisecond))
		if retryAfter(t, post(newbie, store.NewPost{})) == 0 {
			t.Error("a fourth post a millisecond before the hour was allowed")
		}
		clock.Set(born.Add(time.Hour))
		if err := post(newbie, store.NewPost{}); err != nil {
			t.Errorf("at the hour: %v", err)
		}
		// The second the account ages out, it is limited no more.
		clock.Set(born.Add(24*time.Hour - time.Second))
		if got := retryAfter(t, post(newbie, store.NewPost{URL: "https://example.com"})); got != time.Second {
			t.Errorf("a second before: retry after %v", got)
		}
		clock.Set(born.Add(24 * time.Hour))
		for i := range 4 {
			if err := post(newbie, store.NewPost{URL: "https://example.com"}); err != nil {
				t.Fatalf("aged out, post %d: %v", i, err)
			}
		}
	})
}

func TestNewAccountKarmaGate(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		ctx := context.Background()
		for _, c := range []struct {
			name    string
			opts    store.Options
			limited bool
		}{
			{"karma gate", store.Options{WriteLimit: 10000, NewAccount: store.NewAccountLimits{Age: -1, Karma: 1}}, true},
			{"no gate", store.Options{WriteLimit: 10000, NewAccount: store.NewAccountLimits{Age: -1}}, false},
			{"limits off", store.Options{WriteLimit: -1, NewAccount: store.NewAccountLimits{Karma: 1}}, false},
		} {
			t.Run(c.name, func(t *testing.T) {
				s := be.NewStore(t, c.opts)
				for _, n := range []string{"poor", "rich"} {
					if _, err := s.SignUp(ctx, n, "password1"); err != nil {
						t.Fatal(err)
					}
				}
				p, err := s.CreatePost(ctx, "rich", store.NewPost{Title: "t"})
				if err != nil {
					t.Fatal(err)
				}
				linked := store.NewPost{Title: "t", URL: "https://example.com"}
				got := retryAfter(t, ignore(s.CreatePost(ctx, "poor", linked)))
				if (got > 0) != c.limited {
					t.Fatalf("low karma: retry after %v, want limited %v", got, c.limited)
				}
				if _, err := s.VotePost(ctx, "poor", p.ID, 1); err != nil {
					t.Fatal(err)
				}
				if _, err := s.CreatePost(ctx, "rich", linked); err != nil {
					t.Fatalf("with karma: %v", err)
				}
			})
		}
	})
}

// TestNewAccountRetriesCountOnce: a creation retried with its idempotency key (its reply was
// lost) counts once in a new account's window of posts or comments: the retries get the first
// post or comment back, and the account can still make as many others as the window allows.
func TestNewAccountRetriesCountOnce(t *testing.T) {
	for _, kind := range []string{"posts", "comments"} {
		t.Run(kind, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, be storetest.Backend) {
				ctx := context.Background()
				clock := storetest.NewClock()
				s := be.NewStore(t, store.Options{Now: clock.Now, WriteLimit: 10000,
					NewAccount: store.NewAccountLimits{Age: 24 * time.Hour, Posts: 2, Comments: 2}})
				for _, name := range []string{"veteran", "newbie"} {
					if _, err := s.SignUp(ctx, name, "password1"); err != nil {
						t.Fatal(err)
					}
					clock.Add(24 * time.Hour)
				}
				clock.Add(-12 * time.Hour) // newbie is 12 hours old
				on, err := s.CreatePost(ctx, "veteran", store.NewPost{Title: "a thread"})
				if err != nil {
					t.Fatal(err)
				}
				create := func(key string) (string, error) {
					if kind == "posts" {
						p, err := s.CreatePost(ctx, "newbie", store.NewPost{Title: "hello", IdempotencyKey: key})
						if err != nil {
							return "", err
						}
						return p.ID, nil
					}
					c, err := s.CreateComment(ctx, "newbie", store.NewComment{PostID: on.ID, Body: "hello", IdempotencyKey: key})
					if err != nil {
						return "", err
					}
					return c.ID, nil
				}
				first, err := create("k1")
				if err != nil {
					t.Fatal(err)
				}
				for i := range 3 {
					clock.Add(time.Second)
					again, err := create("k1")
					if err != nil || again != first {
						t.Fatalf("retry %d: %s %v, want %s again", i+1, again, err, first)
					}
				}
				if _, err := create("k2"); err != nil {
					t.Fatalf("the second of 2 %s an hour after retries of the first: %v", kind, err)
				}
				if _, err := create("k3"); retryAfter(t, err) == 0 {
					t.Fatalf("a third %s in the hour: %v, want RATE_LIMITED", kind, err)
				}
			})
		})
	}
}
