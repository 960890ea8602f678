package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// banWorld is a store with a driven clock, an admin (root), a moderator of group go (mia), a
// moderator of group rust (rex) and two users (ben, amy).
type banWorld struct {
	t   *testing.T
	s   *store.Store
	clk *storetest.Clock
	ctx context.Context
}

func newBanWorld(t *testing.T, b storetest.Backend) *banWorld {
	t.Helper()
	clk := storetest.NewClock()
	w := &banWorld{t: t, s: b.NewStore(t, store.Options{Now: clk.Now}), clk: clk, ctx: context.Background()}
	signUp(t, w.s, "root", "mia", "rex", "ben", "amy")
	if err := w.s.GrantAdmin(w.ctx, "root"); err != nil {
		t.Fatal(err)
	}
	for g, m := range map[string]store.UserKey{"go": "mia", "rust": "rex"} {
		if err := w.s.SetModerator(w.ctx, g, m); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// ban bans user as actor, failing the test on an error.
func (w *banWorld) ban(actor, user store.UserKey, group string, until *time.Time, reason string) *store.Ban {
	w.t.Helper()
	b, err := w.s.BanUser(w.ctx, actor, user, group, until, reason)
	if err != nil {
		w.t.Fatalf("ban %s from %q: %v", user, group, err)
	}
	return b
}

// at returns a pointer to the clock's time plus d.
func (w *banWorld) at(d time.Duration) *time.Time {
	t := w.clk.Now().Add(d)
	return &t
}

// wantBanned fails unless err is KindBanned ending at until (nil: permanent).
func wantBanned(t *testing.T, what string, err error, until *time.Time) {
	t.Helper()
	var se *store.Error
	if !asStoreError(err, &se) || se.Kind != store.KindBanned {
		t.Fatalf("%s: got %v, want BANNED", what, err)
	}
	if (se.Until == nil) != (until == nil) || (until != nil && !se.Until.Equal(until.Truncate(time.Millisecond))) {
		t.Fatalf("%s: banned until %v, want %v", what, se.Until, until)
	}
}

// writes are the writes a ban may refuse, by a user, on posts of a world; each returns its error.
type banWrites struct {
	w                    *banWorld
	inGo, inRust, inNone *store.Post
	both                 *store.Post // in go and rust
	commentInGo          *store.Comment
	commentByUserInGo    *store.Comment
	benInGo              *store.Post // by the user, before the ban
}

func (w *banWorld) banWrites(user store.UserKey) *banWrites {
	w.t.Helper()
	bw := &banWrites{w: w}
	bw.inGo = w.post("amy", "in go", "go")
	bw.inRust = w.post("amy", "in rust", "rust")
	bw.inNone = w.post("amy", "in none")
	bw.both = w.post("amy", "in both", "rust", "go")
	bw.benInGo = w.post(user, "the user's, in go", "go")
	var err error
	if bw.commentInGo, err = w.s.CreateComment(w.ctx, "amy", store.NewComment{PostID: bw.inGo.ID, Body: "hi"}); err != nil {
		w.t.Fatal(err)
	}
	if bw.commentByUserInGo, err = w.s.CreateComment(w.ctx, user, store.NewComment{PostID: bw.inGo.ID, Body: "mine"}); err != nil {
		w.t.Fatal(err)
	}
	return bw
}

func (w *banWorld) post(user store.UserKey, title string, groups ...string) *store.Post {
	w.t.Helper()
	p, err := w.s.CreatePost(w.ctx, user, store.NewPost{Title: title, Groups: groups})
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

func TestBanFromGroupRefusesWritesInItOnly(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		bw := w.banWrites("ben")
		until := w.at(48 * time.Hour)
		got := w.ban("mia", "ben", "GO", until, "spam")
		if got.Group != "go" || got.User != "ben" || got.Moderator != "mia" || got.Reason != "spam" ||
			got.Until == nil || !got.Until.Equal(until.Truncate(time.Millisecond)) || !got.CreatedAt.Equal(w.clk.Now()) {
			t.Fatalf("ban %+v", got)
		}
		s, ctx := w.s, w.ctx
		for _, tc := range []struct {
			name    string
			write   func() error
			refused bool
		}{
			{"post into go", func() error {
				_, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "x", Groups: []string{"Go"}})
				return err
			}, true},
			{"post into rust and go", func() error {
				_, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "x", Groups: []string{"rust", "go"}})
				return err
			}, true},
			{"schedule a post into go", func() error {
				_, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "x", Groups: []string{"go"}, PublishAt: w.clk.Now().Add(time.Hour)})
				return err
			}, true},
			{"vote on a post in go", func() error { _, err := s.VotePost(ctx, "ben", bw.inGo.ID, 1); return err }, true},
			{"vote on a post in rust and go", func() error { _, err := s.VotePost(ctx, "ben", bw.both.ID, 1); return err }, true},
			{"comment on a post in go", func() error {
				_, err := s.CreateComment(ctx, "ben", store.NewComment{PostID: bw.inGo.ID, Body: "x"})
				return err
			}, true},
			{"reply in go", func() error {
				_, err := s.CreateComment(ctx, "ben", store.NewComment{PostID: bw.inGo.ID, ParentID: bw.commentInGo.ID, Body: "x"})
				return err
			}, true},
			{"vote on a comment in go", func() error { _, err := s.VoteComment(ctx, "ben", bw.commentInGo.ID, 1); return err }, true},
			{"edit a comment in go", func() error { _, err := s.EditComment(ctx, "ben", bw.commentByUserInGo.ID, "edited"); return err }, true},
			{"post into rust", func() error {
				_, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "x", Groups: []string{"rust"}})
				return err
			}, false},
			{"post into no group", func() error { _, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "x"}); return err }, false},
			{"vote in rust", func() error { _, err := s.VotePost(ctx, "ben", bw.inRust.ID, 1); return err }, false},
			{"vote in no group", func() error { _, err := s.VotePost(ctx, "ben", bw.inNone.ID, 1); return err }, false},
			{"comment in rust", func() error {
				_, err := s.CreateComment(ctx, "ben", store.NewComment{PostID: bw.inRust.ID, Body: "x"})
				return err
			}, false},
			{"follow", func() error { _, err := s.Follow(ctx, "ben", "amy"); return err }, false},
			{"delete one's comment in go", func() error { return s.DeleteComment(ctx, "ben", bw.commentByUserInGo.ID) }, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.write()
				if tc.refused {
					wantBanned(t, tc.name, err, until)
				} else if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
			})
		}
		// Editing one's post in the group is refused; in another group it is not.
		title := "edited"
		inRust := w.post("ben", "mine in rust", "rust")
		if _, err := s.EditPost(ctx, "ben", inRust.ID, store.PostEdit{Title: &title}); err != nil {
			t.Fatalf("edit a post in rust: %v", err)
		}
		if _, err := s.EditPost(ctx, "ben", bw.benInGo.ID, store.PostEdit{Title: &title}); !store.IsKind(err, store.KindBanned) {
			t.Fatalf("edit a post in go: %v", err)
		}
		// Adding a post to the group is posting into it.
		own := w.post("ben", "mine", "rust")
		if _, err := s.SetPostGroups(ctx, "ben", own.ID, []string{"go"}, nil); !store.IsKind(err, store.KindBanned) {
			t.Fatalf("add a post to go: %v", err)
		}
		if _, err := s.SetPostGroups(ctx, "ben", own.ID, nil, []string{"rust"}); err != nil {
			t.Fatalf("take a post out of rust: %v", err)
		}
		if err := s.DeletePost(ctx, "ben", own.ID); err != nil {
			t.Fatalf("delete one's post: %v", err)
		}
		// Others are not affected.
		if _, err := s.VotePost(ctx, "rex", bw.inGo.ID, 1); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSiteBan(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		s, ctx := w.s, w.ctx
		bw := w.banWrites("ben")
		if _, err := s.Follow(ctx, "ben", "amy"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.BanUser(ctx, "mia", "ben", "", nil, "spam"); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("a moderator bans from the site: %v", err)
		}
		got := w.ban("root", "ben", "", nil, "spam everywhere")
		if got.Group != "" || got.Until != nil {
			t.Fatalf("site ban %+v", got)
		}
		for name, write := range map[string]func() error{
			"post into no group": func() error { _, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "x"}); return err },
			"post into rust": func() error {
				_, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "x", Groups: []string{"rust"}})
				return err
			},
			"vote in no group": func() error { _, err := s.VotePost(ctx, "ben", bw.inNone.ID, 1); return err },
			"comment in rust": func() error {
				_, err := s.CreateComment(ctx, "ben", store.NewComment{PostID: bw.inRust.ID, Body: "x"})
				return err
			},
			"follow": func() error { _, err := s.Follow(ctx, "ben", "mia"); return err },
		} {
			wantBanned(t, name, write(), nil)
		}
		if _, err := s.Unfollow(ctx, "ben", "amy"); err != nil {
			t.Fatalf("unfollow: %v", err)
		}
		if err := s.DeleteComment(ctx, "ben", bw.commentByUserInGo.ID); err != nil {
			t.Fatalf("delete one's comment: %v", err)
		}
		if _, err := s.SavePost(ctx, "ben", bw.inRust.ID); err != nil {
			t.Fatalf("save a post: %v", err)
		}
		title := "edited"
		if _, err := s.EditPost(ctx, "ben", bw.benInGo.ID, store.PostEdit{Title: &title}); !store.IsKind(err, store.KindBanned) {
			t.Fatalf("edit one's post: %v", err)
		}
		// A site-banned moderator moderates no more.
		w.ban("root", "mia", "", w.at(time.Hour), "rogue")
		if _, err := s.BanUser(ctx, "mia", "amy", "go", nil, "x"); !store.IsKind(err, store.KindBanned) {
			t.Fatalf("a banned moderator bans: %v", err)
		}
		if ended, err := s.UnbanUser(ctx, "root", "ben", ""); err != nil || ended.Group != "" || ended.User != "ben" {
			t.Fatalf("unban: %+v %v", ended, err)
		}
		if _, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "back"}); err != nil {
			t.Fatalf("post after the unban: %v", err)
		}
	})
}

