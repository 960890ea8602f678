package store_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// report files uid's report of target, failing the test on an error.
func (f *fixture) report(uid, target, reason string) *store.Report {
	f.t.Helper()
	r, err := f.s.ReportPost(f.ctx, uk(uid), target, reason)
	if err != nil {
		f.t.Fatalf("report %s by %s: %v", target, uid, err)
	}
	return r
}

// reportCount is the open report count of a post as an admin sees it.
func (f *fixture) reportCount(admin string, p *store.Post) int {
	f.t.Helper()
	n, err := f.s.NewLoader().ReportCount(f.ctx, uk(admin), p.GroupNames, p.ID)
	if err != nil || n == nil {
		f.t.Fatalf("report count of %s: %v, %v", p.ID, n, err)
	}
	return *n
}

// openReports is how many open reports count against uid's limit.
func (f *fixture) openReports(uid string) int64 {
	f.t.Helper()
	n, err := f.s.OpenReports(f.ctx, uk(uid))
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func TestReportIsIdempotentWhileOpen(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		f.admin("root")
		amy, bob := f.user("amy"), f.user("bob")
		f.user("root")
		p := f.post(amy, "spam", "go", "rust")
		first := f.report(bob, p.ID, "spam")
		again := f.report(bob, p.ID, "really spam")
		if again.ID != first.ID || again.Reason != "spam" || first.Reporter != "bob" || len(first.GroupNames) != 2 {
			t.Fatalf("re-report %+v, first %+v: want the first back", again, first)
		}
		if n := f.reportCount("root", p); n != 1 {
			t.Fatalf("report count %d, want 1", n)
		}
		if n := f.openReports(bob); n != 1 {
			t.Fatalf("bob holds %d open reports, want 1", n)
		}
		r, err := f.s.ResolveReport(f.ctx, "root", first.ID)
		if err != nil || !r.Resolved || r.ResolvedBy != "root" || r.ResolvedAt == nil {
			t.Fatalf("resolve: %+v, %v", r, err)
		}
		if n := f.openReports(bob); n != 0 {
			t.Fatalf("bob holds %d open reports after the resolve, want 0", n)
		}
		if n := f.reportCount("root", p); n != 0 {
			t.Fatalf("report count %d after the resolve, want 0", n)
		}
		third := f.report(bob, p.ID, "back again")
		if third.ID == first.ID || third.Resolved {
			t.Fatalf("a report after the resolve %+v: want a new open one", third)
		}
	})
}

func TestReportLimit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		f.admin("root")
		amy, bob := f.user("amy"), f.user("bob")
		var posts []*store.Post
		for i := range store.MaxOpenReports + 1 {
			posts = append(posts, f.post(amy, fmt.Sprintf("post %d", i)))
		}
		var reports []*store.Report
		for _, p := range posts[:store.MaxOpenReports] {
			reports = append(reports, f.report(bob, p.ID, "spam"))
		}
		last := posts[store.MaxOpenReports]
		if _, err := f.s.ReportPost(f.ctx, uk(bob), last.ID, "spam"); !store.IsKind(err, store.KindLimitReached) {
			t.Fatalf("report %d: %v, want LIMIT_REACHED", store.MaxOpenReports+1, err)
		}
		if r := f.report(bob, posts[0].ID, "again"); r.ID != reports[0].ID {
			t.Fatalf("re-reporting at the limit: %+v, want %s", r, reports[0].ID)
		}
		if _, err := f.s.ResolveReport(f.ctx, "root", reports[3].ID); err != nil {
			t.Fatal(err)
		}
		f.report(bob, last.ID, "spam")
		if n := f.openReports(bob); n != store.MaxOpenReports {
			t.Fatalf("bob holds %d open reports, want %d", n, store.MaxOpenReports)
		}
	})
}

func TestOpenReportStopsCountingAtItsExpiryOnTheTestClock(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		f := newFixture(t, b, store.Options{Now: clk.Now})
		amy, bob := f.user("amy"), f.user("bob")
		f.report(bob, f.post(amy, "old").ID, "spam")
		clk.Add(time.Hour)
		for i := range store.MaxOpenReports - 1 {
			f.report(bob, f.post(amy, fmt.Sprintf("post %d", i)).ID, "spam")
		}
		p := f.post(amy, "one too many")
		clk.Add(store.ReportLimitWindow - time.Hour - time.Second) // a second before the first expires
		if _, err := f.s.ReportPost(f.ctx, uk(bob), p.ID, "spam"); !store.IsKind(err, store.KindLimitReached) {
			t.Fatalf("a second before the oldest report stops counting: %v, want LIMIT_REACHED", err)
		}
		clk.Add(time.Second)
		if _, err := f.s.ReportPost(f.ctx, uk(bob), p.ID, "spam"); err != nil {
			t.Fatalf("when the oldest report stops counting: %v", err)
		}
		if n := f.openReports(bob); n != store.MaxOpenReports {
			t.Fatalf("bob holds %d counted reports, want %d", n, store.MaxOpenReports)
		}
	})
}

