package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// What a moderator removed leaves its author's lists ({u:<user>}:posts, :posts:nsfw, :comments)
// but stays its author's: the export writes it (removedPosts, removedComments) and a deletion's
// chain erases or anonymizes it (the "removed-posts" and "removed-comments" steps of
// account_delete.go). Both find it with the one walk below: the guard hash of a list — the
// version index.lua applied for every item the list ever held — read with HSCAN, less the items
// the list holds now (ZMSCORE) and those taken out for good (a comment's finalVersion), each
// candidate read and kept when it is removed and still the user's. The guards are never dropped
// (a deletion keeps them: a later deletion with erase walks them again).

// removedPosts calls page with the posts of uid that a moderator removed (and that were not
// deleted since) found by one HSCAN call on the guard of uid's post list from cursor, ExportPage
// at a time, with their ids (pids) at the same index; it returns the cursor of the next call, 0
// when the walk is done. HSCAN may return a post twice.
func (s *Store) removedPosts(ctx context.Context, uid string, cursor uint64,
	page func(ctx context.Context, pids []string, ps []*Post) error) (uint64, error) {
	live := []string{s.k.userPosts(uid), s.k.userPostsNSFW(uid)}
	return s.unlistedPages(ctx, s.k.userPostsVer(uid), cursor, live, nil, func(ctx context.Context, pids []string) error {
		ps, err := s.postRecords(ctx, pids)
		if err != nil {
			return err
		}
		var ids []string
		var keep []*Post
		for i, p := range ps {
			if p == nil || !p.Removed || p.Author != UserKey(uid) {
				continue // live, deleted, or no longer the user's
			}
			ids, keep = append(ids, pids[i]), append(keep, p)
		}
		if len(keep) == 0 {
			return nil
		}
		return page(ctx, ids, keep)
	})
}

// removedComments calls page with the comments of uid that a moderator removed (and that were
// not deleted since) found by one HSCAN call on the guard of uid's comment list from cursor,
// ExportPage at a time, with their members of the list ("<post>:<number>") at the same index; it
// returns the cursor of the next call, 0 when the walk is done. HSCAN may return a comment twice.
func (s *Store) removedComments(ctx context.Context, uid string, cursor uint64,
	page func(ctx context.Context, members []string, cs []*Comment) error) (uint64, error) {
	final := strconv.FormatInt(finalVersion, 10)
	live := []string{s.k.userComments(uid)}
	return s.unlistedPages(ctx, s.k.userCommentsVer(uid), cursor, live, func(v string) bool { return v == final },
		func(ctx context.Context, members []string) error {
			cs, err := s.commentRecords(ctx, members)
			if err != nil {
				return err
			}
			var ms []string
			var keep []*Comment
			for i, c := range cs {
				if c == nil || c.Deleted || !c.Removed || c.Author != UserKey(uid) {
					continue
				}
				ms, keep = append(ms, members[i]), append(keep, c)
			}
			if len(keep) == 0 {
				return nil
			}
			return page(ctx, ms, keep)
		})
}

// unlistedPages calls page with the members of the guard hash guard that none of the sorted sets
// live (the list, in the guard's slot) holds now and whose version final does not reject (nil:
// none), from one HSCAN call at cursor, ExportPage fields at a time, and returns the next cursor
// (0: the scan is done).
func (s *Store) unlistedPages(ctx context.Context, guard string, cursor uint64, live []string, final func(version string) bool,
	page func(ctx context.Context, members []string) error) (uint64, error) {
	var scan *rdb.ScanCmd
	err := s.pipeline(ctx, []op{{key: guard, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		scan = p.HScan(ctx, guard, cursor, "", ExportPage)
		return scan, nil
	}}}, false)
	if err == nil {
		err = scan.Err()
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", guard, err)
	}
	kv, next := scan.Val()
	// COUNT is a hint: a listpack hash, or a server that ignores it (miniredis), answers more
	// than ExportPage fields at once; they are read ExportPage at a time all the same.
	for len(kv) > 0 {
		n := min(len(kv), 2*ExportPage)
		if err := s.unlistedPage(ctx, kv[:n], live, final, page); err != nil {
			return 0, err
		}
		kv = kv[n:]
	}
	return next, nil
}

// unlistedPage is one page of unlistedPages: kv are fields of the guard and their values.
func (s *Store) unlistedPage(ctx context.Context, kv []string, live []string, final func(version string) bool,
	page func(ctx context.Context, members []string) error) error {
	var members []string
	for i := 0; i+1 < len(kv); i += 2 {
		if final == nil || !final(kv[i+1]) {
			members = append(members, kv[i])
		}
	}
	if len(members) == 0 {
		return nil
	}
	// Whether each is listed, in one round trip on the guard's slot.
	scores := make([]*rdb.FloatSliceCmd, len(live))
	ops := make([]op, len(live))
	for i, set := range live {
		ops[i] = op{key: set, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			scores[i] = p.ZMScore(ctx, set, members...)
			return scores[i], nil
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return fmt.Errorf("read the lists of %s: %w", strings.Join(live, ", "), err)
	}
	for i, c := range scores {
		if err := c.Err(); err != nil {
			return fmt.Errorf("read %s: %w", live[i], err)
		}
	}
	unlisted := members[:0]
	for j, m := range members {
		listed := false
		for _, c := range scores {
			listed = listed || c.Val()[j] != 0 // scores are times (ms): never 0
		}
		if !listed {
			unlisted = append(unlisted, m)
		}
	}
	if len(unlisted) == 0 {
		return nil
	}
	return page(ctx, unlisted)
}