// TestBanEndsAtItsSecond moves the store's clock (which every ban is compared with): the ban
// refuses a write one millisecond before it ends and allows it at its end, with no job run.
func TestBanEndsAtItsSecond(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		p := w.post("amy", "in go", "go")
		until := w.at(90 * time.Minute)
		w.ban("mia", "ben", "go", until, "cool off")
		w.clk.Add(90*time.Minute - time.Second)
		if _, err := w.s.VotePost(w.ctx, "ben", p.ID, 1); err == nil {
			t.Fatal("one second before the end: not refused")
		}
		w.clk.Add(time.Second - time.Millisecond)
		_, err := w.s.VotePost(w.ctx, "ben", p.ID, 1)
		wantBanned(t, "one millisecond before the end", err, until)
		if page := w.bans("mia", "go", store.Window{First: 10}); len(page.Items) != 1 || page.Total != 1 {
			t.Fatalf("bans in force a millisecond before the end: %d (total %d)", len(page.Items), page.Total)
		}
		w.clk.Add(time.Millisecond)
		if _, err := w.s.VotePost(w.ctx, "ben", p.ID, 1); err != nil {
			t.Fatalf("at the end: %v", err)
		}
		if page := w.bans("mia", "go", store.Window{First: 10}); len(page.Items) != 0 || page.Total != 0 || page.HasPrev {
			t.Fatalf("bans in force at the end: %+v", page)
		}
		if ended, err := w.s.UnbanUser(w.ctx, "mia", "ben", "go"); err != nil || ended.Until == nil || ended.Until.After(w.clk.Now()) {
			t.Fatalf("unban an ended ban: %+v %v; want it as it ended", ended, err)
		}
	})
}

