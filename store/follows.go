package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// The follow graph.
//
// A follow has two sides on two users' hash slots: the follower's following set ({u:a}:following)
// and the followee's followers set ({u:b}:followers). No script can write both, so:
//
//   - The follower's side is authoritative. follow.lua changes it and replies with a version: the
//     value of a per-follower sequence that rises with every change to the following set. A
//     larger version therefore describes a later state of every relation of that follower.
//   - The followee's side is a mirror written after it by follower.lua with the absolute state
//     (present with its follow time, or absent) guarded by that version, so a late or repeated
//     write never undoes a newer one. Follow and unfollow both write the follower's side first.
//
// Guarantees: viewerFollows and followsViewer read the authoritative side, so they are exact the
// moment follow or unfollow returns. After any set of concurrent follows and unfollows has
// returned, both sides agree and each count (a ZCARD of its set) is exact. If a call is cut off
// between the two sides (a crash, a lost connection), repeating it — follow or unfollow are
// idempotent — completes it: the follower's side replies with its current state and version, and
// the mirror applies it. RebuildUsers repairs every relation at once.

// MaxFollowing is how many users one user may follow. It also bounds how many authors push to one
// follower beyond their fan-out limit (see FeedOptions.MaxPulledAuthors).
const MaxFollowing = 5000

// Follow makes the user uid follow the user target and returns that user. It is
// idempotent. Following yourself is KindInvalid; an unknown user is KindNotFound;
// following more than MaxFollowing users is KindLimitReached (repeating a follow made is not).
func (s *Store) Follow(ctx context.Context, uid, target UserKey) (*User, error) {
	return s.setFollow(ctx, string(uid), string(target), true)
}

// Unfollow makes the user uid stop following the user target and returns that
// user. It is idempotent: unfollowing someone you do not follow changes nothing.
func (s *Store) Unfollow(ctx context.Context, uid, target UserKey) (*User, error) {
	return s.setFollow(ctx, string(uid), string(target), false)
}

func (s *Store) setFollow(ctx context.Context, uid, target string, follow bool) (*User, error) {
	if !validUserName(target) {
		return nil, invalidf("malformed user %q", truncate(target, 40))
	}
	if target == uid {
		if follow {
			return nil, invalidf("you cannot follow yourself")
		}
		return nil, invalidf("you cannot unfollow yourself")
	}
	scope := writeScope{} // a site ban refuses following; unfollowing stays open
	if !follow {
		scope = banFree
	}
	n, err := s.allowWrite(ctx, uid, repairFollow+":"+uid+":"+target, scope)
	if err != nil {
		return nil, err
	}
	u, err := s.existingUser(ctx, target)
	if err != nil {
		return nil, err
	}
	if follow {
		_, err = s.followChecked(ctx, uid, target, followAdd)
	} else {
		err = s.syncFollow(ctx, uid, target, false)
	}
	if err != nil {
		if errors.Is(err, errDeletedMeanwhile) {
			s.settled(ctx, n) // taken off again: nothing is left to repair
			return nil, err
		}
		if errors.Is(err, errFolloweeDeleted) {
			s.settled(ctx, n)
			return nil, notFoundf("no such user %s", truncate(userID(target), 40))
		}
		return nil, err
	}
	// Queued for every follow, new or repeated: a repeat cannot tell whether its first attempt,
	// cut off, made the relation, and the notification is made once whatever runs.
	if follow {
		if err := s.queueFollowNotice(ctx, uid, target); err != nil {
			return nil, err
		}
	}
	s.settled(ctx, n)
	return u, nil
}

// existingUser loads the user uid for a write about them, which checks first and writes after.
// An unknown user, or a deleted account (its marker keeps no name: see DeleteAccount), is
// KindNotFound; an account deleted between the check and the write is not caught here: a write
// whose records would name it for good reads the deletion again where it lands (followChecked,
// changeModerator).
func (s *Store) existingUser(ctx context.Context, uid string) (*User, error) {
	vals, err := s.cmd().HMGet(ctx, s.k.user(uid), userFields...).Result()
	if err != nil {
		return nil, fmt.Errorf("load user %s: %w", uid, err)
	}
	if vals[0] == nil {
		return nil, notFoundf("no such user %s", truncate(userID(uid), 40))
	}
	return s.userFromFields(uid, strs(vals)), nil
}

