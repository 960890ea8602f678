package store

import "context"

// MovePostTextsForTest runs the migration step from layout 4 (movePostTexts) on its own, and
// returns how many posts it changed.
func (s *Store) MovePostTextsForTest(ctx context.Context) (int, error) { return s.movePostTexts(ctx) }