func (w *banWorld) bans(viewer store.UserKey, group string, win store.Window) *store.Page[*store.Ban] {
	w.t.Helper()
	p, err := w.s.NewLoader().GroupBans(w.ctx, viewer, group, win)
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

func TestBanPermissionsAndInput(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		if err := w.s.SetModerator(w.ctx, "go", "rex"); err != nil { // rex moderates go and rust
			t.Fatal(err)
		}
		soon := w.at(time.Hour)
		for _, tc := range []struct {
			name   string
			actor  store.UserKey
			user   store.UserKey
			group  string
			until  *time.Time
			reason string
			kind   store.Kind
		}{
			{"a moderator of another group", "mia", "ben", "rust", soon, "x", store.KindForbidden},
			{"a user", "amy", "ben", "go", soon, "x", store.KindForbidden},
			{"another moderator of the group", "mia", "rex", "go", soon, "x", store.KindForbidden},
			{"an admin", "mia", "root", "go", soon, "x", store.KindForbidden},
			{"oneself", "mia", "mia", "go", soon, "x", store.KindInvalid},
			{"a site ban by a moderator", "mia", "ben", "", soon, "x", store.KindForbidden},
			{"anonymous", "", "ben", "go", soon, "x", store.KindUnauthenticated},
			{"no such user", "mia", "nobody", "go", soon, "x", store.KindNotFound},
			{"a malformed group", "mia", "ben", "g o", soon, "x", store.KindInvalid},
			{"until now", "mia", "ben", "go", w.at(0), "x", store.KindInvalid},
			{"until in the past", "mia", "ben", "go", w.at(-time.Hour), "x", store.KindInvalid},
			{"until beyond ten years", "mia", "ben", "go", w.at(store.MaxBanLength + time.Hour), "x", store.KindInvalid},
			{"no reason", "mia", "ben", "go", soon, "", store.KindInvalid},
			{"a reason too long", "mia", "ben", "go", soon, string(make([]rune, 501)), store.KindInvalid},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if _, err := w.s.BanUser(w.ctx, tc.actor, tc.user, tc.group, tc.until, tc.reason); !store.IsKind(err, tc.kind) {
					t.Fatalf("got %v, want kind %d", err, tc.kind)
				}
			})
		}
		// An admin may ban a moderator, and a moderator of one group is banned there only.
		w.ban("root", "rex", "go", soon, "x")
		if _, err := w.s.CreatePost(w.ctx, "rex", store.NewPost{Title: "x", Groups: []string{"rust"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.s.UnbanUser(w.ctx, "mia", "rex", "go"); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("a moderator lifts another's ban: %v", err)
		}
		if _, err := w.s.UnbanUser(w.ctx, "amy", "rex", "go"); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("a user lifts a ban: %v", err)
		}
		w.ban("mia", "ben", "go", nil, "for good")
		if _, err := w.s.CreatePost(w.ctx, "ben", store.NewPost{Title: "x", Groups: []string{"go"}}); err == nil {
			t.Fatal("a permanent ban refuses nothing")
		} else {
			wantBanned(t, "permanent", err, nil)
		}
	})
}

