package store_test

import (
	"testing"

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
