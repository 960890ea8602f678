package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestNSFWGroupsLeaveTheDirectoryAndSearch: a reader who does not show NSFW posts finds no NSFW
// group in the directory of groups (every order, paged both ways) nor in searchGroups, with a
// totalCount that counts what they see; a reader who shows them sees every group. A label put on
// or taken off moves the group in or out at once, and Rebuild derives the directory's copy again.
func TestNSFWGroupsLeaveTheDirectoryAndSearch(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
		signUp(t, s, "ann")
		desc := "about birds"
		all := []string{"apes-birds", "bats-birds", "cats-birds", "dogs-birds", "eels-birds"}
		nsfw := map[string]bool{"bats-birds": true, "dogs-birds": true}
		for _, g := range all {
			if _, err := s.CreateGroupLabelled(ctx, "ann", g, &desc, nsfw[g]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "made by a post", Groups: []string{"fish-birds"}}); err != nil {
			t.Fatal(err)
		}
		all = append(all, "fish-birds")
		check := func(when string) {
			t.Helper()
			var sfw []string
			for _, g := range all {
				if !nsfw[g] {
					sfw = append(sfw, g)
				}
			}
			for _, hide := range []bool{true, false} {
				want := all
				if hide {
					want = sfw
				}
				for _, sort := range []store.GroupSort{store.GroupsPopular, store.GroupsNew, store.GroupsActive, store.GroupsName} {
					for _, backward := range []bool{false, true} {
						var got []string
						cursor, total := "", -1
						for range 20 {
							w := store.Window{First: 2, After: cursor}
							if backward {
								w = store.Window{Last: 2, Before: cursor}
							}
							l := s.NewLoader()
							l.HideNSFW(hide)
							p, err := l.Groups(ctx, sort, w, nil)
							if err != nil {
								t.Fatal(err)
							}
							if total >= 0 && p.Total != total {
								t.Fatalf("%s: totalCount moved from %d to %d between pages", when, total, p.Total)
							}
							total = p.Total
							if backward {
								got = append(groupNames(p.Items), got...)
								if !p.HasPrev {
									break
								}
								cursor = p.StartCursor()
							} else {
								got = append(got, groupNames(p.Items)...)
								if !p.HasNext {
									break
								}
								cursor = p.EndCursor()
							}
						}
						sorted := slices.Sorted(slices.Values(got))
						if !slices.Equal(sorted, want) || total != len(want) {
							t.Errorf("%s: directory sort %d backward %v hide %v: %v (totalCount %d), want %v", when, sort, backward, hide, got, total, want)
						}
						if sort == store.GroupsName && !slices.Equal(got, want) {
							t.Errorf("%s: directory by name, hide %v: %v, want %v in order", when, hide, got, want)
						}
					}
				}
				l := s.NewLoader()
				l.HideNSFW(hide)
				p, err := l.SearchGroups(ctx, "birds", store.Window{First: 100})
				if err != nil {
					t.Fatal(err)
				}
				got := slices.Sorted(slices.Values(groupNames(p.Items)))
				if !slices.Equal(got, want) || p.Total != len(want) {
					t.Errorf("%s: searchGroups hide %v: %v (totalCount %d), want %v", when, hide, got, p.Total, want)
				}
			}
		}
		check("created")

		on, off := true, false
		if _, err := s.UpdateGroup(ctx, "ann", "eels-birds", store.GroupEdit{NSFW: &on}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateGroup(ctx, "ann", "bats-birds", store.GroupEdit{NSFW: &off}); err != nil {
			t.Fatal(err)
		}
		nsfw = map[string]bool{"dogs-birds": true, "eels-birds": true}
		check("relabelled")

		// The copy is derived: dropped, Rebuild writes it again.
		for _, k := range []string{":s:pop", ":s:new", ":s:active", ":s:name", ":s:ver"} {
			if err := b.Client.Del(ctx, prefix+"{groups}"+k).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		check("rebuilt")
	})
}

