package store_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestMigrateReportHistories writes reports as layout 5 kept them — in {reports} alone, with no
// history on the reporter's side — and checks that the migration from layout 5 records each in
// its reporter's history, which the export reads, open or resolved; that a deleted reporter's
// history is not made anew; and that a second run (a migration resumed) changes nothing.
func TestMigrateReportHistories(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		opts := store.Options{Prefix: prefix, WriteLimit: -1}
		f := newFixture(t, b, opts)
		ctx := f.ctx
		root, ann, bob := f.admin("root"), f.user("ann"), f.user("bob")
		cat := f.user("cat")
		p1, p2 := f.post(bob, "one", "go"), f.post(bob, "two", "go")
		open, resolved := f.report(ann, p1.ID, "spam"), f.report(ann, p2.ID, "rude")
		f.report(cat, p1.ID, "cat's")
		if _, err := f.s.ResolveReport(ctx, uk(root), resolved.ID); err != nil {
			t.Fatal(err)
		}
		if err := f.s.DeleteAccount(ctx, uk(cat), "password1", false); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		// Layout 5: no histories.
		filed := func(u string) string { return prefix + "{u:" + u + "}:reports:filed" }
		for _, u := range []string{ann, cat} {
			if err := b.Client.Del(ctx, filed(u)).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Client.HSet(ctx, prefix+"{meta}:layout", "version", 5).Err(); err != nil {
			t.Fatal(err)
		}
		s := b.NewStore(t, opts)
		if _, err := s.CheckLayout(ctx); err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			ran, err := s.Migrate(ctx, 10*time.Millisecond)
			if err != nil || len(ran) != store.Layout-5 || ran[0].From != 5 {
				t.Fatalf("%s: ran %+v, %v; want the migration from 5", when, ran, err)
			}
			var buf bytes.Buffer
			if err := s.Export(ctx, uk(ann), "", &buf); err != nil {
				t.Fatal(err)
			}
			var d struct {
				Reports []struct{ ID, PostID, Status string }
			}
			if err := json.Unmarshal(buf.Bytes(), &d); err != nil {
				t.Fatal(err)
			}
			want := []struct{ ID, PostID, Status string }{{open.ID, p1.ID, "OPEN"}, {resolved.ID, p2.ID, "ACTIONED"}}
			if len(d.Reports) != len(want) || d.Reports[0] != want[0] || d.Reports[1] != want[1] {
				t.Errorf("%s: ann's reports = %+v, want %+v", when, d.Reports, want)
			}
			if n, err := b.Client.ZCard(ctx, filed(ann)).Result(); err != nil || n != 2 {
				t.Errorf("%s: ann's history holds %d (%v), want 2", when, n, err)
			}
			if n, err := b.Client.Exists(ctx, filed(cat)).Result(); err != nil || n != 0 {
				t.Errorf("%s: the deleted account's history was made anew: %d, %v", when, n, err)
			}
		}
		check("migration")
		if err := b.Client.HSet(ctx, prefix+"{meta}:layout", "version", 5).Err(); err != nil {
			t.Fatal(err)
		}
		check("second run")
	})
}
