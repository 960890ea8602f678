package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestNSFWGroupsLeaveTheSuggestions: suggestGroups, like the directory and searchGroups, names
// no NSFW group to a reader who does not show NSFW posts, and fills its page with the groups they
// see however many NSFW groups share the prefix; a reader who shows them gets every group. A
// label put on or taken off moves the group in or out at once.
func TestNSFWGroupsLeaveTheSuggestions(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Prefix: storetest.Prefix(), Now: tickingClock(), WriteLimit: -1})
		signUp(t, s, "ann")
		// Seven NSFW groups before the prefix's first SFW one, more than twice the page.
		nsfw := []string{"adult-1", "adult-2", "adult-3", "adult-4", "adult-5", "adult-6", "adult-7"}
		sfw := []string{"adult-ed", "adults-only-jokes"}
		for _, g := range append(slices.Clone(nsfw), sfw...) {
			if _, err := s.CreateGroupLabelled(ctx, "ann", g, nil, slices.Contains(nsfw, g)); err != nil {
				t.Fatal(err)
			}
		}
		suggest := func(hide bool) []string {
			t.Helper()
			l := s.NewLoader()
			l.HideNSFW(hide)
			gs, err := l.SuggestGroups(ctx, "adult", 3, nil)
			if err != nil {
				t.Fatal(err)
			}
			return groupNames(gs)
		}
		cases := []struct {
			name string
			hide bool
			want []string
		}{
			{"a reader who hides NSFW", true, sfw},
			{"a reader who shows NSFW", false, nsfw[:3]},
		}
		for _, c := range cases {
			if got := suggest(c.hide); !slices.Equal(got, c.want) {
				t.Errorf("%s: suggestGroups(adult) = %q, want %q", c.name, got, c.want)
			}
		}
		on, off := true, false
		if _, err := s.UpdateGroup(ctx, "ann", "adult-ed", store.GroupEdit{NSFW: &on}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateGroup(ctx, "ann", "adult-1", store.GroupEdit{NSFW: &off}); err != nil {
			t.Fatal(err)
		}
		if got, want := suggest(true), []string{"adult-1", "adults-only-jokes"}; !slices.Equal(got, want) {
			t.Errorf("after the labels changed, suggestGroups(adult) to a reader who hides NSFW = %q, want %q", got, want)
		}
	})
}
