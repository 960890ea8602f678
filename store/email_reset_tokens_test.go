package store_test

import (
	"context"
	"io"
	"mime/quotedprintable"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/mail/mailtest"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestPasswordResetLinksEndWithThePassword: a reset link works only while the password is the one
// it was mailed under. Once the password changed — by changePassword, or by another reset link —
// or the account is gone, an unused link is refused as invalid, so that a link read by someone
// else (a mailbox shared or broken into) cannot take the account back after its owner secured it.
func TestPasswordResetLinksEndWithThePassword(t *testing.T) {
	cases := []struct {
		name string
		// then does what happens after both links were mailed; the second link is used after it.
		then func(t *testing.T, s *store.Store, first string)
	}{
		{"another link used", func(t *testing.T, s *store.Store, first string) {
			if _, err := s.ResetPassword(context.Background(), first, "password2"); err != nil {
				t.Fatalf("the first link: %v", err)
			}
		}},
		{"password changed", func(t *testing.T, s *store.Store, _ string) {
			sess, err := s.LogIn(context.Background(), "ann", "password1")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.ChangePassword(context.Background(), "ann", sess.Token, "password1", "password2"); err != nil {
				t.Fatal(err)
			}
		}},
		{"account deleted", func(t *testing.T, s *store.Store, _ string) {
			if err := s.DeleteAccount(context.Background(), "ann", "password1", false); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
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
				second := mailToken(t, srv, 3)
				first := tokenInMailNumber(t, srv, 2)
				c.then(t, s, first)
				if _, err := s.ResetPassword(ctx, second, "password3"); !store.IsKind(err, store.KindInvalid) {
					t.Errorf("the other link afterwards: %v, want invalid", err)
				}
				if _, err := s.LogIn(ctx, "ann", "password3"); err == nil {
					t.Errorf("the other link set the password")
				}
			})
		})
	}
}

// tokenInMailNumber returns the token of the link in mail number n (from 1).
func tokenInMailNumber(t *testing.T, srv *mailtest.Server, n int) string {
	t.Helper()
	mails := srv.Mails()
	if len(mails) < n {
		t.Fatalf("%d mails arrived, want at least %d", len(mails), n)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(strings.NewReader(mails[n-1].Data)))
	if err != nil {
		t.Fatal(err)
	}
	m := tokenInMail.FindStringSubmatch(string(body))
	if m == nil {
		t.Fatalf("no link in mail %d:\n%s", n, mails[n-1].Data)
	}
	return m[1]
}

// TestPasswordResetOfDeletedAccount: a deleted account keeps its address (and its claim) until
// the last step of its deletion's chain; a reset asked for that address meanwhile mails nothing,
// as for an address no account has.
func TestPasswordResetOfDeletedAccount(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, _ := mailStore(t, b)
		annWithAddress(t, s)
		if _, err := s.VerifyEmail(ctx, mailToken(t, srv, 1)); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
			t.Fatal(err)
		}
		// The deletion's chain has not reached its last step: the address is still claimed.
		if err := s.RequestPasswordReset(ctx, "ann@example.org"); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		if mails := srv.Mails(); len(mails) != 1 {
			t.Errorf("%d mails, want 1 (the verification): a reset was mailed for a deleted account:\n%s",
				len(mails), mails[len(mails)-1].Data)
		}
	})
}

// TestUnverifiedClaimLapsesNonASCII: an address with upper-case letters beyond ASCII is keyed
// lower-cased as Go lower-cases it; the takeover of its lapsed unverified claim takes it out of
// the old claimant's record all the same, and a link used meanwhile leaves it unverified there.
func TestUnverifiedClaimLapsesNonASCII(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, clock := mailStore(t, b)
		for _, name := range []string{"squatter", "owner"} {
			if _, err := s.SignUp(ctx, name, "password1"); err != nil {
				t.Fatal(err)
			}
		}
		const addr = "Ärger@example.org"
		if _, err := s.SetEmail(ctx, "squatter", addr, "password1"); err != nil {
			t.Fatal(err)
		}
		clock.Add(23 * time.Hour)
		if _, err := s.SetEmail(ctx, "squatter", addr, "password1"); err != nil { // a new link
			t.Fatal(err)
		}
		settle(t, s)
		late := mailToken(t, srv, 2)
		clock.Add(time.Hour)
		if _, err := s.SetEmail(ctx, "owner", "ärger@example.org", "password1"); err != nil {
			t.Fatalf("a lapsed unverified claim: %v, want it taken over", err)
		}
		if got, _, err := s.Email(ctx, "squatter"); err != nil || got != "" {
			t.Errorf("the squatter's address after the takeover: %q, %v; want none", got, err)
		}
		_, err := s.VerifyEmail(ctx, late)
		if got, ok, _ := s.Email(ctx, "squatter"); ok {
			t.Errorf("the squatter's link after the takeover: %v, and the squatter holds %q verified", err, got)
		}
	})
}

// TestVerificationOfDeletedAccount: a deleted account keeps its address until its deletion's
// chain ends, but its verification links are dead at once: a link mailed before is refused as
// invalid, leaving the marker as it was, and a verification mail still queued is not sent.
func TestVerificationOfDeletedAccount(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, _ := mailStore(t, b)
		if _, err := s.SignUpWithEmail(ctx, "ann", "password1", "ann@example.org"); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		link := mailToken(t, srv, 1)
		if _, err := s.SetEmail(ctx, "ann", "ann@example.org", "password1"); err != nil {
			t.Fatal(err) // a second link, whose mail is queued
		}
		if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
			t.Fatal(err)
		}
		if _, err := s.VerifyEmail(ctx, link); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("a link of a deleted account: %v, want invalid", err)
		}
		key := s.Options().Prefix + "{u:ann}"
		if v, err := b.Client.HGet(ctx, key, "emailv").Result(); err == nil {
			t.Errorf("the deleted account's marker has emailv %q", v)
		}
		settle(t, s)
		if n := len(srv.Mails()); n != 1 {
			t.Errorf("%d mails, want 1: a verification was mailed for a deleted account", n)
		}
	})
}
