package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// UserRebuildStats reports what RebuildUsers did.
type UserRebuildStats struct {
	Users   int // users put back into the name index and on the leaderboard
	Follows int // follow relations whose derived records were brought up to date
	Drafts  int // scheduled posts whose publish job was queued again (if it was lost)
	// Memberships are group memberships whose group-side record was brought up to date: every
	// user's joined groups, and the members a group still listed after they left.
	Memberships int
	// Bans are the bans (in force or kept after they ended) whose copy on their user's slot was
	// derived again from the group's or the site's record.
	Bans int
}

// RebuildUsers re-derives what is kept about users outside their own records: the name index of
// autocomplete, each user's leaderboard entry from their karma total, for every follow relation
// the followee's followers set, the follower's pull set and feed backfill, from the authoritative
// following sets, every group's members from the users' joined groups, and the users' copies of
// their bans from the groups' and the site's records; a relation naming a deleted account (data
// restored from a backup taken before its deletion's chain went through it) goes on both sides,
// as the chain takes it off (dropDeletedRelations). It repairs writes cut
// off between their steps (a user who signed up but was never indexed, a follow or a membership
// that reached only one side). It scans the keyspace (SCAN, never KEYS), so it is for
// maintenance, not request paths; it is safe beside live traffic because every step it runs is
// the idempotent, version-guarded step the request paths run.
func (s *Store) RebuildUsers(ctx context.Context) (UserRebuildStats, error) {
	var st UserRebuildStats
	// The users' search index is written anew below, one user at a time.
	if err := s.dropSearch(ctx, searchUsersKind); err != nil {
		return st, err
	}
	err := s.scanKeys(ctx, s.k.prefix+"{u:*}", func(key string) error {
		uid, ok := userKeyFromHashKey(s.k.prefix, key)
		if !ok {
			return nil
		}
		// A deleted account's marker (see DeleteAccount) is no user: its chain takes it out of
		// the indexes below, and nothing may put it back. Its relations, which data restored
		// from a backup taken before its chain went through them still holds, go.
		deleted, err := s.cmd().HGet(ctx, key, "deleted").Result()
		if err != nil && !isNil(err) {
			return fmt.Errorf("read user %s: %w", uid, err)
		}
		if deleted == "1" {
			return s.dropDeletedRelations(ctx, uid)
		}
		if err := s.indexNames(ctx, searchUsersKind, []string{uid}, true, false); err != nil {
			return err
		}
		if err := s.register(ctx, s.k.userNames(), true, uid); err != nil {
			return fmt.Errorf("index user %s: %w", uid, err)
		}
		// Raise the karma version and read the total at one instant, so that the entry written
		// wins over the one already there and loses to any karma recorded afterwards, unless the
		// account is deleted by then: deleted since the read above, its deletion's chain may
		// have taken it off the leaderboard and the registry before the writes above, so it is
		// taken off again, and nothing else is derived for it (TestRebuildUsersAcrossADeletion).
		// A deletion marked after this script finds the entries written here. The
		// version goes past the leaderboard guard's too: after a restore or a failover that lost
		// the user's later karma writes but kept the leaderboard's, the guard holds a version
		// the user's slot has not reached, and the entry it guards a karma the slot no longer
		// says.
		guard, err := s.guardVersion(ctx, s.k.leaderboardVer(), uid, "the leaderboard entry of "+uid)
		if err != nil {
			return err
		}
		reply, err := s.run(ctx, "karma_version", []string{s.k.karma(uid), key}, guard)
		if err != nil {
			return fmt.Errorf("read karma of %s: %w", uid, err)
		}
		kv, err := replyArrayLen("karma_version", reply, 0, 2)
		if err != nil {
			return err
		}
		if len(kv) == 0 {
			return s.unlistDeleted(ctx, uid)
		}
		st.Users++
		karma, err := replyInt("karma_version", kv[0])
		if err != nil {
			return err
		}
		ver, err := replyInt("karma_version", kv[1])
		if err != nil {
			return err
		}
		if err := s.runMany(ctx, []scriptCall{s.leaderboardCall(uid, karma, ver)}); err != nil {
			return fmt.Errorf("rank %s: %w", uid, err)
		}
		n, err := s.resyncFollows(ctx, uid)
		st.Follows += n
		if err != nil {
			return err
		}
		n, err = s.requeueDrafts(ctx, uid)
		st.Drafts += n
		if err != nil {
			return err
		}
		n, err = s.resyncMembers(ctx, uid)
		st.Memberships += n
		return err
	})
	if err != nil {
		return st, err
	}
	n, err := s.dropStaleMembers(ctx)
	st.Memberships += n
	if err != nil {
		return st, err
	}
	st.Bans, err = s.rebuildBans(ctx)
	return st, err
}

// relationSteps are the steps of a deletion's chain that take the account's relations off both
// sides: follows both ways, group memberships and watch modes.
var relationSteps = []string{"following", "followers", "groups", "watches"}

