package store_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSignUpCutOffAfterEachStep cuts a sign-up off right after each of its steps, as a process
// that dies or a Redis that fills up there does: after the user's creation (its atomic step),
// after the name index took the name (before the users' search index), after the search index's
// postings (before its dictionary step, which prefixes search), after the leaderboard.
// The client gets an error and no session. Once RepairGrace has passed, the job engine finishes
// the sign-up: the user is in the name index (autocomplete), the users' search index and on the
// leaderboard, can log in, and a retry of the sign-up within the replay window is a log-in.
func TestSignUpCutOffAfterEachStep(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		for _, step := range []string{"signup", "register", "append", "index"} {
			t.Run(step, func(t *testing.T) {
				ctx := context.Background()
				clock := newStepClock()
				s := b.NewStore(t, store.Options{Now: clock.Now})
				cutOffThenRepair(t, b, s, clock, step, "a sign-up", func(doomed *store.Store) error {
					_, err := doomed.SignUp(ctx, "Latecomer", "password1")
					return err
				})

				l := s.NewLoader()
				sugg, err := l.SuggestUsers(ctx, "late", 10, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(sugg) != 1 || sugg[0].Name != "Latecomer" {
					t.Errorf("autocomplete of \"late\": %v, want Latecomer", sugg)
				}
				for _, q := range []string{"latecomer", "latec"} { // a word, a prefix
					found, err := l.SearchUsers(ctx, q, store.Window{First: 10})
					if err != nil {
						t.Fatal(err)
					}
					if found.Total != 1 || len(found.Items) != 1 || found.Items[0].Name != "Latecomer" {
						t.Errorf("search of users for %q: %d %v, want Latecomer", q, found.Total, found.Items)
					}
				}
				u, err := l.User(ctx, store.UserKey("latecomer"))
				if err != nil || u == nil {
					t.Fatalf("the user: %v %v", u, err)
				}
				if _, ok, err := l.Rank(ctx, u); err != nil || !ok {
					t.Errorf("on the leaderboard: %t %v, want ranked", ok, err)
				}
				if _, err := s.SignUp(ctx, "Latecomer", "password1"); err != nil {
					t.Errorf("a retry of the sign-up: %v, want a session", err)
				}
				if _, err := s.LogIn(ctx, "latecomer", "password1"); err != nil {
					t.Errorf("log in: %v", err)
				}
			})
		}
	})
}

// TestCreateGroupCutOffAfterEachStep cuts a group's creation off right after each of its steps:
// after the group's creation (its atomic step), after the registry of groups took the name
// (before the groups' search index), after the search index's postings (before its dictionary
// step). Once RepairGrace has passed, the job engine finishes it: the group is suggested, found by
// a word of its name or description and by a prefix, and listed in the directory.
func TestCreateGroupCutOffAfterEachStep(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		for _, step := range []string{"group_create", "register", "append"} {
			t.Run(step, func(t *testing.T) {
				ctx := context.Background()
				clock := newStepClock()
				s := b.NewStore(t, store.Options{Now: clock.Now})
				if _, err := s.SignUp(ctx, "founder", "password1"); err != nil {
					t.Fatal(err)
				}
				desc := "nocturnal birds of prey"
				cutOffThenRepair(t, b, s, clock, step, "a group's creation", func(doomed *store.Store) error {
					_, err := doomed.CreateGroup(ctx, "founder", "owls", &desc)
					return err
				})

				l := s.NewLoader()
				sugg, err := l.SuggestGroups(ctx, "ow", 10, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(sugg) != 1 || sugg[0].Name != "owls" {
					t.Errorf("autocomplete of \"ow\": %v, want owls", sugg)
				}
				for _, q := range []string{"owls", "nocturnal", "noctu"} {
					found, err := l.SearchGroups(ctx, q, store.Window{First: 10})
					if err != nil {
						t.Fatal(err)
					}
					if found.Total != 1 || len(found.Items) != 1 || found.Items[0].Name != "owls" {
						t.Errorf("search of groups for %q: %d %v, want owls", q, found.Total, found.Items)
					}
				}
				dir, err := l.Groups(ctx, store.GroupsName, store.Window{First: 10}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if dir.Total != 1 || len(dir.Items) != 1 || dir.Items[0].Name != "owls" {
					t.Errorf("the directory: %d %v, want owls", dir.Total, dir.Items)
				}
			})
		}
	})
}

// cutOffThenRepair makes write (what) through a store of its own on s's Redis and prefix, whose
// process dies right after step (see dieAfterStep); the write must fail. Then, RepairGrace later,
// s runs the due jobs.
func cutOffThenRepair(t *testing.T, b storetest.Backend, s *store.Store, clock *storetest.Clock, step, what string, write func(doomed *store.Store) error) {
	t.Helper()
	client := b.NewClient(t)
	dead := new(atomic.Bool)
	client.AddHook(dieAfterStep(step, dead))
	doomed := storetest.Backend{Name: b.Name, Client: client}.NewStore(t, store.Options{Prefix: s.Options().Prefix, Now: clock.Now})
	if err := write(doomed); err == nil {
		t.Fatalf("%s cut off after %s succeeded, want an error", what, step)
	}
	if !dead.Load() {
		t.Fatalf("%s ran no %s", what, step)
	}
	clock.Add(store.RepairGrace + time.Minute)
	settle(t, s)
}

// dieAfterStep returns a client hook that, once a pipeline (or a command sent alone) in which
// the step ran without error is done, sets dead and fails every later command, as a process that
// dies right after that step would send nothing more. A step is a script of the store, or
// "append" (a search index's postings).
func dieAfterStep(step string, dead *atomic.Bool) *storetest.Hook {
	sha := ""
	if step != "append" {
		sha = store.ScriptSHA(step)
	}
	// ran reports whether c is the step, run without error.
	ran := func(c rdb.Cmder) bool {
		if c.Err() != nil {
			return false
		}
		if sha == "" {
			// "append" is the search index's postings: an APPEND to a term's list, or the HSETNX
			// of a term's first posting (a name's words are new terms).
			return c.Name() == step || step == "append" && c.Name() == "hsetnx"
		}
		args := c.Args()
		return c.Name() == "evalsha" && len(args) > 1 && args[1] == sha
	}
	return storetest.Dying(dead, errors.New("the process died"), func(cmds []rdb.Cmder) bool {
		return slices.ContainsFunc(cmds, ran)
	})
}
