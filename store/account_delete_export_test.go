package store

import "context"

// EraseStep runs one batch of a deletion's step, as a job would, without queueing what follows:
// a chain cut off after it.
func (s *Store) EraseStep(ctx context.Context, uid UserKey, step string, erase bool) (bool, error) {
	if step == "removed-posts" || step == "removed-comments" {
		next, err := s.eraseRemoved(ctx, string(uid), step, 0, erase)
		return next >= 0, err
	}
	return s.eraseStep(ctx, string(uid), step, 0, erase)
}
