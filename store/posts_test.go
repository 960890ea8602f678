package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// fixture is a store with some users for post tests.
type fixture struct {
	t   *testing.T
	s   *store.Store
	ctx context.Context
}

func newFixture(t *testing.T, b storetest.Backend, opts store.Options) *fixture {
	return &fixture{t: t, s: b.NewStore(t, opts), ctx: context.Background()}
}

// admin signs up name, makes the account a site admin (the operator's grant) and returns its
// user key.
func (f *fixture) admin(name string) string {
	f.t.Helper()
	uid := f.user(name)
	if err := f.s.GrantAdmin(f.ctx, name); err != nil {
		f.t.Fatal(err)
	}
	return uid
}

// user signs up name and returns its user key.
func (f *fixture) user(name string) string {
	f.t.Helper()
	sess, err := f.s.SignUp(f.ctx, name, "password1")
	if err != nil {
		f.t.Fatal(err)
	}
	return string(sess.User.Key())
}

func (f *fixture) post(uid, title string, groups ...string) *store.Post {
	f.t.Helper()
	p, err := f.s.CreatePost(f.ctx, uk(uid), store.NewPost{Title: title, Groups: groups})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) vote(uid, postID string, dir int) *store.Post {
	f.t.Helper()
	p, err := f.s.VotePost(f.ctx, uk(uid), postID, dir)
	if err != nil {
		f.t.Fatalf("vote %s %s %d: %v", uid, postID, dir, err)
	}
	return p
}

// ids lists every post id of a listing, paging through it n at a time.
func (f *fixture) ids(sort store.PostSort, group string, n int) []string {
	f.t.Helper()
	var out []string
	after := ""
	for {
		p, err := f.s.NewLoader().Posts(f.ctx, sort, group, store.Window{First: n, After: after}, nil)
		if err != nil {
			f.t.Fatal(err)
		}
		for _, it := range p.Items {
			out = append(out, it.ID)
		}
		if !p.HasNext {
			return out
		}
		after = p.EndCursor()
	}
}

func TestCreatePost(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		alice := f.user("alice")
		p, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: "Héllo", Body: "body", URL: "https://example.com/x", Groups: []string{"Go", "go", "redis"}})
		if err != nil {
			t.Fatal(err)
		}
		if p.Title != "Héllo" || p.Body != "body" || *p.URL != "https://example.com/x" || p.Author.ID() != "user:alice" {
			t.Fatalf("post %+v", p)
		}
		if got := strings.Join(p.GroupNames, ","); got != "go,redis" {
			t.Fatalf("groups %q, want lower-cased and de-duplicated", got)
		}
		if !p.VotingClosesAt.Equal(p.CreatedAt.Add(7 * 24 * time.Hour)) {
			t.Fatalf("voting closes %v for a post of %v", p.VotingClosesAt, p.CreatedAt)
		}
		if want := float64(p.CreatedAt.Unix()); p.HotRank != want || p.Score() != 0 {
			t.Fatalf("hot rank %v, score %d; want %v, 0", p.HotRank, p.Score(), want)
		}
		got, err := f.s.NewLoader().Post(f.ctx, p.ID)
		if err != nil || got == nil || got.Title != "Héllo" {
			t.Fatalf("load: %+v %v", got, err)
		}
	})
}

func TestCreatePostValidation(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		alice := f.user("alice")
		many := make([]string, store.MaxGroupsPerPost+1)
		for i := range many {
			many[i] = fmt.Sprintf("g%d", i)
		}
		for name, in := range map[string]store.NewPost{
			"empty title":   {Title: ""},
			"long title":    {Title: strings.Repeat("é", 301)},
			"bad utf8":      {Title: "a\xffb"},
			"long body":     {Title: "t", Body: strings.Repeat("b", 40001)},
			"bad url":       {Title: "t", URL: "javascript:alert(1)"},
			"bad group":     {Title: "t", Groups: []string{"no spaces"}},
			"long group":    {Title: "t", Groups: []string{strings.Repeat("g", 33)}},
			"too many":      {Title: "t", Groups: many},
			"long idem key": {Title: "t", IdempotencyKey: strings.Repeat("k", 65)},
			"bad idem key":  {Title: "t", IdempotencyKey: "k\xff"},
		} {
			if _, err := f.s.CreatePost(f.ctx, uk(alice), in); !store.IsKind(err, store.KindInvalid) {
				t.Errorf("%s: %v, want invalid", name, err)
			}
		}
		if n := len(f.ids(store.SortNew, "", 100)); n != 0 {
			t.Fatalf("%d posts after only invalid input", n)
		}
		// Boundaries are accepted.
		if _, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: strings.Repeat("é", 300), Body: strings.Repeat("b", 40000),
			IdempotencyKey: strings.Repeat("é", 64)}); err != nil { // 64 characters, 128 bytes
			t.Fatal(err)
		}
	})
}

