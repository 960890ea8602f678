package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
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
		if _, err := f.s.UpdateGroup(f.ctx, "mia", "gophers", store.GroupEdit{Description: &desc}); err != nil {
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

// TestModeratorSeniority checks that a moderator acts only on the moderators added after them,
// the creator (first) on all of them and the admins on everyone, so that no co-moderator can
// take a group over by removing the others and then banning them. The group is made by zoe, who
// adds yul, who adds xan, after whom zoe adds wil — all in one millisecond of a stopped clock,
// and named against the alphabet, so that only the order of the additions can rank them.
func TestModeratorSeniority(t *testing.T) {
	type step struct {
		actor store.UserKey
		op    string // "remove" or "ban"
		user  store.UserKey
	}
	for _, tc := range []struct {
		name      string
		steps     []step
		forbidden bool // the last step is FORBIDDEN; otherwise it succeeds
	}{
		{"the second removes the creator", []step{{"yul", "remove", "zoe"}}, true},
		{"the third removes the second, who added them", []step{{"xan", "remove", "yul"}}, true},
		{"the fourth removes the third, added before them", []step{{"wil", "remove", "xan"}}, true},
		{"the second removes the third, whom they added", []step{{"yul", "remove", "xan"}}, false},
		{"the second removes the fourth, whom the creator added", []step{{"yul", "remove", "wil"}}, false},
		{"the creator removes the second", []step{{"zoe", "remove", "yul"}}, false},
		{"a moderator steps down", []step{{"wil", "remove", "wil"}}, false},
		{"an admin removes the creator", []step{{"root", "remove", "zoe"}}, false},
		{"a moderator removed and added again is junior", []step{{"zoe", "remove", "yul"}, {"zoe", "add", "yul"}, {"yul", "remove", "xan"}}, true},
		{"the take-over: the fourth removes the first", []step{{"wil", "remove", "zoe"}}, true},
		{"the take-over: the fourth bans the first", []step{{"wil", "ban", "zoe"}}, true},
		{"the second bans the creator", []step{{"yul", "ban", "zoe"}}, true},
		{"the creator bans a moderator without removing them", []step{{"zoe", "ban", "yul"}}, true},
		{"the creator removes the second, then bans them", []step{{"zoe", "remove", "yul"}, {"zoe", "ban", "yul"}}, false},
		{"the second removes the third, then bans them", []step{{"yul", "remove", "xan"}, {"yul", "ban", "xan"}}, false},
		{"an admin bans the creator", []step{{"root", "ban", "zoe"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx, clk := context.Background(), storetest.NewClock()
				s := b.NewStore(t, store.Options{Now: clk.Now, WriteLimit: -1})
				signUp(t, s, "root", "zoe", "yul", "xan", "wil")
				if err := s.GrantAdmin(ctx, "root"); err != nil {
					t.Fatal(err)
				}
				if _, err := s.CreateGroup(ctx, "zoe", "meta", nil); err != nil {
					t.Fatal(err)
				}
				for _, add := range []struct{ by, mod store.UserKey }{{"zoe", "yul"}, {"yul", "xan"}, {"zoe", "wil"}} {
					if _, err := s.AddModerator(ctx, add.by, "meta", add.mod); err != nil {
						t.Fatalf("%s adds %s: %v", add.by, add.mod, err)
					}
				}
				var err error
				for i, st := range tc.steps {
					switch st.op {
					case "add":
						_, err = s.AddModerator(ctx, st.actor, "meta", st.user)
					case "remove":
						_, err = s.RemoveModerator(ctx, st.actor, "meta", st.user)
					case "ban":
						_, err = s.BanUser(ctx, st.actor, st.user, "meta", nil, "take-over")
					}
					if i < len(tc.steps)-1 && err != nil {
						t.Fatalf("step %d (%s %s %s): %v", i, st.actor, st.op, st.user, err)
					}
				}
				last := tc.steps[len(tc.steps)-1]
				if tc.forbidden != store.IsKind(err, store.KindForbidden) || !tc.forbidden && err != nil {
					t.Fatalf("%s %s %s: %v, want FORBIDDEN %v", last.actor, last.op, last.user, err, tc.forbidden)
				}
				l := s.NewLoader()
				g, err := l.Group(ctx, "meta")
				if err != nil || g == nil {
					t.Fatalf("group: %v %v", g, err)
				}
				mods, err := l.GroupModerators(ctx, g)
				if err != nil {
					t.Fatal(err)
				}
				still := slices.ContainsFunc(mods, func(u *store.User) bool { return u.Key() == last.user })
				if last.op == "remove" && still != tc.forbidden {
					t.Fatalf("after %s removes %s, %s moderates: %v", last.actor, last.user, last.user, still)
				}
			})
		})
	}
}

