package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// tickingClock returns a clock that moves 1 ms forward on every reading, so that times recorded
// one after the other are distinct and ordered.
func tickingClock() func() time.Time {
	base := time.Now().Truncate(time.Second)
	var n atomic.Int64
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Millisecond) }
}

// signUp creates users and returns their global ids, in order.
func signUp(t *testing.T, s *store.Store, names ...string) []string {
	t.Helper()
	ids := make([]string, len(names))
	for i, n := range names {
		sess, err := s.SignUp(context.Background(), n, "password1")
		if err != nil {
			t.Fatalf("sign up %s: %v", n, err)
		}
		ids[i] = sess.User.ID
	}
	return ids
}

// key returns the user key of a user id.
func key(t *testing.T, id string) store.UserKey {
	t.Helper()
	k, err := store.ParseUserID(id)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func userNames(users []*store.User) []string {
	out := make([]string, len(users))
	for i, u := range users {
		out[i] = u.Name
	}
	return out
}

func TestFollowAndUnfollow(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock()})
		ids := signUp(t, s, "Alice", "bob", "carol")
		alice, bob, carol := ids[0], ids[1], ids[2]

		for range 2 { // the second round checks idempotence
			for _, target := range []string{bob, carol} {
				u, err := s.Follow(ctx, "alice", uk(target))
				if err != nil {
					t.Fatalf("follow %s: %v", target, err)
				}
				if u.ID != target {
					t.Fatalf("follow returned %s, want %s", u.ID, target)
				}
			}
		}
		if _, err := s.Follow(ctx, "bob", uk(alice)); err != nil {
			t.Fatal(err)
		}

		errCases := []struct {
			name   string
			target string
			kind   store.Kind
		}{
			{"yourself", alice, store.KindInvalid},
			{"unknown user", "user:nobody", store.KindNotFound},
			{"malformed id", "post:1", store.KindInvalid},
			{"garbage", "??", store.KindInvalid},
		}
		for _, tc := range errCases {
			if _, err := s.Follow(ctx, "alice", uk(tc.target)); !store.IsKind(err, tc.kind) {
				t.Errorf("follow %s: got %v, want kind %d", tc.name, err, tc.kind)
			}
			if _, err := s.Unfollow(ctx, "alice", uk(tc.target)); !store.IsKind(err, tc.kind) {
				t.Errorf("unfollow %s: got %v, want kind %d", tc.name, err, tc.kind)
			}
		}

		l := s.NewLoader()
		following, err := l.Following(ctx, uk(alice), store.Window{First: 20}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := userNames(following.Items), []string{"carol", "bob"}; !slices.Equal(got, want) {
			t.Errorf("alice follows %v, want %v (most recent first)", got, want)
		}
		followers, err := l.Followers(ctx, uk(alice), store.Window{First: 20}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := userNames(followers.Items); !slices.Equal(got, []string{"bob"}) {
			t.Errorf("alice's followers %v, want [bob]", got)
		}
		checkFollow := func(a, b string, want bool) {
			t.Helper()
			got, err := s.NewLoader().Follows(ctx, uk(a), uk(b))
			if err != nil || got != want {
				t.Errorf("Follows(%s, %s) = %v, %v; want %v", a, b, got, err, want)
			}
		}
		checkFollow(alice, bob, true)
		checkFollow(bob, alice, true)
		checkFollow(carol, alice, false)
		checkFollow("", alice, false)
		checkCounts(t, s, alice, 1, 2)
		checkCounts(t, s, carol, 1, 0)

		for range 2 {
			if _, err := s.Unfollow(ctx, "alice", uk(bob)); err != nil {
				t.Fatal(err)
			}
		}
		checkFollow(alice, bob, false)
		checkCounts(t, s, alice, 1, 1)
		checkCounts(t, s, bob, 0, 1)
	})
}

