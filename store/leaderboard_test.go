package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// rankedNames renders leaderboard entries as "name:rank:karma".
func rankedNames(rs []*store.Ranked) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%s:%d:%d", r.User.Name, r.Rank, r.Karma)
	}
	return out
}

func karmaOf(t *testing.T, s *store.Store, id string) int {
	t.Helper()
	k, err := s.NewLoader().Karma(context.Background(), &store.User{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKarmaUnderConcurrentVotes has many voters change their votes on two authors' posts at the
// same time and checks that each author's karma is exactly the net of the final votes.
func TestKarmaUnderConcurrentVotes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		authors := []string{"amy", "ben"}
		signUp(t, s, authors...)
		var posts []string
		owner := map[string]string{}
		for _, a := range authors {
			for i := range 3 {
				id := post(t, s, a, fmt.Sprintf("%s %d", a, i))
				posts = append(posts, id)
				owner[id] = a
			}
		}
		const voters = 12
		final := make([]map[string]int, voters)
		var wg sync.WaitGroup
		for v := range voters {
			name := fmt.Sprintf("voter%d", v)
			signUp(t, s, name)
			final[v] = map[string]int{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(v), 3))
				for range 25 {
					p := posts[r.IntN(len(posts))]
					dir := r.IntN(3) - 1
					if _, err := s.VotePost(ctx, uk(name), p, dir); err != nil {
						t.Error(err)
						return
					}
					final[v][p] = dir
				}
			}()
		}
		wg.Wait()
		want := map[string]int{}
		for _, votes := range final {
			for p, dir := range votes {
				want[owner[p]] += dir
			}
		}
		lb, err := s.NewLoader().Leaderboard(ctx, store.Window{First: 100}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range authors {
			if got := karmaOf(t, s, "user:"+a); got != want[a] {
				t.Errorf("%s has karma %d, want %d", a, got, want[a])
			}
			i := slices.IndexFunc(lb.Items, func(r *store.Ranked) bool { return r.User.Name == a })
			if i < 0 || lb.Items[i].Karma != want[a] {
				t.Errorf("%s on the leaderboard: %v, want karma %d", a, rankedNames(lb.Items), want[a])
			}
		}
	})
}

func TestKarmaRecordIsRepeatSafe(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		signUp(t, s, "amy")
		steps := []struct {
			item    string
			net     int
			version int64
			want    int
		}{
			{"post:1", 5, 3, 5},
			{"post:1", 5, 3, 5}, // repeated
			{"post:1", 1, 2, 5}, // late, older version
			{"post:1", 2, 4, 2}, // newer
			{"comment:1:1", -1, 1, 1},
			{"comment:1:1", -1, 1, 1},
			{"post:2", 0, 2, 1},
		}
		for i, st := range steps {
			if err := s.RecordKarma(ctx, "amy", st.item, st.net, st.version); err != nil {
				t.Fatal(err)
			}
			if got := karmaOf(t, s, "user:amy"); got != st.want {
				t.Errorf("step %d: karma %d, want %d", i, got, st.want)
			}
		}
		lb, err := s.NewLoader().Leaderboard(ctx, store.Window{First: 10}, nil)
		if err != nil || !slices.Equal(rankedNames(lb.Items), []string{"amy:1:1"}) {
			t.Errorf("leaderboard %v %v", rankedNames(lb.Items), err)
		}
	})
}

