package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestVerifiedAddressOfADeletedAccountIsClaimedAfresh: the address of a deleted account that had
// verified it is claimed anew by the next account that sets it, for a link's life, as any
// released verified address is. The deletion kept the claim's time as for an unverified one, so
// that an owner who signed up again with their own address within a day of deleting the old
// account held a claim made long ago, lapsed at once: any account could take it over before
// they followed its link.
func TestVerifiedAddressOfADeletedAccountIsClaimedAfresh(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, clock := mailStore(t, b)
		for _, name := range []string{"ann", "mallory"} {
			if _, err := s.SignUp(ctx, name, "password1"); err != nil {
				t.Fatal(err)
			}
		}
		const addr = "ann@example.org"
		if _, err := s.SetEmail(ctx, "ann", addr, "password1"); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		if _, err := s.VerifyEmail(ctx, mailToken(t, srv, 1)); err != nil {
			t.Fatal(err)
		}
		clock.Add(30 * 24 * time.Hour)
		if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
			t.Fatal(err)
		}
		settle(t, s) // the chain, which releases the address
		if _, err := s.SignUp(ctx, "ann2", "password1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetEmail(ctx, "ann2", addr, "password1"); err != nil {
			t.Fatalf("ann's new account sets her address: %v", err)
		}
		clock.Add(time.Hour)
		if _, err := s.SetEmail(ctx, "mallory", addr, "password1"); !store.IsKind(err, store.KindConflict) {
			t.Fatalf("another account sets the address an hour after its claim: %v, want CONFLICT", err)
		}
	})
}
