package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/mail"
	"github.com/agora/agora/mail/mailtest"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// emailsAgree checks that the email index and the accounts' recorded addresses agree: each
// account's address is claimed by that account (so no address is recorded by two accounts, or by
// one while nobody claims it), and each claimed address of addrs is recorded by the account that
// claims it. It returns the claims of addrs that their account does not record (stale claims,
// which another account takes over after a minute; see store/email.go), which are errors too when
// strict.
func emailsAgree(t *testing.T, b storetest.Backend, prefix string, users []string, addrs []string, strict bool) (stale []string) {
	t.Helper()
	ctx := context.Background()
	owner := func(addr string) string {
		v, err := b.Client.HGet(ctx, prefix+"{e:"+strings.ToLower(addr)+"}", "user").Result()
		if err != nil && v != "" {
			t.Fatal(err)
		}
		return v
	}
	email := func(u string) string {
		v, _ := b.Client.HGet(ctx, prefix+"{u:"+u+"}", "email").Result()
		return v
	}
	for _, u := range users {
		if a := email(u); a != "" && owner(a) != u {
			t.Errorf("%s records %s, claimed by %q", u, a, owner(a))
		}
	}
	for _, a := range addrs {
		if o := owner(a); o != "" && !strings.EqualFold(email(o), a) {
			if strict {
				t.Errorf("%s is claimed by %s, who records %q", a, o, email(o))
			}
			stale = append(stale, a)
		}
	}
	return stale
}

// TestSetEmailInterleaved cuts two setEmail calls of one account in two (up to the address
// written into the account's hash, then the rest) and interleaves them: one of them puts back
// the address the other replaces, and the other's release of it came last. The address stayed in
// the hash with no claim, so another account could take it too.
func TestSetEmailInterleaved(t *testing.T) {
	for _, tc := range []struct {
		name     string
		x, y     string // ann's two calls; ann's address is a@example.org before
		restYOne bool   // the rest of y runs before the rest of x
		want     string
	}{
		{"back to the current address, its release last", "b@example.org", "a@example.org", true, "a@example.org"},
		{"back to the current address, in order", "b@example.org", "a@example.org", false, "a@example.org"},
		{"back to it in another case", "b@example.org", "A@example.org", true, "A@example.org"},
		{"two new addresses", "b@example.org", "c@example.org", true, "c@example.org"},
		{"two new addresses, in order", "b@example.org", "c@example.org", false, "c@example.org"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				prefix := storetest.Prefix()
				s := b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: -1})
				signUp(t, s, "ann", "bob")
				if _, err := s.SetEmail(ctx, "ann", "a@example.org", "password1"); err != nil {
					t.Fatal(err)
				}
				restX, err := s.SetEmailInHalvesForTest(ctx, "ann", tc.x)
				if err != nil {
					t.Fatal(err)
				}
				restY, err := s.SetEmailInHalvesForTest(ctx, "ann", tc.y)
				if err != nil {
					t.Fatal(err)
				}
				rests := []func() error{restX, restY}
				if tc.restYOne {
					rests[0], rests[1] = restY, restX
				}
				for _, rest := range rests {
					if err := rest(); err != nil {
						t.Fatal(err)
					}
				}
				settle(t, s)
				if got, _, err := s.Email(ctx, "ann"); err != nil || got != tc.want {
					t.Errorf("ann's address: %q, %v; want %s", got, err, tc.want)
				}
				addrs := []string{"a@example.org", "b@example.org", "c@example.org"}
				emailsAgree(t, b, prefix, []string{"ann", "bob"}, addrs, true)
				if _, err := s.SetEmail(ctx, "bob", tc.want, "password1"); !store.IsKind(err, store.KindConflict) {
					t.Errorf("bob takes ann's %s: %v, want CONFLICT", tc.want, err)
				}
				emailsAgree(t, b, prefix, []string{"ann", "bob"}, addrs, true)
			})
		})
	}
}

// TestSetEmailConcurrent runs setEmail calls at once, as a guard of the same agreement: one
// account setting two addresses (one of them its own) and two accounts trading their addresses,
// round after round. Each call succeeds or is CONFLICT; the index and the accounts agree after
// every round, but for claims that their account no longer records, left by one account's calls
// at once (each confirms the address it read in its hash, which the other may have replaced and
// released meanwhile): stale claims, which bob takes over after a minute.
func TestSetEmailConcurrent(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clock := storetest.NewClock()
		s := b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: -1, Now: clock.Now})
		signUp(t, s, "ann", "bob")
		var addrs []string
		for round := range 20 {
			a, bb, c := fmt.Sprintf("a%d@example.org", round), fmt.Sprintf("b%d@example.org", round), fmt.Sprintf("c%d@example.org", round)
			addrs = append(addrs, a, bb, c)
			for u, addr := range map[store.UserKey]string{"ann": a, "bob": bb} {
				if _, err := s.SetEmail(ctx, u, addr, "password1"); err != nil {
					t.Fatal(err)
				}
			}
			calls := []struct {
				user store.UserKey
				addr string
			}{
				{"ann", c}, {"ann", a}, // one account: a new address and its own again
				{"ann", bb}, {"bob", a}, // two accounts trading theirs
			}
			var wg sync.WaitGroup
			for _, call := range calls {
				wg.Go(func() {
					if _, err := s.SetEmail(ctx, call.user, call.addr, "password1"); err != nil && !store.IsKind(err, store.KindConflict) {
						t.Errorf("%s sets %s: %v", call.user, call.addr, err)
					}
				})
			}
			wg.Wait()
			stale := emailsAgree(t, b, prefix, []string{"ann", "bob"}, addrs, false)
			if len(stale) > 0 {
				clock.Add(2 * time.Minute)
				for _, a := range stale {
					if _, err := s.SetEmail(ctx, "bob", a, "password1"); err != nil {
						t.Errorf("bob takes over the stale claim on %s: %v", a, err)
					}
				}
				emailsAgree(t, b, prefix, []string{"ann", "bob"}, addrs, false)
			}
		}
		settle(t, s)
	})
}

