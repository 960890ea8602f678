package store_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestPagingIsStableUnderChanges pages through a listing while posts are added before and after
// the cursor and removed around it: no post present throughout is skipped or repeated.
func TestPagingIsStableUnderChanges(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		alice := f.user("alice")
		var all []*store.Post
		for i := 0; i < 25; i++ {
			all = append(all, f.post(alice, fmt.Sprint("p", i)))
		}
		// All in TOP have net 0: the order is decided by ties alone, the hardest case.
		for _, sort := range []store.PostSort{store.SortNew, store.SortTop} {
			seen := map[string]int{}
			page, err := f.s.NewLoader().Posts(f.ctx, sort, "", store.Window{First: 4}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if page.HasPrev || !page.HasNext || page.Total < len(all) {
				t.Fatalf("first page info %+v", page)
			}
			deleted := map[string]bool{}
			for round := 0; ; round++ {
				for _, p := range page.Items {
					seen[p.ID]++
				}
				if !page.HasNext {
					break
				}
				// Delete the cursor's own post and add new ones between pages.
				last := page.Items[len(page.Items)-1]
				if round%2 == 0 {
					if err := f.s.DeletePost(f.ctx, uk(alice), last.ID); err != nil {
						t.Fatal(err)
					}
					deleted[last.ID] = true
				}
				f.post(alice, fmt.Sprint("new", round))
				page, err = f.s.NewLoader().Posts(f.ctx, sort, "", store.Window{First: 4, After: page.EndCursor()}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !page.HasPrev {
					t.Fatalf("a later page says it has no previous page")
				}
			}
			for _, p := range all {
				if deleted[p.ID] {
					continue
				}
				if seen[p.ID] != 1 {
					t.Errorf("sort %d: %s seen %d times", sort, p.ID, seen[p.ID])
				}
			}
			for _, p := range all { // restore for the next sort
				if deleted[p.ID] {
					all = removePost(all, p.ID)
				}
			}
		}
	})
}

func removePost(ps []*store.Post, id string) []*store.Post {
	out := ps[:0:0]
	for _, p := range ps {
		if p.ID != id {
			out = append(out, p)
		}
	}
	return out
}

func TestPagingInput(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		alice := f.user("alice")
		f.post(alice, "a")
		f.post(alice, "b")
		l := f.s.NewLoader()
		hot, err := l.Posts(f.ctx, store.SortHot, "", store.Window{First: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, tc := range map[string]struct {
			sort  store.PostSort
			group string
			w     store.Window
		}{
			"site cursor on a group":        {store.SortHot, "go", store.Window{First: 10, After: hot.EndCursor()}},
			"site cursor on a group before": {store.SortHot, "go", store.Window{Last: 10, Before: hot.EndCursor()}},
			"NaN score":                     {store.SortHot, "", store.Window{First: 10, After: base64.RawURLEncoding.EncodeToString([]byte("v1|ph|NaN|1"))}},
			"infinite score":                {store.SortHot, "", store.Window{Last: 10, Before: base64.RawURLEncoding.EncodeToString([]byte("v1|ph|+Inf|1"))}},
			"first 0":                       {store.SortHot, "", store.Window{}},
			"first 101":                     {store.SortHot, "", store.Window{First: 101}},
			"last -1":                       {store.SortHot, "", store.Window{Last: -1}},
			"last 101":                      {store.SortHot, "", store.Window{Last: 101}},
			"first and last":                {store.SortHot, "", store.Window{First: 10, Last: 10}},
			"garbage cursor":                {store.SortHot, "", store.Window{First: 10, After: "not a cursor!"}},
			"garbage before":                {store.SortHot, "", store.Window{Last: 10, Before: "not a cursor!"}},
			"garbage after, good before":    {store.SortHot, "", store.Window{Last: 10, After: "aGVsbG8", Before: hot.EndCursor()}},
			"base64 garbage":                {store.SortHot, "", store.Window{First: 10, After: "aGVsbG8"}},
			"other list":                    {store.SortNew, "", store.Window{First: 10, After: hot.EndCursor()}},
			"other list before":             {store.SortNew, "", store.Window{First: 10, Before: hot.EndCursor()}},
			"oversized cursor":              {store.SortHot, "", store.Window{First: 10, After: strings.Repeat("A", 1000)}},
		} {
			if _, err := l.Posts(f.ctx, tc.sort, tc.group, tc.w, nil); !store.IsKind(err, store.KindInvalid) {
				t.Errorf("%s: %v, want invalid", name, err)
			}
		}
		if _, err := l.Posts(f.ctx, store.SortHot, "Bad Group", store.Window{First: 10}, nil); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("bad group: %v", err)
		}
		p, err := l.Posts(f.ctx, store.SortHot, "", store.Window{First: 100}, nil)
		if err != nil || len(p.Items) != 2 || p.HasNext {
			t.Fatalf("first 100: %+v %v", p, err)
		}
	})
}
