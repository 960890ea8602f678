package store_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestDeleteAccountGivesUpModeratorSeats deletes the creator of three groups, who holds the
// senior seat of each, and walks the group registry in batches of two, cut off after the first
// batch and started again, then runs the whole chain: the account holds no seat afterwards, each
// group logs its REMOVE_MODERATOR once, a junior moderator is no longer blocked by the deleted
// senior, and the seats of others are untouched.
func TestDeleteAccountGivesUpModeratorSeats(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
		signUp(t, s, "ann", "ben", "cris")
		for _, g := range []string{"go", "rust", "zig"} {
			if _, err := s.CreateGroup(ctx, "ann", g, nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.CreateGroup(ctx, "ben", "ada", nil); err != nil {
			t.Fatal(err)
		}
		for _, g := range []string{"go", "zig"} {
			if _, err := s.AddModerator(ctx, "ann", g, "ben"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.AddModerator(ctx, "ben", "go", "cris"); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
			t.Fatal(err)
		}
		// The registry in name order is ada, go, rust, zig: the first batch is ada and go. Cut
		// off after it, the step starts again from the beginning and changes nothing more.
		for range 2 {
			next, err := s.EraseModerated(ctx, "ann", "0", 2)
			if err != nil || next != "(go" {
				t.Fatalf("first batch: next %q, %v; want (go", next, err)
			}
		}
		next, err := s.EraseModerated(ctx, "ann", "(go", 2)
		if err != nil || next != "(zig" {
			t.Fatalf("second batch: next %q, %v; want (zig", next, err)
		}
		if next, err := s.EraseModerated(ctx, "ann", "(zig", 2); err != nil || next != "" {
			t.Fatalf("last batch: next %q, %v; want done", next, err)
		}
		settle(t, s) // the whole chain, which walks again
		if _, err := s.EraseStep(ctx, "ann", "moderated", false); err != nil {
			t.Fatal(err)
		}

		want := map[string][]string{"ada": {"ben"}, "go": {"ben", "cris"}, "rust": nil, "zig": {"ben"}}
		for g, mods := range want {
			got, err := b.Client.ZRange(ctx, prefix+"{g:"+g+"}:mods", 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(mods) || (len(got) > 0 && got[0] != mods[0]) {
				t.Errorf("moderators of %s: %v, want %v", g, got, mods)
			}
			log, err := s.NewLoader().ModLog(ctx, g, store.Window{First: 50})
			if err != nil {
				t.Fatal(err)
			}
			removals := 0
			for _, a := range log.Items {
				if a.Action == store.ModRemoveModerator && a.TargetID == store.TypeUser+":ann" {
					removals++
					if a.Moderator != "ann" || a.Group != g {
						t.Errorf("%s: logged %+v, want ann stepping down", g, a)
					}
				}
			}
			if wantN := map[bool]int{true: 0, false: 1}[g == "ada"]; removals != wantN {
				t.Errorf("%s: %d REMOVE_MODERATOR of ann logged, want %d", g, removals, wantN)
			}
			if grp, err := s.NewLoader().Group(ctx, g); err != nil || grp == nil {
				t.Errorf("group %s after the deletion: %v, %v; want it kept", g, grp, err)
			}
		}
		// ben, junior to ann in go, is now its senior moderator: removing ann changes nothing,
		// removing cris (junior to ben) works.
		if _, err := s.RemoveModerator(ctx, "ben", "go", "ann"); err != nil {
			t.Errorf("ben removes the deleted ann from go: %v", err)
		}
		if _, err := s.RemoveModerator(ctx, "ben", "go", "cris"); err != nil {
			t.Errorf("ben removes cris from go: %v", err)
		}
	})
}

// TestAddModeratorRacingDeletion deletes the account being made a moderator between
// AddModerator's check of it and its script, and runs the deletion's whole chain there, before
// the seat exists: the account holds no seat afterwards and AddModerator says NOT_FOUND.
func TestAddModeratorRacingDeletion(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clock := tickingClock()
		var armed atomic.Bool
		var s *store.Store
		now := func() time.Time {
			if armed.CompareAndSwap(true, false) {
				// AddModerator has checked ben (its first read) and is on its way to its script.
				if err := s.DeleteAccount(ctx, "ben", "password1", false); err != nil {
					t.Errorf("delete ben: %v", err)
				}
				if _, err := s.Jobs().RunDue(ctx); err != nil {
					t.Errorf("run the deletion's chain: %v", err)
				}
			}
			return clock()
		}
		s = b.NewStore(t, store.Options{Prefix: prefix, Now: now, WriteLimit: -1})
		signUp(t, s, "ann", "ben")
		if _, err := s.CreateGroup(ctx, "ann", "go", nil); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		armed.Store(true)
		if _, err := s.AddModerator(ctx, "ann", "go", "ben"); !store.IsKind(err, store.KindNotFound) {
			t.Errorf("add ben while his account is deleted: %v, want NOT_FOUND", err)
		}
		if armed.Load() {
			t.Fatal("the deletion did not run inside AddModerator")
		}
		settle(t, s)
		if got, err := b.Client.ZRange(ctx, prefix+"{g:go}:mods", 0, -1).Result(); err != nil || len(got) != 1 || got[0] != "ann" {
			t.Errorf("moderators of go: %v, %v; want [ann]", got, err)
		}
	})
}

// TestGroupRepairDropsDeletedModerators: a seat a deleted account still holds — an addModerator
// cut off between its script and its second check of the account, or a seat from before
// deletions gave seats up — goes with the repair of the group, which addModerator notes before its
// script, and with Rebuild, which walks every group for the seats of accounts deleted before;
// the live moderators stay, and a repeat changes nothing.
func TestGroupRepairDropsDeletedModerators(t *testing.T) {
	for _, tc := range []struct {
		name   string
		repair func(ctx context.Context, s *store.Store) error
	}{
		{"group repair", func(ctx context.Context, s *store.Store) error { return s.RepairGroup(ctx, "go") }},
		{"rebuild", func(ctx context.Context, s *store.Store) error {
			_, err := s.Rebuild(ctx)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				prefix := storetest.Prefix()
				s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
				signUp(t, s, "ann", "ben", "cris")
				if _, err := s.CreateGroup(ctx, "ann", "go", nil); err != nil {
					t.Fatal(err)
				}
				if _, err := s.AddModerator(ctx, "ann", "go", "cris"); err != nil {
					t.Fatal(err)
				}
				if err := s.DeleteAccount(ctx, "ben", "password1", false); err != nil {
					t.Fatal(err)
				}
				settle(t, s)
				// The seat the cut-off addModerator left, or one from before deletions gave seats up.
				if err := b.Client.ZAdd(ctx, prefix+"{g:go}:mods", rdb.Z{Score: float64(time.Now().UnixMilli() + 1000), Member: "ben"}).Err(); err != nil {
					t.Fatal(err)
				}
				for range 2 { // a repeat changes nothing
					if err := tc.repair(ctx, s); err != nil {
						t.Fatal(err)
					}
				}
				if got, err := b.Client.ZRange(ctx, prefix+"{g:go}:mods", 0, -1).Result(); err != nil || len(got) != 2 || got[0] != "ann" || got[1] != "cris" {
					t.Errorf("moderators of go: %v, %v; want [ann cris]", got, err)
				}
				log, err := s.NewLoader().ModLog(ctx, "go", store.Window{First: 50})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, a := range log.Items {
					if a.Action == store.ModRemoveModerator && a.TargetID == store.TypeUser+":ben" {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%d REMOVE_MODERATOR of ben logged, want 1", n)
				}
			})
		})
	}
}