// checkCounts checks a user's follower and following counts.
func checkCounts(t *testing.T, s *store.Store, id string, followers, following int) {
	t.Helper()
	ctx := context.Background()
	u := &store.User{ID: id}
	l := s.NewLoader()
	f1, err1 := l.FollowerCount(ctx, u)
	f2, err2 := l.FollowingCount(ctx, u)
	if err1 != nil || err2 != nil || f1 != followers || f2 != following {
		t.Errorf("%s: followers %d following %d (%v %v); want %d and %d", id, f1, f2, err1, err2, followers, following)
	}
}

func TestFollowersPaging(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock()})
		names := []string{"star"}
		for i := range 7 {
			names = append(names, fmt.Sprintf("fan%d", i))
		}
		ids := signUp(t, s, names...)
		for i := 1; i < len(ids); i++ {
			if _, err := s.Follow(ctx, key(t, ids[i]), uk(ids[0])); err != nil {
				t.Fatal(err)
			}
		}
		// fan3 unfollows and follows again: it becomes the most recent follower.
		if _, err := s.Unfollow(ctx, "fan3", uk(ids[0])); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Follow(ctx, "fan3", uk(ids[0])); err != nil {
			t.Fatal(err)
		}
		// fan5 (the cursor's own item) and fan2 (not yet seen) leave between the pages: the next
		// page goes on after fan5 all the same.
		want := []string{"fan3", "fan6", "fan5", "fan4", "fan1", "fan0"}
		var got []string
		after := ""
		for pages := 0; ; pages++ {
			p, err := s.NewLoader().Followers(ctx, uk(ids[0]), store.Window{First: 3, After: after}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if wantTotal := map[bool]int{true: 7, false: 5}[pages == 0]; p.Total != wantTotal {
				t.Errorf("page %d: total %d, want %d", pages, p.Total, wantTotal)
			}
			if p.HasPrev != (pages > 0) {
				t.Errorf("page %d: hasPrev %v", pages, p.HasPrev)
			}
			got = append(got, userNames(p.Items)...)
			if pages == 0 {
				for _, n := range []string{"fan5", "fan2"} {
					if _, err := s.Unfollow(ctx, uk(n), uk(ids[0])); err != nil {
						t.Fatal(err)
					}
				}
			}
			if !p.HasNext {
				break
			}
			after = p.EndCursor()
		}
		if !slices.Equal(got, want) {
			t.Errorf("followers by page %v, want %v", got, want)
		}
		if _, err := s.NewLoader().Followers(ctx, uk(ids[0]), store.Window{First: 3, After: "bogus"}, nil); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("bad cursor: %v", err)
		}
		if _, err := s.NewLoader().Followers(ctx, uk(ids[0]), store.Window{First: 101}, nil); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("first 101: %v", err)
		}
	})
}

// TestFollowStorm runs concurrent follows and unfollows over a few pairs and checks that both
// sides of every relation agree afterwards, that the counts are exact and that each relation
// reaches the follower's feed one way (push or pull) exactly.
func TestFollowStorm(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		const limit = 1 // some relations push, some pull
		s := b.NewStore(t, store.Options{Feed: store.FeedOptions{FanoutLimit: limit}})
		names := []string{"usr0", "usr1", "usr2", "usr3"}
		ids := signUp(t, s, names...)
		for round := range 3 {
			storm(t, s, names, ids, uint64(round))
			checkGraph(t, s, names, limit)
		}
	})
}

