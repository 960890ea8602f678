package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// NoticesAsLayout4 writes the records of uid's inbox back as layout 4 kept them (JSON, the unread
// ids apart: UnreadAsLayout6), as a keyspace of layout 4 has them, and returns how many it wrote.
func (s *Store) NoticesAsLayout4(ctx context.Context, uid UserKey) (int, error) {
	if _, err := s.UnreadAsLayout6(ctx, uid); err != nil {
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
		at, err := s.rdb.ZScore(ctx, s.k.inbox(string(uid)), cause).Result()
		if err != nil {
			return 0, fmt.Errorf("the creation time of %s: %w", cause, err)
		}
		rec.At = int64(at)
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

// UnreadAsLayout6 writes uid's inbox back as layout 6 kept it: its unread ids in a sorted set by
// creation time ({n:<user>}:unread), every record in upper case with its creation time, no count;
// it returns how many were unread.
func (s *Store) UnreadAsLayout6(ctx context.Context, uid UserKey) (int, error) {
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
		at, err := s.rdb.ZScore(ctx, s.k.inbox(u), cause).Result()
		if err != nil {
			return 0, fmt.Errorf("the creation time of %s: %w", cause, err)
		}
		if rec.Unread {
			unread = append(unread, rdb.Z{Score: at, Member: cause})
		}
		rec.Unread = false
		p := rec.pack(cause)
		if err := s.rdb.HSet(ctx, notes, cause, p[:1]+strconv.FormatInt(int64(at), 36)+p[1:]).Err(); err != nil {
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

// FoldInboxesForTest runs the step of the migration from layout 6 that folds the inboxes' unread
// sets: how many records it marked unread.
func (s *Store) FoldInboxesForTest(ctx context.Context) (int, error) { return s.foldInboxes(ctx) }

// FoldInboxForTest folds uid's inbox alone, as the step does each (fold_inbox.lua): how many
// records it marked unread.
func (s *Store) FoldInboxForTest(ctx context.Context, uid UserKey) (int, error) {
	u := string(uid)
	v, err := s.run(ctx, "fold_inbox", []string{s.k.inboxNotes(u), s.k.legacyInboxUnread(u)})
	if err != nil {
		return 0, err
	}
	n, err := replyInt("fold_inbox", v)
	return int(n), err
}

// NotifyAsLayout6ForTest writes a FOLLOW of actor's into uid's inbox as a process of layout 6
// did: the record in upper case, its id in the inbox and in the sorted set of unread ids.
func (s *Store) NotifyAsLayout6ForTest(ctx context.Context, uid UserKey, cause string, at time.Time) error {
	u, ms := string(uid), at.UnixMilli()
	rec := noticeRecord{Kind: NotificationFollow, Actor: causeRecord(cause).Actor}
	if err := s.rdb.HSet(ctx, s.k.inboxNotes(u), cause, rec.pack(cause)[:1]+strconv.FormatInt(ms, 36)).Err(); err != nil {
		return err
	}
	if err := s.rdb.ZAdd(ctx, s.k.inbox(u), rdb.Z{Score: float64(ms), Member: cause}).Err(); err != nil {
		return err
	}
	return s.rdb.ZAdd(ctx, s.k.legacyInboxUnread(u), rdb.Z{Score: float64(ms), Member: cause}).Err()
}