func TestBanReplacedAndLifted(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		p := w.post("amy", "in go", "go")
		first := w.at(time.Hour)
		w.ban("mia", "ben", "go", first, "spam")
		w.clk.Add(time.Second)
		second := w.at(72 * time.Hour)
		w.ban("root", "ben", "go", second, "more spam")
		_, err := w.s.VotePost(w.ctx, "ben", p.ID, 1)
		wantBanned(t, "replaced", err, second)
		page := w.bans("mia", "go", store.Window{First: 10})
		if len(page.Items) != 1 || page.Items[0].Reason != "more spam" || page.Items[0].Moderator != "root" {
			t.Fatalf("replaced ban: %+v", page.Items)
		}
		// A shorter ban replaces a longer one too (an admin's ban is the admins' to change:
		// TestAdminsGroupBansAreTheAdmins).
		third := w.at(time.Minute)
		w.ban("root", "ben", "go", third, "less")
		_, err = w.s.VotePost(w.ctx, "ben", p.ID, 1)
		wantBanned(t, "shortened", err, third)

		ended, err := w.s.UnbanUser(w.ctx, "root", "ben", "go")
		if err != nil || ended.Reason != "less" || ended.Moderator != "root" || ended.Until == nil || !ended.Until.Equal(w.clk.Now()) {
			t.Fatalf("unban: %+v %v; want the ban, ended now", ended, err)
		}
		if again, err := w.s.UnbanUser(w.ctx, "mia", "ben", "GO"); err != nil || again.ID != ended.ID || again.ID != "ban:g:go:ben" ||
			again.Until == nil || !again.Until.Equal(*ended.Until) || again.Reason != ended.Reason || !again.CreatedAt.Equal(ended.CreatedAt) {
			t.Fatalf("unban again: %+v %v; want %+v", again, err, ended)
		}
		if _, err := w.s.VotePost(w.ctx, "ben", p.ID, 1); err != nil {
			t.Fatalf("after the unban: %v", err)
		}
		if page := w.bans("mia", "go", store.Window{First: 10}); len(page.Items) != 0 || page.Total != 0 {
			t.Fatalf("bans after the unban: %+v", page)
		}
		// Banned again after the unban: a later version, which the user's copy takes.
		w.ban("mia", "ben", "go", nil, "again")
		if _, err := w.s.VotePost(w.ctx, "ben", p.ID, -1); !store.IsKind(err, store.KindBanned) {
			t.Fatalf("banned again: %v", err)
		}
	})
}

