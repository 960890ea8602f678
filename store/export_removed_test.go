package store_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// exportedRemoved is what TestExportRemovedAndReports reads of an export.
type exportedRemoved struct {
	Posts, RemovedPosts []struct {
		ID, Title, Body string
		Removed         bool
	}
	Comments, RemovedComments []struct {
		ID, PostID, Text string
		Removed          bool
	}
	Notifications []struct {
		Kind      string
		PostID    *string
		CommentID *string
		ModAction *struct {
			ID, Action, TargetID string
			GroupID, Reason      *string
		}
	}
	Reports []struct {
		ID, PostID, Reason, Status string
		CommentID                  *string
		CreatedAt                  time.Time
		ResolvedAt                 *time.Time
	}
	Complete bool
}

// TestExportRemovedAndReports: what a moderator removed stays the author's and is exported,
// marked removed — a post and a comment, with the removal's reason on the notice that told the
// author — while what the author deleted, or restored content, is not duplicated; and the reports
// the account filed are exported with their status, open or resolved, and nobody else's.
func TestExportRemovedAndReports(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		f := newFixture(t, b, store.Options{Prefix: storetest.Prefix(), Now: clk.Now})
		ctx := f.ctx
		root, ann, bob := f.admin("root"), f.user("ann"), f.user("bob")
		kept := f.post(ann, "kept", "go")
		gone := f.post(ann, "removed one", "go")
		back := f.post(ann, "restored one", "go")
		deleted := f.post(ann, "deleted one", "go")
		theirs := f.post(bob, "bob's", "go")
		comment := func(uid, pid, body string) *store.Comment {
			t.Helper()
			c, err := f.s.CreateComment(ctx, uk(uid), store.NewComment{PostID: pid, Body: body})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		liveC := comment(ann, theirs.ID, "a live comment")
		goneC := comment(ann, theirs.ID, "a removed comment")
		delC := comment(ann, theirs.ID, "a comment removed, then deleted")
		comment(bob, theirs.ID, "bob's comment, removed")
		comment(bob, gone.ID, "bob's on ann's removed post")

		if _, err := f.s.RemovePost(ctx, uk(root), gone.ID, "spam"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RemovePost(ctx, uk(root), back.ID, "a mistake"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RestorePost(ctx, uk(root), back.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RemovePost(ctx, uk(root), deleted.ID, "off topic"); err != nil {
			t.Fatal(err)
		}
		if err := f.s.DeletePost(ctx, uk(ann), deleted.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RemoveComment(ctx, uk(root), goneC.ID, "rude"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RemoveComment(ctx, uk(root), delC.ID, "rude too"); err != nil {
			t.Fatal(err)
		}
		if err := f.s.DeleteComment(ctx, uk(ann), delC.ID); err != nil {
			t.Fatal(err)
		}

		// Reports: ann's of a post (resolved), of a comment (open); bob's is not hers.
		r1 := f.report(ann, theirs.ID, "not nice")
		clk.Add(time.Minute)
		bobsComment := comment(bob, theirs.ID, "another of bob's")
		r2, err := f.s.ReportComment(ctx, uk(ann), bobsComment.ID, "rude")
		if err != nil {
			t.Fatal(err)
		}
		f.report(bob, kept.ID, "bob's report")
		if _, err := f.s.ResolveReportAs(ctx, uk(root), r1.ID, store.ReportDismissed); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}

		var buf bytes.Buffer
		if err := f.s.Export(ctx, uk(ann), "", &buf); err != nil {
			t.Fatal(err)
		}
		var d exportedRemoved
		if err := json.Unmarshal(buf.Bytes(), &d); err != nil || !d.Complete {
			t.Fatalf("export: %v, complete %v\n%s", err, d.Complete, buf.String())
		}
		var posts, removed []string
		for _, p := range d.Posts {
			posts = append(posts, p.Title)
		}
		for _, p := range d.RemovedPosts {
			removed = append(removed, p.Title)
			if !p.Removed || p.ID != gone.ID {
				t.Errorf("removed post %+v, want %s marked removed", p, gone.ID)
			}
		}
		if len(posts) != 2 || len(removed) != 1 || removed[0] != "removed one" {
			t.Errorf("posts %q, removed posts %q; want kept and restored one, and removed one", posts, removed)
		}
		if len(d.Comments) != 1 || d.Comments[0].ID != liveC.ID {
			t.Errorf("comments = %+v, want %s", d.Comments, liveC.ID)
		}
		if len(d.RemovedComments) != 1 || d.RemovedComments[0].ID != goneC.ID || !d.RemovedComments[0].Removed ||
			d.RemovedComments[0].Text != "a removed comment" || d.RemovedComments[0].PostID != theirs.ID {
			t.Errorf("removed comments = %+v, want %s with its text, marked removed", d.RemovedComments, goneC.ID)
		}
		// The reasons, on the notices that told ann.
		reasons := map[string]string{}
		for _, n := range d.Notifications {
			if n.Kind != "MOD_ACTION" {
				if n.ModAction != nil {
					t.Errorf("a %s notification with a modAction: %+v", n.Kind, n.ModAction)
				}
				continue
			}
			if n.ModAction == nil || n.ModAction.Reason == nil && n.ModAction.Action != "RESTORE_POST" {
				t.Errorf("MOD_ACTION notification without its action or reason: %+v", n)
				continue
			}
			if n.ModAction.Reason != nil {
				reasons[n.ModAction.Action+" "+n.ModAction.TargetID] = *n.ModAction.Reason
			}
		}
		for target, reason := range map[string]string{"REMOVE_POST " + gone.ID: "spam", "REMOVE_COMMENT " + goneC.ID: "rude",
			"REMOVE_POST " + back.ID: "a mistake"} {
			if reasons[target] != reason {
				t.Errorf("reason of %s = %q, want %q (all: %v)", target, reasons[target], reason, reasons)
			}
		}
		if len(d.Reports) != 2 {
			t.Fatalf("reports = %+v, want ann's two", d.Reports)
		}
		got, open := d.Reports[0], d.Reports[1]
		if got.ID != r1.ID || got.PostID != theirs.ID || got.CommentID != nil || got.Reason != "not nice" ||
			got.Status != "DISMISSED" || got.ResolvedAt == nil || !got.CreatedAt.Equal(r1.CreatedAt) {
			t.Errorf("first report = %+v, want %s of %s, dismissed", got, r1.ID, theirs.ID)
		}
		if open.ID != r2.ID || open.CommentID == nil || *open.CommentID != bobsComment.ID || open.PostID != theirs.ID ||
			open.Status != "OPEN" || open.ResolvedAt != nil {
			t.Errorf("second report = %+v, want %s of %s, open", open, r2.ID, bobsComment.ID)
		}
	})
}