func TestReportCountIsExactUnderConcurrentReports(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		f.admin("root")
		amy := f.user("amy")
		p := f.post(amy, "contested", "go")
		const n = 12
		users := make([]string, n)
		for i := range users {
			users[i] = f.user(fmt.Sprintf("user%02d", i))
		}
		var wg sync.WaitGroup
		ids := make([]string, 2*n)
		errs := make([]error, 2*n)
		for i := range 2 * n { // each user twice, at once
			wg.Go(func() {
				r, err := f.s.ReportPost(f.ctx, uk(users[i%n]), p.ID, "spam")
				errs[i] = err
				if r != nil {
					ids[i] = r.ID
				}
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
			if ids[i] != ids[(i+n)%(2*n)] {
				t.Fatalf("%s's two reports got ids %s and %s", users[i%n], ids[i], ids[(i+n)%(2*n)])
			}
		}
		if c := f.reportCount("root", p); c != n {
			t.Fatalf("report count %d, want %d", c, n)
		}
		for i := range n / 2 {
			wg.Go(func() {
				if _, err := f.s.ResolveReport(f.ctx, "root", ids[i]); err != nil {
					t.Error(err)
				}
			})
			wg.Go(func() { _, _ = f.s.ResolveReport(f.ctx, "root", ids[i]) }) // twice, at once
		}
		wg.Wait()
		if c := f.reportCount("root", p); c != n-n/2 {
			t.Fatalf("report count %d after resolving %d, want %d", c, n/2, n-n/2)
		}
		l := f.s.NewLoader()
		page, err := l.Reports(f.ctx, "root", "go", true, store.Window{First: 100}, store.ReportNeeds{})
		if err != nil || page.Total != n-n/2 || len(page.Items) != n-n/2 {
			t.Fatalf("open reports of go: %+v, %v", page, err)
		}
	})
}

func TestCutOffReportIsRepaired(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		f := newFixture(t, b, store.Options{Now: clk.Now})
		f.admin("root")
		amy, bob := f.user("amy"), f.user("bob")
		p := f.post(amy, "spam", "go")
		if err := f.s.ReportFirstStep(f.ctx, uk(bob), p.ID, "cut off"); err != nil {
			t.Fatal(err)
		}
		if n := f.reportCount("root", p); n != 0 {
			t.Fatalf("report count %d before the repair, want 0", n)
		}
		clk.Add(store.RepairGrace + time.Second)
		settle(t, f.s)
		if n := f.reportCount("root", p); n != 1 {
			t.Fatalf("report count %d after the repair, want 1", n)
		}
		page, err := f.s.NewLoader().Reports(f.ctx, "root", "", true, store.Window{First: 10}, store.ReportNeeds{})
		if err != nil || len(page.Items) != 1 || page.Items[0].Reason != "cut off" || page.Items[0].Reporter != "bob" {
			t.Fatalf("reports after the repair: %+v, %v", page, err)
		}
		// The retried request finds the same report, counted once.
		r := f.report(bob, p.ID, "retried")
		if r.ID != page.Items[0].ID || f.openReports(bob) != 1 || f.reportCount("root", p) != 1 {
			t.Fatalf("the retry %+v, want %s counted once", r, page.Items[0].ID)
		}

		// A retry before the repair finishes the report itself, once.
		q := f.post(amy, "more spam", "go")
		if err := f.s.ReportFirstStep(f.ctx, uk(bob), q.ID, "cut off"); err != nil {
			t.Fatal(err)
		}
		r1 := f.report(bob, q.ID, "retried")
		clk.Add(store.RepairGrace + time.Second)
		settle(t, f.s)
		if r1.Reason != "cut off" || f.openReports(bob) != 2 || f.reportCount("root", q) != 1 {
			t.Fatalf("retry %+v; %d open reports; count %d", r1, f.openReports(bob), f.reportCount("root", q))
		}
	})
}

