package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// emailsAgree checks that the email index and the accounts' recorded addresses agree: each
// account's address is claimed by that account, and each claimed address of addrs is recorded by
// the account that claims it (no address is held by two accounts, or by none while an account
// says it has it).
func emailsAgree(t *testing.T, b storetest.Backend, prefix string, users []string, addrs []string) {
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
			t.Errorf("%s is claimed by %s, who records %q", a, o, email(o))
		}
	}
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
				emailsAgree(t, b, prefix, []string{"ann", "bob"}, addrs)
				if _, err := s.SetEmail(ctx, "bob", tc.want, "password1"); !store.IsKind(err, store.KindConflict) {
					t.Errorf("bob takes ann's %s: %v, want CONFLICT", tc.want, err)
				}
				emailsAgree(t, b, prefix, []string{"ann", "bob"}, addrs)
			})
		})
	}
}

// TestSetEmailConcurrent runs setEmail calls at once, as a guard of the same agreement: one
// account setting two addresses (one of them its own) and two accounts trading their addresses,
// round after round. Each call succeeds or is CONFLICT; the index and the accounts agree after
// every round.
func TestSetEmailConcurrent(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: -1})
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
			emailsAgree(t, b, prefix, []string{"ann", "bob"}, addrs)
		}
		settle(t, s)
	})
}
