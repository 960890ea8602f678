package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func TestJoinGroupLimit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		signUp(t, s, "ann")
		for _, g := range []string{"one", "two"} {
			if _, err := s.CreateGroup(ctx, "ann", g, nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.JoinGroup(ctx, "ann", "one"); err != nil {
			t.Fatal(err)
		}
		if err := s.FillJoinedGroups(ctx, "ann", store.MaxGroupsJoined-1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.JoinGroup(ctx, "ann", "two"); !store.IsKind(err, store.KindLimitReached) {
			t.Fatalf("join one group too many: %v, want LIMIT_REACHED", err)
		}
		// A group already joined counts already: joining it again is fine, and leaving makes room.
		if _, err := s.JoinGroup(ctx, "ann", "one"); err != nil {
			t.Fatalf("join again at the limit: %v", err)
		}
		if _, err := s.LeaveGroup(ctx, "ann", "one"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.JoinGroup(ctx, "ann", "two"); err != nil {
			t.Fatalf("join after leaving one: %v", err)
		}
	})
}

// TestRebuildDerivesGroupMembers cuts off joins and leaves after their member-side step: the
// groups' member counts are wrong until RebuildUsers derives them again from the users' groups.
func TestRebuildDerivesGroupMembers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		signUp(t, s, "ann", "ben", "cat")
		if _, err := s.CreateGroup(ctx, "ann", "go", nil); err != nil {
			t.Fatal(err)
		}
		for _, u := range []store.UserKey{"ann", "ben"} {
			if _, err := s.JoinGroup(ctx, u, "go"); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.MemberFirstStep(ctx, "ben", "go", false); err != nil { // ben's leave cut off
			t.Fatal(err)
		}
		if err := s.MemberFirstStep(ctx, "cat", "go", true); err != nil { // cat's join cut off
			t.Fatal(err)
		}
		count := func() (members int, catIn, benIn bool) {
			l := s.NewLoader()
			g := store.NewGroup("go")
			n, err := l.GroupMemberCount(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			c, _ := l.IsMember(ctx, g, "cat")
			bn, _ := l.IsMember(ctx, g, "ben")
			return n, c, bn
		}
		// The member's side is authoritative: viewerIsMember is exact at once.
		if n, c, bn := count(); n != 2 || !c || bn {
			t.Fatalf("before rebuild: %d members, cat %v, ben %v", n, c, bn)
		}
		st, err := s.RebuildUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Memberships < 2 {
			t.Errorf("rebuild stats: %+v", st)
		}
		if n, _, _ := count(); n != 2 {
			t.Fatalf("after rebuild: %d members, want ann and cat", n)
		}
		// A repeat of the cut-off calls completes nothing more: the counts stay.
		if _, err := s.LeaveGroup(ctx, "ben", "go"); err != nil {
			t.Fatal(err)
		}
		if n, _, _ := count(); n != 2 {
			t.Fatalf("after ben's repeated leave: %d members", n)
		}
	})
}

// TestGroupCreatedAt checks the created time of a group made by createGroup (its creation), of
// one made by posting (its oldest post), and of one indexed before groups recorded it (its oldest
// post, read from its ranking, and recorded again by a rebuild).
func TestGroupCreatedAt(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clock := tickingClock()
		s := b.NewStore(t, store.Options{Now: clock})
		signUp(t, s, "ann")
		first, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "first", Groups: []string{"posted"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "second", Groups: []string{"posted"}}); err != nil {
			t.Fatal(err)
		}
		before := clock()
		if _, err := s.CreateGroup(ctx, "ann", "made", nil); err != nil {
			t.Fatal(err)
		}
		created := func(g string) time.Time {
			t.Helper()
			at, err := s.NewLoader().GroupCreatedAt(ctx, store.NewGroup(g))
			if err != nil {
				t.Fatal(err)
			}
			return at
		}
		if at := created("posted"); !at.Equal(first.CreatedAt) {
			t.Errorf("a group made by posting: %v, want its first post's %v", at, first.CreatedAt)
		}
		if at := created("made"); !at.After(before) {
			t.Errorf("a group made by createGroup: %v, want after %v", at, before)
		}
		if err := s.DropGroupInfo(ctx, "posted"); err != nil {
			t.Fatal(err)
		}
		if at := created("posted"); !at.Equal(first.CreatedAt) {
			t.Errorf("a group without info: %v, want its oldest post's %v", at, first.CreatedAt)
		}
		if _, err := s.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		// The rebuild recorded the time: it stays when the first post goes.
		if err := s.DeletePost(ctx, "ann", first.ID); err != nil {
			t.Fatal(err)
		}
		if at := created("posted"); !at.Equal(first.CreatedAt) {
			t.Errorf("after rebuild and the first post's deletion: %v, want %v", at, first.CreatedAt)
		}
	})
}

// TestGroupChangeIsLoggedAfterACrash runs only the scripts of a moderator's changes of a group,
// as a process that stops right after them would: the group's repair job logs each change once,
// and a retried request afterwards logs nothing more.
func TestGroupChangeIsLoggedAfterACrash(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		f.user("ben")
		if _, err := f.s.CreateGroup(f.ctx, "mia", "gophers", nil); err != nil {
			t.Fatal(err)
		}
		changes := []struct {
			kind store.ModActionKind
			arg  string
		}{
			{store.ModUpdateGroup, "all things go"},
			{store.ModAddModerator, "ben"},
			{store.ModRemoveModerator, "ben"},
		}
		for _, c := range changes {
			if err := f.s.GroupChangeScriptOnly(f.ctx, "mia", "gophers", c.kind, c.arg); err != nil {
				t.Fatalf("%s: %v", c.kind, err)
			}
		}
		if got := f.modLog(""); len(got) != 0 {
			t.Fatalf("logged before any repair: %q", got)
		}
		want := sorted([]string{
			"UPDATE_GROUP group:gophers gophers ",
			"ADD_MODERATOR user:ben gophers ",
			"REMOVE_MODERATOR user:ben gophers ",
		})
		f.repairLater()
		if got := sorted(f.modLog("gophers")); !slices.Equal(got, want) {
			t.Fatalf("group log after the repair %q, want %q", got, want)
		}
		// The clients retry: the state is as they ask, and nothing more is logged.
		desc := "all things go"
		if _, err := f.s.UpdateGroup(f.ctx, "mia", "gophers", &desc); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RemoveModerator(f.ctx, "mia", "gophers", "ben"); err != nil {
			t.Fatal(err)
		}
		f.repairLater()
		if got := sorted(f.modLog("")); !slices.Equal(got, want) {
			t.Fatalf("site log after the retries %q, want %q", got, want)
		}
	})
}