func TestCutOffResolveIsRepaired(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		f := newFixture(t, b, store.Options{Now: clk.Now})
		f.admin("root")
		amy, bob := f.user("amy"), f.user("bob")
		r := f.report(bob, f.post(amy, "spam").ID, "spam")
		if err := f.s.ResolveFirstStep(f.ctx, "root", r.ID); err != nil {
			t.Fatal(err)
		}
		if n := f.openReports(bob); n != 1 {
			t.Fatalf("bob holds %d open reports before the repair, want 1 (the cut-off step)", n)
		}
		clk.Add(store.RepairGrace + time.Second)
		settle(t, f.s)
		settle(t, f.s) // a second run changes nothing
		if n := f.openReports(bob); n != 0 {
			t.Fatalf("bob holds %d open reports after the repair, want 0", n)
		}
		log, err := f.s.NewLoader().ModLog(f.ctx, "", store.Window{First: 10})
		if err != nil || len(log.Items) != 1 || log.Items[0].Action != store.ModResolveReport || log.Items[0].TargetID != r.ID ||
			log.Items[0].Moderator != "root" {
			t.Fatalf("mod log after the repair: %+v, %v", log, err)
		}
	})
}

// TestGroupMadeAnewDoesNotInheritReports lets a group made by a post die with its post, and its
// reported author make it anew with createGroup: the new moderator neither lists, sees nor
// resolves the old report (reporter and reason), while the admins still do; a report made in the
// new group is its moderators' as usual.
func TestGroupMadeAnewDoesNotInheritReports(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		amy, bob, eve := f.user("amy"), f.user("bob"), f.user("eve")
		f.admin("root")
		old := f.post(amy, "spam", "pets")
		oldReport := f.report(bob, old.ID, "amy spams")
		if err := f.s.DeletePost(f.ctx, uk(amy), old.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.CreateGroup(f.ctx, uk(amy), "pets", nil); err != nil {
			t.Fatalf("make the dead group anew: %v", err)
		}
		list := func(viewer, group string) []string {
			t.Helper()
			p, err := f.s.NewLoader().Reports(f.ctx, uk(viewer), group, true, store.Window{First: 10}, store.ReportNeeds{})
			if err != nil {
				t.Fatalf("reports(%q) as %s: %v", group, viewer, err)
			}
			var ids []string
			for _, r := range p.Items {
				ids = append(ids, r.ID)
			}
			if len(ids) != p.Total {
				t.Fatalf("reports(%q) as %s: %v, total %d", group, viewer, ids, p.Total)
			}
			return ids
		}
		for _, group := range []string{"pets", ""} {
			if got := list(amy, group); len(got) != 0 {
				t.Errorf("the new moderator lists the old group's reports (%q): %v", group, got)
			}
		}
		if r, err := f.s.NewLoader().Report(f.ctx, uk(amy), oldReport.ID); r != nil || err != nil {
			t.Errorf("the new moderator sees the old report: %+v, %v", r, err)
		}
		if _, err := f.s.ResolveReport(f.ctx, uk(amy), oldReport.ID); !store.IsKind(err, store.KindForbidden) {
			t.Errorf("the new moderator resolves the old report: %v, want FORBIDDEN", err)
		}

		// A report in the new group is its moderators'.
		fresh := f.report(bob, f.post(eve, "fresh spam", "pets").ID, "eve spams")
		for _, group := range []string{"pets", ""} {
			if got := list(amy, group); !slices.Equal(got, []string{fresh.ID}) {
				t.Errorf("the new moderator's reports (%q): %v, want %s", group, got, fresh.ID)
			}
		}
		if r, err := f.s.ResolveReport(f.ctx, uk(amy), fresh.ID); err != nil || !r.Resolved {
			t.Fatalf("the new moderator resolves the new report: %+v, %v", r, err)
		}

		// The admins still see the old report, open, and resolve it.
		if got := list("root", ""); !slices.Equal(got, []string{oldReport.ID}) {
			t.Fatalf("the admin's open reports: %v, want %s", got, oldReport.ID)
		}
		if r, err := f.s.NewLoader().Report(f.ctx, "root", oldReport.ID); err != nil || r == nil || r.Reason != "amy spams" {
			t.Fatalf("the admin's view of the old report: %+v, %v", r, err)
		}
		if r, err := f.s.ResolveReport(f.ctx, "root", oldReport.ID); err != nil || !r.Resolved {
			t.Fatalf("the admin resolves the old report: %+v, %v", r, err)
		}
		if got := list("root", ""); len(got) != 0 {
			t.Fatalf("open reports after the admin resolved: %v", got)
		}
	})
}
