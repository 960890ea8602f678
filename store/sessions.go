package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// Sessions live in their user's hash slot, so that every session of a user can be ended in one
// script (logOutEverywhere, changePassword).
//
//   - A token names its user: "<user key>.<43 characters of base64url>", 256 random bits after
//     the dot. Only its SHA-256 digest is stored.
//   - The session is the string {u:<user>}:sess:<digest> holding the user key, with the session
//     TTL; each use extends it (GETEX). The zset {u:<user>}:sessions indexes the user's sessions,
//     digest → expiry (ms). Starting a session prunes the expired members and keeps at most
//     MaxSessions, ending those used longest ago.
//   - Authenticate reads, in one pipeline on the user's slot, the user's revision, the session
//     and the user's block list (Viewer): a signed-in request costs one round trip before its
//     resolvers run, as before.
//
// Tokens made before sessions moved (a bare base64url string) name no user: they are refused as
// invalid, and their users sign in again.

// MaxSessions is how many sessions a user keeps: starting one more ends the one used longest ago.
const MaxSessions = 100

// tokenRandomLen is the length of a token's random part: 32 bytes in unpadded base64url.
const tokenRandomLen = 43

// errBadToken is the answer to a token that is malformed, unknown or expired.
var errBadToken = &Error{Kind: KindUnauthenticated, Msg: "invalid or expired token"}

// parseToken splits a token into its user key and digest; ok is false when it is malformed.
func parseToken(token string) (uid, dig string, ok bool) {
	uid, rnd, found := strings.Cut(token, ".")
	if !found || len(rnd) != tokenRandomLen || !validUserName(uid) || strings.ToLower(uid) != uid {
		return "", "", false
	}
	if _, err := base64.RawURLEncoding.DecodeString(rnd); err != nil {
		return "", "", false
	}
	return uid, digest(token), true
}

// Viewer is who a request is from: the user of its session and the users they block.
type Viewer struct {
	User   UserKey
	Blocks *Blocks
	// ShowNSFW: the viewer shows NSFW posts (see labels.go), read with the session.
	ShowNSFW bool
}

// Authenticate returns the user of a session token and extends the session's life. An unknown,
// expired or malformed token is KindUnauthenticated.
func (s *Store) Authenticate(ctx context.Context, token string) (UserKey, error) {
	v, err := s.AuthenticateViewer(ctx, token)
	return v.User, err
}

// AuthenticateViewer is Authenticate that also reads the user's block list, with the revision of
// the user's aggregate read before it (see Blocks), in the same round trip.
func (s *Store) AuthenticateViewer(ctx context.Context, token string) (Viewer, error) {
	uid, dig, ok := parseToken(token)
	if !ok {
		return Viewer{}, errBadToken
	}
	revKey, sessKey, blocksKey := s.k.revOf(s.k.user(uid)), s.k.userSession(uid, dig), s.k.blocks(uid)
	var rev, sess *rdb.StringCmd
	var blocks *rdb.StringSliceCmd
	var nsfw *rdb.StringCmd
	err := s.pipeline(ctx, []op{
		{key: revKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			rev = p.Get(ctx, revKey) // before the block list: the revision is never newer than it
			return rev, nil
		}},
		{key: sessKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			sess = p.GetEx(ctx, sessKey, s.opts.SessionTTL)
			return sess, nil
		}},
		{key: blocksKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			blocks = p.ZRange(ctx, blocksKey, 0, -1)
			return blocks, nil
		}},
		s.showNSFWRead(ctx, uid, &nsfw),
	}, false)
	if err == nil {
		err = rdb.FirstErr([2]rdb.Cmder{rev, sess})
	}
	if err == nil {
		err = blocks.Err()
	}
	if err == nil && !isNil(nsfw.Err()) {
		err = nsfw.Err()
	}
	if err != nil {
		return Viewer{}, fmt.Errorf("authenticate: %w", err)
	}
	if errors.Is(sess.Err(), rdb.Nil) || sess.Val() != uid {
		return Viewer{}, errBadToken
	}
	return Viewer{User: UserKey(uid), Blocks: newBlocks(revKey, rev.Val(), blocks.Val()), ShowNSFW: nsfw.Val() == "1"}, nil
}

// newSession starts a session of u, whose password hash pass the caller checked the password
// against, and returns it with its token. When the hash changed since, the password was changed
// and its change ended every other session: the session is not started (KindUnauthenticated).
func (s *Store) newSession(ctx context.Context, u *User, pass string) (*Session, error) {
	uid := string(u.Key())
	token := uid + "." + base64.RawURLEncoding.EncodeToString(randomBytes(32)) // 256 random bits
	dig := digest(token)
	known, err := s.sessionDigests(ctx, uid)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	keys := []string{s.k.userSession(uid, dig), s.k.userSessions(uid), s.k.user(uid)}
	args := []any{dig, uid, s.opts.SessionTTL.Milliseconds(), s.now().UnixMilli(), MaxSessions, pass}
	for _, d := range known {
		keys, args = append(keys, s.k.userSession(uid, d)), append(args, d)
	}
	if _, err := s.run(ctx, "session_start", keys, args...); err != nil {
		if IsKind(err, KindForbidden) {
			return nil, &Error{Kind: KindUnauthenticated, Msg: "wrong name or password"}
		}
		return nil, fmt.Errorf("create session: %w", err)
	}
	return &Session{Token: token, User: u}, nil
}