// storm has 12 goroutines follow and unfollow at random among users, 50 times each.
func storm(t *testing.T, s *store.Store, names, ids []string, seed uint64) {
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), seed))
			for range 50 {
				a, b := r.IntN(len(names)), r.IntN(len(names))
				if a == b {
					continue
				}
				var err error
				if r.IntN(2) == 0 {
					_, err = s.Follow(ctx, uk(names[a]), uk(ids[b]))
				} else {
					_, err = s.Unfollow(ctx, uk(names[a]), uk(ids[b]))
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// checkGraph checks the invariants of the follow graph among users.
func checkGraph(t *testing.T, s *store.Store, names []string, limit int) {
	t.Helper()
	ctx := context.Background()
	graphs := make(map[string]store.Graph)
	for _, n := range names {
		g, err := s.GraphOf(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		graphs[n] = g
	}
	for _, a := range names {
		for _, b := range names {
			fa := slices.Contains(graphs[a].Following, b)
			fb := slices.Contains(graphs[b].Followers, a)
			if fa != fb {
				t.Errorf("%s follows %s: %v on the follower's side, %v on the followee's", a, b, fa, fb)
			}
			push := slices.Contains(graphs[b].Push, a)
			pull := slices.Contains(graphs[a].Pull, b)
			if fa && push == pull || !fa && (push || pull) {
				t.Errorf("%s → %s: following %v, push %v, pull %v", a, b, fa, push, pull)
			}
		}
		if len(graphs[a].Push) > limit {
			t.Errorf("%s pushes to %d followers, more than %d", a, len(graphs[a].Push), limit)
		}
		checkCounts(t, s, "user:"+a, len(graphs[a].Followers), len(graphs[a].Following))
	}
}

func TestInterruptedFollowCompletedByRetry(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		ids := signUp(t, s, "ann", "ben")
		names := []string{"ann", "ben"}

		// A follow cut off after the follower's side: the followee's side lags until a retry.
		if _, err := s.FollowFirstStep(ctx, "ann", "ben", true); err != nil {
			t.Fatal(err)
		}
		if g, _ := s.GraphOf(ctx, "ben"); len(g.Followers) != 0 {
			t.Fatalf("followee's side written by the first step: %v", g.Followers)
		}
		if _, err := s.Follow(ctx, "ann", uk(ids[1])); err != nil {
			t.Fatal(err)
		}
		checkGraph(t, s, names, 1000)
		if g, _ := s.GraphOf(ctx, "ben"); !slices.Equal(g.Followers, []string{"ann"}) {
			t.Fatalf("ben's followers %v after the retry", g.Followers)
		}

		// The same for an unfollow.
		if _, err := s.FollowFirstStep(ctx, "ann", "ben", false); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Unfollow(ctx, "ann", uk(ids[1])); err != nil {
			t.Fatal(err)
		}
		checkGraph(t, s, names, 1000)
		if g, _ := s.GraphOf(ctx, "ben"); len(g.Followers) != 0 {
			t.Fatalf("ben's followers %v after the unfollow retry", g.Followers)
		}
	})
}

// TestLateMirrorWritesLose delivers the followee-side steps of follows and unfollows late, after
// newer changes of the same relation, and twice: the newer state must stay.
func TestLateMirrorWritesLose(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Feed: store.FeedOptions{FanoutLimit: 1}})
		names := []string{"ann", "ben", "cat"}
		ids := signUp(t, s, names...)
		post(t, s, "ben", "by ben")
		run := func(rest func() error) {
			t.Helper()
			for range 2 {
				if err := rest(); err != nil {
					t.Fatal(err)
				}
			}
		}

		// A follow whose mirror arrives after a complete unfollow.
		lateFollow, err := s.FollowFirstStep(ctx, "ann", "ben", true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Unfollow(ctx, "ann", uk(ids[1])); err != nil {
			t.Fatal(err)
		}
		run(lateFollow)
		checkGraph(t, s, names, 1)
		if g, _ := s.GraphOf(ctx, "ann"); len(g.Feed)+len(g.Following) != 0 {
			t.Errorf("a late follow left %+v", g)
		}

		// An unfollow whose mirror arrives after a complete follow (pulled: cat fills ben's push set).
		if _, err := s.Follow(ctx, "cat", uk(ids[1])); err != nil {
			t.Fatal(err)
		}
		lateUnfollow, err := s.FollowFirstStep(ctx, "ann", "ben", false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Follow(ctx, "ann", uk(ids[1])); err != nil {
			t.Fatal(err)
		}
		run(lateUnfollow)
		checkGraph(t, s, names, 1)
		if g, _ := s.GraphOf(ctx, "ann"); !slices.Equal(g.Pull, []string{"ben"}) {
			t.Errorf("ann pulls %v after a late unfollow, want [ben]", g.Pull)
		}
		checkFeed(t, s, ids[0], "by ben")

		// A mode decided for an older state of the relation arrives last.
		if err := s.ApplyFollowMode(ctx, "ann", "ben", 1, "push"); err != nil {
			t.Fatal(err)
		}
		checkGraph(t, s, names, 1)
	})
}

