package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSiteFiltersReachReasons checks that the site filters apply to the reasons people write: a
// moderator's (which the public moderation log shows, and any user may moderate a group of their
// own), a ban's (which its user reads) and a report's (which the moderators read), as they apply
// to every other text a user writes: refused under REFUSE, masked under REPLACE.
func TestSiteFiltersReachReasons(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		ctx := context.Background()
		w := newFilterWorld(t, be)
		if _, err := w.a.CreateGroup(ctx, w.admin, "birds", nil); err != nil {
			t.Fatal(err)
		}
		p, err := w.a.CreatePost(ctx, w.author, store.NewPost{Title: "fine", Groups: []string{"birds"}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := w.a.CreateComment(ctx, w.author, store.NewComment{PostID: p.ID, Body: "fine too"})
		if err != nil {
			t.Fatal(err)
		}
		words := []string{"ass"}
		if _, err := w.a.UpdateSiteFilters(ctx, w.admin, &words, nil, store.FilterRefuse); err != nil {
			t.Fatal(err)
		}
		bad := "you ass"
		yes := true
		for _, c := range []struct {
			name  string
			write func() error
		}{
			{"removePost", func() error { return ignore(w.b.RemovePost(ctx, w.admin, p.ID, bad)) }},
			{"removeComment", func() error { return ignore(w.b.RemoveComment(ctx, w.admin, c.ID, bad)) }},
			{"lockPost", func() error { return ignore(w.b.LockPost(ctx, w.admin, p.ID, true, &bad)) }},
			{"pinPost", func() error { return ignore(w.b.PinPost(ctx, w.admin, p.ID, "birds", true, &bad)) }},
			{"setPostLabels", func() error { return ignore(w.b.SetPostLabels(ctx, w.admin, p.ID, &yes, nil, &bad)) }},
			{"banUser", func() error { return ignore(w.b.BanUser(ctx, w.admin, w.author, "birds", nil, bad)) }},
			{"reportPost", func() error { return ignore(w.b.ReportPost(ctx, w.author, p.ID, bad)) }},
			{"reportComment", func() error { return ignore(w.b.ReportComment(ctx, w.author, c.ID, bad)) }},
		} {
			if got := filtered(t, c.write()); got != "reason" {
				t.Errorf("%s with a filtered reason: FILTERED on %q, want on \"reason\"", c.name, got)
			}
		}
		// Refused, the actions did nothing.
		ml, err := w.b.NewLoader().ModLog(ctx, "", store.Window{First: 20})
		if err != nil {
			t.Fatal(err)
		}
		if ml.Total != 0 || len(ml.Items) != 0 {
			t.Fatalf("the refused actions logged %d: %+v", len(ml.Items), ml.Items)
		}

		// Under REPLACE the reason is kept with its matches masked.
		if _, err := w.a.UpdateSiteFilters(ctx, w.admin, nil, nil, store.FilterReplace); err != nil {
			t.Fatal(err)
		}
		w.clock.Add(2 * time.Second)
		if _, err := w.b.LockPost(ctx, w.admin, p.ID, true, &bad); err != nil {
			t.Fatal(err)
		}
		ban, err := w.b.BanUser(ctx, w.admin, w.author, "birds", nil, bad)
		if err != nil {
			t.Fatal(err)
		}
		if ban.Reason != "you ***" {
			t.Errorf("ban reason %q, want %q", ban.Reason, "you ***")
		}
		ml, err = w.b.NewLoader().ModLog(ctx, "", store.Window{First: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(ml.Items) == 0 {
			t.Fatal("the mod log holds nothing after a lock and a ban")
		}
		for _, a := range ml.Items {
			if a.Reason == nil || *a.Reason != "you ***" {
				t.Errorf("mod log %s reason %v, want %q", a.Action, a.Reason, "you ***")
			}
		}
	})
}
