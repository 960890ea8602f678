package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// NoticesAsLayout4 writes the records of uid's inbox back as layout 4 kept them (JSON, the unread
// ids apart: UnreadAsLayout5), as a keyspace of layout 4 has them, and returns how many it wrote.
func (s *Store) NoticesAsLayout4(ctx context.Context, uid UserKey) (int, error) {
	if _, err := s.UnreadAsLayout5(ctx, uid); err != nil {
		return 0, err
	}
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

// UnreadAsLayout5 writes uid's inbox back as layout 5 kept it: its unread ids in a sorted set by
// creation time ({n:<user>}:unread), every record in upper case, no count; it returns how many
// were unread.
func (s *Store) UnreadAsLayout5(ctx context.Context, uid UserKey) (int, error) {
	u := string(uid)
	notes, legacy := s.k.inboxNotes(u), s.k.legacyInboxUnread(u)
	recs, err := s.rdb.HGetAll(ctx, notes).Result()
	if err != nil {
		return 0, err
	}
	var unread []rdb.Z
	for cause, raw := range recs {
		if cause == unreadField {
			continue
		}
		rec, ok := unpackNotice(cause, raw)
		if !ok {
			return 0, fmt.Errorf("unreadable record %s: %q", cause, raw)
		}
		if !rec.Unread {
			continue
		}
		unread = append(unread, rdb.Z{Score: float64(rec.At), Member: cause})
		rec.Unread = false
		if err := s.rdb.HSet(ctx, notes, cause, rec.pack(cause)).Err(); err != nil {
			return 0, err
		}
	}
	if err := s.rdb.HDel(ctx, notes, unreadField).Err(); err != nil {
		return 0, err
	}
	if len(unread) > 0 {
		if err := s.rdb.ZAdd(ctx, legacy, unread...).Err(); err != nil {
			return 0, err
		}
	}
	return len(unread), nil
}

// FoldUnreadForTest runs the step of the migration from layout 5 that folds the inboxes' unread
// sets: how many records it marked unread.
func (s *Store) FoldUnreadForTest(ctx context.Context) (int, error) { return s.foldUnread(ctx) }

// FoldInboxForTest folds uid's inbox alone, as the step does each (unread_fold.lua): how many
// records it marked unread.
func (s *Store) FoldInboxForTest(ctx context.Context, uid UserKey) (int, error) {
	u := string(uid)
	v, err := s.run(ctx, "unread_fold", []string{s.k.inboxNotes(u), s.k.legacyInboxUnread(u)})
	if err != nil {
		return 0, err
	}
	n, err := replyInt("unread_fold", v)
	return int(n), err
}

// NotifyAsLayout5ForTest writes a FOLLOW of actor's into uid's inbox as a process of layout 5
// did: the record in upper case, its id in the inbox and in the sorted set of unread ids.
func (s *Store) NotifyAsLayout5ForTest(ctx context.Context, uid UserKey, cause string, at time.Time) error {
	u, ms := string(uid), at.UnixMilli()
	rec := noticeRecord{Kind: NotificationFollow, At: ms, Actor: causeRecord(cause).Actor}
	if err := s.rdb.HSet(ctx, s.k.inboxNotes(u), cause, rec.pack(cause)).Err(); err != nil {
		return err
	}
	if err := s.rdb.ZAdd(ctx, s.k.inbox(u), rdb.Z{Score: float64(ms), Member: cause}).Err(); err != nil {
		return err
	}
	return s.rdb.ZAdd(ctx, s.k.legacyInboxUnread(u), rdb.Z{Score: float64(ms), Member: cause}).Err()
}
