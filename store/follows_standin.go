package store

// This file stands in for three pieces of the follows feature that the live feed needs, with the
// same names, signatures and keys, so that FeedIncludes works before that feature is merged.
// Delete the file when it is: the follows feature defines each of these itself.

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// following is a sorted set of the users uid follows (user keys) scored by follow time (ms).
func (k keys) following(uid string) string { return k.user(uid) + ":following" }

// Follows reports whether the user with global id followerID follows the one with followeeID. An
// empty followerID (an anonymous viewer) follows nobody.
func (l *Loader) Follows(ctx context.Context, followerID, followeeID string) (bool, error) {
	if followerID == "" || followeeID == "" || followerID == followeeID {
		return false, nil
	}
	a, err := UserKey(followerID)
	if err != nil {
		return false, err
	}
	b, err := UserKey(followeeID)
	if err != nil {
		return false, err
	}
	_, ok, err := l.zscore(ctx, l.s.k.following(a), b)
	return ok, err
}

// zscore loads the score of a member of a sorted set; ok is false when it is absent.
func (l *Loader) zscore(ctx context.Context, key, member string) (score float64, ok bool, err error) {
	cmd, err := l.do(ctx, "zs:"+key+"\x00"+member, func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return p.ZScore(ctx, key, member)
	})
	if err != nil {
		return 0, false, err
	}
	c := cmd.(*redis.FloatCmd)
	if errors.Is(c.Err(), redis.Nil) {
		return 0, false, nil
	}
	return c.Val(), true, nil
}
