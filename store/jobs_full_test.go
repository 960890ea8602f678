package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestJobsWaitOutAFullRedis keeps Redis full while a scheduled post's publish job comes due and
// is tried again and again, longer than every try of a failing job: once memory is freed, the
// post is published. A job that Redis refuses for want of memory has not failed: it must not be
// set aside as a dead letter, which nothing runs again by itself.
func TestJobsWaitOutAFullRedis(t *testing.T) {
	ctx := context.Background()
	full := newFullRedis(t)
	clock := newStepClock()
	s := full.backend().NewStore(t, store.Options{Prefix: storetest.Prefix(), Now: clock.Now})
	if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
		t.Fatal(err)
	}
	p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "later", Body: "later", Groups: []string{"go"}, PublishAt: clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, s)
	full.fill()
	clock.Add(time.Hour)
	tries := s.Jobs().Options().MaxTries
	for range 3 * tries {
		settle(t, s)
		clock.Add(10 * time.Minute)
	}
	full.free()
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
