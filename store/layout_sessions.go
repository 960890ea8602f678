package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// Layout 4 kept each session as a string of its own, {u:<user>}:sess:<digest> (the token's
// SHA-256 in hex) with the session's TTL, indexed in a zset {u:<user>}:sessions (digest →
// expiry). Layout 5 keeps a user's sessions as fields of one hash (sessions.go): about 400 bytes
// less per user with one session. The migration from layout 4 moves every live session into its
// user's hash with the expiry its TTL gave it, under the id its token still maps to, so that
// nobody is signed out by the upgrade; until it has run (Store.legacySessions) a session is also
// looked for where layout 4 kept it, and moved when found (session_touch.lua), and the scripts
// that end sessions end those of layout 4 too.

// Layouts 5 to 7 kept a user's sessions in a hash of their own, {u:<user>}:s (session id →
// expiry ms). Layout 8 keeps them as fields of the user's hash, s:<id> → expiry (sessions.go): one
// key less per user with a session, about 105 bytes. The migration from layout 7 (foldSessions)
// moves each such hash into its user's hash and deletes it, one script per user
// (sessions_fold.lua), safe beside traffic and to run again. Meanwhile, as for comment keys
// (layout_shortkeys.go), sessions are moved before they are used, so that a process reads and
// writes one shape: while the keyspace may still hold such a hash (Store.sessionsApart: the
// layout was older than 8 when the process started, and it has not migrated it since), every
// script on a user's sessions also takes the user's hash of layouts 5 to 7 and folds it into the
// user's hash first (scripts/lib/sessions.lua; sessions_end.lua ends the sessions of both), and
// SessionActive, which only reads, looks in both. A session that a process of layout 7 starts
// beside the migration, in the hash of its own, is thus found by the next use, start or end of a
// session of its user on a process of layout 8, and by the migration's step, which Rebuild runs
// again for those started after it.

// apartSessions is the hash of a user's sessions of layouts 5 to 7: session id → expiry ms.
func (k keys) apartSessions(uid string) string { return k.user(uid) + ":s" }

// foldSessionsDoes is what the step does, for `agora migrate --dry-run`.
const foldSessionsDoes = "move every user's sessions from the hash of their own ({u:<name>}:s, deleted) into the " +
	"user's hash (field s:<session id> → expiry), each with its expiry, so that no one is signed out (about 105 " +
	"bytes less per user with a session)"

// foldSessions moves every user's sessions hash of layouts 5 to 7 into the user's hash
// (sessions_fold.lua: the migration from layout 7) and returns how many live sessions it moved.
func (s *Store) foldSessions(ctx context.Context) (int, error) {
	head, tail := s.k.prefix+"{u:", "}:s"
	now := s.now().UnixMilli()
	return s.scanScripts(ctx, s.k.apartSessions("*"), "fold the sessions",
		func(key string) (scriptCall, bool) {
			uid, _ := strings.CutPrefix(key, head)
			uid, ok := strings.CutSuffix(uid, tail)
			if !ok || !validUserName(uid) || key != s.k.apartSessions(uid) {
				return scriptCall{}, false
			}
			return scriptCall{name: "sessions_fold", keys: []string{s.k.user(uid), key}, args: s.foldSessionsArgs(uid, now)}, true
		})
}

// foldSessionsArgs are the arguments of sessions_fold.lua for user uid at now (Unix ms).
func (s *Store) foldSessionsArgs(uid string, now int64) []any {
	return []any{now, MaxSessions, s.k.chanSessions(uid), s.pubSubArg()}
}

// legacySession is layout 4's string of the session of digest (64 hex digits).
func (k keys) legacySession(uid, digest string) string { return k.user(uid) + ":sess:" + digest }

// legacySessionIndex is layout 4's index of a user's sessions (digest → expiry ms).
func (k keys) legacySessionIndex(uid string) string { return k.user(uid) + ":sessions" }

// migrateSessions moves every session of layout 4 into its user's sessions hash and returns how
// many live ones it moved: the migration from layout 4's step for sessions. It goes user by user
// through layout 4's indexes (one script each), then through whatever session strings no index
// listed. Running it again finds nothing to move.
func (s *Store) migrateSessions(ctx context.Context) (int, error) {
	var users []string
	err := s.scanKeys(ctx, s.k.prefix+"{u:*}:sessions", func(key string) error {
		uid, ok := strings.CutSuffix(strings.TrimPrefix(key, s.k.prefix+"{u:"), "}:sessions")
		if ok && validUserName(uid) && key == s.k.legacySessionIndex(uid) {
			users = append(users, uid)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("list the sessions of layout 4: %w", err)
	}
	n := 0
	for _, uid := range users {
		moved, err := s.moveUserSessions(ctx, uid, nil)
		if err != nil {
			return n, err
		}
		n += moved
	}
	strays := map[string][]string{}
	err = s.scanKeys(ctx, s.k.prefix+"{u:*}:sess:*", func(key string) error {
		uid, dig, ok := strings.Cut(strings.TrimPrefix(key, s.k.prefix+"{u:"), "}:sess:")
		if ok && validUserName(uid) && isHexDigest(dig) && key == s.k.legacySession(uid, dig) {
			strays[uid] = append(strays[uid], dig)
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("list the sessions of layout 4: %w", err)
	}
	for uid, digs := range strays {
		moved, err := s.moveUserSessions(ctx, uid, digs)
		if err != nil {
			return n, err
		}
		n += moved
	}
	return n, nil
}

// moveUserSessions moves the sessions of layout 4 that digs names — nil for those the user's
// index lists — into the user's sessions hash of layouts 5 to 7 (sessions_move.lua), which the
// migration from layout 7 folds into the user's hash, and returns how many live ones it moved.
func (s *Store) moveUserSessions(ctx context.Context, uid string, digs []string) (int, error) {
	index := s.k.legacySessionIndex(uid)
	if digs == nil {
		var cmd *rdb.StringSliceCmd
		err := s.pipeline(ctx, []op{{key: index, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cmd = p.ZRange(ctx, index, 0, -1)
			return cmd, nil
		}}}, false)
		if err == nil {
			err = cmd.Err()
		}
		if err != nil {
			return 0, fmt.Errorf("read the sessions of %s: %w", uid, err)
		}
		digs = cmd.Val()
	}
	if len(digs) == 0 {
		return 0, nil
	}
	keys := []string{s.k.apartSessions(uid), index}
	args := []any{s.now().UnixMilli()}
	for _, d := range digs {
		keys, args = append(keys, s.k.legacySession(uid, d)), append(args, d)
	}
	v, err := s.run(ctx, "sessions_move", keys, args...)
	if err != nil {
		return 0, fmt.Errorf("move the sessions of %s: %w", uid, err)
	}
	n, err := replyInt("sessions_move", v)
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// isHexDigest reports whether d is a SHA-256 digest in lower-case hex, as layout 4 named sessions.
func isHexDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	for _, c := range d {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