// After a member's slot comes back older than the group's (a restore or a failover that kept the
// group's copy of a later join or leave and lost the member's own record of it), RebuildUsers
// makes the group's side agree with the member's again: the copy's guard held a version the
// member's sequence had not reached, and the rebuild's write of the membership lost to it.
func TestRebuildUsersMembershipOverAStaleCopy(t *testing.T) {
	for _, tc := range []struct {
		name string
		// lost runs the calls whose record ann's slot loses; kept is what her slot holds after.
		lost func(ctx context.Context, s *store.Store) error
		kept bool
	}{
		{"a join lost", func(ctx context.Context, s *store.Store) error {
			_, err := s.JoinGroup(ctx, "ann", "go")
			return err
		}, false},
		{"a leave lost", func(ctx context.Context, s *store.Store) error {
			if _, err := s.JoinGroup(ctx, "ann", "go"); err != nil {
				return err
			}
			_, err := s.LeaveGroup(ctx, "ann", "go")
			return err
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				prefix := storetest.Prefix()
				s := b.NewStore(t, store.Options{Prefix: prefix})
				signUp(t, s, "ann", "ben")
				if _, err := s.CreateGroup(ctx, "ben", "go", nil); err != nil {
					t.Fatal(err)
				}
				if _, err := s.JoinGroup(ctx, "ben", "go"); err != nil {
					t.Fatal(err)
				}
				if err := tc.lost(ctx, s); err != nil {
					t.Fatal(err)
				}
				// ann's slot as it was before the lost calls; the group's keeps its copy.
				groups, seq := prefix+"{u:ann}:groups", prefix+"{u:ann}:groups:seq"
				if err := b.Client.Del(ctx, groups).Err(); err != nil {
					t.Fatal(err)
				}
				want := 1 // ben
				if tc.kept {
					want = 2
					if err := b.Client.ZAdd(ctx, groups, rdb.Z{Score: 1, Member: "go"}).Err(); err != nil {
						t.Fatal(err)
					}
				}
				if err := b.Client.Set(ctx, seq, flagInt(tc.kept), 0).Err(); err != nil {
					t.Fatal(err)
				}
				if _, err := s.RebuildUsers(ctx); err != nil {
					t.Fatal(err)
				}
				check := func(when string, in bool, n int) {
					t.Helper()
					l := s.NewLoader()
					g := store.NewGroup("go")
					got, err := l.GroupMemberCount(ctx, g)
					if err != nil {
						t.Fatal(err)
					}
					member, err := l.IsMember(ctx, g, "ann")
					if err != nil {
						t.Fatal(err)
					}
					listed := b.Client.ZScore(ctx, prefix+"{g:go}:members", "ann").Err() == nil
					if got != n || member != in || listed != in {
						t.Fatalf("%s: %d members, ann a member %v on her side, %v on the group's; want %d, %v",
							when, got, member, listed, n, in)
					}
				}
				check("after rebuild", tc.kept, want)
				// ann joins (or leaves) again, and it holds on both sides.
				var err error
				if tc.kept {
					_, err = s.LeaveGroup(ctx, "ann", "go")
				} else {
					_, err = s.JoinGroup(ctx, "ann", "go")
				}
				if err != nil {
					t.Fatal(err)
				}
				check("after the next change", !tc.kept, 3-want)
			})
		})
	}
}

func flagInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A deleted account names nobody: it cannot be made a moderator (NOT_FOUND, as for a name never
// taken), and nothing is written or logged.
func TestAddModeratorOfADeletedAccount(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: -1})
		signUp(t, s, "ann", "ben")
		if _, err := s.CreateGroup(ctx, "ann", "go", nil); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAccount(ctx, "ben", "password1", false); err != nil {
			t.Fatal(err)
		}
		for _, u := range []store.UserKey{"ben", "nobody"} {
			if _, err := s.AddModerator(ctx, "ann", "go", u); !store.IsKind(err, store.KindNotFound) {
				t.Errorf("add %s as a moderator: %v, want NOT_FOUND", u, err)
			}
		}
		if n, err := b.Client.ZCard(ctx, prefix+"{g:go}:mods").Result(); err != nil || n != 1 {
			t.Errorf("moderators of go: %d, %v; want 1 (ann)", n, err)
		}
		log, err := s.NewLoader().ModLog(ctx, "go", store.Window{First: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range log.Items {
			if a.Action == store.ModAddModerator {
				t.Errorf("the mod log holds %+v", a)
			}
		}
	})
}
