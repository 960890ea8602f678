package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// directory reads the whole directory in order sort, page by page of size n: forwards with first
// and after, or backwards with last and before (returned in list order). It fails on a repeated
// group or a page that says more follow and brings none.
func directory(t *testing.T, s *store.Store, sort store.GroupSort, n int, backward bool) []string {
	t.Helper()
	out := directoryPages(t, s, sort, n, backward)
	seen := map[string]bool{}
	for _, g := range out {
		if seen[g] {
			t.Fatalf("directory %v (page %d, backward %v) repeats %s: %v", sort, n, backward, g, out)
		}
		seen[g] = true
	}
	return out
}

// directoryPages reads the whole directory as directory does, without checking that each group
// comes once: a group whose place changes between two pages may come twice, or not at all.
func directoryPages(t *testing.T, s *store.Store, sort store.GroupSort, n int, backward bool) []string {
	t.Helper()
	var out []string
	cursor := ""
	for range 200 {
		w := store.Window{First: n, After: cursor}
		if backward {
			w = store.Window{Last: n, Before: cursor}
		}
		p, err := s.NewLoader().Groups(context.Background(), sort, w, nil)
		if err != nil {
			t.Fatalf("directory %v %+v: %v", sort, w, err)
		}
		names := make([]string, len(p.Items))
		for i, g := range p.Items {
			names[i] = g.Name
		}
		if backward {
			out = append(names, out...)
			if !p.HasPrev {
				break
			}
			cursor = p.StartCursor()
		} else {
			out = append(out, names...)
			if !p.HasNext {
				break
			}
			cursor = p.EndCursor()
		}
		if len(names) == 0 {
			t.Fatalf("directory %v %+v: an empty page says more follow", sort, w)
		}
	}
	return out
}

// TestGroupDirectory orders the groups by members, creation, latest post and name, paged both
// ways, and follows the groups as they change: a group whose last post goes leaves the directory.
func TestGroupDirectory(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock(), WriteLimit: -1})
		signUp(t, s, "ann", "ben", "cat", "dan")
		for _, g := range []string{"bikes", "cats", "apples", "dogs"} { // created in this order
			if _, err := s.CreateGroup(ctx, "ann", g, nil); err != nil {
				t.Fatal(err)
			}
		}
		joins := map[string][]store.UserKey{"cats": {"ann", "ben", "cat"}, "dogs": {"ann", "ben"}, "apples": {"dan"}}
		for g, users := range joins {
			for _, u := range users {
				if _, err := s.JoinGroup(ctx, u, g); err != nil {
					t.Fatal(err)
				}
			}
		}
		// A post makes a group of its own ("eggs"), and makes "bikes" the most active.
		if _, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "an old post", Groups: []string{"dogs"}}); err != nil {
			t.Fatal(err)
		}
		eggs, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "eggs", Groups: []string{"eggs"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "a new post", Groups: []string{"bikes"}}); err != nil {
			t.Fatal(err)
		}
		want := map[store.GroupSort][]string{
			store.GroupsPopular: {"cats", "dogs", "apples", "bikes", "eggs"}, // 3, 2, 1, then 0 by name
			store.GroupsNew:     {"eggs", "dogs", "apples", "cats", "bikes"},
			store.GroupsActive:  {"bikes", "eggs", "dogs", "apples", "cats"}, // posts, then creation
			store.GroupsName:    {"apples", "bikes", "cats", "dogs", "eggs"},
		}
		check := func(want map[store.GroupSort][]string) {
			t.Helper()
			for sort, names := range want {
				for _, n := range []int{1, 2, 3, 10} {
					for _, backward := range []bool{false, true} {
						if got := directory(t, s, sort, n, backward); !slices.Equal(got, names) {
							t.Errorf("directory %v (page %d, backward %v) = %v, want %v", sort, n, backward, got, names)
						}
					}
				}
				p, err := s.NewLoader().Groups(ctx, sort, store.Window{First: 2}, nil)
				if err != nil || p.Total != len(names) {
					t.Errorf("directory %v: total %v (%v), want %d", sort, p, err, len(names))
				}
			}
		}
		check(want)

		// eggs loses its only post and, made by posts, no longer exists; cats loses members.
		if err := s.DeletePost(ctx, "ben", eggs.ID); err != nil {
			t.Fatal(err)
		}
		for _, u := range []store.UserKey{"ann", "ben"} {
			if _, err := s.LeaveGroup(ctx, u, "cats"); err != nil {
				t.Fatal(err)
			}
		}
		check(map[store.GroupSort][]string{
			store.GroupsPopular: {"dogs", "apples", "cats", "bikes"},
			store.GroupsNew:     {"dogs", "apples", "cats", "bikes"},
			store.GroupsActive:  {"bikes", "dogs", "apples", "cats"},
			store.GroupsName:    {"apples", "bikes", "cats", "dogs"},
		})
	})
}

