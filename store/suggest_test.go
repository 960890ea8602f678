package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func groupNames(gs []*store.Group) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Name
	}
	return out
}

func TestSuggestUsers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		signUp(t, s, "Alice", "alfred", "ALBERT", "al_x", "bob", "kim", "al-9")
		cases := []struct {
			prefix string
			first  int
			want   []string
		}{
			{"al", 10, []string{"al-9", "al_x", "ALBERT", "alfred", "Alice"}},
			{"AL", 10, []string{"al-9", "al_x", "ALBERT", "alfred", "Alice"}},
			{"aL", 2, []string{"al-9", "al_x"}},
			{"ali", 10, []string{"Alice"}},
			{"alice", 10, []string{"Alice"}},
			{"alicex", 10, nil},
			{"B", 10, []string{"bob"}},
			{"z", 10, nil},
			{"ál", 10, nil},
			{"\u212aim", 10, nil}, // the Kelvin sign folds to "k" in Unicode, not in names
			{"al ", 10, nil},
			{"%", 10, nil},
			{strings.Repeat("a", 64), 10, nil},
		}
		for _, tc := range cases {
			got, err := s.NewLoader().SuggestUsers(ctx, tc.prefix, tc.first, nil)
			if err != nil {
				t.Errorf("suggest %q: %v", tc.prefix, err)
				continue
			}
			if got == nil || !slices.Equal(userNames(got), tc.want) {
				t.Errorf("suggest %q: %v, want %v", tc.prefix, userNames(got), tc.want)
			}
		}
		for _, tc := range []struct {
			prefix string
			first  int
		}{{"", 10}, {strings.Repeat("a", 65), 10}, {"al", 0}, {"al", 101}} {
			if _, err := s.NewLoader().SuggestUsers(ctx, tc.prefix, tc.first, nil); !store.IsKind(err, store.KindInvalid) {
				t.Errorf("suggest %q first %d: %v, want invalid", tc.prefix, tc.first, err)
			}
		}
	})
}

func TestSuggestGroups(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		signUp(t, s, "amy")
		create := func(groups ...string) string {
			p, err := s.CreatePost(ctx, "amy", store.NewPost{Title: "t", Groups: groups})
			if err != nil {
				t.Fatal(err)
			}
			return p.ID
		}
		golang := create("GoLang", "rust")
		create("golang")
		gopher := create("gopher")
		moved := create("go-kit")
		suggest := func(prefix string, want ...string) {
			t.Helper()
			got, err := s.NewLoader().SuggestGroups(ctx, prefix, 10, nil)
			if err != nil || got == nil || !slices.Equal(groupNames(got), want) {
				t.Errorf("suggest groups %q: %v %v, want %v", prefix, groupNames(got), err, want)
			}
		}
		suggest("GO", "go-kit", "golang", "gopher")
		suggest("gol", "golang")
		suggest("ГО")
		suggest("r", "rust")

		// A group leaves the suggestions with its last post: by deletion or by a group change.
		if err := s.DeletePost(ctx, "amy", gopher); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetPostGroups(ctx, "amy", moved, []string{"gophers"}, []string{"go-kit"}); err != nil {
			t.Fatal(err)
		}
		suggest("go", "golang", "gophers")
		if err := s.DeletePost(ctx, "amy", golang); err != nil { // golang keeps one post
			t.Fatal(err)
		}
		suggest("go", "golang", "gophers")
		suggest("r")
		if got, err := s.NewLoader().SuggestGroups(ctx, "go", 1, nil); err != nil || !slices.Equal(groupNames(got), []string{"golang"}) {
			t.Errorf("first 1: %v %v", groupNames(got), err)
		}
	})
}
