package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store/storetest"
)

// TestUnverifiedClaimNotRenewedByAReleaseAndAClaim: an unverified claim on an address lapses a
// link's life after it was made, whoever holds it since: an account that cannot read the address
// does not hold it for longer by setting another address and then the same one again (which
// released the claim and made a new one), nor by handing it to a second account of its own.
func TestUnverifiedClaimNotRenewedByAReleaseAndAClaim(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, _, clock := mailStore(t, b)
		for _, name := range []string{"squatter", "accomplice", "owner"} {
			if _, err := s.SignUp(ctx, name, "password1"); err != nil {
				t.Fatal(err)
			}
		}
		const addr = "owner@example.org"
		if _, err := s.SetEmail(ctx, "squatter", addr, "password1"); err != nil {
			t.Fatal(err)
		}
		clock.Add(23 * time.Hour)
		// Another address and then the same one again: the claim is released and made anew.
		if _, err := s.SetEmail(ctx, "squatter", "squatter@example.org", "password1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetEmail(ctx, "squatter", addr, "password1"); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Hour)
		if _, err := s.SetEmail(ctx, "owner", addr, "password1"); err != nil {
			t.Fatalf("a day after the first unverified claim, renewed by a release and a claim: %v, want the owner to take it over", err)
		}
		settle(t, s)

		// Handed between two accounts of the squatter's: the second's claim lapses when the
		// first's would have.
		const other = "victim@example.org"
		if _, err := s.SetEmail(ctx, "squatter", other, "password1"); err != nil {
			t.Fatal(err)
		}
		clock.Add(23 * time.Hour)
		if _, err := s.SetEmail(ctx, "squatter", "squatter@example.org", "password1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetEmail(ctx, "accomplice", other, "password1"); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Hour)
		if _, err := s.SetEmail(ctx, "owner", other, "password1"); err != nil {
			t.Fatalf("a day after the first unverified claim, handed to another account: %v, want the owner to take it over", err)
		}
	})
}
