package store

import "context"

// Hooks of the vote log's tests.

// CompactVoted compacts uid's vote log now, as its job does, and returns its length before and
// after (-1: not written).
func (s *Store) CompactVoted(ctx context.Context, uid string) (before, after int64, err error) {
	return s.compactVoted(ctx, uid)
}