func TestLeaderboardRanksAndTies(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		signUp(t, s, "dan", "Ann", "cat", "bob", "eve", "vo1", "vo2")
		give := map[string][]int{"ann": {1, 1}, "bob": {1, 1}, "dan": {1, -1, 1}, "eve": {-1}}
		var annPost string
		for author, votes := range give {
			p := post(t, s, author, "by "+author)
			if author == "ann" {
				annPost = p
			}
			// Spread the votes over two posts so that karma sums items.
			p2 := post(t, s, author, "more by "+author)
			for i, dir := range votes {
				target := p
				if i >= 2 {
					target = p2
				}
				if _, err := s.VotePost(ctx, uk(fmt.Sprintf("vo%d", i%2+1)), target, dir); err != nil {
					t.Fatal(err)
				}
			}
		}
		// ann 2, bob 2, dan 1 (1 − 1 + 1), cat 0, vo1 0, vo2 0, eve −1; ties by name.
		want := []string{"Ann:1:2", "bob:2:2", "dan:3:1", "cat:4:0", "vo1:5:0", "vo2:6:0", "eve:7:-1"}
		var got []string
		after := ""
		for {
			p, err := s.NewLoader().Leaderboard(ctx, store.Window{First: 3, After: after}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != 7 {
				t.Errorf("total %d, want 7", p.Total)
			}
			got = append(got, rankedNames(p.Items)...)
			if !p.HasNext {
				break
			}
			after = p.EndCursor()
		}
		if !slices.Equal(got, want) {
			t.Errorf("leaderboard %v, want %v", got, want)
		}
		for i, n := range []string{"ann", "bob", "dan", "cat", "vo1", "vo2", "eve"} {
			rank, ok, err := s.NewLoader().Rank(ctx, &store.User{ID: "user:" + n})
			if err != nil || !ok || rank != i+1 {
				t.Errorf("rank of %s: %d %v %v, want %d", n, rank, ok, err, i+1)
			}
		}

		around := []struct {
			user   string
			radius int
			want   []string
		}{
			{"user:dan", 1, []string{"bob:2:2", "dan:3:1", "cat:4:0"}},
			{"user:ann", 2, []string{"Ann:1:2", "bob:2:2", "dan:3:1"}},
			{"user:eve", 1, []string{"vo2:6:0", "eve:7:-1"}},
			{"user:cat", 0, []string{"cat:4:0"}},
		}
		for _, tc := range around {
			p, err := s.NewLoader().LeaderboardAround(ctx, uk(tc.user), tc.radius, nil)
			if err != nil || !slices.Equal(rankedNames(p.Items), tc.want) {
				t.Errorf("around %s ±%d: %v %v, want %v", tc.user, tc.radius, rankedNames(p.Items), err, tc.want)
			}
		}
		bad := []struct {
			user   string
			radius int
			kind   store.Kind
		}{
			{"user:dan", 51, store.KindInvalid},
			{"user:dan", -1, store.KindInvalid},
			{"user:nobody", 2, store.KindNotFound},
			{"post:1", 2, store.KindInvalid},
		}
		for _, tc := range bad {
			if _, err := s.NewLoader().LeaderboardAround(ctx, uk(tc.user), tc.radius, nil); !store.IsKind(err, tc.kind) {
				t.Errorf("around %s ±%d: %v, want kind %d", tc.user, tc.radius, err, tc.kind)
			}
		}

		// Karma stays when a post is deleted.
		if err := s.DeletePost(ctx, "ann", annPost); err != nil {
			t.Fatal(err)
		}
		if k := karmaOf(t, s, "user:ann"); k != 2 {
			t.Errorf("ann's karma after deleting her post: %d, want 2", k)
		}
	})
}

func TestKarmaCountsCommentVotes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{})
		author, commenter := f.user("author"), f.user("commenter")
		voters := []string{f.user("voter1"), f.user("voter2"), f.user("voter3")}
		p := f.post(author, "p")
		c, err := f.s.CreateComment(f.ctx, uk(commenter), store.NewComment{PostID: p.ID, Body: "a comment"})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i, v := range voters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dir := 1
				if i == 2 {
					dir = -1
				}
				for range 2 { // every vote sent twice: karma counts it once
					if _, err := f.s.VoteComment(f.ctx, uk(v), c.ID, dir); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		f.vote(voters[0], p.ID, 1) // a post vote goes to the post's author, not the commenter
		l := f.s.NewLoader()
		for who, want := range map[string]int{"commenter": 1, "author": 1} {
			u, err := l.UserByName(f.ctx, who)
			if err != nil {
				t.Fatal(err)
			}
			k, err := l.Karma(f.ctx, u)
			if err != nil || k != want {
				t.Errorf("karma of %s = %d, %v; want %d", who, k, err, want)
			}
		}
	})
}

