package store

import (
	"context"
	"time"
)

// Hooks of bans for the external tests of package store_test.

// BanStepOnly runs only the atomic step of a ban (its repair note included), as a process that
// stops between ban.lua and what follows it would.
func (s *Store) BanStepOnly(ctx context.Context, actor, user UserKey, group string, until *time.Time, reason string) error {
	scope, err := s.banScope(actor, group)
	if err != nil {
		return err
	}
	end := permanentScore
	if until != nil {
		end = until.UnixMilli()
	}
	if _, err := s.allowWrite(ctx, string(actor), banItem(scope, user), banWriteScope(scope)); err != nil {
		return err
	}
	_, err = s.banStep(ctx, "ban", scope, actor, user, s.now(), end, reason)
	return err
}

// BanVersion returns the version of user's ban record in group ("" for the site); 0 when none.
func (s *Store) BanVersion(ctx context.Context, user UserKey, group string) (int64, error) {
	scope := siteScope
	if group != "" {
		scope = group
	}
	raw, err := s.rdb.HGet(ctx, s.banKeys(scope)[1], string(user)).Result()
	if isNil(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	rec, err := parseBanRecord(raw)
	if err != nil {
		return 0, err
	}
	return rec.Ver, nil
}

// MirrorBan writes user's copy of a ban in group ("" for the site) of version ver ending at until
// (nil: for good), as a late or repeated copy would.
func (s *Store) MirrorBan(ctx context.Context, user UserKey, group string, until *time.Time, ver int64, nonce string) error {
	scope := siteScope
	if group != "" {
		scope = group
	}
	end := permanentScore
	if until != nil {
		end = until.UnixMilli()
	}
	return s.mirrorBan(ctx, scope, string(user), end, ver, nonce)
}