func TestRebuildUsers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		names := []string{"ann", "ben", "cat"}
		ids := signUp(t, s, names...)
		post, err := s.CreatePost(ctx, "ben", store.NewPost{Title: "hello"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.VotePost(ctx, "ann", post.ID, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Follow(ctx, "cat", uk(ids[0])); err != nil {
			t.Fatal(err)
		}
		// Cut-off writes: a follow and an unfollow that reached one side only, and lost indexes.
		if _, err := s.FollowFirstStep(ctx, "ann", "ben", true); err != nil {
			t.Fatal(err)
		}
		if _, err := s.FollowFirstStep(ctx, "cat", "ann", false); err != nil {
			t.Fatal(err)
		}
		if err := s.DropDerivedUserIndexes(ctx); err != nil {
			t.Fatal(err)
		}

		st, err := s.RebuildUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Users != 3 || st.Follows != 2 {
			t.Errorf("rebuild stats %+v, want 3 users and 2 follows", st)
		}
		checkGraph(t, s, names, 1000)
		l := s.NewLoader()
		lb, err := l.Leaderboard(ctx, store.Window{First: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := rankedNames(lb.Items); !slices.Equal(got, []string{"ben:1:1", "ann:2:0", "cat:3:0"}) {
			t.Errorf("leaderboard after rebuild %v", got)
		}
		users, err := l.SuggestUsers(ctx, "a", 10, nil)
		if err != nil || !slices.Equal(userNames(users), []string{"ann"}) {
			t.Errorf("suggest after rebuild: %v %v", userNames(users), err)
		}
		feed, err := l.Feed(ctx, uk(ids[0]), store.Window{First: 10}, nil)
		if err != nil || len(feed.Items) != 1 || feed.Items[0].ID != post.ID {
			t.Errorf("ann's feed after rebuild: %+v %v", feed, err)
		}
	})
}

func TestFeedIncludesFollowedAuthorsOnly(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		for _, name := range []string{"alice", "bob", "carol"} {
			if _, err := s.SignUp(ctx, name, "password1"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Follow(ctx, "bob", "alice"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			author string
			want   bool
		}{
			{"user:alice", true},
			{"user:carol", false},
			{"user:bob", false}, // one's own posts are not in one's feed
			{"", false},
		} {
			in, err := s.NewLoader().FeedIncludes(ctx, "bob", uk(tc.author))
			if err != nil || in != tc.want {
				t.Errorf("author %q: FeedIncludes = %v, %v; want %v", tc.author, in, err, tc.want)
			}
		}
	})
}

// After a follower's slot comes back older than the followee's (a restore or a failover that
// kept the followee's copy of a later follow and lost the follower's own record of it),
// RebuildUsers makes the followee's side agree with the follower's again: the copy's guard held
// a version the follower's sequence had not reached, and the rebuild's write of the relation
// lost to it.
func TestRebuildUsersFollowOverAStaleCopy(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix})
		names := []string{"ann", "ben", "cat"}
		ids := signUp(t, s, names...)
		if _, err := s.Follow(ctx, "ann", uk(ids[1])); err != nil { // ann → ben: ann's sequence 1
			t.Fatal(err)
		}
		if _, err := s.Follow(ctx, "cat", uk(ids[1])); err != nil {
			t.Fatal(err)
		}
		// ann's slot as it was before her follow; ben's keeps its copy.
		if err := b.Client.ZRem(ctx, prefix+"{u:ann}:following", "ben").Err(); err != nil {
			t.Fatal(err)
		}
		if err := b.Client.Set(ctx, prefix+"{u:ann}:following:seq", 0, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RebuildUsers(ctx); err != nil {
			t.Fatal(err)
		}
		checkGraph(t, s, names, 1000)
		l := s.NewLoader()
		ben, err := l.UserByName(ctx, "ben")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := l.FollowerCount(ctx, ben); err != nil || n != 1 {
			t.Fatalf("ben's followers after rebuild: %d, %v; want 1 (cat)", n, err)
		}
		// ann follows ben again, and it holds on both sides.
		if _, err := s.Follow(ctx, "ann", uk(ids[1])); err != nil {
			t.Fatal(err)
		}
		checkGraph(t, s, names, 1000)
	})
}