func TestCreatePostIdempotencyKey(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		alice := f.user("alice")
		bob := f.user("bob")
		in := store.NewPost{Title: "once", IdempotencyKey: "k-1"}
		var wg sync.WaitGroup
		ids := make([]string, 8)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := f.s.CreatePost(f.ctx, uk(alice), in)
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = p.ID
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("same key gave posts %v", ids)
			}
		}
		// The key is per user.
		other, err := f.s.CreatePost(f.ctx, uk(bob), in)
		if err != nil || other.ID == ids[0] {
			t.Fatalf("bob's post %v %v", other, err)
		}
		if n := len(f.ids(store.SortNew, "", 100)); n != 2 {
			t.Fatalf("%d posts, want 2", n)
		}
	})
}

func TestDeletePost(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		alice, bob := f.user("alice"), f.user("bob")
		p := f.post(alice, "doomed", "go")
		keep := f.post(alice, "kept", "go")
		f.vote(bob, p.ID, 1)
		if err := f.s.DeletePost(f.ctx, uk(bob), p.ID); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("delete by another user: %v", err)
		}
		if err := f.s.DeletePost(f.ctx, uk(alice), p.ID); err != nil {
			t.Fatal(err)
		}
		// A repeat (a retried request) is harmless.
		if err := f.s.DeletePost(f.ctx, uk(alice), p.ID); err != nil {
			t.Fatalf("repeat delete: %v", err)
		}
		if got, _ := f.s.NewLoader().Post(f.ctx, p.ID); got != nil {
			t.Fatalf("deleted post still loads: %+v", got)
		}
		for _, sort := range []store.PostSort{store.SortHot, store.SortNew, store.SortTop} {
			for _, g := range []string{"", "go"} {
				if got := f.ids(sort, g, 10); len(got) != 1 || got[0] != keep.ID {
					t.Errorf("sort %d group %q: %v", sort, g, got)
				}
			}
		}
		up, err := f.s.NewLoader().UserPosts(f.ctx, "alice", store.SortNew, store.Window{First: 10}, nil)
		if err != nil || len(up.Items) != 1 || up.Total != 1 {
			t.Fatalf("user posts after delete: %+v %v", up, err)
		}
		if _, err := f.s.VotePost(f.ctx, uk(bob), p.ID, 1); !store.IsKind(err, store.KindNotFound) {
			t.Fatalf("vote on deleted post: %v", err)
		}
		if err := f.s.DeletePost(f.ctx, uk(bob), p.ID); !store.IsKind(err, store.KindNotFound) {
			t.Fatalf("another user deleting a deleted post: %v", err)
		}
		if err := f.s.DeletePost(f.ctx, uk(alice), "post:99999"); !store.IsKind(err, store.KindNotFound) {
			t.Fatalf("delete missing: %v", err)
		}
	})
}

func TestSetPostGroups(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		alice, bob := f.user("alice"), f.user("bob")
		p := f.post(alice, "p", "a", "b")
		got, err := f.s.SetPostGroups(f.ctx, uk(alice), p.ID, []string{"C", "a"}, []string{"b"})
		if err != nil {
			t.Fatal(err)
		}
		if g := strings.Join(got.GroupNames, ","); g != "a,c" {
			t.Fatalf("groups %q", g)
		}
		for group, want := range map[string]int{"a": 1, "b": 0, "c": 1} {
			if n := len(f.ids(store.SortHot, group, 10)); n != want {
				t.Errorf("group %s holds %d posts, want %d", group, n, want)
			}
			c, err := f.s.NewLoader().GroupPostCount(f.ctx, group)
			if err != nil || c != want {
				t.Errorf("group %s postCount %d %v", group, c, err)
			}
		}
		if _, err := f.s.SetPostGroups(f.ctx, uk(bob), p.ID, []string{"x"}, nil); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("by another user: %v", err)
		}
		// A vote after leaving group b must not put the post back in it.
		f.vote(bob, p.ID, 1)
		if n := len(f.ids(store.SortTop, "b", 10)); n != 0 {
			t.Fatalf("post back in group b after a vote")
		}
		// Re-joining works.
		if _, err := f.s.SetPostGroups(f.ctx, uk(alice), p.ID, []string{"b"}, nil); err != nil {
			t.Fatal(err)
		}
		if n := len(f.ids(store.SortTop, "b", 10)); n != 1 {
			t.Fatalf("post not back in group b")
		}
	})
}