// syncFollow sets (follow) or clears the relation a → b on a's side and then brings every record
// derived from it up to date: b's followers, how a's feed gets b's posts, and the feed backfill.
// Each step is idempotent and version-guarded, so running it again completes a cut-off run.
func (s *Store) syncFollow(ctx context.Context, a, b string, follow bool) error {
	op := followRemove
	if follow {
		op = followAdd
	}
	return s.syncFollowOver(ctx, a, b, op, "")
}

// followChecked is syncFollow of a follow that may cross the deletion of either account: a
// follow (change followAdd) whose checks passed just before, or a repair (followRead) of one cut
// off. A deletion's chain walks the follows of its account both ways, once: a relation written
// after the walk passed would name the deleted account for good, in the other's followers or
// following. So a's deletion is read in the round trip of a's side, after follow.lua, and b's in
// the round trip of b's side, after follower.lua (authorGone): on each side either the read sees
// the deletion, or the deletion — and the chain after it — comes after the side's write, whose
// relation the chain then finds. A deleted account's relation is taken off as the chain does
// (syncFollow), and the answer is errDeletedMeanwhile for a, errFolloweeDeleted for b. It
// returns the relation as a's side read it.
func (s *Store) followChecked(ctx context.Context, a, b, change string) (relation, error) {
	readA, aGone := s.authorGone(ctx, a)
	rel, err := s.relationStep(ctx, s.followKeys(a), b, change, s.now().UnixMilli(), MaxFollowing, "", readA)
	if err != nil {
		return relation{}, followLimit(err)
	}
	var gone error = errDeletedMeanwhile
	deleted, _, err := aGone()
	if err == nil && !deleted {
		readB, bGone := s.authorGone(ctx, b)
		gone = errFolloweeDeleted
		deleted, err = s.mirrorFollowUnless(ctx, a, b, rel, readB, bGone)
	}
	if err != nil {
		return relation{}, err
	}
	if !deleted {
		return rel, nil
	}
	if err := s.syncFollow(ctx, a, b, false); err != nil {
		return relation{}, fmt.Errorf("take a follow across a deletion off: %w", err)
	}
	return relation{}, gone
}

// errFolloweeDeleted answers a follow whose followee's account was deleted between the follow's
// checks and its write (see followChecked): it was taken off again.
var errFolloweeDeleted = errors.New("the account followed was deleted")

// followLimit words a full following set's KindLimitReached for the follower.
func followLimit(err error) error {
	if IsKind(err, KindLimitReached) {
		return &Error{Kind: KindLimitReached, Msg: fmt.Sprintf("you may follow at most %d users", MaxFollowing)}
	}
	return err
}

// syncFollowOver is syncFollow with op (followAdd, followRemove, or followRead to derive the
// relation as a's side holds it) and a's sequence raised past floor first (see follow.lua), when
// floor is not "": the version b's side last applied for a, read just before, for a rebuild.
func (s *Store) syncFollowOver(ctx context.Context, a, b, op, floor string) error {
	rel, err := s.relationStep(ctx, s.followKeys(a), b, op, s.now().UnixMilli(), MaxFollowing, floor)
	if err != nil {
		return followLimit(err)
	}
	return s.mirrorFollow(ctx, a, b, rel)
}

// relation is the state of a → b on a's side, as follow.lua read it.
type relation struct {
	present bool
	at      string // follow time (ms); "0" when absent
	version int64  // a's following sequence when the state was read
}

// What followStep does to a → b on a's side.
const (
	followAdd    = "add"
	followRemove = "rem"
	followRead   = "get"  // nothing: only read the relation (a repair)
	followDrop   = "drop" // followRemove of a relation made before a given time (buryGroups)
)

// followStep sets, clears or reads a → b on a's side (the authoritative one).
func (s *Store) followStep(ctx context.Context, a, b, op string) (relation, error) {
	return s.relationStep(ctx, s.followKeys(a), b, op, s.now().UnixMilli(), 0, "")
}

// followKeys are the keys of a's side of a follow (see follow.lua).
func (s *Store) followKeys(a string) []string {
	return []string{s.k.following(a), s.k.followingSeq(a), s.k.pull(a), s.k.feed(a), s.k.feedBy(a)}
}

