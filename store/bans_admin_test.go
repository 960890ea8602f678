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

// TestBanOfAUserMadeAdminIsLifted: nobody bans a site admin, but an account banned before the
// operator made it an admin kept its ban, which refused its every write (as an admin too), and
// nobody could lift it: unbanUser refused "site admins cannot be banned". The admins lift a site
// ban of it, and the group's moderators a group ban of theirs, as any other ban.
func TestBanOfAUserMadeAdminIsLifted(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		w.ban("root", "ben", "", nil, "spam")
		w.ban("mia", "amy", "go", w.at(time.Hour), "spam")
		for _, u := range []string{"ben", "amy"} {
			if err := w.s.GrantAdmin(w.ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.s.BanUser(w.ctx, "root", "amy", "rust", nil, "again"); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("banning an admin: %v, want FORBIDDEN", err)
		}
		if _, err := w.s.UnbanUser(w.ctx, "root", "ben", ""); err != nil {
			t.Fatalf("the admins lift the site ban of a user made admin since: %v", err)
		}
		if _, err := w.s.UnbanUser(w.ctx, "mia", "amy", "go"); err != nil {
			t.Fatalf("the moderator lifts their group ban of a user made admin since: %v", err)
		}
		if _, err := w.s.CreatePost(w.ctx, "ben", store.NewPost{Title: "back", Groups: []string{"go"}}); err != nil {
			t.Fatalf("ben writes once unbanned: %v", err)
		}
		if _, err := w.s.CreatePost(w.ctx, "amy", store.NewPost{Title: "back", Groups: []string{"go"}}); err != nil {
			t.Fatalf("amy writes in go once unbanned: %v", err)
		}
	})
}
