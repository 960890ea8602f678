package store

import "context"

// FoldSessionsForTest runs the step of the migration from layout 7 that folds every user's
// sessions hash of layouts 5 to 7 into the user's hash: how many live sessions it moved.
func (s *Store) FoldSessionsForTest(ctx context.Context) (int, error) { return s.foldSessions(ctx) }
