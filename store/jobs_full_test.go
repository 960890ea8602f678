package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestJobsWaitOutAFullRedis keeps Redis full while a scheduled post's publish job comes due and
// is tried again and again, longer than every try of a failing job: once memory is freed, the
// post is published. A job that Redis refuses for want of memory has not failed: it must not be
// set aside as a dead letter, which nothing runs again by itself.
func TestJobsWaitOutAFullRedis(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "--maxmemory-policy", "noeviction", "--enable-debug-command", "local")
	admin := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = admin.Close() })
	clock := newStepClock()
	s := storetest.Backend{Name: "redis", Client: rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})}.
		NewStore(t, store.Options{Prefix: storetest.Prefix(), Now: clock.Now})
	if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
		t.Fatal(err)
	}
	p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "later", Body: "later", Groups: []string{"go"}, PublishAt: clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, s)
	if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	clock.Add(time.Hour)
	tries := s.Jobs().Options().MaxTries
	for range 3 * tries {
		settle(t, s)
		clock.Add(10 * time.Minute)
	}
	if err := admin.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	clock.Add(10 * time.Minute)
	settle(t, s)
	if dead, err := s.Jobs().Dead(ctx, 10); err != nil || len(dead) > 0 {
		t.Errorf("dead letters after a full Redis: %v, %v", dead, err)
	}
	got, err := s.NewLoader().Post(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatalf("the scheduled post %s was not published once Redis had room again", p.ID)
	}
}
