package store

import "context"

// EraseStep runs one batch of a deletion's step, as a job would, without queueing what follows:
// a chain cut off after it.
func (s *Store) EraseStep(ctx context.Context, uid UserKey, step string, erase bool) (bool, error) {
	return s.eraseStep(ctx, string(uid), step, 0, erase)
}
