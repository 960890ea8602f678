package store

import "context"

// EraseStep runs one batch of a deletion's step, as a job would, without queueing what follows:
// a chain cut off after it.
func (s *Store) EraseStep(ctx context.Context, uid UserKey, step string, erase bool) (bool, error) {
	if step == "removed-posts" || step == "removed-comments" {
		next, err := s.eraseRemoved(ctx, string(uid), step, 0, erase)
		return next >= 0, err
	}
	if step == "moderated" {
		next, err := s.eraseModerated(ctx, string(uid), "0")
		return next != "", err
	}
	return s.eraseStep(ctx, string(uid), step, 0, erase)
}

// EraseModerated runs the batch at cursor of a deletion's "moderated" step with batches of size
// groups, as a job would, and returns the next cursor ("" when done) without queueing its job.
func (s *Store) EraseModerated(ctx context.Context, uid UserKey, cursor string, size int) (string, error) {
	return s.eraseModeratedBy(ctx, string(uid), cursor, size)
}

// RepairGroup runs the repair of a group's item, as its repair job would.
func (s *Store) RepairGroup(ctx context.Context, group string) error {
	return s.repair(ctx, repairGroup+":"+group)
}
