package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestConcurrentFailedLoginsStayWithinLimits sends 400 wrong-password log-ins at once and counts
// the argon2id verifications: no more passwords are checked than the limits allow, however the
// attempts are spread over accounts and addresses.
func TestConcurrentFailedLoginsStayWithinLimits(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		const attempts = 400
		for _, tc := range []struct {
			name    string
			account func(i int) string // the account attempt i guesses
			addr    func(i int) string // the address it comes from
			want    int                // the verifications the limits allow
		}{
			{"one account, one address",
				func(int) string { return "victim" }, func(int) string { return "198.51.100.7" }, 10},
			{"one account, many addresses",
				func(int) string { return "victim" }, func(i int) string { return fmt.Sprintf("10.0.%d.%d", i/250, i%250) }, 10},
			{"many accounts, one address",
				func(i int) string { return fmt.Sprint("nobody", i) }, func(int) string { return "198.51.100.7" }, 50},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				s := b.NewStore(t, store.Options{WriteLimit: 120, Auth: store.AuthLimits{
					FailedLoginsPerAccount: 10, FailedLoginsPerAddress: 50, LoginWindow: 15 * time.Minute}})
				if _, err := s.SignUp(ctx, "victim", "right password"); err != nil {
					t.Fatal(err)
				}
				var verified, limited atomic.Int64
				s.OnVerify(func() { verified.Add(1) })
				var wg sync.WaitGroup
				for i := range attempts {
					wg.Go(func() {
						_, err := s.LogIn(store.WithClient(ctx, tc.addr(i)), tc.account(i), "wrong password")
						switch {
						case store.IsKind(err, store.KindRateLimited):
							limited.Add(1)
						case !store.IsKind(err, store.KindUnauthenticated):
							t.Errorf("log-in %d: %v", i, err)
						}
					})
				}
				wg.Wait()
				// Never more verified than the limits allow. Fewer is possible: an attempt refused by
				// one window releases its slot in the other a round trip later, so an attempt that
				// meets that window meanwhile finds it full of slots about to be released (on a
				// cluster the two windows are on different nodes, and this happens).
				if v, l := verified.Load(), limited.Load(); v > int64(tc.want) || v < 1 || v+l != attempts {
					t.Fatalf("%d passwords verified, %d log-ins refused; want at most %d verified, the rest refused", v, l, tc.want)
				}
			})
		}
	})
}

// TestGuessingDoesNotLockOutTheOwner checks that failed log-ins lock the guessing addresses, not
// the owner: once guessers have used the account's window, the owner still logs in from an
// address they logged in from before, while the guessers are refused with a retryAfter.
func TestGuessingDoesNotLockOutTheOwner(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{WriteLimit: 120, Auth: store.AuthLimits{
			FailedLoginsPerAccount: 3, FailedLoginsPerAddress: 100, LoginWindow: time.Minute}})
		home, phone := store.WithClient(ctx, "192.0.2.10:51000"), store.WithClient(ctx, "2001:db8::1")
		attacker, botnet := store.WithClient(ctx, "198.51.100.7"), store.WithClient(ctx, "203.0.113.9")
		if _, err := s.SignUp(home, "owner", "right password"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.LogIn(phone, "owner", "right password"); err != nil { // the phone becomes known too
			t.Fatal(err)
		}
		limited := func(what string, err error) {
			t.Helper()
			var e *store.Error
			if !store.IsKind(err, store.KindRateLimited) || !asStoreError(err, &e) || e.RetryAfter < time.Second {
				t.Fatalf("%s: %v, want RATE_LIMITED with a retryAfter", what, err)
			}
		}
		for i := range 3 {
			if _, err := s.LogIn(attacker, "owner", fmt.Sprint("guess ", i)); !store.IsKind(err, store.KindUnauthenticated) {
				t.Fatalf("guess %d: %v", i, err)
			}
		}
		_, err := s.LogIn(attacker, "owner", "right password")
		limited("the attacker, even with the right password", err)
		_, err = s.LogIn(botnet, "owner", "guess 4")
		limited("another unknown address", err)
		for _, at := range []context.Context{home, phone} {
			if _, err := s.LogIn(at, "owner", "right password"); err != nil {
				t.Fatalf("the owner from %s: %v", store.ClientFrom(at), err)
			}
		}
		// The owner's own mistakes count in their address's window, which locks that address only.
		for i := range 3 {
			if _, err := s.LogIn(home, "owner", fmt.Sprint("typo ", i)); !store.IsKind(err, store.KindUnauthenticated) {
				t.Fatalf("typo %d: %v", i, err)
			}
		}
		_, err = s.LogIn(home, "owner", "right password")
		limited("the owner's address after its own 3 failures", err)
		if _, err := s.LogIn(phone, "owner", "right password"); err != nil {
			t.Fatalf("the owner from the phone: %v", err)
		}
		_, err = s.LogIn(attacker, "owner", "right password")
		limited("the attacker, still", err)
	})
}
