package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/agora/agora/internal/rdb"
)

// Karma and the karma leaderboard.
//
// A user's karma is the sum of the net votes (up − down) of their posts and comments. The author's
// slot keeps the net of every item as last recorded, with the item's version ({u:a}:karma:items),
// and the total ({u:a}:karma). Recording an item's new net replaces the stored one only when its
// version is newer and moves the total by the exact difference, in one script: concurrent votes,
// recorded in any order and any number of times, leave the total equal to the sum of the items'
// latest nets. The leaderboard ({lb}:karma) is derived from the total with an absolute ZADD
// guarded by the karma version, never a ZINCRBY.
//
// Every user is on the leaderboard from sign-up, with karma 0. Equal karma ranks by user key (the
// lower-cased name), ascending: the set is scored by minus the karma and read in ascending order,
// so the order of the list and ZRANK agree and every rank is distinct. Karma earned by a post
// stays when the post is deleted, as on Reddit: deleting removes content, not the votes it got.

// MaxLeaderboardRadius is the most neighbours leaderboardAround returns on each side.
const MaxLeaderboardRadius = 50

// leaderboardTag is the cursor list tag of the leaderboard.
const leaderboardTag = "lb"

// Ranked is a user's place on the karma leaderboard.
type Ranked struct {
	User  *User
	Rank  int // 1-based
	Karma int
}

// recordKarma records that the item with global id itemKey (a post or comment by the user
// authorKey) has net votes at the item's version, updates the author's karma and then their place
// on the leaderboard. Every path that changes the votes of a post or comment calls it after its
// vote script, with the net and version that script left; calling it again, or with an older
// version, changes nothing. also are reads that ride in the round trip of the karma scripts,
// after them.
func (s *Store) recordKarma(ctx context.Context, authorKey, itemKey string, net int, version int64, also ...op) error {
	return s.recordKarmas(ctx, []karmaRecord{{author: authorKey, item: itemKey, net: net, version: version}}, also...)
}

// karmaRecord is one item's net votes at its version, for its author's karma (recordKarmas).
type karmaRecord struct {
	author, item string
	net          int
	version      int64
}

// recordKarmas is recordKarma of many items at once: their karma scripts in one pipeline, then
// each author's place on the leaderboard from the newest total their replies saw, in another.
func (s *Store) recordKarmas(ctx context.Context, recs []karmaRecord, also ...op) error {
	if len(recs) == 0 {
		return nil
	}
	calls := make([]scriptCall, len(recs))
	for i, r := range recs {
		calls[i] = scriptCall{name: "karma", keys: []string{s.k.karma(r.author), s.k.karmaItems(r.author), s.k.user(r.author)},
			args: []any{r.item, r.version, r.net}}
	}
	replies, err := s.runScripts(ctx, calls, also...)
	if err != nil {
		return err
	}
	type totalAt struct{ total, ver int64 }
	newest := make(map[string]totalAt, 1)
	var authors []string
	for i, reply := range replies {
		arr, err := replyArrayLen("karma", reply, 2)
		if err != nil {
			return err
		}
		total, err := replyInt("karma", arr[0])
		if err != nil {
			return err
		}
		kver, err := replyInt("karma", arr[1])
		if err != nil {
			return err
		}
		if kver < 0 {
			continue // a deleted account's: off the leaderboard for good
		}
		a := recs[i].author
		cur, ok := newest[a]
		if !ok {
			authors = append(authors, a)
		}
		if !ok || kver > cur.ver {
			newest[a] = totalAt{total, kver}
		}
	}
	ranks := make([]scriptCall, len(authors))
	for i, a := range authors {
		ranks[i] = s.leaderboardCall(a, newest[a].total, newest[a].ver)
	}
	if err := s.runMany(ctx, ranks); err != nil {
		return fmt.Errorf("rank %s: %w", authors[0], err)
	}
	return nil
}

// leaderboardCall sets a user's karma on the leaderboard, guarded by the karma version.
func (s *Store) leaderboardCall(uid string, karma, version int64) scriptCall {
	return indexCall(s.k.leaderboardVer(), uid, version, true, []string{s.k.leaderboard()}, []any{-karma})
}

