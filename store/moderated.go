package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// A deleted account's moderator seats. Nothing indexes the groups a user moderates (a group's
// moderators live in its own slot, groupMods), so the deletion's "moderated" step walks the
// group registry ({groups}, in name order) a batch at a time, reads in one pipeline whether the
// user holds a seat in each group of the batch, and takes them off where they do. No layout
// changes: the walk finds the seats of accounts made before this step existed as well.
//
// A seat is given up the way a moderator steps down (group_change.lua "remmod" with the user as
// actor and target: no seniority check, a repeat changes nothing), so the group's info version
// and revision rise, its cached pages go stale and the moderation log records REMOVE_MODERATOR
// by the account itself, which notifies nobody. The group's repair job is noted before the
// script, so that a job cut off between the script and the log still logs the change.
//
// The walk's cursor is the job's batch: "0" at the start, then "(<last group name>", an exclusive
// ZRANGEBYLEX bound, so that groups registered or pruned during the walk shift nothing: every
// group registered before the step began is visited. A group gets moderators only through
// group_change.lua, which makes it lasting (registered and never pruned). AddModerator, which
// cannot check the target's marker in its own script (another slot), checks it again after its
// script (changeModerator): either that check sees the marker, or the seat was there before the
// marker was written and so before the walk. The check runs before the group's repair job is
// settled, and that repair (repairGroupItem) takes every deleted account off the group's
// moderators too, so a process stopped in between leaves no seat behind either.

// moderatedBatch bounds the groups one job of the "moderated" step reads.
const moderatedBatch = 500

// eraseModerated does the batch of the "moderated" step at cursor ("0", or "(<group>") for the
// deleted user uid and returns the cursor of the next batch, "" when the walk is done.
func (s *Store) eraseModerated(ctx context.Context, uid, cursor string) (string, error) {
	return s.eraseModeratedBy(ctx, uid, cursor, moderatedBatch)
}

// eraseModeratedBy is eraseModerated with batches of size groups.
func (s *Store) eraseModeratedBy(ctx context.Context, uid, cursor string, size int) (string, error) {
	groups, next, err := s.registryBatch(ctx, cursor, size)
	if err != nil {
		return "", err
	}
	seats, err := s.moderatorSeats(ctx, uid, groups)
	if err != nil {
		return "", err
	}
	for _, g := range seats {
		if err := s.giveUpSeat(ctx, uid, g); err != nil {
			return "", err
		}
	}
	return next, nil
}

// registryBatch reads the batch of the group registry at cursor ("0", or "(<group>": see above),
// at most size groups in name order, and returns them with the cursor of the next batch, "" when
// this one ends the registry.
func (s *Store) registryBatch(ctx context.Context, cursor string, size int) ([]string, string, error) {
	from := "-"
	if cursor != "0" {
		if !strings.HasPrefix(cursor, "(") || !validGroupName(cursor[1:]) {
			return nil, "", fmt.Errorf("bad cursor %q", cursor)
		}
		from = cursor
	}
	var names *rdb.StringSliceCmd
	registry := s.k.groups()
	err := s.pipeline(ctx, []op{{key: registry, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		names = p.ZRangeByLex(ctx, registry, &rdb.ZRangeBy{Min: from, Max: "+", Count: int64(size)})
		return names, nil
	}}}, false)
	if err == nil {
		err = names.Err()
	}
	if err != nil {
		return nil, "", fmt.Errorf("read the group registry: %w", err)
	}
	groups := names.Val()
	if len(groups) < size {
		return groups, "", nil
	}
	return groups, "(" + groups[len(groups)-1], nil
}

// rebuildModeratorSeats takes every deleted account off the moderators of every registered
// group, as its deletion's "moderated" step would have: for the seats of accounts deleted before
// that step existed, or by a process of an older version. A batch of the registry at a time: the
// groups' moderators in one pipeline, whether those moderators are deleted in another, then a
// step down (giveUpSeat) for each deleted one. It returns how many seats it gave up.
func (s *Store) rebuildModeratorSeats(ctx context.Context) (int, error) {
	n := 0
	for cursor := "0"; ; {
		groups, next, err := s.registryBatch(ctx, cursor, moderatedBatch)
		if err != nil {
			return n, err
		}
		mods := make([]*rdb.StringSliceCmd, len(groups))
		ops := make([]op, len(groups))
		for i, g := range groups {
			key := s.k.groupMods(g)
			ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				mods[i] = p.ZRange(ctx, key, 0, -1)
				return mods[i], nil
			}}
		}
		if err := s.pipeline(ctx, ops, false); err != nil {
			return n, fmt.Errorf("read the moderators of %d groups: %w", len(groups), err)
		}
		seats := map[string][]string{} // moderator → groups
		var users []string
		for i, c := range mods {
			if err := c.Err(); err != nil {
				return n, fmt.Errorf("read the moderators of %s: %w", groups[i], err)
			}
			for _, u := range c.Val() {
				if seats[u] == nil {
					users = append(users, u)
				}
				seats[u] = append(seats[u], groups[i])
			}
		}
		gone, err := s.deletedAmong(ctx, users)
		if err != nil {
			return n, err
		}
		for _, u := range gone {
			for _, g := range seats[u] {
				if err := s.giveUpSeat(ctx, u, g); err != nil {
					return n, err
				}
				n++
			}
		}
		if next == "" {
			return n, nil
		}
		cursor = next
	}
}

