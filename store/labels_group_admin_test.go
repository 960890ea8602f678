package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestAdminsGroupLabelStays: the NSFW label an admin put on a group is the admins' to take off,
// as their label on a post is: the group's moderators may not (FORBIDDEN, and nothing of the
// call is written), while they still change the rest of its page. A label the moderators put on
// stays theirs to take off.
func TestAdminsGroupLabelStays(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		f.post("mia", "hello", "go")
		on, off := true, false
		nsfw := func() bool {
			t.Helper()
			l := f.s.NewLoader()
			v, err := l.GroupNSFW(f.ctx, store.NewGroup("go"))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		desc, sneaked := "a new description", "sneaked in"
		steps := []struct {
			name  string
			actor store.UserKey
			edit  store.GroupEdit
			want  store.Kind // 0: no error
			nsfw  bool
		}{
			{"an admin labels it", "root", store.GroupEdit{NSFW: &on}, 0, true},
			{"its moderator takes the label off", "mia", store.GroupEdit{NSFW: &off, Description: &sneaked}, store.KindForbidden, true},
			{"its moderator changes the rest", "mia", store.GroupEdit{Description: &desc}, 0, true},
			{"its moderator labels it again (no change)", "mia", store.GroupEdit{NSFW: &on}, 0, true},
			{"its moderator takes the label off again", "mia", store.GroupEdit{NSFW: &off}, store.KindForbidden, true},
			{"an admin takes it off", "root", store.GroupEdit{NSFW: &off}, 0, false},
			{"its moderator labels it", "mia", store.GroupEdit{NSFW: &on}, 0, true},
			{"its moderator takes their own label off", "mia", store.GroupEdit{NSFW: &off}, 0, false},
		}
		for _, s := range steps {
			_, err := f.s.UpdateGroup(f.ctx, s.actor, "go", s.edit)
			if s.want == 0 && err != nil || s.want != 0 && !store.IsKind(err, s.want) {
				t.Fatalf("%s: %v, want kind %v", s.name, err, s.want)
			}
			if got := nsfw(); got != s.nsfw {
				t.Fatalf("after %q the group's NSFW label is %v, want %v", s.name, got, s.nsfw)
			}
			if d, err := f.s.NewLoader().GroupDescription(f.ctx, store.NewGroup("go")); err != nil || d != nil && *d == sneaked {
				t.Fatalf("after %q the description is %v (%v): the refused call wrote it", s.name, d, err)
			}
		}
		d, err := f.s.NewLoader().GroupDescription(f.ctx, store.NewGroup("go"))
		if err != nil || d == nil || *d != desc {
			t.Fatalf("description %v (%v), want %q", d, err, desc)
		}
	})
}

// TestGroupLabelTurnedOnAndOffReindexesOnce: each change of a group's NSFW label queued two
// passes over every post of the group (each post's version raised and its rankings, every sort
// and window, written again), and a pass went on whatever changed after it: a moderator turning
// the label on and off in a burst of requests made the job engine re-index the group's posts
// twice per request (a group of 100,000 posts, a million scripts a toggle). A later change of
// the label supersedes the passes of the earlier ones, which stop, and the posts end in the part
// of their lists the last label says.
func TestGroupLabelTurnedOnAndOffReindexesOnce(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		var posts []*store.Post
		for i := range 12 {
			posts = append(posts, f.post("mia", fmt.Sprintf("post %d", i), "go"))
		}
		settle(t, f.s)
		version := func() map[string]int64 {
			t.Helper()
			out := map[string]int64{}
			for _, p := range posts {
				got, err := f.s.NewLoader().Post(f.ctx, p.ID)
				if err != nil || got == nil {
					t.Fatalf("post %s: %v, %v", p.ID, got, err)
				}
				out[p.ID] = got.Version
			}
			return out
		}
		before := version()
		for i := range 6 {
			on := i%2 == 0
			if _, err := f.s.UpdateGroup(f.ctx, "mia", "go", store.GroupEdit{NSFW: &on}); err != nil {
				t.Fatal(err)
			}
		}
		on := true
		if _, err := f.s.UpdateGroup(f.ctx, "mia", "go", store.GroupEdit{NSFW: &on}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			settle(t, f.s)
			f.skew.Add(int64(2 * time.Minute))
		}
		after := version()
		for _, p := range posts {
			// A re-index raises the version by 2^20 (bump.lua). The last change's first pass meets
			// each post twice, in the part it leaves and in the part it enters; its second once.
			if n := (after[p.ID] - before[p.ID]) >> 20; n > 3 {
				t.Fatalf("post %s was re-indexed %d times for 7 changes of its group's label, want at most 3 (the last change's passes)", p.ID, n)
			}
		}
		l := f.s.NewLoader()
		l.HideNSFW(true)
		page, err := l.Posts(f.ctx, store.SortNew, "go", store.Window{First: 50}, nil)
		if err != nil || page.Total != 0 || len(page.Items) != 0 {
			t.Fatalf("the group labelled NSFW lists %d posts (total %d, %v) to a reader who hides them", len(page.Items), page.Total, err)
		}
		page, err = f.s.NewLoader().Posts(f.ctx, store.SortNew, "go", store.Window{First: 50}, nil)
		if err != nil || page.Total != len(posts) {
			t.Fatalf("a reader who shows NSFW posts sees %d of %d (%v)", page.Total, len(posts), err)
		}
	})
}