// registerUser puts a new user into the name index for autocomplete (and so the users' search
// index) and on the leaderboard with karma 0 (version 0, so any karma recorded since wins). A
// repair's (repair) indexes the user's words again when the name index held the name already
// (see registerRepair).
func (s *Store) registerUser(ctx context.Context, uid string, repair bool) error {
	if err := s.registerNames(ctx, s.k.userNames(), true, repair, uid); err != nil {
		return fmt.Errorf("register user %s: %w", uid, err)
	}
	if err := s.runMany(ctx, []scriptCall{s.leaderboardCall(uid, 0, 0)}); err != nil {
		return fmt.Errorf("register user %s: %w", uid, err)
	}
	return nil
}

// Karma returns u's karma.
func (l *Loader) Karma(ctx context.Context, u *User) (int, error) {
	v, err := l.hashField(ctx, l.s.k.karma(string(u.Key())), "total")
	if err != nil {
		return 0, err
	}
	n, _ := strconv.Atoi(v)
	return n, nil
}

// Rank returns u's 1-based place on the leaderboard; ok is false when u is not on it.
func (l *Loader) Rank(ctx context.Context, u *User) (rank int, ok bool, err error) {
	r, ok, err := l.zrank(ctx, l.s.k.leaderboard(), string(u.Key()))
	return int(r) + 1, ok, err
}

// Leaderboard loads one page of the karma leaderboard, highest karma first, and what needs says
// the response reads of its users.
func (l *Loader) Leaderboard(ctx context.Context, w Window, needs func() *Needs) (*Page[*Ranked], error) {
	sp, err := w.decode(leaderboardTag)
	if err != nil {
		return nil, err
	}
	rp, err := l.page(ctx, l.s.k.leaderboard(), false, sp)
	if err != nil {
		return nil, err
	}
	l.Walk(ctx, Items{Kind: ItemUser, Keys: rp.members}, evalNeeds(needs))
	p, err := l.ranked(ctx, rp)
	if err != nil {
		return nil, err
	}
	p.Total, p.HasNext, p.HasPrev = rp.total, rp.hasNext, rp.hasPrev
	return p, nil
}

// LeaderboardAround loads the user user and up to radius users on each side of
// them on the leaderboard, in leaderboard order, and what needs says the response reads of them.
// It is empty when the user is not ranked.
func (l *Loader) LeaderboardAround(ctx context.Context, user UserKey, radius int, needs func() *Needs) (*Page[*Ranked], error) {
	uid := string(user)
	if !validUserName(uid) {
		return nil, invalidf("malformed user %q", truncate(uid, 40))
	}
	if radius < 0 || radius > MaxLeaderboardRadius {
		return nil, invalidf("radius must be between 0 and %d (got %d)", MaxLeaderboardRadius, radius)
	}
	// The user and the window around them in one round trip.
	around := l.s.scripts.get("around")
	key := l.s.k.leaderboard()
	calls := l.getAll(ctx, l.userRead(uid), read{
		key:  "around:" + uid + "\x00" + strconv.Itoa(radius),
		rkey: key,
		fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
			c.cmd = around.EvalSha(ctx, p, []string{key}, uid, radius)
		},
	})
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	if l.userOf(calls[0], uid) == nil {
		return nil, notFoundf("no such user %s", truncate(user.ID(), 40))
	}
	arr, err := replyArray("around", calls[1].cmd.(*rdb.Cmd).Val(), 0)
	if err != nil {
		return nil, err
	}
	if len(arr) == 0 { // the user is not ranked
		return &Page[*Ranked]{}, nil
	}
	start, err := replyInt("around", arr[0])
	if err != nil {
		return nil, err
	}
	rp := rawPage{start: int(start)}
	if rp.members, rp.scores, err = replyPairs("around", arr[1:]); err != nil {
		return nil, err
	}
	l.Walk(ctx, Items{Kind: ItemUser, Keys: rp.members}, evalNeeds(needs))
	return l.ranked(ctx, rp)
}

// ranked loads the users of a raw leaderboard page and gives each its rank and karma.
func (l *Loader) ranked(ctx context.Context, rp rawPage) (*Page[*Ranked], error) {
	users, err := l.usersByKey(ctx, rp.members)
	if err != nil {
		return nil, err
	}
	all := rp.cursors(leaderboardTag)
	p := &Page[*Ranked]{}
	for i, u := range users {
		if u == nil {
			continue
		}
		p.Items = append(p.Items, &Ranked{User: u, Rank: rp.start + i + 1, Karma: -int(parseScore(rp.scores[i]))})
		p.Cursors = append(p.Cursors, all[i])
	}
	return p, nil
}
