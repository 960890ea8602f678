package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// Active users of a group: how many distinct users posted, commented or voted in it lately,
// approximately (Group.activeUsers).
//
// Each write in a group (a post into it, a comment or a post vote on a post in it) adds its user
// to three HyperLogLogs in the group's slot, {g:<name>}:au:<bucket>: the hour's, the day's and the
// month's (UTC), each expiring once no window reads it. A count is one PFCOUNT of the buckets
// that cover the window (PFCOUNT of several keys counts their union without writing it): the
// current hour and the one before for HOUR, the current hour and the 24 before for DAY, the
// current day and the 7 (WEEK) or 30 (MONTH) before, the current month and the 12 before for
// YEAR. A window so reaches up to one bucket further back than it says, and HyperLogLog counts
// are within about 1% (0.81% standard error). The write is best-effort: a lost one undercounts
// by a user at most, and nothing repairs it.
//
// Cost: a HyperLogLog is sparse (about 1 byte per 2–3 users, from a few tens of bytes) up to
// hll-sparse-max-bytes (3000 by default), then 12 KiB dense: per group at most 26 hourly, 32
// daily and 14 monthly keys live at once, so a quiet group costs a few KiB and the busiest
// groups up to about 0.9 MiB each.

// ActivityWindow is how far back Group.activeUsers counts.
type ActivityWindow int

// The windows of Group.activeUsers.
const (
	ActiveHour ActivityWindow = iota
	ActiveDay
	ActiveWeek
	ActiveMonth
	ActiveYear
)

// activityBucket is one resolution of the activity counts.
type activityBucket byte

const (
	bucketHour  activityBucket = 'h'
	bucketDay   activityBucket = 'd'
	bucketMonth activityBucket = 'm'
)

// bucketOf numbers the bucket of resolution b that holds t (UTC): hours or days since the Unix
// epoch, or months since year 0.
func bucketOf(b activityBucket, t time.Time) int64 {
	t = t.UTC()
	switch b {
	case bucketHour:
		return t.Unix() / 3600
	case bucketDay:
		return t.Unix() / 86400
	default:
		return int64(t.Year())*12 + int64(t.Month()) - 1
	}
}

// bucketEnd is when bucket n of resolution b ends.
func bucketEnd(b activityBucket, n int64) time.Time {
	switch b {
	case bucketHour:
		return time.Unix((n+1)*3600, 0)
	case bucketDay:
		return time.Unix((n+1)*86400, 0)
	default:
		return time.Date(int((n+1)/12), time.Month((n+1)%12+1), 1, 0, 0, 0, 0, time.UTC)
	}
}

// activitySpan is the resolution of window w and how many buckets before the current one it
// reads.
func activitySpan(w ActivityWindow) (activityBucket, int64) {
	switch w {
	case ActiveHour:
		return bucketHour, 1
	case ActiveWeek:
		return bucketDay, 7
	case ActiveMonth:
		return bucketDay, 30
	case ActiveYear:
		return bucketMonth, 12
	default:
		return bucketHour, 24
	}
}

// ActivityBuckets is how many HyperLogLogs a count of window w reads (see above).
func ActivityBuckets(w ActivityWindow) int {
	_, back := activitySpan(w)
	return int(back) + 1
}

// keep is how long past its end a bucket of resolution b is read: by the longest window of its
// resolution.
func (b activityBucket) keep() time.Duration {
	switch b {
	case bucketHour:
		return 24 * time.Hour
	case bucketDay:
		return 30 * 24 * time.Hour
	default:
		return 366 * 24 * time.Hour
	}
}

// groupActive is a HyperLogLog of the users active in group g in bucket n of resolution b.
func (k keys) groupActive(g string, b activityBucket, n int64) string {
	return k.prefix + "{g:" + g + "}:au:" + string(b) + strconv.FormatInt(n, 10)
}

// recordActivity counts uid as active now in groups, in one pipeline; a failure is logged, not
// returned, since the write it follows is done.
func (s *Store) recordActivity(ctx context.Context, uid string, groups []string) {
	if uid == "" || len(groups) == 0 {
		return
	}
	now := s.now()
	calls := make([]scriptCall, 0, len(groups))
	for _, g := range groups {
		c := scriptCall{name: "active", args: []any{uid}, unreplicated: true}
		for _, b := range []activityBucket{bucketHour, bucketDay, bucketMonth} {
			n := bucketOf(b, now)
			c.keys = append(c.keys, s.k.groupActive(g, b, n))
			c.args = append(c.args, bucketEnd(b, n).Add(b.keep()).UnixMilli())
		}
		calls = append(calls, c)
	}
	if err := s.runMany(ctx, calls); err != nil {
		s.opts.Log.WarnContext(ctx, "count an active user", "user", uid, "groups", groups, "err", err)
	}
}

// postGroupsRead reads the groups of post pid in a write's first round trip.
func (s *Store) postGroupsRead(ctx context.Context, pid string) (op, func() []string) {
	key := s.k.post(pid)
	var cmd *rdb.StringCmd
	o := op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		cmd = p.HGet(ctx, key, "groups")
		return cmd, nil
	}}
	return o, func() []string {
		if cmd == nil {
			return nil
		}
		v, err := cmd.Result()
		if err != nil && !errors.Is(err, rdb.Nil) {
			return nil
		}
		return splitGroups(v)
	}
}

// GroupActiveUsers loads about how many distinct users posted, commented or voted in a group
// within window w (see above). The count changes as time passes, so the response is not cached.
// A list of groups whose Needs ask for the count reads it with the groups' other reads, in the
// level's pipeline (groupNeeds).
func (l *Loader) GroupActiveUsers(ctx context.Context, g *Group, w ActivityWindow) (int, error) {
	if l.revs != nil {
		l.revs.timeDependent()
	}
	c, err := l.get(ctx, l.activeUsersRead(g.Name, w))
	if err != nil {
		return 0, fmt.Errorf("count the active users of %s: %w", g.Name, err)
	}
	return int(c.cmd.(*rdb.IntCmd).Val()), nil
}

// activeUsersRead counts the users active in group g within window w: one PFCOUNT of the
// HyperLogLogs that cover it, as of now.
func (l *Loader) activeUsersRead(g string, w ActivityWindow) read {
	b, back := activitySpan(w)
	now := bucketOf(b, l.s.now())
	keys := make([]string, 0, back+1)
	for n := now - back; n <= now; n++ {
		keys = append(keys, l.s.k.groupActive(g, b, n))
	}
	return read{key: "au:" + strconv.Itoa(int(w)) + ":" + keys[len(keys)-1], rkey: keys[0],
		fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
			c.cmd = p.PFCount(ctx, keys...)
		}}
}

// ActivityWindows is a set of ActivityWindow: the counts of Group.activeUsers a response shows.
type ActivityWindows uint8

// With returns ws with w added.
func (ws ActivityWindows) With(w ActivityWindow) ActivityWindows { return ws | 1<<w }

// Has reports whether w is in ws.
func (ws ActivityWindows) Has(w ActivityWindow) bool { return ws&(1<<w) != 0 }
