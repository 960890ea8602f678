package store

import "context"

// PublishCommentAdded lets the tests of package store_test announce a comment before the
// comments feature, whose createComment calls publishCommentAdded, is in place.
func (s *Store) PublishCommentAdded(ctx context.Context, pid, commentID string) {
	s.publishCommentAdded(ctx, pid, commentID)
}