// relationStep sets, clears or reads (change) the relation to b on its authoritative side: keys are the
// relations' sorted set and its sequence, then, for a follow, the follower's pull set, feed and
// feed authors (see follow.lua). Adding to a set holding max relations is KindLimitReached;
// max 0 is no bound. when is now, or for followDrop the time before which the relation goes.
// floor, when not "", is a version the sequence is raised past (a rebuild's; see follow.lua).
// Follows and group memberships both go through it. The reads in extra ride in the script's
// round trip, after it (see runScripts).
func (s *Store) relationStep(ctx context.Context, keys []string, b, change string, when int64, max int, floor string, extra ...op) (relation, error) {
	c := relationCall(keys, b, change, when, max, floor)
	replies, err := s.runScripts(ctx, []scriptCall{c}, extra...)
	if err != nil {
		return relation{}, err
	}
	return relationOf(replies[0])
}

// relationCall is the call of follow.lua that relationStep makes, for a caller that sends many.
func relationCall(keys []string, b, op string, when int64, max int, floor string) scriptCall {
	return scriptCall{name: "follow", keys: keys, args: []any{b, op, when, max, floor}}
}

// relationOf decodes the reply of follow.lua.
func relationOf(reply any) (relation, error) {
	arr, err := replyArrayLen("follow", reply, 3)
	if err != nil {
		return relation{}, err
	}
	present, err := replyInt("follow", arr[0])
	if err != nil {
		return relation{}, err
	}
	at, err := replyString("follow", arr[1])
	if err != nil {
		return relation{}, err
	}
	version, err := replyInt("follow", arr[2])
	if err != nil {
		return relation{}, err
	}
	return relation{present: present == 1, at: at, version: version}, nil
}

// mirrorRelation writes a state of a relation read on its authoritative side (relationStep) to
// its derived side, guarded by its version: keys are the mirror's sorted set and version hash,
// then, for a follow, the followee's push set, which holds at most pushLimit followers (see
// follower.lua). It returns how the follower gets the followee's posts: "push", "pull" or
// "none"; a membership is "pull" when present. The reads in extra ride in the script's round
// trip, after it (see runScripts).
func (s *Store) mirrorRelation(ctx context.Context, keys []string, a string, rel relation, pushLimit int, extra ...op) (string, error) {
	c := mirrorCall(keys, a, rel, pushLimit)
	replies, err := s.runScripts(ctx, []scriptCall{c}, extra...)
	if err != nil {
		return "", err
	}
	return replyWord("follower", replies[0], "push", "pull", "none")
}

// mirrorCall is the call of follower.lua that mirrorRelation makes, for a caller that sends many.
func mirrorCall(keys []string, a string, rel relation, pushLimit int) scriptCall {
	present := 0
	if rel.present {
		present = 1
	}
	return scriptCall{name: "follower", keys: keys, args: []any{a, rel.version, present, rel.at, pushLimit}}
}

// mirrorFollow writes what derives from a state of a → b read on a's side: b's followers, a's
// pull set and, for a pushed relation, the backfill of a's feed. b's side decides first whether
// b pushes to a (its push set has room) or a pulls b; a's side then records a pull within
// FeedOptions.MaxPulledAuthors, and when a's pull set is full b pushes to a after all, beyond its
// fan-out limit (follower.lua "force"), so that a feed page reads a bounded number of pulled
// authors. Each step is version-guarded and replies with the state it leaves, so a repeat after
// a cut-off run completes it.
func (s *Store) mirrorFollow(ctx context.Context, a, b string, rel relation) error {
	_, err := s.mirrorFollowUnless(ctx, a, b, rel, op{}, nil)
	return err
}

// mirrorFollowUnless is mirrorFollow that, when gone is not nil, sends the read of b's deletion
// (authorGone) in the round trip of b's side, after it, and stops there when b's account is
// deleted, reporting it (followChecked).
func (s *Store) mirrorFollowUnless(ctx context.Context, a, b string, rel relation, read op, gone func() (bool, bool, error)) (bool, error) {
	bkeys := []string{s.k.followers(b), s.k.followersVer(b), s.k.push(b)}
	var extra []op
	if gone != nil {
		extra = append(extra, read)
	}
	m, err := s.mirrorRelation(ctx, bkeys, a, rel, s.opts.Feed.FanoutLimit, extra...)
	if err != nil {
		return false, err
	}
	if gone != nil {
		if deleted, _, err := gone(); err != nil || deleted {
			return deleted, err
		}
	}
	return false, s.mirrorMode(ctx, a, b, rel, m)
}

