package store_test

import (
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestModeratorLabelsStay: a label a moderator put on someone's post is taken off only by the
// moderators of the group it was put on in, or by an admin (an admin's only by the admins), as a
// removal or a lock is undone: not by the author (setPostLabels or editPost), nor by a moderator
// of another of the post's groups — perhaps one its author made. Labels the author put on
// themselves stay theirs to take off.
func TestModeratorLabelsStay(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		ann := f.user("ann")
		f.user("duo") // moderates both groups, rust first in the post's groups
		for _, g := range []string{"go", "rust"} {
			if err := f.s.SetModerator(f.ctx, g, "duo"); err != nil {
				t.Fatal(err)
			}
		}
		on, off := true, false
		type step struct {
			name   string
			actor  string
			edit   bool // editPost instead of setPostLabels
			nsfw   *bool
			spoil  *bool
			want   store.Kind // zero for success
			isNSFW bool       // the post's NSFW label after the step
		}
		cases := []struct {
			name  string
			setBy string // who labels the post NSFW and a spoiler first
			steps []step
		}{
			{"a moderator's label", "mia", []step{
				{"the author takes the NSFW label off", ann, false, &off, nil, store.KindForbidden, true},
				{"the author edits the NSFW label off", ann, true, &off, nil, store.KindForbidden, true},
				{"the author edits the spoiler label off", ann, true, nil, &off, store.KindForbidden, true},
				{"a moderator of the author's other group", "rex", false, &off, nil, store.KindForbidden, true},
				{"the author's edit that keeps the labels", ann, true, &on, &on, 0, true},
				{"the moderator who put it on", "mia", false, &off, &off, 0, false},
				{"then the author labels and unlabels it", ann, false, &on, nil, 0, true},
				{"", ann, true, &off, nil, 0, false},
			}},
			{"a moderator of its group and another", "mia", []step{
				{"takes it off through the group it was put on in", "duo", false, &off, &off, 0, false},
			}},
			{"an admin's label", "root", []step{
				{"the author", ann, false, &off, nil, store.KindForbidden, true},
				{"a moderator of its group", "mia", false, &off, nil, store.KindForbidden, true},
				{"an admin", "root", false, &off, &off, 0, false},
			}},
			{"the author's own label", "", []step{
				{"a moderator confirms it", "mia", false, &on, nil, 0, true},
				{"the author", ann, false, &off, nil, store.KindForbidden, true},
				{"a moderator of its group", "mia", false, &off, nil, 0, false},
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				p, err := f.s.CreatePost(f.ctx, uk(ann), store.NewPost{Title: "labelled", Groups: []string{"rust", "go"},
					NSFW: c.setBy == "", Spoiler: c.setBy == ""})
				if err != nil {
					t.Fatal(err)
				}
				if c.setBy != "" {
					if _, err := f.s.SetPostLabels(f.ctx, uk(c.setBy), p.ID, &on, &on, nil); err != nil {
						t.Fatal(err)
					}
				}
				for _, s := range c.steps {
					var err error
					if s.edit {
						_, err = f.s.EditPost(f.ctx, uk(s.actor), p.ID, store.PostEdit{NSFW: s.nsfw, Spoiler: s.spoil})
					} else {
						_, err = f.s.SetPostLabels(f.ctx, uk(s.actor), p.ID, s.nsfw, s.spoil, nil)
					}
					if s.want == 0 && err != nil || s.want != 0 && !store.IsKind(err, s.want) {
						t.Fatalf("%s (%s): %v, want kind %v", s.name, s.actor, err, s.want)
					}
					got, err := f.s.NewLoader().Post(f.ctx, p.ID)
					if err != nil {
						t.Fatal(err)
					}
					if got.NSFW != s.isNSFW {
						t.Fatalf("after %q (%s) the post's NSFW label is %v, want %v", s.name, s.actor, got.NSFW, s.isNSFW)
					}
				}
			})
		}
	})
}
