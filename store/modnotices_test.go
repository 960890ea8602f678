package store_test

import (
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestRemovalNoticeOnceAfterACrash stops a removal right after its atomic step, lets the repair
// finish it, has the client retry, and runs the jobs again: the author gets exactly one notice.
func TestRemovalNoticeOnceAfterACrash(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		ann := f.user("ann")
		p := f.post(ann, "spam", "go")
		if err := f.s.ModeratePostScriptOnly(f.ctx, "mia", p.ID, store.ModRemovePost, "spam"); err != nil {
			t.Fatal(err)
		}
		notices := func() []*store.Notification {
			t.Helper()
			page, err := f.s.NewLoader().Notifications(f.ctx, "ann", store.Window{First: 10}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			return page.Items
		}
		settle(t, f.s)
		if got := notices(); len(got) != 0 {
			t.Fatalf("notified before the action was logged: %+v", got[0])
		}
		f.repairLater()                                                       // logs the action from the post's outbox and queues its notice
		settle(t, f.s)                                                        // delivers it
		if _, err := f.s.RemovePost(f.ctx, "mia", p.ID, "spam"); err != nil { // the client's retry
			t.Fatal(err)
		}
		f.repairLater()
		settle(t, f.s)
		got := notices()
		if len(got) != 1 || got[0].Kind != store.NotificationModAction || got[0].Actor != "mia" || got[0].PostID != p.ID {
			t.Fatalf("ann's notices: %+v", got)
		}
		n, err := f.s.NewLoader().UnreadNotificationCount(f.ctx, "ann")
		if err != nil || n != 1 {
			t.Fatalf("unread %d, %v", n, err)
		}
		a, err := f.s.NewLoader().ModAction(f.ctx, got[0].ModActionID)
		if err != nil || a == nil || a.Action != store.ModRemovePost || a.Reason == nil || *a.Reason != "spam" || a.Group != "go" {
			t.Fatalf("the notice's action: %+v, %v", a, err)
		}
		link, err := f.s.NewLoader().ModActionNotice(f.ctx, "ann", a)
		if err != nil || link != got[0].ID {
			t.Fatalf("the log links to %q (%v), want %q", link, err, got[0].ID)
		}
	})
}

// TestRemovalNoticeNotSentIsNotLinked: a removal notice that is not delivered — its author blocks
// the moderator — leaves the log's entry without a noticeId, as one of an action that notifies
// nobody: the link names only a notification that its recipient has.
func TestRemovalNoticeNotSentIsNotLinked(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		ann := f.user("ann")
		if _, err := f.s.Block(f.ctx, uk(ann), "mia"); err != nil {
			t.Fatal(err)
		}
		p := f.post(ann, "spam", "go")
		if _, err := f.s.RemovePost(f.ctx, "mia", p.ID, "spam"); err != nil {
			t.Fatal(err)
		}
		settle(t, f.s)
		page, err := f.s.NewLoader().Notifications(f.ctx, uk(ann), store.Window{First: 10}, false, nil)
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("ann, who blocks mia, was told: %+v, %v", page, err)
		}
		log, err := f.s.NewLoader().ModLog(f.ctx, "go", store.Window{First: 10})
		if err != nil || len(log.Items) != 1 {
			t.Fatalf("the log: %+v, %v", log, err)
		}
		link, err := f.s.NewLoader().ModActionNotice(f.ctx, uk(ann), log.Items[0])
		if err != nil || link != "" {
			t.Fatalf("the log links the action to %q (%v), a notification ann never got", link, err)
		}
	})
}