func TestRankingsOrder(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
		f := newFixture(t, b, store.Options{Now: clock})
		author := f.user("author")
		voters := []string{f.user("voter1"), f.user("voter2"), f.user("voter3")}
		old := f.post(author, "old")
		advance(time.Hour)
		mid := f.post(author, "mid")
		advance(time.Hour)
		fresh := f.post(author, "fresh")
		// old: +3, mid: -1, fresh: 0.
		for _, v := range voters {
			f.vote(v, old.ID, 1)
		}
		f.vote(voters[0], mid.ID, -1)
		want := map[store.PostSort][]string{
			// HOT: old = t0 + 3×432 = t0+1296 s; mid = t0+3600-432; fresh = t0+7200.
			store.SortHot: {fresh.ID, mid.ID, old.ID},
			store.SortNew: {fresh.ID, mid.ID, old.ID},
			store.SortTop: {old.ID, fresh.ID, mid.ID},
		}
		for sort, w := range want {
			if got := f.ids(sort, "", 2); strings.Join(got, " ") != strings.Join(w, " ") {
				t.Errorf("sort %d: %v, want %v", sort, got, w)
			}
		}
		// Enough votes move old to the top of HOT: 432 s each.
		for i := 0; i < 20; i++ {
			f.vote(f.user(fmt.Sprintf("late%d", i)), old.ID, 1)
		}
		if got := f.ids(store.SortHot, "", 10); got[0] != old.ID {
			t.Errorf("hot after 23 votes: %v", got)
		}
	})
}

func TestRebuildRestoresDerivedData(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix})
		alice, bob := f.user("alice"), f.user("bob")
		p1 := f.post(alice, "one", "go")
		p2 := f.post(alice, "two")
		gone := f.post(alice, "gone", "go")
		f.vote(bob, p2.ID, 1)
		if err := f.s.DeletePost(f.ctx, uk(alice), gone.ID); err != nil {
			t.Fatal(err)
		}
		before := map[store.PostSort][]string{}
		for _, sort := range []store.PostSort{store.SortHot, store.SortNew, store.SortTop} {
			before[sort] = f.ids(sort, "", 10)
		}
		// Lose every derived structure, as if their writes had been cut off.
		lost := append(scanAll(t, b, prefix+"{r:all}*"), scanAll(t, b, prefix+"{g:*")...)
		lost = append(lost, prefix+"{u:alice}:karma", prefix+"{u:alice}:karma:items")
		for _, k := range lost {
			if err := b.Client.Del(f.ctx, k).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(f.ids(store.SortNew, "", 10)); n != 0 {
			t.Fatalf("rankings not cleared: %d", n)
		}
		st, err := f.s.Rebuild(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Posts != 2 || st.Deleted != 1 {
			t.Fatalf("rebuild stats %+v", st)
		}
		for sort, want := range before {
			if got := f.ids(sort, "", 10); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("sort %d after rebuild: %v, want %v", sort, got, want)
			}
		}
		if got := f.ids(store.SortNew, "go", 10); len(got) != 1 || got[0] != p1.ID {
			t.Errorf("group after rebuild: %v", got)
		}
		l := f.s.NewLoader()
		u, _ := l.UserByName(f.ctx, "alice")
		if k, err := l.Karma(f.ctx, u); err != nil || k != 1 {
			t.Errorf("alice's karma after rebuild = %d, %v; want 1", k, err)
		}
		// Votes after a rebuild still move the rankings (the version guard lets them through).
		f.vote(bob, p1.ID, 1)
		f.vote(f.user("carol"), p1.ID, 1)
		if got := f.ids(store.SortTop, "", 10); got[0] != p1.ID {
			t.Errorf("top after rebuild and votes: %v", got)
		}
	})
}

// TestSetPostGroupsRepeatCompletesARemoval repeats a removal whose derived writes were lost: the
// repeat finds nothing to change in the post but still takes it out of the group's rankings.
func TestSetPostGroupsRepeatCompletesARemoval(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix})
		alice := f.user("alice")
		p := f.post(alice, "p", "a", "b")
		// The post hash says it left group a, but group a's rankings never heard of it: as if
		// the process died between the script and the derived writes.
		if err := b.Client.HSet(f.ctx, prefix+"{p:"+p.Key()+"}", "groups", "b", "ver", p.Version+1).Err(); err != nil {
			t.Fatal(err)
		}
		if n := len(f.ids(store.SortNew, "a", 10)); n != 1 {
			t.Fatalf("setup: group a holds %d", n)
		}
		if _, err := f.s.SetPostGroups(f.ctx, uk(alice), p.ID, nil, []string{"a"}); err != nil {
			t.Fatal(err)
		}
		if n := len(f.ids(store.SortNew, "a", 10)); n != 0 {
			t.Fatalf("group a still holds the post after the repeat")
		}
	})
}