// dropDeletedRelations takes every relation uid's lists still hold off both sides, uid being a
// deleted account, as its deletion's chain does (eraseStep, all the batches of each of
// relationSteps): with them go the deleted name in the others' followers, following, group members
// and watchers, and their counts. A chain that ran leaves nothing to do; data restored from a
// backup taken in the middle of one (its jobs lost) does.
func (s *Store) dropDeletedRelations(ctx context.Context, uid string) error {
	for _, step := range relationSteps {
		for more := true; more; {
			var err error
			if more, err = s.eraseStep(ctx, uid, step, 0, false); err != nil {
				return fmt.Errorf("drop the relations of the deleted %s, %s: %w", uid, step, err)
			}
		}
	}
	return nil
}

// requeueDrafts puts the publish job of each of uid's scheduled posts at the draft's time
// (syncPublishJob): a job a failover lost is queued again, one a cut-off reschedule left at the
// old time is moved.
func (s *Store) requeueDrafts(ctx context.Context, uid string) (int, error) {
	pids, err := s.cmd().HKeys(ctx, s.k.drafts(uid)).Result()
	if err != nil {
		return 0, fmt.Errorf("list scheduled posts of %s: %w", uid, err)
	}
	for _, pid := range pids {
		if err := s.syncPublishJob(ctx, uid, pid); err != nil {
			return 0, fmt.Errorf("queue scheduled post %s of %s: %w", pid, uid, err)
		}
	}
	return len(pids), nil
}

// resyncFollows re-runs the derived steps of every relation of uid: its followees and any
// follower whose following set no longer names uid. Each step derives the relation from the
// follower's side as it holds it when the step runs (followRead), not as it was listed or
// checked: a follow or unfollow made meanwhile stays as it was made (a rebuild that wrote what it
// had read brought back an unfollowed user and undid a new follow). A relation with a deleted
// account is taken off both sides instead (syncFollow), as the deletion's chain does.
func (s *Store) resyncFollows(ctx context.Context, uid string) (int, error) {
	n := 0
	followees, err := s.cmd().ZRange(ctx, s.k.following(uid), 0, -1).Result()
	if err != nil {
		return n, fmt.Errorf("list followees of %s: %w", uid, err)
	}
	// Each relation is written over the guard its copy holds: after a restore or a failover that
	// lost writes of the follower's slot and kept the followee's, the copy's guard holds a version
	// the follower's sequence has not reached, and the write would lose to it.
	guard := func(a, b string) (string, error) {
		return s.guardVersion(ctx, s.k.followersVer(b), a, "follow "+a+" → "+b)
	}
	// A relation with a deleted account goes, on both sides, as its deletion's chain takes it
	// off: mirrored, it would name the account again in its followers.
	gone, err := s.deletedAmong(ctx, followees)
	if err != nil {
		return n, err
	}
	for _, b := range followees {
		if slices.Contains(gone, b) {
			if err := s.syncFollow(ctx, uid, b, false); err != nil {
				return n, err
			}
			n++
			continue
		}
		g, err := guard(uid, b)
		if err != nil {
			return n, err
		}
		if err := s.syncFollowOver(ctx, uid, b, followRead, g); err != nil {
			return n, err
		}
		n++
	}
	followers, err := s.cmd().ZRange(ctx, s.k.followers(uid), 0, -1).Result()
	if err != nil {
		return n, fmt.Errorf("list followers of %s: %w", uid, err)
	}
	if gone, err = s.deletedAmong(ctx, followers); err != nil {
		return n, err
	}
	for _, a := range followers {
		if slices.Contains(gone, a) {
			if err := s.syncFollow(ctx, a, uid, false); err != nil {
				return n, err
			}
			n++
			continue
		}
		err := s.cmd().ZScore(ctx, s.k.following(a), uid).Err()
		if err == nil {
			continue
		}
		if !isNil(err) {
			return n, fmt.Errorf("check follow %s → %s: %w", a, uid, err)
		}
		g, err := guard(a, uid)
		if err != nil {
			return n, err
		}
		if err := s.syncFollowOver(ctx, a, uid, followRead, g); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// userKeyFromHashKey returns "alice" for "<prefix>{u:alice}" and false for any other key.
func userKeyFromHashKey(prefix, key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, prefix+"{u:")
	if !ok {
		return "", false
	}
	uid, ok := strings.CutSuffix(rest, "}")
	return uid, ok && validUserName(uid)
}

// isNil reports whether err is Redis's nil reply.
func isNil(err error) bool { return errors.Is(err, rdb.Nil) }

// guardVersion returns the version that the guard hash key (a derived copy's: member → the last
// version applied) holds for member, "" when it holds none: what a rebuild raises the
// authoritative side's version past (follow.lua, karma_version.lua), so that the copy it writes
// wins over one that writes the authoritative slot no longer holds left behind. what names the
// copy in an error.
func (s *Store) guardVersion(ctx context.Context, key, member, what string) (string, error) {
	v, err := s.cmd().HGet(ctx, key, member).Result()
	if err != nil && !isNil(err) {
		return "", fmt.Errorf("read the guard of %s: %w", what, err)
	}
	return v, nil
}
