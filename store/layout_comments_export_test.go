package store

import (
	"context"
	"fmt"
)

// Hooks of the migration of comment hashes (layout_comments.go) for the external tests.

// PackCommentsForTest runs the comments' step of the migration from layout 5 and returns how many
// hashes it packed.
func (s *Store) PackCommentsForTest(ctx context.Context) (int, error) { return s.packComments(ctx) }

// UnpackThreadForTest writes the hash of every comment of post pid as layout 5 kept it: the
// fields of m each under its own name, the parent in stored form, no m.
func (s *Store) UnpackThreadForTest(ctx context.Context, pid string) error {
	nums, err := s.threadNums(ctx, pid)
	if err != nil {
		return err
	}
	for _, n := range nums {
		key := s.k.comment(pid, n)
		h, err := s.rdb.HGetAll(ctx, key).Result()
		if err != nil {
			return fmt.Errorf("comment %s: %w", n, err)
		}
		if h[commentMetaField] == "" {
			return fmt.Errorf("comment %s is not packed: %v", n, h)
		}
		var args []any
		for f, v := range unpackCommentHash(h) {
			args = append(args, f, v)
		}
		if err := s.rdb.Del(ctx, key).Err(); err != nil {
			return err
		}
		if err := s.rdb.HSet(ctx, key, args...).Err(); err != nil {
			return err
		}
	}
	return nil
}

// CommentHashForTest returns the whole hash of comment id as Redis holds it.
func (s *Store) CommentHashForTest(ctx context.Context, id string) (map[string]string, error) {
	pid, num, err := CommentKey(id)
	if err != nil {
		return nil, err
	}
	return s.rdb.HGetAll(ctx, s.k.comment(pid, num)).Result()
}
