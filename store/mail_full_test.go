package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
)

// TestMailSentOnceOnAFullRedis sends a verification mail while Redis is full: the mail server
// takes it, but Redis refuses the record that it was sent. The job is tried again until memory is
// freed, and no try may send the mail again.
func TestMailSentOnceOnAFullRedis(t *testing.T) {
	ctx := context.Background()
	full := newFullRedis(t)
	s, mails, clock := mailStoreWith(t, full.backend(), store.Options{})
	if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetEmail(ctx, "ann", "ann@example.org", "password1"); err != nil {
		t.Fatal(err)
	}
	full.fill()
	for range 5 {
		settle(t, s)
		clock.Add(10 * time.Minute)
	}
	full.free()
	clock.Add(10 * time.Minute)
	settle(t, s)
	if n := len(mails.Mails()); n != 1 {
		t.Errorf("%d mails arrived, want 1", n)
	}
}
