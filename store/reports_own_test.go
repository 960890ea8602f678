package store_test

import (
	"encoding/json"
	"strings"
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

// TestReporterHiddenFromTheReportedAuthor: Loader.ReporterFor tells a moderator whose own post
// or comment was reported nothing of who reported it — by the author the report recorded, and,
// for a report made before reports recorded one, by its post or comment while they exist — and
// everyone else who sees the report (another moderator, an admin, the reporter) the reporter.
func TestReporterHiddenFromTheReportedAuthor(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		f.user("carol")
		f.user("zed")
		other := f.post("carol", "carol's post", "go")
		if _, err := f.s.AddModerator(f.ctx, "mia", "go", "zed"); err != nil {
			t.Fatal(err)
		}
		own := f.post("mia", "mia's post", "go")
		c, err := f.s.CreateComment(f.ctx, "mia", store.NewComment{PostID: other.ID, Body: "mia's comment"})
		if err != nil {
			t.Fatal(err)
		}
		entries := f.s.Options().Prefix + "{reports}:entries"
		for _, old := range []bool{false, true} {
			for _, target := range []string{own.ID, c.ID, other.ID} {
				var r *store.Report
				if target == c.ID {
					r, err = f.s.ReportComment(f.ctx, "carol", target, "spam")
				} else {
					r, err = f.s.ReportPost(f.ctx, "carol", target, "spam")
				}
				if err != nil {
					t.Fatal(err)
				}
				if old { // as a report made before reports recorded their author
					id := strings.TrimPrefix(r.ID, "report:")
					raw, err := b.Client.HGet(f.ctx, entries, id).Result()
					if err != nil {
						t.Fatal(err)
					}
					var m map[string]any
					if err := json.Unmarshal([]byte(raw), &m); err != nil || m["author"] == nil {
						t.Fatalf("report %s records no author: %s (%v)", r.ID, raw, err)
					}
					delete(m, "author")
					stripped, _ := json.Marshal(m)
					if err := b.Client.HSet(f.ctx, entries, id, stripped).Err(); err != nil {
						t.Fatal(err)
					}
				}
				for viewer, want := range map[store.UserKey]store.UserKey{"mia": "carol", "zed": "carol", "root": "carol", "carol": "carol"} {
					if viewer == "mia" && target != other.ID {
						want = ""
					}
					l := f.s.NewLoader()
					got, err := l.Report(f.ctx, viewer, r.ID)
					if err != nil || got == nil {
						t.Fatalf("%s reads report %s: %+v (%v)", viewer, r.ID, got, err)
					}
					if by, err := l.ReporterFor(f.ctx, viewer, got); err != nil || by != want {
						t.Errorf("old %v: the reporter of the report of %s, as %s learns it: %q (%v), want %q", old, target, viewer, by, err, want)
					}
				}
				if _, err := f.s.ResolveReportAs(f.ctx, "root", r.ID, store.ReportActioned); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
