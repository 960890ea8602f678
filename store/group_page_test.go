package store_test

import (
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestGroupPage sets and clears what a group's page shows: a field left out stays as it is, ""
// clears it, a picture must be https, and only moderators change it.
func TestGroupPage(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		mia, ben := uk(f.user("mia")), uk(f.user("ben"))
		if _, err := f.s.CreateGroup(f.ctx, mia, "go", nil); err != nil {
			t.Fatal(err)
		}
		str := func(s string) *string { return &s }
		yes := true
		page := func() (title, icon, banner, rules, desc string, restricted bool) {
			t.Helper()
			l, g := f.s.NewLoader(), store.NewGroup("go")
			ti, ic, ba, re, err := l.GroupPage(f.ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			ru, err := l.GroupRules(f.ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			de, err := l.GroupDescription(f.ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			v := func(p *string) string {
				if p == nil {
					return "<nil>"
				}
				return *p
			}
			return v(ti), v(ic), v(ba), v(ru), v(de), re
		}
		edit := store.GroupEdit{Description: str("all things go"), Title: str("Go"), IconURL: str("https://x.test/i.png"),
			BannerURL: str("https://x.test/b.png"), Rules: str("be kind"), PostingRestricted: &yes}
		if _, err := f.s.UpdateGroup(f.ctx, mia, "go", edit); err != nil {
			t.Fatal(err)
		}
		if ti, ic, ba, ru, de, re := page(); ti != "Go" || ic != "https://x.test/i.png" || ba != "https://x.test/b.png" ||
			ru != "be kind" || de != "all things go" || !re {
			t.Fatalf("page = %q %q %q %q %q %v", ti, ic, ba, ru, de, re)
		}
		// Only the title changes; the banner is cleared.
		if _, err := f.s.UpdateGroup(f.ctx, mia, "go", store.GroupEdit{Title: str("Gophers"), BannerURL: str("")}); err != nil {
			t.Fatal(err)
		}
		if ti, ic, ba, ru, de, re := page(); ti != "Gophers" || ic != "https://x.test/i.png" || ba != "<nil>" ||
			ru != "be kind" || de != "all things go" || !re {
			t.Fatalf("page after a partial edit = %q %q %q %q %q %v", ti, ic, ba, ru, de, re)
		}
		for _, tc := range []struct {
			name string
			edit store.GroupEdit
		}{
			{"http icon", store.GroupEdit{IconURL: str("http://x.test/i.png")}},
			{"script banner", store.GroupEdit{BannerURL: str("javascript:alert(1)")}},
			{"icon with credentials", store.GroupEdit{IconURL: str("https://u:p@x.test/i.png")}},
			{"long title", store.GroupEdit{Title: str(strings.Repeat("a", store.MaxGroupTitle+1))}},
			{"control character in the rules", store.GroupEdit{Rules: str("be\x00kind")}},
		} {
			if _, err := f.s.UpdateGroup(f.ctx, mia, "go", tc.edit); !store.IsKind(err, store.KindInvalid) {
				t.Errorf("%s: %v, want BAD_USER_INPUT", tc.name, err)
			}
		}
		if _, err := f.s.UpdateGroup(f.ctx, ben, "go", store.GroupEdit{Title: str("mine")}); !store.IsKind(err, store.KindForbidden) {
			t.Errorf("a member edits the page: %v, want FORBIDDEN", err)
		}
	})
}

// TestPostingRestricted lets only a group's moderators and the admins post into a group whose
// posting is restricted, by createPost and by setPostGroups; comments stay open to all.
func TestPostingRestricted(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		mia, ben, root := uk(f.user("mia")), uk(f.user("ben")), uk(f.admin("root"))
		if _, err := f.s.CreateGroup(f.ctx, mia, "news", nil); err != nil {
			t.Fatal(err)
		}
		restrict := func(on bool) {
			t.Helper()
			if _, err := f.s.UpdateGroup(f.ctx, mia, "news", store.GroupEdit{PostingRestricted: &on}); err != nil {
				t.Fatal(err)
			}
		}
		restrict(true)
		if _, err := f.s.CreatePost(f.ctx, ben, store.NewPost{Title: "hi", Groups: []string{"news"}}); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("a member posts into a restricted group: %v, want FORBIDDEN", err)
		}
		own := f.post(string(ben), "elsewhere")
		if _, err := f.s.SetPostGroups(f.ctx, ben, own.ID, []string{"news"}, nil); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("a member moves a post into a restricted group: %v, want FORBIDDEN", err)
		}
		news := f.post(string(mia), "from the moderators", "news")
		f.post(string(root), "from the admins", "news")
		if _, err := f.s.CreateComment(f.ctx, ben, store.NewComment{PostID: news.ID, Body: "thanks"}); err != nil {
			t.Fatalf("comment in a restricted group: %v", err)
		}
		restrict(false)
		f.post(string(ben), "open again", "news")
	})
}
