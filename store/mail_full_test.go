package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestMailSentOnceOnAFullRedis sends a verification mail while Redis is full: the mail server
// takes it, but Redis refuses the record that it was sent. The job is tried again until memory is
// freed, and no try may send the mail again.
func TestMailSentOnceOnAFullRedis(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "--maxmemory-policy", "noeviction", "--enable-debug-command", "local")
	admin := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = admin.Close() })
	s, mails, clock := mailStoreWith(t, storetest.Backend{Name: "redis", Client: rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})}, store.Options{})
	if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetEmail(ctx, "ann", "ann@example.org", "password1"); err != nil {
		t.Fatal(err)
	}
	if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	for range 5 {
		settle(t, s)
		clock.Add(10 * time.Minute)
	}
	if err := admin.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	clock.Add(10 * time.Minute)
	settle(t, s)
	if n := len(mails.Mails()); n != 1 {
		t.Errorf("%d mails arrived, want 1", n)
	}
}
