package store

import (
	"context"
	"fmt"
	"strings"
)

// Hooks of the migration of comments' counts (layout_counts.go) for the external tests.

// CompactCommentsForTest runs the step of the migration from layout 6 and returns how many
// hashes it changed.
func (s *Store) CompactCommentsForTest(ctx context.Context) (int, error) {
	return s.compactComments(ctx)
}

// Layout6CommentsForTest writes the hash of every comment of post pid as layout 6 did: the times
// in m decimal, and the counts it has not got (up, down, replies) at "0".
func (s *Store) Layout6CommentsForTest(ctx context.Context, pid string) error {
	nums, err := s.threadNums(ctx, pid)
	if err != nil {
		return err
	}
	for _, n := range nums {
		key := s.k.comment(pid, n)
		m, err := s.rdb.HGet(ctx, key, commentMetaField).Result()
		if err != nil {
			return fmt.Errorf("comment %s: %w", n, err)
		}
		v := unpackCommentMeta(m)
		m6 := shortNum(v[0]) + " " + strings.Join(v[1:], " ")
		if err := s.rdb.HSet(ctx, key, commentMetaField, m6).Err(); err != nil {
			return fmt.Errorf("comment %s: %w", n, err)
		}
		for _, f := range []string{"up", "down", "replies"} {
			if err := s.rdb.HSetNX(ctx, key, f, "0").Err(); err != nil {
				return fmt.Errorf("comment %s: %w", n, err)
			}
		}
	}
	return nil
}
