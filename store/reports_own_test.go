package store_test

import (
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestNoModeratorResolvesReportsOfTheirOwn: a moderator may not resolve a report of their own
// post or comment (FORBIDDEN): a dismissal would close it for the other moderators and count
// against its reporter, whose right to report a few such dismissals take away, site-wide. Another
// moderator of the group, or an admin, resolves it.
func TestNoModeratorResolvesReportsOfTheirOwn(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		f.user("carol")
		f.user("zed")
		own := f.post("mia", "my own post", "go")
		other := f.post("carol", "another post", "go")
		if _, err := f.s.AddModerator(f.ctx, "mia", "go", "zed"); err != nil {
			t.Fatal(err)
		}
		c, err := f.s.CreateComment(f.ctx, "mia", store.NewComment{PostID: other.ID, Body: "my own comment"})
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range []struct {
			name   string
			report func() (*store.Report, error)
		}{
			{"post", func() (*store.Report, error) { return f.s.ReportPost(f.ctx, "carol", own.ID, "spam") }},
			{"comment", func() (*store.Report, error) { return f.s.ReportComment(f.ctx, "carol", c.ID, "spam") }},
		} {
			for _, res := range []store.ReportResolution{store.ReportDismissed, store.ReportActioned} {
				r, err := target.report()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.s.ResolveReportAs(f.ctx, "mia", r.ID, res); !store.IsKind(err, store.KindForbidden) {
					t.Fatalf("the author of the %s resolves its report (%s): %v, want FORBIDDEN", target.name, res, err)
				}
				got, err := f.s.NewLoader().Report(f.ctx, "root", r.ID)
				if err != nil || got == nil || got.Resolved {
					t.Fatalf("the report of the %s after its author's resolve: %+v (%v), want it open", target.name, got, err)
				}
				resolver := store.UserKey("zed")
				if res == store.ReportActioned {
					resolver = "root"
				}
				if got, err := f.s.ResolveReportAs(f.ctx, resolver, r.ID, res); err != nil || !got.Resolved {
					t.Fatalf("%s resolves the report of the %s: %+v (%v)", resolver, target.name, got, err)
				}
			}
		}
	})
}

// TestNoModeratorResolvesReportsOfTheirOwnDeleted: deleting one's own reported post or comment
// does not make its report a moderator's to resolve: dismissing it would still count against its
// reporter, and nobody but an admin judges their own case. The other moderators and the admins
// still resolve it.
func TestNoModeratorResolvesReportsOfTheirOwnDeleted(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		f.user("carol")
		f.user("zed")
		f.post("carol", "the group's first post", "go")
		if _, err := f.s.AddModerator(f.ctx, "mia", "go", "zed"); err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{"post", "comment"} {
			own := f.post("mia", "my own "+kind, "go")
			target := own.ID
			if kind == "comment" {
				other := f.post("carol", "another post", "go")
				c, err := f.s.CreateComment(f.ctx, "mia", store.NewComment{PostID: other.ID, Body: "my own comment"})
				if err != nil {
					t.Fatal(err)
				}
				target = c.ID
			}
			var r *store.Report
			var err error
			if kind == "comment" {
				r, err = f.s.ReportComment(f.ctx, "carol", target, "spam")
			} else {
				r, err = f.s.ReportPost(f.ctx, "carol", target, "spam")
			}
			if err != nil {
				t.Fatal(err)
			}
			if kind == "comment" {
				err = f.s.DeleteComment(f.ctx, "mia", target)
			} else {
				err = f.s.DeletePost(f.ctx, "mia", target)
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.ResolveReportAs(f.ctx, "mia", r.ID, store.ReportDismissed); !store.IsKind(err, store.KindForbidden) {
				t.Fatalf("the author of the deleted %s dismisses its report: %v, want FORBIDDEN", kind, err)
			}
			if got, err := f.s.ResolveReportAs(f.ctx, "zed", r.ID, store.ReportDismissed); err != nil || !got.Resolved {
				t.Fatalf("another moderator resolves the report of the deleted %s: %+v (%v)", kind, got, err)
			}
		}
	})
}
