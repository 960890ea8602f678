package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestPasswordResetLinksUsedAtOnce: two reset links mailed under one password and used at the
// same moment — both taken before either set its password — set the password once; the other is
// refused as a used link (BAD_USER_INPUT), as it is when it comes second. It was FORBIDDEN ("the
// password was changed meanwhile"), a code the docs give a wrong current password.
func TestPasswordResetLinksUsedAtOnce(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, _ := mailStore(t, b)
		annWithAddress(t, s)
		for range 2 {
			if err := s.RequestPasswordReset(ctx, "ann@example.org"); err != nil {
				t.Fatal(err)
			}
		}
		settle(t, s)
		links := []string{tokenInMailNumber(t, srv, 2), mailToken(t, srv, 3)}
		release := s.HoldPasswordHashingForTest()
		errs := make(chan error, len(links))
		for i, link := range links {
			go func() {
				_, err := s.ResetPassword(ctx, link, "password"+string(rune('2'+i)))
				errs <- err
			}()
		}
		// Both links are taken, their new passwords waiting to be hashed.
		for deadline := time.Now().Add(3 * time.Second); ; {
			n, err := b.Client.Exists(ctx, s.ResetTokenKeyForTest(links[0]), s.ResetTokenKeyForTest(links[1])).Result()
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				release()
				t.Fatalf("%d links still stored", n)
			}
			time.Sleep(5 * time.Millisecond)
		}
		release()
		ok := 0
		for range links {
			switch err := <-errs; {
			case err == nil:
				ok++
			case !store.IsKind(err, store.KindInvalid):
				t.Errorf("the other link: %v, want invalid (BAD_USER_INPUT)", err)
			}
		}
		if ok != 1 {
			t.Errorf("%d links set the password, want 1", ok)
		}
	})
}
