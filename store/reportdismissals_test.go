package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func TestReportDismissalsTakeTheRightToReport(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		ctx := context.Background()
		clock := storetest.NewClock()
		prefix := storetest.Prefix()
		s := be.NewStore(t, store.Options{Prefix: prefix, Now: clock.Now, WriteLimit: 10000, ReportDismissals: 3,
			NewAccount: store.NewAccountLimits{Age: -1}})
		for _, n := range []string{"root", "bob", "carol"} {
			if _, err := s.SignUp(ctx, n, "password1"); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.GrantAdmin(ctx, "root"); err != nil {
			t.Fatal(err)
		}
		var posts []string
		for range 6 {
			p, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "a post"})
			if err != nil {
				t.Fatal(err)
			}
			posts = append(posts, p.ID)
		}
		start := clock.Now()
		report := func(i int) (*store.Report, error) { return s.ReportPost(ctx, "carol", posts[i], "spam") }
		resolve := func(r *store.Report, res store.ReportResolution) {
			t.Helper()
			for range 2 { // the request, then its retry
				got, err := s.ResolveReportAs(ctx, "root", r.ID, res)
				if err != nil {
					t.Fatal(err)
				}
				if got.Resolution == nil || *got.Resolution != res {
					t.Fatalf("resolved as %v, want %s", got.Resolution, res)
				}
			}
		}
		// Two dismissed and any number actioned leave the right to report.
		for i, res := range []store.ReportResolution{store.ReportDismissed, store.ReportActioned, store.ReportDismissed, store.ReportActioned} {
			r, err := report(i)
			if err != nil {
				t.Fatalf("report %d: %v", i, err)
			}
			resolve(r, res)
			clock.Add(time.Hour)
		}
		r, err := report(4)
		if err != nil {
			t.Fatalf("after two dismissals: %v", err)
		}
		resolve(r, store.ReportDismissed) // the third, at start + 4h
		// The count is derived from the reports: rebuild makes it again.
		if err := be.Client.Del(ctx, prefix+"{u:carol}:dismissed").Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		// The third dismissal within 30 days takes it until the first is 30 days old.
		if got := retryAfter(t, ignore(report(5))); got != 30*24*time.Hour-4*time.Hour {
			t.Errorf("after three dismissals: retry after %v", got)
		}
		clock.Set(start.Add(30*24*time.Hour - time.Millisecond))
		if retryAfter(t, ignore(report(5))) == 0 {
			t.Error("allowed to report a millisecond before the first dismissal left the window")
		}
		clock.Set(start.Add(30 * 24 * time.Hour))
		if _, err := report(5); err != nil {
			t.Errorf("when the first dismissal left the window: %v", err)
		}
	})
}
