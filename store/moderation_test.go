package store_test

import (
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func TestAuthority(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		// The admins setting names root, whose account existed before (names are trimmed, any case).
		clk, prefix := storetest.NewClock(), storetest.Prefix()
		newFixture(t, b, store.Options{Prefix: prefix, Now: clk.Now}).user("root")
		clk.Add(time.Millisecond)
		f := newFixture(t, b, store.Options{Prefix: prefix, Now: clk.Now, Admins: []string{" Root "}})
		if err := f.s.SetModerator(f.ctx, "go", "mia"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name   string
			actor  store.UserKey
			groups []string
			via    string
			kind   store.Kind
		}{
			{"admin, any group", "root", []string{"rust"}, "*", 0},
			{"admin, no group", "root", nil, "*", 0},
			{"moderator of the group", "mia", []string{"go"}, "go", 0},
			{"moderator of one of the groups", "mia", []string{"rust", "go"}, "go", 0},
			{"moderator of another group", "mia", []string{"rust"}, "", store.KindForbidden},
			{"anyone else", "ben", []string{"go"}, "", store.KindForbidden},
			{"a moderator, a post in no group", "mia", nil, "", store.KindForbidden},
			{"anonymous", "", []string{"go"}, "", store.KindUnauthenticated},
		} {
			t.Run(tc.name, func(t *testing.T) {
				via, err := f.s.Authority(f.ctx, tc.actor, tc.groups)
				if tc.kind != 0 {
					if !store.IsKind(err, tc.kind) {
						t.Fatalf("got %q, %v; want an error of kind %d", via, err, tc.kind)
					}
					return
				}
				if err != nil || via != tc.via {
					t.Fatalf("got %q, %v; want %q", via, err, tc.via)
				}
			})
		}
		if err := f.s.SetModerator(f.ctx, "rust", "rex"); err != nil {
			t.Fatal(err)
		}
		if err := f.s.SetModerator(f.ctx, "rust", "mia"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			actor  store.UserKey
			groups []string
			via    string // "" for FORBIDDEN
		}{
			{"root", []string{"go", "rust"}, "*"},
			{"mia", []string{"go", "rust"}, "go"},
			{"rex", []string{"go", "rust"}, ""},
			{"rex", []string{"rust"}, "rust"},
			{"mia", nil, ""},
			{"mia", []string{"go", "nomods"}, "go"}, // a group without moderators asks for none
			{"rex", []string{"nomods"}, ""},
		} {
			via, err := f.s.AuthorityOverAll(f.ctx, tc.actor, tc.groups)
			if tc.via == "" && !store.IsKind(err, store.KindForbidden) || tc.via != "" && (err != nil || via != tc.via) {
				t.Errorf("AuthorityOverAll(%s, %v) = %q, %v; want %q", tc.actor, tc.groups, via, err, tc.via)
			}
		}
		if !f.s.IsAdmin("root") || f.s.IsAdmin("mia") || f.s.IsAdmin("") {
			t.Fatal("IsAdmin: only root is an admin")
		}
	})
}

func TestModLogRecordsEachActionOnce(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		why := "spam"
		log := func(kind store.ModActionKind, group, target, key string, at time.Time) {
			t.Helper()
			if err := f.s.LogAction(f.ctx, kind, "mia", group, target, &why, at, key); err != nil {
				t.Fatal(err)
			}
		}
		log(store.ModRemovePost, "go", "post:1", "rp:1:2", at)
		log(store.ModRemovePost, "go", "post:1", "rp:1:2", at.Add(time.Second)) // a retry
		log(store.ModLockPost, "rust", "post:2", "lp:2:3", at.Add(2*time.Second))
		log(store.ModBanUser, "", "user:ben", "bu:site:ben:1", at.Add(3*time.Second))

		l := f.s.NewLoader()
		keys := func(group string, w store.Window) ([]string, *store.Page[*store.ModAction]) {
			t.Helper()
			p, err := l.ModLog(f.ctx, group, w)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, a := range p.Items {
				out = append(out, a.ID)
			}
			return out, p
		}
		all, p := keys("", store.Window{First: 10})
		want := []string{"modaction:bu:site:ben:1", "modaction:lp:2:3", "modaction:rp:1:2"}
		if len(all) != 3 || all[0] != want[0] || all[1] != want[1] || all[2] != want[2] || p.Total != 3 {
			t.Fatalf("site log %v (total %d), want %v", all, p.Total, want)
		}
		first := p.Items[2]
		if first.Action != store.ModRemovePost || first.Moderator != "mia" || first.Group != "go" || first.TargetID != "post:1" ||
			first.Reason == nil || *first.Reason != "spam" || !first.CreatedAt.Equal(at) {
			t.Fatalf("the first action %+v: the retry must not replace it", first)
		}
		if g, _ := keys("GO", store.Window{First: 10}); len(g) != 1 || g[0] != "modaction:rp:1:2" {
			t.Fatalf("group go's log %v", g)
		}
		page1, p1 := keys("", store.Window{First: 2})
		page2, _ := keys("", store.Window{First: 2, After: p1.EndCursor()})
		if len(page1) != 2 || len(page2) != 1 || page2[0] != "modaction:rp:1:2" || !p1.HasNext {
			t.Fatalf("pages %v %v", page1, page2)
		}
		if a, err := l.ModAction(f.ctx, "modaction:lp:2:3"); err != nil || a == nil || a.Action != store.ModLockPost {
			t.Fatalf("ModAction: %+v %v", a, err)
		}
		if a, err := l.ModAction(f.ctx, "modaction:nothing:1"); err != nil || a != nil {
			t.Fatalf("unknown action: %+v %v", a, err)
		}
		if _, err := l.ModAction(f.ctx, "modaction:bad key"); !store.IsKind(err, store.KindInvalid) {
			t.Fatalf("malformed id: %v", err)
		}
	})
}
