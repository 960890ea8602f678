package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// NoticesAsLayout4 writes the records of uid's inbox back as layout 4 kept them (JSON), as a
// keyspace of layout 4 has them, and returns how many it wrote.
func (s *Store) NoticesAsLayout4(ctx context.Context, uid UserKey) (int, error) {
	notes := s.k.inboxNotes(string(uid))
	recs, err := s.rdb.HGetAll(ctx, notes).Result()
	if err != nil {
		return 0, err
	}
	for cause, raw := range recs {
		rec, ok := unpackNotice(cause, raw)
		if !ok {
			return 0, fmt.Errorf("unreadable record %s: %q", cause, raw)
		}
		js, err := json.Marshal(rec)
		if err != nil {
			return 0, err
		}
		recs[cause] = string(js)
	}
	return len(recs), s.rdb.HSet(ctx, notes, recs).Err()
}

// PackNoticesForTest runs the step of the migration from layout 4 again: how many records it
// packed.
func (s *Store) PackNoticesForTest(ctx context.Context) (int, error) { return s.packNotices(ctx) }
