package store

import "context"

// MovePostTextsForTest runs the migration step from layout 4 (movePostTexts) on its own, and
// returns how many posts it changed.
func (s *Store) MovePostTextsForTest(ctx context.Context) (int, error) { return s.movePostTexts(ctx) }

// BucketCommentVotesForTest runs the migration step from layout 5 (bucketCommentVotes) on its
// own, and returns how many votes it moved.
func (s *Store) BucketCommentVotesForTest(ctx context.Context) (int, error) {
	return s.bucketCommentVotes(ctx)
}
