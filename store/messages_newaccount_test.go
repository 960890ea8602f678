package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestNewAccountMessageRequestsLimited: a new account sends at most NewAccountLimits.Requests
// message requests — messages to users who have not accepted its messages — per window, exactly,
// also when it sends them at once; its messages in a conversation whose recipient wrote to it
// (accepted) do not count, nor do an old account's, and the limits off (-write-limit -1) lift it.
// The sign-up limits let one address make ten accounts an hour, each of which could otherwise
// write to thirty strangers a minute.
func TestNewAccountMessageRequestsLimited(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		const limit = 3
		o := store.Options{WriteLimit: 1000, Now: clk.Now, Prefix: storetest.Prefix(),
			NewAccount: store.NewAccountLimits{Requests: limit}}
		s := b.NewStore(t, o)
		strangers := make([]string, 12)
		for i := range strangers {
			strangers[i] = fmt.Sprintf("stranger%d", i)
		}
		signUp(t, s, append([]string{"newbie", "friend"}, strangers...)...)

		// A friend writes first: the newbie's messages to them are no requests, through the checks
		// (a minute and more apart, past every send lease) or on a lease.
		send(t, s, "friend", "newbie", "welcome")
		for i := range 2 * limit {
			clk.Add(2 * time.Minute)
			send(t, s, "newbie", "friend", fmt.Sprint("reply ", i))
			send(t, s, "newbie", "friend", fmt.Sprint("again ", i))
		}

		// Eight requests at once: exactly the limit go.
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = s.SendMessage(ctx, "newbie", store.UserKey(strangers[i]), "hello", "")
			})
		}
		wg.Wait()
		sent := 0
		for _, err := range errs {
			switch {
			case err == nil:
				sent++
			case store.IsKind(err, store.KindRateLimited):
				var se *store.Error
				if !errors.As(err, &se) || se.RetryAfter <= 0 {
					t.Errorf("a refused request without a retry time: %v", err)
				}
			default:
				t.Errorf("a request: %v, want RATE_LIMITED or nothing", err)
			}
		}
		if sent != limit {
			t.Fatalf("%d of 8 requests sent at once went, want %d", sent, limit)
		}
		if got := len(convsOf(t, s, "newbie", false)); got != 1+limit {
			t.Errorf("newbie's conversations: %d, want %d", got, 1+limit)
		}

		// A window later, the limit again.
		clk.Add(time.Hour + time.Second)
		for i, name := range strangers[8:] {
			_, err := s.SendMessage(ctx, "newbie", store.UserKey(name), "hello again", "")
			if want := i < limit; (err == nil) != want {
				t.Errorf("request %d of the next hour: %v, want sent %t", i+1, err, want)
			}
		}

		// An old account is not limited, nor is a new one with the limits off.
		clk.Add(25 * time.Hour)
		for _, name := range strangers[:8] {
			if _, err := s.SendMessage(ctx, "newbie", store.UserKey(name), "a day later", ""); err != nil {
				t.Errorf("a request of an old account: %v", err)
			}
		}
		off := o
		off.WriteLimit = -1
		free := b.NewStore(t, off)
		signUp(t, free, "fresh")
		for _, name := range strangers {
			if _, err := free.SendMessage(ctx, "fresh", store.UserKey(name), "hi", ""); err != nil {
				t.Errorf("a request with the limits off: %v", err)
			}
		}
	})
}

// TestNewAccountRefusedRepliesAreNoRequests: a new account's message to a user who accepted its
// messages is no request, also when a check refuses it; such refusals (here the message limit,
// with a friend) once counted in the requests window for good — their release rode only in the
// pipeline of a message sent — and so refused the account's first requests of the hour.
func TestNewAccountRefusedRepliesAreNoRequests(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		const limit = 3
		s := b.NewStore(t, store.Options{WriteLimit: 1000, Now: clk.Now, Prefix: storetest.Prefix(),
			Messages:   store.MessageOptions{PerWindow: 2},
			NewAccount: store.NewAccountLimits{Requests: limit}})
		signUp(t, s, "newbie", "friend", "sue1", "sue2", "sue3")
		send(t, s, "friend", "newbie", "welcome")
		send(t, s, "newbie", "friend", "one")
		send(t, s, "newbie", "friend", "two")
		for i := range limit {
			if _, err := s.SendMessage(ctx, "newbie", "friend", fmt.Sprint("too many ", i), ""); !store.IsKind(err, store.KindRateLimited) {
				t.Fatalf("a message over the message limit: %v, want RATE_LIMITED", err)
			}
		}
		for _, name := range []string{"sue1", "sue2", "sue3"} {
			clk.Add(2 * time.Minute) // the message limit's window is past; the requests' is not
			if _, err := s.SendMessage(ctx, "newbie", store.UserKey(name), "hello", ""); err != nil {
				t.Errorf("a request within the limit, after refused messages that were none: %v", err)
			}
		}
	})
}

// TestNewAccountRequestRetriedCountsOnce: a request retried with its idempotency key is one
// request: the retries answer the first message, and neither count in the requests window nor
// are refused by it, nor take back the first's count once the recipient accepted. Each once
// counted anew, and the retry that found the window full was
// answered RATE_LIMITED for a message that was sent.
func TestNewAccountRequestRetriedCountsOnce(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		const limit = 3
		s := b.NewStore(t, store.Options{WriteLimit: 1000, Prefix: storetest.Prefix(),
			NewAccount: store.NewAccountLimits{Requests: limit}})
		signUp(t, s, "newbie", "sue1", "sue2", "sue3", "sue4")
		first, err := s.SendMessage(ctx, "newbie", "sue1", "hello", "key-1")
		if err != nil {
			t.Fatal(err)
		}
		for i := range limit {
			m, err := s.SendMessage(ctx, "newbie", "sue1", "hello", "key-1")
			if err != nil || m == nil || m.ID != first.ID {
				t.Fatalf("retry %d of a request: %+v, %v; want the first message %s", i+1, m, err, first.ID)
			}
		}
		for _, name := range []string{"sue2", "sue3"} {
			if _, err := s.SendMessage(ctx, "newbie", store.UserKey(name), "hello", ""); err != nil {
				t.Errorf("a request within the limit, after a request retried: %v", err)
			}
		}
		if _, err := s.SendMessage(ctx, "newbie", "sue4", "hello", ""); !store.IsKind(err, store.KindRateLimited) {
			t.Errorf("a request over the limit: %v, want RATE_LIMITED", err)
		}
		// Accepted since, the first request stays one: its retry does not take its count back.
		send(t, s, "sue1", "newbie", "hi")
		if m, err := s.SendMessage(ctx, "newbie", "sue1", "hello", "key-1"); err != nil || m == nil || m.ID != first.ID {
			t.Fatalf("a retry after the conversation was accepted: %+v, %v; want the first message", m, err)
		}
		if _, err := s.SendMessage(ctx, "newbie", "sue4", "hello", ""); !store.IsKind(err, store.KindRateLimited) {
			t.Errorf("a request over the limit, after a retry of an accepted request: %v, want RATE_LIMITED", err)
		}
	})
}
