package store

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

// scheduleStore returns a store on a private miniredis with a clock the test sets, and amy.
func scheduleStore(t *testing.T) (*Store, *time.Time, *rdb.Client) {
	t.Helper()
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	now := time.Now().Truncate(time.Millisecond)
	s, err := New(ctx, rdb, Options{Prefix: "x:", WriteLimit: -1, Now: func() time.Time { return now },
		Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SignUp(ctx, "amy", "password1"); err != nil {
		t.Fatal(err)
	}
	return s, &now, rdb
}

// TestPublishJobCutOffThenPostDeleted: a publish job stopped right after creating the post, whose
// author then deletes it; the job's next run finishes without bringing the post back.
func TestPublishJobCutOffThenPostDeleted(t *testing.T) {
	ctx := context.Background()
	s, now, rdb := scheduleStore(t)
	at := now.Add(time.Hour)
	p, err := s.CreatePost(ctx, "amy", NewPost{Title: "t", PublishAt: at})
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := PostKey(p.ID)
	*now = at
	// The first run, stopped after create_post (its process died).
	if _, err := s.run(ctx, "schedule", s.scheduleKeys("amy"), "take", pid, now.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.run(ctx, "create_post", []string{s.k.post(pid), s.k.postTexts(pid)}, "t", "", "", "amy", at.UnixMilli(),
		at.Add(s.opts.VotingWindow).UnixMilli(), "", "s:amy:"+pid, "Amy"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePost(ctx, "amy", p.ID); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		*now = now.Add(time.Minute)
		if _, err := s.jobs.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if dead, _ := s.jobs.Dead(ctx, 10); len(dead) > 0 {
		t.Fatalf("dead letters: %+v", dead)
	}
	if n := rdb.HLen(ctx, s.k.drafts("amy")).Val(); n != 0 {
		t.Fatalf("%d drafts left", n)
	}
	if q, _ := s.NewLoader().Post(ctx, p.ID); q != nil {
		t.Fatal("the deleted post came back")
	}
}

// TestRescheduleCutOffIsRepaired: a reschedule stopped between moving the draft and moving its
// job leaves a repair note, which puts the job at the draft's new time, earlier or later.
func TestRescheduleCutOffIsRepaired(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to time.Duration
	}{{"earlier", 2 * time.Hour, time.Hour}, {"later", time.Hour, 2 * time.Hour}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, now, _ := scheduleStore(t)
			start := *now
			p, err := s.CreatePost(ctx, "amy", NewPost{Title: "t", PublishAt: start.Add(tc.from)})
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := PostKey(p.ID)
			// ReschedulePost's note and first step only: its process stops there.
			if _, err := s.allowWrite(ctx, "amy", repairDraft+":amy:"+pid); err != nil {
				t.Fatal(err)
			}
			if _, err := s.run(ctx, "schedule", s.scheduleKeys("amy"), "move", pid, start.Add(tc.to).UnixMilli(),
				now.UnixMilli(), 10); err != nil {
				t.Fatal(err)
			}
			*now = start.Add(RepairGrace + time.Second) // the repair runs
			if _, err := s.jobs.RunDue(ctx); err != nil {
				t.Fatal(err)
			}
			*now = start.Add(tc.to - time.Second)
			if _, err := s.jobs.RunDue(ctx); err != nil {
				t.Fatal(err)
			}
			if q, _ := s.NewLoader().Post(ctx, p.ID); q != nil {
				t.Fatal("published before its new time")
			}
			*now = start.Add(tc.to)
			if _, err := s.jobs.RunDue(ctx); err != nil {
				t.Fatal(err)
			}
			if q, _ := s.NewLoader().Post(ctx, p.ID); q == nil || !q.CreatedAt.Equal(start.Add(tc.to)) {
				t.Fatalf("at its new time: %+v", q)
			}
		})
	}
}