// sessionDigests reads the digests of the sessions a user's index holds.
func (s *Store) sessionDigests(ctx context.Context, uid string) ([]string, error) {
	var cmd *rdb.StringSliceCmd
	key := s.k.userSessions(uid)
	err := s.pipeline(ctx, []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		cmd = p.ZRange(ctx, key, 0, -1)
		return cmd, nil
	}}}, false)
	if err == nil {
		err = cmd.Err()
	}
	return cmd.Val(), err
}

// SessionOf returns the user and the id of the session of token, the id the events of the user's
// Sessions channel name it by (EventIDs.Sessions); ok is false when the token is malformed. It
// reads nothing: whether the session is still on is SessionActive's question.
func SessionOf(token string) (user UserKey, id string, ok bool) {
	uid, dig, ok := parseToken(token)
	return UserKey(uid), dig, ok
}

// SessionActive reports whether the session of token is still on, without extending it: a live
// stream checks it after it subscribed to the ends of its user's sessions, and whenever it may
// have missed one. A malformed token has no session.
func (s *Store) SessionActive(ctx context.Context, token string) (bool, error) {
	uid, dig, ok := parseToken(token)
	if !ok {
		return false, nil
	}
	key := s.k.userSession(uid, dig)
	var cmd *rdb.IntCmd
	err := s.pipeline(ctx, []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		cmd = p.Exists(ctx, key)
		return cmd, nil
	}}}, false)
	if err == nil {
		err = cmd.Err()
	}
	if err != nil {
		return false, fmt.Errorf("check session: %w", err)
	}
	return cmd.Val() == 1, nil
}

// sessionsEndArgs returns the arguments of sessions_end.lua before its digests.
func (s *Store) sessionsEndArgs(uid, mode, keep, old, next string) []any {
	sharded := "0"
	if s.sharded {
		sharded = "1"
	}
	return []any{mode, keep, old, next, s.k.chanSessions(uid), sharded}
}

// LogOut ends the session of token, and the live streams it opened on every replica (see
// sessions_end.lua). A malformed token has no session to end.
func (s *Store) LogOut(ctx context.Context, token string) error {
	uid, dig, ok := parseToken(token)
	if !ok {
		return nil
	}
	keys := []string{s.k.userSessions(uid), s.k.user(uid), s.k.userSession(uid, dig)}
	args := append(s.sessionsEndArgs(uid, "listed", "", "", ""), dig)
	if _, err := s.run(ctx, "sessions_end", keys, args...); err != nil {
		return fmt.Errorf("log out: %w", err)
	}
	return nil
}

// LogOutEverywhere ends every session of the user uid, the one of the request included, and the
// live streams they opened.
func (s *Store) LogOutEverywhere(ctx context.Context, uid UserKey) error {
	if err := s.endSessions(ctx, string(uid), "", "", ""); err != nil {
		return fmt.Errorf("log out everywhere: %w", err)
	}
	return nil
}

// ChangePassword sets a new password for the user uid, who proves it with current, and ends every
// other session of theirs and the live streams they opened: token's session (the request's) and
// its streams go on. A wrong current password is
// KindForbidden and counts as a failed log-in (see LogIn), so that it cannot be used to guess; the
// new password must be valid like a sign-up's.
func (s *Store) ChangePassword(ctx context.Context, uid UserKey, token, current, next string) error {
	if err := checkPassword(next); err != nil {
		return err
	}
	if len(current) > MaxPasswordBytes {
		return &Error{Kind: KindForbidden, Msg: "the current password is wrong"}
	}
	_, old, err := s.checkCredentials(ctx, string(uid), current)
	if errors.Is(err, errWrongPassword) {
		return &Error{Kind: KindForbidden, Msg: "the current password is wrong"}
	}
	if err != nil {
		return err
	}
	keep := ""
	if u, dig, ok := parseToken(token); ok && u == string(uid) {
		keep = dig
	}
	if err := s.endSessions(ctx, string(uid), keep, old, s.hashPassword(next)); err != nil {
		return fmt.Errorf("change password: %w", err)
	}
	return nil
}

// endSessionsAttempts bounds how often endSessions reads the index again because sessions
// started meanwhile.
const endSessionsAttempts = 5

// endSessions ends every session of uid but keep (a digest; "" for none), setting the password
// hash from old to next when old is not "": one script that lists every session of the index,
// sent again when a session started between the read of the index and the script.
func (s *Store) endSessions(ctx context.Context, uid, keep, old, next string) error {
	for range endSessionsAttempts {
		known, err := s.sessionDigests(ctx, uid)
		if err != nil {
			return err
		}
		keys := []string{s.k.userSessions(uid), s.k.user(uid)}
		args := s.sessionsEndArgs(uid, "all", keep, old, next)
		for _, d := range known {
			keys, args = append(keys, s.k.userSession(uid, d)), append(args, d)
		}
		v, err := s.run(ctx, "sessions_end", keys, args...)
		if err != nil {
			return err
		}
		if n, _ := v.(int64); n == 1 {
			return nil
		}
	}
	return busyf("sessions kept starting while they were being ended; retry")
}
