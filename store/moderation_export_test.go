package store

import (
	"context"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// Hooks of the moderation plumbing for the external tests of package store_test.

// Authority exposes authority.
func (s *Store) Authority(ctx context.Context, actor UserKey, groups []string) (string, error) {
	return s.authority(ctx, actor, groups)
}

// AuthorityOverAll exposes authorityOverAll.
func (s *Store) AuthorityOverAll(ctx context.Context, actor UserKey, groups []string) (string, error) {
	return s.authorityOverAll(ctx, actor, groups)
}

// LogAction exposes logAction for an action with key key.
func (s *Store) LogAction(ctx context.Context, kind ModActionKind, moderator UserKey, group, target string, reason *string, at time.Time, key string) error {
	return s.logAction(ctx, newModAction(kind, moderator, group, target, reason, at, key))
}

// SetModerator writes uid into a group's moderators directly, as createGroup and addModerator do.
func (s *Store) SetModerator(ctx context.Context, group string, uid UserKey) error {
	return s.rdb.ZAdd(ctx, s.k.groupMods(group), rdb.Z{Score: float64(s.now().UnixMilli()), Member: string(uid)}).Err()
}

// newModAction returns the action to log for what moderator did to target at now, with the key
// parts joined into its id.
func newModAction(kind ModActionKind, moderator UserKey, group, target string, reason *string, now time.Time, key ...string) ModAction {
	return ModAction{ID: modActionID(strings.Join(key, ":")), Action: kind, Moderator: moderator, Group: group,
		TargetID: target, Reason: reason, CreatedAt: now}
}