// TestGroupDirectoryConcurrentJoins pages the directory both ways while users join and leave
// groups concurrently: an order the joins do not move (NAME, NEW) is read whole and once each
// time, and once the joins are over, POPULAR holds every group's exact member count, whatever
// order the concurrent writes of its entries landed in.
func TestGroupDirectoryConcurrentJoins(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock(), WriteLimit: -1})
		const nGroups, nUsers = 7, 24
		var groups []string
		var users []string
		for i := range nUsers {
			users = append(users, fmt.Sprintf("u%02d", i))
		}
		signUp(t, s, users...)
		for i := range nGroups {
			g := fmt.Sprintf("g%d", i)
			groups = append(groups, g)
			if _, err := s.CreateGroup(ctx, store.UserKey(users[0]), g, nil); err != nil {
				t.Fatal(err)
			}
		}
		newest := slices.Clone(groups)
		slices.Reverse(newest)

		// User i joins the groups up to i mod nGroups, and leaves group 0 again when i is odd:
		// group j ends with the users i with i mod nGroups >= j, less the odd ones for group 0.
		var wg sync.WaitGroup
		errs := make(chan error, nUsers)
		for i, u := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j <= i%nGroups; j++ {
					if _, err := s.JoinGroup(ctx, store.UserKey(u), groups[j]); err != nil {
						errs <- err
						return
					}
				}
				if i%2 == 1 {
					if _, err := s.LeaveGroup(ctx, store.UserKey(u), groups[0]); err != nil {
						errs <- err
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for reading := true; reading; {
			select {
			case <-done:
				reading = false
			default:
			}
			for _, backward := range []bool{false, true} {
				if got := directory(t, s, store.GroupsName, 2, backward); !slices.Equal(got, groups) {
					t.Fatalf("NAME during joins (backward %v) = %v, want %v", backward, got, groups)
				}
				if got := directory(t, s, store.GroupsNew, 3, backward); !slices.Equal(got, newest) {
					t.Fatalf("NEW during joins (backward %v) = %v, want %v", backward, got, newest)
				}
				// A group whose member count changes between two pages moves across the cursor.
				directoryPages(t, s, store.GroupsPopular, 2, backward)
			}
		}
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}

		count := make(map[string]int)
		for _, g := range groups {
			n, err := s.NewLoader().GroupMemberCount(ctx, store.NewGroup(g))
			if err != nil {
				t.Fatal(err)
			}
			count[g] = n
		}
		popular := slices.Clone(groups)
		slices.SortStableFunc(popular, func(a, b string) int { return count[b] - count[a] })
		for _, backward := range []bool{false, true} {
			for _, n := range []int{2, 5} {
				if got := directory(t, s, store.GroupsPopular, n, backward); !slices.Equal(got, popular) {
					t.Errorf("POPULAR after joins (page %d, backward %v) = %v, want %v (counts %v)", n, backward, got, popular, count)
				}
			}
		}
		// The counts are what the joins made: users with i mod 7 >= j, less the odd ones in g0.
		want := map[string]int{"g0": 12, "g1": 20, "g2": 16, "g3": 12, "g4": 9, "g5": 6, "g6": 3}
		for g, n := range want {
			if count[g] != n {
				t.Errorf("members of %s = %d, want %d", g, count[g], n)
			}
		}
	})
}

// After a group's slot comes back older than the directory's (a restore or a failover that kept
// the directory's entries of the group's later writes and lost the writes themselves, and the
// revision behind them), Rebuild makes the directory agree with the group's slot again: the
// directory's guards held a revision the group's had not reached, and the rebuild's entries lost
// to them — an NSFW group stayed in the NSFW-free copy, a group its members' count of before.
func TestRebuildDirectoryOverStaleGuards(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
		signUp(t, s, "ann", "ben", "cat")
		if _, err := s.CreateGroupLabelled(ctx, "ann", "aaa", nil, true); err != nil {
			t.Fatal(err)
		}
		created, err := b.Client.Get(ctx, prefix+"{g:aaa}:rev").Result()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateGroup(ctx, "ann", "bbb", nil); err != nil {
			t.Fatal(err)
		}
		// What aaa's slot loses: its label taken off, and ben's and cat's joins.
		off := false
		if _, err := s.UpdateGroup(ctx, "ann", "aaa", store.GroupEdit{NSFW: &off}); err != nil {
			t.Fatal(err)
		}
		for _, u := range []store.UserKey{"ben", "cat"} {
			if _, err := s.JoinGroup(ctx, u, "aaa"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.JoinGroup(ctx, "ann", "bbb"); err != nil {
			t.Fatal(err)
		}
		// aaa's slot (and ben's and cat's) as it was right after its creation: labelled NSFW, no
		// members, its revision where it was.
		for _, c := range [][]any{
			{"HSET", prefix + "{g:aaa}:info", "nsfw", "1"},
			{"DEL", prefix + "{g:aaa}:members", prefix + "{g:aaa}:members:ver"},
			{"SET", prefix + "{g:aaa}:rev", created},
			{"DEL", prefix + "{u:ben}:groups"},
			{"DEL", prefix + "{u:cat}:groups"},
		} {
			if err := b.Client.Do(ctx, c...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RebuildUsers(ctx); err != nil {
			t.Fatal(err)
		}
		if got := directory(t, s, store.GroupsPopular, 10, false); !slices.Equal(got, []string{"bbb", "aaa"}) {
			t.Errorf("POPULAR after rebuild: %v, want bbb (1 member) before aaa (none)", got)
		}
		l := s.NewLoader()
		l.HideNSFW(true)
		p, err := l.Groups(ctx, store.GroupsName, store.Window{First: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := groupNames(p.Items); !slices.Equal(got, []string{"bbb"}) || p.Total != 1 {
			t.Errorf("the NSFW-free directory after rebuild: %v (totalCount %d), want [bbb] (1)", got, p.Total)
		}
	})
}