// TestBanModLogOncePerAction repeats each request, as a client retrying would: every action is
// logged once.
func TestBanModLogOncePerAction(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		until := w.at(time.Hour)
		for range 2 {
			w.ban("mia", "ben", "go", until, "spam")
		}
		w.clk.Add(time.Second)
		for range 2 {
			w.ban("root", "amy", "", nil, "spam")
		}
		w.clk.Add(time.Second)
		for i := range 2 {
			if ended, err := w.s.UnbanUser(w.ctx, "mia", "ben", "go"); err != nil || ended.Reason != "spam" {
				t.Fatalf("unban %d: %+v %v", i, ended, err)
			}
		}
		p, err := w.s.NewLoader().ModLog(w.ctx, "", store.Window{First: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 3 {
			t.Fatalf("%d actions logged, want 3: %+v", len(p.Items), p.Items)
		}
		unban, site, ban := p.Items[0], p.Items[1], p.Items[2]
		if unban.Action != store.ModUnbanUser || unban.Group != "go" || unban.TargetID != "user:ben" || unban.Moderator != "mia" || unban.Reason != nil {
			t.Fatalf("unban %+v", unban)
		}
		if site.Action != store.ModBanUser || site.Group != "" || site.TargetID != "user:amy" || site.Until != nil || *site.Reason != "spam" {
			t.Fatalf("site ban %+v", site)
		}
		if ban.Action != store.ModBanUser || ban.Group != "go" || ban.Until == nil || !ban.Until.Equal(*until) || ban.Moderator != "mia" {
			t.Fatalf("group ban %+v", ban)
		}
		if g, err := w.s.NewLoader().ModLog(w.ctx, "go", store.Window{First: 10}); err != nil || len(g.Items) != 2 {
			t.Fatalf("group go's log: %v %v", g, err)
		}
	})
}