// mirrorMode is the rest of mirrorFollow once b's side replied m: a's pull set, the push forced
// beyond b's fan-out limit, and the backfill of a's feed.
func (s *Store) mirrorMode(ctx context.Context, a, b string, rel relation, m string) error {
	bkeys := []string{s.k.followers(b), s.k.followersVer(b), s.k.push(b)}
	reply, err := s.run(ctx, "follow_mode", []string{s.k.following(a), s.k.pull(a), s.k.pullVer(a)},
		b, rel.version, m, rel.at, s.opts.Feed.MaxPulledAuthors)
	if err != nil {
		return err
	}
	mode, err := replyWord("follow_mode", reply, "push", "pull", "none", "force")
	if err != nil {
		return err
	}
	if mode == "force" {
		c := mirrorCall(bkeys, a, rel, s.opts.Feed.FanoutLimit)
		c.args = append(c.args, "force")
		reply, err := s.run(ctx, c.name, c.keys, c.args...)
		if err != nil {
			return err
		}
		if mode, err = replyWord("follower", reply, "push", "pull", "none"); err != nil {
			return err
		}
	}
	if mode == "push" {
		// b's posts published from now on are pushed to a; copy the recent ones. A post published
		// concurrently is either already in b's list (read below) or pushed, because b's list is
		// written before the push set is read.
		return s.backfillFeed(ctx, a, b)
	}
	return nil
}

// FollowerCount returns how many users follow u.
func (l *Loader) FollowerCount(ctx context.Context, u *User) (int, error) {
	return l.zcard(ctx, l.s.k.followers(string(u.Key())))
}

// FollowingCount returns how many users u follows.
func (l *Loader) FollowingCount(ctx context.Context, u *User) (int, error) {
	return l.zcard(ctx, l.s.k.following(string(u.Key())))
}

// Follows reports whether the user follower follows followee. An empty follower (an anonymous
// viewer) follows nobody.
func (l *Loader) Follows(ctx context.Context, follower, followee UserKey) (bool, error) {
	if follower == "" || followee == "" || follower == followee {
		return false, nil
	}
	_, ok, err := l.zscore(ctx, l.s.k.following(string(follower)), string(followee))
	return ok, err
}

// Followers loads one page of the users following the user uid, most recent
// follow first, and what needs says the response reads of them.
func (l *Loader) Followers(ctx context.Context, uid UserKey, w Window, needs func() *Needs) (*Page[*User], error) {
	return l.userList(ctx, ListFollowers, uid, w, needs)
}

// Following loads one page of the users the user uid follows, most recent follow
// first, and what needs says the response reads of them.
func (l *Loader) Following(ctx context.Context, uid UserKey, w Window, needs func() *Needs) (*Page[*User], error) {
	return l.userList(ctx, ListFollowing, uid, w, needs)
}

// userList pages a sorted set of user keys (highest score first), then loads the users and what
// needs says of them.
func (l *Loader) userList(ctx context.Context, kind ListKind, user UserKey, w Window, needs func() *Needs) (*Page[*User], error) {
	key, tag, _ := l.userListKey(kind, string(user))
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	if p := keptPage[*User](l, pageKey(key, true, w)); p != nil {
		return p, nil
	}
	rp, err := l.page(ctx, key, true, sp)
	if err != nil {
		return nil, err
	}
	l.Walk(ctx, Items{Kind: ItemUser, Keys: rp.members}, evalNeeds(needs))
	users, err := l.usersByKey(ctx, rp.members)
	if err != nil {
		return nil, err
	}
	all := rp.cursors(tag)
	p := &Page[*User]{Total: rp.total, HasNext: rp.hasNext, HasPrev: rp.hasPrev}
	for i, u := range users {
		if u != nil {
			p.Items = append(p.Items, u)
			p.Cursors = append(p.Cursors, all[i])
		}
	}
	return p, nil
}

// parseScore parses a score as Redis prints it.
func parseScore(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}
