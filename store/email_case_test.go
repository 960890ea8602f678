package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestVerifiedAddressInAnotherCase: setting one's verified address again in another case (the
// same address: it is keyed ignoring case) keeps it verified, and so keeps it the account's. It
// used to mark it unverified, and as its claim was older than a verification link's life, the
// claim counted as lapsed at once: another account took the address over, and the owner's new
// link no longer worked.
func TestVerifiedAddressInAnotherCase(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, clock := mailStore(t, b)
		annWithAddress(t, s)
		if _, err := s.VerifyEmail(ctx, mailToken(t, srv, 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SignUp(ctx, "bob", "password1"); err != nil {
			t.Fatal(err)
		}
		clock.Add(48 * time.Hour)
		if _, err := s.SetEmail(ctx, "ann", "Ann@Example.org", "password1"); err != nil {
			t.Fatal(err)
		}
		if addr, verified, err := s.Email(ctx, "ann"); err != nil || addr != "Ann@Example.org" || !verified {
			t.Errorf("ann's address after setting it in another case: %q verified %v, %v; want it verified", addr, verified, err)
		}
		if _, err := s.SetEmail(ctx, "bob", "ann@example.org", "password1"); !store.IsKind(err, store.KindConflict) {
			t.Errorf("bob takes ann's verified address: %v, want CONFLICT", err)
		}
		if addr, _, err := s.Email(ctx, "ann"); err != nil || addr != "Ann@Example.org" {
			t.Errorf("ann's address after bob's attempt: %q, %v", addr, err)
		}
	})
}
