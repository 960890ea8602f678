package store_test

import (
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestGroupActiveUsers counts the distinct users who posted, commented or voted in a group, over
// each window as the clock moves on.
func TestGroupActiveUsers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		f := newFixture(t, b, store.Options{Now: clk.Now, WriteLimit: -1})
		ann, ben, cat, dan := f.user("ann"), f.user("ben"), f.user("cat"), f.user("dan")
		p := f.post(ann, "hello", "go")
		f.post(ann, "again", "go") // ann once
		if _, err := f.s.CreateComment(f.ctx, uk(ben), store.NewComment{PostID: p.ID, Body: "hi"}); err != nil {
			t.Fatal(err)
		}
		f.vote(cat, p.ID, 1)
		f.post(dan, "elsewhere", "rust")
		count := func(w store.ActivityWindow) int {
			t.Helper()
			n, err := f.s.NewLoader().GroupActiveUsers(f.ctx, store.NewGroup("go"), w)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		for _, step := range []struct {
			after time.Duration
			want  map[store.ActivityWindow]int
		}{
			{0, map[store.ActivityWindow]int{store.ActiveHour: 3, store.ActiveDay: 3, store.ActiveWeek: 3, store.ActiveMonth: 3, store.ActiveYear: 3}},
			{2 * time.Hour, map[store.ActivityWindow]int{store.ActiveHour: 0, store.ActiveDay: 3}},
			{24 * time.Hour, map[store.ActivityWindow]int{store.ActiveDay: 0, store.ActiveWeek: 3}},
			{8 * 24 * time.Hour, map[store.ActivityWindow]int{store.ActiveWeek: 0, store.ActiveMonth: 3}},
			{31 * 24 * time.Hour, map[store.ActivityWindow]int{store.ActiveMonth: 0, store.ActiveYear: 3}},
			{400 * 24 * time.Hour, map[store.ActivityWindow]int{store.ActiveYear: 0}},
		} {
			clk.Add(step.after)
			for w, want := range step.want {
				if got := count(w); got != want {
					t.Errorf("after %v more, active users over window %d = %d, want %d", step.after, w, got, want)
				}
			}
		}
	})
}
