package store_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestLabelChangesInTheModLog: a moderator's label put on or taken off someone's post is in the
// moderation log (the group's and the site's) once per label, also when the request is sent
// twice, with a MOD_ACTION notice to the author; the author's own label changes are not
// moderation and log nothing; a group's NSFW label is LABEL_GROUP or UNLABEL_GROUP, beside the
// UPDATE_GROUP of what else the same change touched.
func TestLabelChangesInTheModLog(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		ann := f.user("ann")
		p := f.post(ann, "after dark", "go")
		on, off := true, false
		why := "adult content"
		for range 2 { // the client's retry changes nothing and logs nothing more
			if _, err := f.s.SetPostLabels(f.ctx, "mia", p.ID, &on, &on, &why); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.s.SetPostLabels(f.ctx, "mia", p.ID, nil, &off, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.SetPostLabels(f.ctx, store.UserKey(ann), p.ID, &off, &on, &why); !store.IsKind(err, store.KindInvalid) {
			t.Fatalf("the author's own change with a reason: %v, want KindInvalid (BAD_USER_INPUT)", err)
		}
		if _, err := f.s.SetPostLabels(f.ctx, store.UserKey(ann), p.ID, nil, &on, nil); err != nil { // the author's own
			t.Fatal(err)
		}
		long := strings.Repeat("x", store.MaxModReasonRunes+1)
		if _, err := f.s.SetPostLabels(f.ctx, "mia", p.ID, &on, nil, &long); !store.IsKind(err, store.KindInvalid) {
			t.Fatalf("a reason of %d characters: %v, want KindInvalid (BAD_USER_INPUT)", len(long), err)
		}
		if _, err := f.s.SetPostLabels(f.ctx, "rex", p.ID, &on, nil, nil); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("a moderator of another group labels the post: %v, want FORBIDDEN", err)
		}
		settle(t, f.s)

		l := f.s.NewLoader()
		page, err := l.ModLog(f.ctx, "go", store.Window{First: 100})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range slices.Backward(page.Items) {
			label := ""
			if a.Label != nil {
				label = string(*a.Label)
			}
			reason := "-"
			if a.Reason != nil {
				reason = *a.Reason
			}
			got = append(got, string(a.Action)+" "+label+" "+a.TargetID+" "+string(a.Moderator)+" "+reason)
		}
		want := []string{"LABEL_POST NSFW " + p.ID + " mia adult content", "LABEL_POST SPOILER " + p.ID + " mia adult content",
			"UNLABEL_POST SPOILER " + p.ID + " mia -"}
		// The two labels of one change share a millisecond: their order is the ids'.
		if len(got) != 3 || !slices.Equal(slices.Sorted(slices.Values(got[:2])), want[:2]) || got[2] != want[2] {
			t.Fatalf("group go's log: %q, want %q", got, want)
		}
		site, err := l.ModLog(f.ctx, "", store.Window{First: 100})
		if err != nil || len(site.Items) != 3 {
			t.Fatalf("the site's log holds %d actions (%v), want the same 3", len(site.Items), err)
		}

		notices, err := f.s.NewLoader().Notifications(f.ctx, store.UserKey(ann), store.Window{First: 10}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(notices.Items) != 3 {
			t.Fatalf("ann has %d notices, want one per label action (3)", len(notices.Items))
		}
		for _, n := range notices.Items {
			a, err := f.s.NewLoader().ModAction(f.ctx, n.ModActionID)
			if err != nil || n.Kind != store.NotificationModAction || n.Actor != "mia" || n.PostID != p.ID || a == nil || a.Label == nil {
				t.Fatalf("notice %+v of action %+v (%v)", n, a, err)
			}
			if link, err := f.s.NewLoader().ModActionNotice(f.ctx, store.UserKey(ann), a); err != nil || link != n.ID {
				t.Fatalf("the log links %s to %q (%v), want %q", a.ID, link, err, n.ID)
			}
		}

		// A group's label.
		desc := "nightly builds"
		if _, err := f.s.UpdateGroup(f.ctx, "mia", "go", store.GroupEdit{NSFW: &on}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.UpdateGroup(f.ctx, "mia", "go", store.GroupEdit{NSFW: &on}); err != nil { // no change
			t.Fatal(err)
		}
		if _, err := f.s.UpdateGroup(f.ctx, "mia", "go", store.GroupEdit{NSFW: &off, Description: &desc}); err != nil {
			t.Fatal(err)
		}
		settle(t, f.s)
		page, err = f.s.NewLoader().ModLog(f.ctx, "go", store.Window{First: 100})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, a := range slices.Backward(page.Items[:3]) {
			label := ""
			if a.Label != nil {
				label = string(*a.Label)
			}
			got = append(got, string(a.Action)+" "+label+" "+a.TargetID)
		}
		want = []string{"LABEL_GROUP NSFW group:go", "UNLABEL_GROUP NSFW group:go", "UPDATE_GROUP  group:go"}
		// Actions of one millisecond are in the order of their ids, and the three calls may share
		// one on a fast Redis: the three, in any order.
		if len(page.Items) != 6 || !slices.Equal(slices.Sorted(slices.Values(got)), want) {
			t.Fatalf("group go's log after its label changes: %q (of %d), want %q", got, len(page.Items), want)
		}
	})
}