// TestEmailTakeOverRaces runs bob's setEmail of an address whose claim, ann's, may be taken over
// (see store/email.go) and ann's own write on that address — setting it again while her claim is
// stale (her hash does not hold it), or verifying it with a fresh link while her claim has lapsed
// — one inside the other: at each clock reading of the outer call in turn (the n-th), the inner
// one runs whole. Whatever the moment and whichever is outside, the index and the accounts agree
// afterwards.
func TestEmailTakeOverRaces(t *testing.T) {
	const addr = "a@example.org"
	// refused: a write may find the address taken (CONFLICT), or ann's link dropped with it.
	refused := func(err error) bool {
		return store.IsKind(err, store.KindConflict) || store.IsKind(err, store.KindInvalid)
	}
	for _, tc := range []struct {
		name string
		// setUp leaves ann's claim on addr open to a take-over and returns ann's write.
		setUp func(t *testing.T, s *store.Store, b storetest.Backend, prefix string, clock *storetest.Clock, srv *mailtest.Server) func() error
	}{
		{"stale claim, set again", func(t *testing.T, s *store.Store, b storetest.Backend, prefix string, clock *storetest.Clock, _ *mailtest.Server) func() error {
			ctx := context.Background()
			// A claim whose user's hash does not hold the address: a setEmail cut off after its claim.
			at := clock.Now().Add(-2 * time.Minute).UnixMilli()
			if err := b.Client.HSet(ctx, prefix+"{e:"+addr+"}", "user", "ann", "at", at).Err(); err != nil {
				t.Fatal(err)
			}
			return func() error { _, err := s.SetEmail(ctx, "ann", addr, "password1"); return err }
		}},
		{"lapsed claim, verified", func(t *testing.T, s *store.Store, _ storetest.Backend, _ string, clock *storetest.Clock, srv *mailtest.Server) func() error {
			ctx := context.Background()
			if _, err := s.SetEmail(ctx, "ann", addr, "password1"); err != nil {
				t.Fatal(err)
			}
			clock.Add(25 * time.Hour) // the claim lapses unverified; a new link does not renew it
			if _, err := s.SetEmail(ctx, "ann", addr, "password1"); err != nil {
				t.Fatal(err)
			}
			settle(t, s)
			token := mailToken(t, srv, 2)
			return func() error { _, err := s.VerifyEmail(ctx, token); return err }
		}},
	} {
		for _, annOutside := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/ann outside %v", tc.name, annOutside), func(t *testing.T) {
				storetest.Run(t, func(t *testing.T, b storetest.Backend) {
					for n := 1; n <= 12; n++ {
						ctx := context.Background()
						srv := mailtest.Start(t)
						sender, err := mail.NewSMTP(srv.URL(), "agora@example.org", mail.SMTPOptions{TLS: srv.ClientTLS, Timeout: 5 * time.Second})
						if err != nil {
							t.Fatal(err)
						}
						clock := storetest.NewClock()
						var reads atomic.Int64
						var inner func() error
						now := func() time.Time {
							if reads.Load() > 0 && reads.Add(-1) == 0 {
								if err := inner(); err != nil && !refused(err) {
									t.Errorf("n=%d: the inner write: %v", n, err)
								}
							}
							return clock.Now()
						}
						prefix := storetest.Prefix()
						s := b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: -1, Now: now,
							Mail: store.MailOptions{Sender: sender, PublicURL: "https://agora.example"}})
						signUp(t, s, "ann", "bob")
						ann := tc.setUp(t, s, b, prefix, clock, srv)
						bob := func() error { _, err := s.SetEmail(ctx, "bob", addr, "password1"); return err }
						outer := bob
						inner = ann
						if annOutside {
							outer, inner = ann, bob
						}
						reads.Store(int64(n))
						if err := outer(); err != nil && !refused(err) {
							t.Errorf("n=%d: the outer write: %v", n, err)
						}
						if reads.Load() > 0 {
							reads.Store(0)
							if err := inner(); err != nil && !refused(err) {
								t.Errorf("n=%d: the inner write after: %v", n, err)
							}
						}
						settle(t, s)
						emailsAgree(t, b, prefix, []string{"ann", "bob"}, []string{addr}, true)
						if t.Failed() {
							t.Fatalf("at clock reading %d of the outer write", n)
						}
					}
				})
			})
		}
	}
}
