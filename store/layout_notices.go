package store

import (
	"context"
	"fmt"
	"strings"
)

// packNotices writes every inbox's notification records packed (noticeRecord.pack) in place of
// layout 4's JSON, and returns how many it packed: the migration from layout 4. An inbox's
// records are read, packed here, and written by one script on the inbox's slot that packs only a
// record still as it was read (pack_notes.lua), so it is safe beside traffic; a run cut off is
// resumed by running it again, which packs what is left.
func (s *Store) packNotices(ctx context.Context) (int, error) {
	var uids []string
	head, tail := s.k.prefix+"{n:", "}:notes"
	err := s.scanKeys(ctx, s.k.inboxNotes("*"), func(key string) error {
		if uid, ok := strings.CutPrefix(key, head); ok {
			if uid, ok = strings.CutSuffix(uid, tail); ok && validUserName(uid) {
				uids = append(uids, uid)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	packed := 0
	for _, uid := range uids {
		notes := s.k.inboxNotes(uid)
		recs, err := s.cmd().HGetAll(ctx, notes).Result()
		if err != nil {
			return packed, fmt.Errorf("read the notifications of %s: %w", uid, err)
		}
		var args []any
		for cause, raw := range recs {
			if !strings.HasPrefix(raw, "{") {
				continue // packed already
			}
			rec, ok := unpackNotice(cause, raw)
			if _, known := noticeCodes[rec.Kind]; !ok || !known {
				continue // unreadable: left as it is, read as nothing, as before
			}
			args = append(args, cause, raw, rec.pack(cause))
		}
		if len(args) == 0 {
			continue
		}
		v, err := s.run(ctx, "pack_notes", []string{notes}, args...)
		if err != nil {
			return packed, fmt.Errorf("pack the notifications of %s: %w", uid, err)
		}
		n, err := replyInt("pack_notes", v)
		if err != nil {
			return packed, err
		}
		packed += int(n)
	}
	return packed, nil
}