// TestBanRepairedAfterACrash stops a ban after its atomic step: the user's copy is missing, so
// their writes pass, until the repair job copies it and logs the action.
func TestBanRepairedAfterACrash(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		p := w.post("amy", "in go", "go")
		until := w.at(time.Hour)
		if err := w.s.BanStepOnly(w.ctx, "mia", "ben", "go", until, "spam"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.s.VotePost(w.ctx, "ben", p.ID, 1); err != nil {
			t.Fatalf("before the repair the copy is missing: %v", err)
		}
		if page := w.bans("mia", "go", store.Window{First: 10}); len(page.Items) != 1 {
			t.Fatalf("the record is there: %+v", page)
		}
		w.clk.Add(store.RepairGrace + time.Second)
		if _, err := w.s.Jobs().RunDue(w.ctx); err != nil {
			t.Fatal(err)
		}
		_, err := w.s.VotePost(w.ctx, "ben", p.ID, -1)
		wantBanned(t, "after the repair", err, until)
		log, err := w.s.NewLoader().ModLog(w.ctx, "go", store.Window{First: 10})
		if err != nil || len(log.Items) != 1 || log.Items[0].Action != store.ModBanUser {
			t.Fatalf("logged after the repair: %+v %v", log, err)
		}
	})
}

// TestBanCopyVersionGuard delivers the copy of a ban late, after its unban: it changes nothing.
func TestBanCopyVersionGuard(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		p := w.post("amy", "in go", "go")
		until := w.at(time.Hour)
		w.ban("mia", "ben", "go", until, "spam")
		banned, err := w.s.BanVersion(w.ctx, "ben", "go")
		if err != nil || banned == 0 {
			t.Fatalf("version %d %v", banned, err)
		}
		if _, err := w.s.UnbanUser(w.ctx, "mia", "ben", "go"); err != nil {
			t.Fatal(err)
		}
		if err := w.s.MirrorBan(w.ctx, "ben", "go", until, banned, "late"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.s.VotePost(w.ctx, "ben", p.ID, 1); err != nil {
			t.Fatalf("a late copy of the ban undid the unban: %v", err)
		}
		// A copy of a newer version does apply (the guard is not a wall).
		if err := w.s.MirrorBan(w.ctx, "ben", "go", until, banned+1000, "newer"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.s.VotePost(w.ctx, "ben", p.ID, -1); !store.IsKind(err, store.KindBanned) {
			t.Fatalf("a newer copy: %v", err)
		}
		// A failover without WAIT can set the slot's counter back, so that the record the scope
		// now holds (a lift, here) reuses the version of a lost one: another nonce applies.
		lifted := w.at(-time.Minute)
		if err := w.s.MirrorBan(w.ctx, "ben", "go", lifted, banned+1000, "reused"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.s.VotePost(w.ctx, "ben", p.ID, -1); err != nil {
			t.Fatalf("a record reusing the version of a lost one was not applied: %v", err)
		}
		if err := w.s.MirrorBan(w.ctx, "ben", "go", until, banned+999, "older"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.s.VotePost(w.ctx, "ben", p.ID, 1); err != nil {
			t.Fatalf("an older version applied: %v", err)
		}
	})
}

func TestGroupBansListing(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		signUp(t, w.s, "ann", "bob", "cat", "dan", "eve")
		w.ban("mia", "ben", "go", nil, "for good")
		w.ban("mia", "dan", "go", nil, "for good too")
		w.ban("mia", "amy", "go", w.at(3*time.Hour), "three hours")
		w.ban("mia", "bob", "go", w.at(time.Hour), "one hour")
		w.ban("mia", "cat", "go", w.at(2*time.Hour), "two hours")
		w.ban("mia", "eve", "go", w.at(time.Minute), "a minute")
		w.ban("mia", "ann", "go", w.at(time.Hour), "lifted")
		if _, err := w.s.UnbanUser(w.ctx, "mia", "ann", "go"); err != nil {
			t.Fatal(err)
		}
		w.ban("rex", "ann", "rust", nil, "elsewhere")
		w.clk.Add(2 * time.Minute) // eve's ban ended

		users := func(p *store.Page[*store.Ban]) []string {
			var out []string
			for _, b := range p.Items {
				out = append(out, string(b.User))
			}
			return out
		}
		want := []string{"bob", "cat", "amy", "ben", "dan"}
		for _, viewer := range []store.UserKey{"mia", "root"} {
			all := w.bans(viewer, "go", store.Window{First: 10})
			if got := users(all); !equalStrings(got, want) || all.Total != 5 || all.HasNext || all.HasPrev {
				t.Fatalf("%s sees %v (total %d), want %v", viewer, got, all.Total, want)
			}
		}
		var paged []string
		after := ""
		for {
			p := w.bans("mia", "go", store.Window{First: 2, After: after})
			paged = append(paged, users(p)...)
			if !p.HasNext {
				break
			}
			after = p.EndCursor()
		}
		if !equalStrings(paged, want) {
			t.Fatalf("paged forwards %v, want %v", paged, want)
		}
		last := w.bans("mia", "go", store.Window{Last: 2})
		if got := users(last); !equalStrings(got, want[3:]) || !last.HasPrev || last.HasNext {
			t.Fatalf("last page %v (prev %v next %v)", got, last.HasPrev, last.HasNext)
		}
		before := w.bans("mia", "go", store.Window{Last: 2, Before: last.StartCursor()})
		if got := users(before); !equalStrings(got, want[1:3]) || !before.HasPrev {
			t.Fatalf("page before the last %v", got)
		}
		for _, viewer := range []store.UserKey{"rex", "amy", ""} {
			if _, err := w.s.NewLoader().GroupBans(w.ctx, viewer, "go", store.Window{First: 10}); !store.IsKind(err, store.KindForbidden) {
				t.Fatalf("%q lists go's bans: %v", viewer, err)
			}
		}
		if rust := w.bans("rex", "rust", store.Window{First: 10}); !equalStrings(users(rust), []string{"ann"}) {
			t.Fatalf("rust's bans %v", users(rust))
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBanCheckRidesWithTheRateLimit counts the round trips of refused writes: the author's bans,
// and the groups of the post the write is on, are read in the pipeline of the rate limit.
func TestBanCheckRidesWithTheRateLimit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		b, hook := b.Counted(t)
		clk := storetest.NewClock()
		s := b.NewStore(t, store.Options{Now: clk.Now, WriteLimit: 1000})
		ctx := context.Background()
		signUp(t, s, "amy", "ben", "mia")
		if err := s.SetModerator(ctx, "go", "mia"); err != nil {
			t.Fatal(err)
		}
		p, err := s.CreatePost(ctx, "amy", store.NewPost{Title: "x", Groups: []string{"go"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.BanUser(ctx, "mia", "ben", "go", nil, "spam"); err != nil {
			t.Fatal(err)
		}
		for name, write := range map[string]func() error{
			"vote": func() error { _, err := s.VotePost(ctx, "ben", p.ID, 1); return err },
			"comment": func() error {
				_, err := s.CreateComment(ctx, "ben", store.NewComment{PostID: p.ID, Body: "x"})
				return err
			},
			"post": func() error {
				_, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "x", Groups: []string{"go"}})
				return err
			},
		} {
			hook.Reset()
			if err := write(); !store.IsKind(err, store.KindBanned) {
				t.Fatalf("%s: %v", name, err)
			}
			if n := hook.Count(); n != 1 {
				t.Fatalf("%s: refused after %d round trips, want 1", name, n)
			}
		}
	})
}

// TestBanCancelsScheduledPosts: a post scheduled before its author was banned from its group is
// cancelled when its time comes, not published; one into another group is published.
func TestBanCancelsScheduledPosts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		at := w.clk.Now().Add(time.Hour)
		inGo, err := w.s.CreatePost(w.ctx, "ben", store.NewPost{Title: "later in go", Groups: []string{"go"}, PublishAt: at})
		if err != nil {
			t.Fatal(err)
		}
		inRust, err := w.s.CreatePost(w.ctx, "ben", store.NewPost{Title: "later in rust", Groups: []string{"rust"}, PublishAt: at})
		if err != nil {
			t.Fatal(err)
		}
		w.ban("mia", "ben", "go", w.at(2*time.Hour), "spam")
		w.clk.Add(time.Hour + time.Second)
		settle(t, w.s)
		l := w.s.NewLoader()
		if p, err := l.Post(w.ctx, inGo.ID); err != nil || (p != nil && p.PublishAt == nil) {
			t.Fatalf("the post into go was published: %+v %v", p, err)
		}
		if p, err := l.Post(w.ctx, inRust.ID); err != nil || p == nil || p.PublishAt != nil {
			t.Fatalf("the post into rust: %+v %v", p, err)
		}
		if pending, err := l.ScheduledPosts(w.ctx, "ben", store.Window{First: 10}); err != nil || len(pending.Items) != 0 {
			t.Fatalf("still scheduled: %+v %v", pending, err)
		}
	})
}