// Rebuild derives the karma of comments as it does that of posts: after the author's karma
// records are lost (a failover that kept the thread's slot and lost the author's), it records
// every live comment's net votes again, and the leaderboard follows; a second rebuild changes
// nothing.
func TestRebuildRecordsCommentKarma(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix, WriteLimit: -1})
		alice, bob := f.user("alice"), f.user("bob")
		voters := []string{f.user("voter1"), f.user("voter2"), f.user("voter3")}
		p := f.post(bob, "p")
		var cs []*store.Comment
		for _, body := range []string{"one", "two"} {
			c, err := f.s.CreateComment(f.ctx, uk(alice), store.NewComment{PostID: p.ID, Body: body})
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, c)
		}
		for i, v := range voters { // one: +2, two: -1 → alice's karma 1
			c, dir := cs[0], 1
			if i == 2 {
				c, dir = cs[1], -1
			}
			if _, err := f.s.VoteComment(f.ctx, uk(v), c.ID, dir); err != nil {
				t.Fatal(err)
			}
		}
		f.vote(alice, p.ID, 1) // bob's karma 1, from his post
		check := func(when string) {
			t.Helper()
			l := f.s.NewLoader()
			for who, want := range map[string]int{"alice": 1, "bob": 1} {
				u, err := l.UserByName(f.ctx, who)
				if err != nil {
					t.Fatal(err)
				}
				if k, err := l.Karma(f.ctx, u); err != nil || k != want {
					t.Errorf("%s: karma of %s = %d, %v; want %d", when, who, k, err, want)
				}
			}
			lb, err := l.Leaderboard(f.ctx, store.Window{First: 2}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range lb.Items {
				got = append(got, fmt.Sprintf("%s:%d", r.User.Key(), r.Karma))
			}
			if want := []string{"alice:1", "bob:1"}; !slices.Equal(got, want) {
				t.Errorf("%s: leaderboard %v, want %v", when, got, want)
			}
		}
		check("before")
		for _, k := range []string{prefix + "{u:alice}:karma", prefix + "{u:alice}:karma:items"} {
			if err := b.Client.Del(f.ctx, k).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			if _, err := f.s.Rebuild(f.ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.RebuildUsers(f.ctx); err != nil {
				t.Fatal(err)
			}
			check("after rebuild")
		}
	})
}

// After a user's slot comes back older than the leaderboard's (a restore or a failover that kept
// {lb}'s later writes and lost the user's), RebuildUsers puts the leaderboard back in step with
// the karma the user's records hold: its entry wins over one the lost writes left with a higher
// version. Here the karma comes from a deleted post, whose tombstone keeps no votes, so the
// user's records are all there is to derive it from.
func TestRebuildUsersLeaderboardOverAStaleEntry(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix, WriteLimit: -1})
		alice := f.user("alice")
		p := f.post(alice, "p")
		for _, v := range []string{"voter1", "voter2", "voter3"} {
			f.vote(f.user(v), p.ID, 1)
		}
		if err := f.s.DeletePost(f.ctx, uk(alice), p.ID); err != nil {
			t.Fatal(err)
		}
		// alice's slot as a snapshot taken after the first vote holds it.
		if err := b.Client.HSet(f.ctx, prefix+"{u:alice}:karma", "total", 1, "ver", 1).Err(); err != nil {
			t.Fatal(err)
		}
		if err := b.Client.HSet(f.ctx, prefix+"{u:alice}:karma:items", p.ID, "2 1").Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Rebuild(f.ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RebuildUsers(f.ctx); err != nil {
			t.Fatal(err)
		}
		l := f.s.NewLoader()
		u, err := l.UserByName(f.ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		k, err := l.Karma(f.ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		around, err := l.LeaderboardAround(f.ctx, uk(alice), 0, nil)
		if err != nil || len(around.Items) != 1 {
			t.Fatalf("leaderboardAround: %+v, %v", around, err)
		}
		if k != 1 || around.Items[0].Karma != k {
			t.Fatalf("karma %d, leaderboard %d: want both 1", k, around.Items[0].Karma)
		}
		// A vote recorded afterwards still moves the entry.
		q := f.post(alice, "q")
		f.vote(f.user("voter4"), q.ID, -1)
		around, err = f.s.NewLoader().LeaderboardAround(f.ctx, uk(alice), 0, nil)
		if err != nil || len(around.Items) != 1 || around.Items[0].Karma != 0 {
			t.Fatalf("after a later vote: %+v, %v; want karma 0", around, err)
		}
	})
}