// TestRebuildKeepsAFollowChangedWhileItRuns: a rebuild derives every follow from the follower's
// side as it is when it writes, not as it read it: an unfollow made between the rebuild's listing
// of the follower's followees and its step for the relation stays made, and so does a follow made
// between its check that a follower listed by the followee no longer follows them and its step.
// The rebuild wrote the relation as it had read it: it brought back the unfollowed user (their
// posts in the feed, a follower more) and undid the new follow.
func TestRebuildKeepsAFollowChangedWhileItRuns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before bool      // ann follows ben before the rebuild
		after  [2]string // the command of the rebuild's the change lands after: its name, how it ends
		change func(ctx context.Context, s *store.Store) (*store.User, error)
	}{
		{"an unfollow after the followees' listing", true, [2]string{"zrange", "{u:ann}:following 0 -1"},
			func(ctx context.Context, s *store.Store) (*store.User, error) { return s.Unfollow(ctx, "ann", "ben") }},
		{"a follow after the check of a stale follower", false, [2]string{"zscore", "{u:ann}:following ben"},
			func(ctx context.Context, s *store.Store) (*store.User, error) { return s.Follow(ctx, "ann", "ben") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				prefix := storetest.Prefix()
				s := b.NewStore(t, store.Options{Prefix: prefix})
				signUp(t, s, "ann", "ben")
				if _, err := s.Follow(ctx, "ann", "ben"); err != nil {
					t.Fatal(err)
				}
				if !tc.before {
					if _, err := s.Unfollow(ctx, "ann", "ben"); err != nil {
						t.Fatal(err)
					}
					// ben's followers still name ann, as an unfollow whose mirror was cut off
					// leaves them: the rebuild checks her side, and finds no follow.
					if err := b.Client.ZAdd(ctx, prefix+"{u:ben}:followers", rdb.Z{Score: 1, Member: "ann"}).Err(); err != nil {
						t.Fatal(err)
					}
				}
				hook := &afterFirst{
					match: func(args string) bool {
						return strings.HasPrefix(args, tc.after[0]+" ") && strings.HasSuffix(args, tc.after[1])
					},
					then: func() {
						if _, err := tc.change(ctx, s); err != nil {
							t.Error(err)
						}
					},
				}
				rb := b.Hooked(t, hook.hook())
				if _, err := rb.NewStore(t, store.Options{Prefix: prefix}).RebuildUsers(ctx); err != nil {
					t.Fatal(err)
				}
				if !hook.done.Load() {
					t.Fatalf("the rebuild sent no %q", tc.after)
				}
				want := !tc.before // the change flipped it
				l := s.NewLoader()
				follows, err := l.Follows(ctx, "ann", "ben")
				if err != nil {
					t.Fatal(err)
				}
				ben, err := l.User(ctx, "ben")
				if err != nil || ben == nil {
					t.Fatal(ben, err)
				}
				n, err := l.FollowerCount(ctx, ben)
				if err != nil {
					t.Fatal(err)
				}
				if follows != want || (n == 1) != want || n > 1 {
					t.Fatalf("after the rebuild: ann follows ben %v, ben has %d followers; want %v", follows, n, want)
				}
			})
		})
	}
}