// TestRebuildDerivesBanCopies loses the users' copies of their bans (as a failover might) and
// checks that rebuild derives them again from the groups' and the site's records.
func TestRebuildDerivesBanCopies(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		w.ban("mia", "ben", "go", w.at(time.Hour), "spam")
		w.ban("root", "amy", "", nil, "abuse")
		prefix := w.s.Options().Prefix
		for _, u := range []string{"ben", "amy"} {
			if err := b.Client.Del(w.ctx, prefix+"{u:"+u+"}:bans", prefix+"{u:"+u+"}:bans:ver").Err(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.s.CreatePost(w.ctx, "ben", store.NewPost{Title: "x", Groups: []string{"go"}}); err != nil {
			t.Fatalf("with its copy lost the ban is not seen (the test's premise): %v", err)
		}
		st, err := w.s.RebuildUsers(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Bans != 2 {
			t.Fatalf("rebuild went through %d bans, want 2", st.Bans)
		}
		_, err = w.s.CreatePost(w.ctx, "ben", store.NewPost{Title: "y", Groups: []string{"go"}})
		wantBanned(t, "ben in go after rebuild", err, w.at(time.Hour))
		_, err = w.s.CreatePost(w.ctx, "amy", store.NewPost{Title: "z"})
		wantBanned(t, "amy on the site after rebuild", err, nil)
	})
}

// TestGroupBanRefusesReports checks that reports are in a group ban's scope: a user banned from a
// group cannot report a post or a comment in it (BANNED with the ban's end), and still reports in
// other groups; the report of a post in that group and another is refused too.
func TestGroupBanRefusesReports(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := newBanWorld(t, b)
		s, ctx := w.s, w.ctx
		inGo, err := s.CreatePost(ctx, "amy", store.NewPost{Title: "in go", Groups: []string{"go"}})
		if err != nil {
			t.Fatal(err)
		}
		inBoth, err := s.CreatePost(ctx, "amy", store.NewPost{Title: "in both", Groups: []string{"rust", "go"}})
		if err != nil {
			t.Fatal(err)
		}
		inRust, err := s.CreatePost(ctx, "amy", store.NewPost{Title: "in rust", Groups: []string{"rust"}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.CreateComment(ctx, "amy", store.NewComment{PostID: inGo.ID, Body: "a comment"})
		if err != nil {
			t.Fatal(err)
		}
		until := w.at(time.Hour)
		w.ban("mia", "ben", "go", until, "report spam")
		for _, tc := range []struct {
			what   string
			report func() (*store.Report, error)
		}{
			{"a post in the group", func() (*store.Report, error) { return s.ReportPost(ctx, "ben", inGo.ID, "spam") }},
			{"a post in the group and another", func() (*store.Report, error) { return s.ReportPost(ctx, "ben", inBoth.ID, "spam") }},
			{"a comment in the group", func() (*store.Report, error) { return s.ReportComment(ctx, "ben", c.ID, "spam") }},
		} {
			r, err := tc.report()
			wantBanned(t, "report "+tc.what, err, until)
			if r != nil {
				t.Fatalf("report %s: filed %+v", tc.what, r)
			}
		}
		if _, err := s.ReportPost(ctx, "ben", inRust.ID, "spam"); err != nil {
			t.Fatalf("report a post of another group: %v", err)
		}
		if n, err := s.OpenReports(ctx, "ben"); err != nil || n != 1 {
			t.Fatalf("ben holds %d open reports (%v), want 1", n, err)
		}
	})
}