// TestNSFWGroupsLeaveUserGroups: User.groups, like the directory, lists no NSFW group to a reader
// who does not show NSFW posts (a new account, an anonymous reader): paged both ways, in the order
// joined, with a totalCount of what they see; a reader who shows them sees every group.
func TestNSFWGroupsLeaveUserGroups(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Prefix: storetest.Prefix(), Now: tickingClock(), WriteLimit: -1})
		signUp(t, s, "ann")
		signUp(t, s, "bob")
		joined := []string{"apes", "bats", "cats", "dogs", "eels"}
		nsfw := map[string]bool{"bats": true, "dogs": true}
		for _, g := range joined {
			if _, err := s.CreateGroupLabelled(ctx, "ann", g, nil, nsfw[g]); err != nil {
				t.Fatal(err)
			}
			if _, err := s.JoinGroup(ctx, "bob", g); err != nil {
				t.Fatal(err)
			}
		}
		for _, hide := range []bool{true, false} {
			var want []string // most recently joined first
			for _, g := range slices.Backward(joined) {
				if !hide || !nsfw[g] {
					want = append(want, g)
				}
			}
			for _, backward := range []bool{false, true} {
				var got []string
				cursor, total := "", -1
				for range 10 {
					w := store.Window{First: 2, After: cursor}
					if backward {
						w = store.Window{Last: 2, Before: cursor}
					}
					l := s.NewLoader()
					l.HideNSFW(hide)
					p, err := l.UserGroups(ctx, "bob", w, nil)
					if err != nil {
						t.Fatal(err)
					}
					if total >= 0 && p.Total != total {
						t.Fatalf("hide %v: totalCount moved from %d to %d between pages", hide, total, p.Total)
					}
					total = p.Total
					if backward {
						got = append(groupNames(p.Items), got...)
						if !p.HasPrev {
							break
						}
						cursor = p.StartCursor()
					} else {
						got = append(got, groupNames(p.Items)...)
						if !p.HasNext {
							break
						}
						cursor = p.EndCursor()
					}
				}
				if !slices.Equal(got, want) || total != len(want) {
					t.Errorf("User.groups hide %v backward %v: %v (totalCount %d), want %v", hide, backward, got, total, want)
				}
			}
		}
	})
}

// Two changes of a group's label in a race: the mirror of the first, which read the label before
// the second changed it, lands after the second's. The set of NSFW groups must end as the group's
// label says, or the group's posts are NSFW for no label, or not NSFW under one.
func TestGroupLabelMirrorAfterALaterChange(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, last bool // the label the late mirror read, and the one the group ends with
	}{
		{"labelled, then not", true, false},
		{"not labelled, then labelled", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				prefix := storetest.Prefix()
				s := b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: -1})
				signUp(t, s, "ann")
				if _, err := s.CreateGroupLabelled(ctx, "ann", "go", nil, tc.last); err != nil {
					t.Fatal(err)
				}
				p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "hello", Groups: []string{"go"}})
				if err != nil {
					t.Fatal(err)
				}
				label := func(nsfw bool) {
					t.Helper()
					if _, err := s.UpdateGroup(ctx, "ann", "go", store.GroupEdit{NSFW: &nsfw}); err != nil {
						t.Fatal(err)
					}
				}
				label(tc.first)
				read, err := b.Client.HMGet(ctx, prefix+"{g:go}:info", "nsfw", "ver").Result()
				if err != nil {
					t.Fatal(err)
				}
				str := func(v any) string { s, _ := v.(string); return s }
				label(tc.last)
				if err := s.MirrorGroupLabel(ctx, "go", str(read[0]), str(read[1])); err != nil {
					t.Fatal(err)
				}
				l := s.NewLoader()
				g, err := l.GroupNSFW(ctx, store.NewGroup("go"))
				if err != nil {
					t.Fatal(err)
				}
				got, err := l.Post(ctx, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				if g != tc.last || got.NSFW != tc.last {
					t.Fatalf("group nsfw %v, its post nsfw %v; want both %v", g, got.NSFW, tc.last)
				}
			})
		})
	}
}