// moderatorSeats returns those of groups that uid moderates, read in one pipeline.
func (s *Store) moderatorSeats(ctx context.Context, uid string, groups []string) ([]string, error) {
	if len(groups) == 0 {
		return nil, nil
	}
	scores := make([]*rdb.FloatCmd, len(groups))
	ops := make([]op, len(groups))
	for i, g := range groups {
		key := s.k.groupMods(g)
		ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			scores[i] = p.ZScore(ctx, key, uid)
			return scores[i], nil
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return nil, fmt.Errorf("read the moderators of %d groups: %w", len(groups), err)
	}
	var out []string
	for i, c := range scores {
		switch err := c.Err(); {
		case err == nil:
			out = append(out, groups[i])
		case !errors.Is(err, rdb.Nil):
			return nil, fmt.Errorf("read the moderators of %s: %w", groups[i], err)
		}
	}
	return out, nil
}

// dropDeletedModerators takes the deleted accounts among the moderators of group g off them, as
// giveUpSeat does, and returns how many it took off: only those of users when users are given,
// else any. The group's repair does it for any (see changeModerator), without a repair note
// of its own.
func (s *Store) dropDeletedModerators(ctx context.Context, g string, users ...string) (int, error) {
	if len(users) == 0 {
		mods, err := s.cmd().ZRange(ctx, s.k.groupMods(g), 0, -1).Result()
		if err != nil {
			return 0, fmt.Errorf("read the moderators of %s: %w", g, err)
		}
		users = mods
	}
	if len(users) == 0 {
		return 0, nil
	}
	gone, err := s.deletedAmong(ctx, users)
	if err != nil {
		return 0, fmt.Errorf("read the moderators of %s: %w", g, err)
	}
	for _, u := range gone {
		if err := s.stepDown(ctx, u, g); err != nil {
			return 0, err
		}
	}
	return len(gone), nil
}

// deletedAmong returns those of users whose accounts are deleted, read in one pipeline.
func (s *Store) deletedAmong(ctx context.Context, users []string) ([]string, error) {
	if len(users) == 0 {
		return nil, nil
	}
	deleted := make([]*rdb.StringCmd, len(users))
	ops := make([]op, len(users))
	for i, u := range users {
		key := s.k.user(u)
		ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			deleted[i] = p.HGet(ctx, key, "deleted")
			return deleted[i], nil
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil && !isNil(err) {
		return nil, fmt.Errorf("read whether %d accounts are deleted: %w", len(users), err)
	}
	var out []string
	for i, c := range deleted {
		if err := c.Err(); err != nil && !isNil(err) {
			return nil, fmt.Errorf("read whether %s is deleted: %w", users[i], err)
		}
		if c.Val() == "1" {
			out = append(out, users[i])
		}
	}
	return out, nil
}

// giveUpSeat takes uid off the moderators of group g as a moderator stepping down (see above)
// and logs the change. A group that no longer exists has no seat to give up.
func (s *Store) giveUpSeat(ctx context.Context, uid, g string) error {
	n, err := s.noteRepair(ctx, repairGroup+":"+g)
	if err != nil {
		return err
	}
	if err := s.stepDown(ctx, uid, g); err != nil {
		return err
	}
	s.settled(ctx, n)
	return nil
}

// stepDown is giveUpSeat without the repair note: the script and the log.
func (s *Store) stepDown(ctx context.Context, uid, g string) error {
	args := s.groupChangeArgs(UserKey(uid), g, groupRemMod, uid)
	args[1] = "0" // the account steps down; no admin's power is needed or used
	reply, err := s.run(ctx, "group_change", s.groupChangeKeys(g), args...)
	if IsKind(err, KindNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("take %s off the moderators of %s: %w", uid, g, err)
	}
	arr, err := replyArrayLen("group_change", reply, 2)
	if err != nil {
		return err
	}
	entries, err := replyHash("group_change", arr[1])
	if err != nil {
		return err
	}
	return s.flushModLog(ctx, s.k.groupModOutbox(g), entries)
}
