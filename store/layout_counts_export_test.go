package store

import (
	"context"
	"fmt"
)

// Hooks of the migration of comments' counts (layout_counts.go) for the external tests.

// TrimCommentCountsForTest runs the step of the migration from layout 6 and returns how many
// hashes it changed.
func (s *Store) TrimCommentCountsForTest(ctx context.Context) (int, error) {
	return s.trimCommentCounts(ctx)
}

// ZeroCountsForTest writes the counts of every comment of post pid that has none as layout 6
// did: up, down and replies at "0".
func (s *Store) ZeroCountsForTest(ctx context.Context, pid string) error {
	nums, err := s.threadNums(ctx, pid)
	if err != nil {
		return err
	}
	for _, n := range nums {
		key := s.k.comment(pid, n)
		for _, f := range []string{"up", "down", "replies"} {
			if err := s.rdb.HSetNX(ctx, key, f, "0").Err(); err != nil {
				return fmt.Errorf("comment %s: %w", n, err)
			}
		}
	}
	return nil
}
