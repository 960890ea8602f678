package store

import "context"

// RepairConversation runs the repair of the conversation of u and v, as its repair job does.
func (s *Store) RepairConversation(ctx context.Context, u, v UserKey) error {
	a, b := pair(string(u), string(v))
	return s.syncConversation(ctx, a, b)
}
