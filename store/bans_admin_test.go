package store_test

import (
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestAdminsGroupBansAreTheAdmins: a group ban an admin set is the admins' to change, as an
// admin's removal or lock is: the group's moderators may neither lift it nor replace it (with a
// shorter ban, say) while it is in force (FORBIDDEN), and it stays as it was. Once it ends, or an
// admin lifts it, the moderators ban and unban as before; their own bans stay theirs.
func TestAdminsGroupBansAreTheAdmins(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		if _, err := w.s.CreatePost(w.ctx, "amy", store.NewPost{Title: "hello", Groups: []string{"go"}}); err != nil {
			t.Fatal(err)
		}
		until := w.at(time.Hour)
		w.ban("root", "ben", "go", until, "spam rings")
		steps := []struct {
			name string
			do   func() error
		}{
			{"lifts it", func() error { _, err := w.s.UnbanUser(w.ctx, "mia", "ben", "go"); return err }},
			{"shortens it", func() error {
				_, err := w.s.BanUser(w.ctx, "mia", "ben", "go", w.at(time.Second), "a second")
				return err
			}},
			{"makes it permanent", func() error { _, err := w.s.BanUser(w.ctx, "mia", "ben", "go", nil, "for good"); return err }},
		}
		for _, s := range steps {
			if err := s.do(); !store.IsKind(err, store.KindForbidden) {
				t.Fatalf("a moderator of the group %s: %v, want FORBIDDEN", s.name, err)
			}
			_, err := w.s.CreatePost(w.ctx, "ben", store.NewPost{Title: "back", Groups: []string{"go"}})
			wantBanned(t, "ben posting after the moderator "+s.name, err, until)
		}
		// The admins lift it; then the moderator's own ban is theirs.
		if _, err := w.s.UnbanUser(w.ctx, "root", "ben", "go"); err != nil {
			t.Fatal(err)
		}
		w.ban("mia", "ben", "go", w.at(time.Hour), "spam")
		if _, err := w.s.UnbanUser(w.ctx, "mia", "ben", "go"); err != nil {
			t.Fatalf("the moderator lifts their own ban: %v", err)
		}
		// An admin's ban that ended is no longer in the way.
		w.ban("root", "ben", "go", w.at(time.Minute), "cool down")
		w.clk.Add(time.Minute)
		w.ban("mia", "ben", "go", w.at(time.Hour), "again")
	})
}
