package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// Sessions live in their user's hash, so that every session of a user can be ended in one script
// (logOutEverywhere, changePassword, an account's deletion).
//
//   - A token names its user: "<user key>.<43 characters of base64url>", 256 random bits after
//     the dot. Only a digest of it is stored: the session's id (sessionID), the first 128 bits of
//     its SHA-256 in hex.
//   - A user's sessions are fields of the user's hash {u:<user>}: s:<session id> → when the
//     session expires (Unix ms; sessionField, scripts/lib/sessions.lua). A session is alive while
//     that time is ahead, exact at read time; each use moves it to a full TTL from then
//     (session_touch.lua). Starting a session drops the expired ones and keeps at most
//     MaxSessions, ending those used longest ago. No other field of a user hash starts with "s:",
//     and every read of a profile names its fields (userFields), so no session id reaches a
//     response; the export lists sessions without their ids. A field of 34 bytes and a value of
//     13 digits, the hash stays a listpack with MaxSessions sessions and every other field
//     (TestSessionCap); layouts 5 to 7 kept the sessions in a hash of their own, {u:<user>}:s,
//     one key more per user (~105 bytes with one session).
//   - Authenticate reads, in one pipeline on the user's slot, the user's revision, the session
//     (the script that checks and extends it) and the user's block list (Viewer): a signed-in
//     request costs one round trip before its resolvers run, as before.
//
// Tokens made before sessions moved into their users' slots (a bare base64url string) name no
// user: they are refused as invalid, and their users sign in again. Sessions of layout 4 (a key
// each, with a TTL) are moved by the migration to layout 5, and the hashes of layouts 5 to 7 into
// the users' hashes by the migration to layout 8 (layout_sessions.go), their tokens unchanged.

// MaxSessions is how many sessions a user keeps: starting one more ends the one used longest ago.
// With the user hash's other fields (at most 8) it stays under hash-max-listpack-entries (128),
// so that the hash stays a listpack.
const MaxSessions = 100

// tokenRandomLen is the length of a token's random part: 32 bytes in unpadded base64url.
const tokenRandomLen = 43

// errBadToken is the answer to a token that is malformed, unknown or expired.
var errBadToken = &Error{Kind: KindUnauthenticated, Msg: "invalid or expired token"}

// sessionIDLen is the length of a session's id: 128 bits of its token's SHA-256, in hex. The token
// holds 256 random bits; finding a token for a stored id takes a preimage of those 128 bits.
const sessionIDLen = 32

// sessionID is the id under which the session of token is stored: the start of its digest.
func sessionID(token string) string { return digest(token)[:sessionIDLen] }

// parseSession splits a session's token into its user key and session id; ok is false when it
// is malformed.
func parseSession(token string) (uid, id string, ok bool) {
	uid, dig, ok := parseToken(token)
	if !ok {
		return "", "", false
	}
	return uid, dig[:sessionIDLen], true
}

// parseToken splits a token (a session's, or one mailed to its user) into its user key and
// digest; ok is false when it is malformed.
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
	uid, dig, ok := parseSession(token)
	if !ok {
		return Viewer{}, errBadToken
	}
	userKey := s.k.user(uid)
	revKey, blocksKey := s.k.revOf(userKey), s.k.blocks(uid)
	var rev *rdb.StringCmd
	var sess *rdb.Cmd
	var blocks *rdb.StringSliceCmd
	var nsfw *rdb.StringCmd
	err := s.pipeline(ctx, []op{
		{key: revKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			rev = p.Get(ctx, revKey) // before the block list: the revision is never newer than it
			return rev, nil
		}},
		{key: userKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			keys := s.sessionKeys(uid, token)
			sess = s.scripts.get("session_touch").EvalSha(ctx, p, keys, dig, s.now().UnixMilli(), s.opts.SessionTTL.Milliseconds(), MaxSessions,
				s.k.chanSessions(uid), s.pubSubArg())
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
	alive, err := replyInt("session_touch", sess.Val())
	if err != nil {
		return Viewer{}, fmt.Errorf("authenticate: %w", err)
	}
	if alive != 1 {
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
	keys := s.sessionKeys(uid, "")
	args := []any{sessionID(token), s.opts.SessionTTL.Milliseconds(), s.now().UnixMilli(), MaxSessions, pass,
		s.k.chanSessions(uid), s.pubSubArg()}
	if _, err := s.run(ctx, "session_start", keys, args...); err != nil {
		if IsKind(err, KindForbidden) {
			return nil, &Error{Kind: KindUnauthenticated, Msg: "wrong name or password"}
		}
		return nil, fmt.Errorf("create session: %w", err)
	}
	return &Session{Token: token, User: u}, nil
}

// SessionOf returns the user and the id of the session of token, the id the events of the user's
// Sessions channel name it by (EventIDs.Sessions); ok is false when the token is malformed. It
// reads nothing: whether the session is still on is SessionActive's question.
func SessionOf(token string) (user UserKey, id string, ok bool) {
	uid, dig, ok := parseSession(token)
	return UserKey(uid), dig, ok
}

// SessionActive reports whether the session of token is still on, without extending it: a live
// stream checks it after it subscribed to the ends of its user's sessions, and whenever it may
// have missed one. A malformed token has no session.
func (s *Store) SessionActive(ctx context.Context, token string) (bool, error) {
	ops, on := s.sessionActiveOps(ctx, token)
	if len(ops) == 0 {
		return false, nil
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return false, fmt.Errorf("check session: %w", err)
	}
	return on()
}

// SessionState is SessionActive and the live filters of the session's user (LiveFilters) in one
// round trip: what a live stream reads when it starts watching its session, and after a gap in
// which it may have missed an end or a change of its filters. A malformed token has no session and no filters.
func (s *Store) SessionState(ctx context.Context, token string) (bool, LiveFilters, error) {
	uid, _, ok := parseSession(token)
	if !ok {
		return false, LiveFilters{}, nil
	}
	ops, on := s.sessionActiveOps(ctx, token)
	fops, filters := s.liveFiltersOps(ctx, uid)
	if err := s.pipeline(ctx, append(ops, fops...), false); err != nil {
		return false, LiveFilters{}, fmt.Errorf("check session: %w", err)
	}
	active, err := on()
	if err != nil {
		return false, LiveFilters{}, err
	}
	f, err := filters()
	return active, f, err
}

// sessionActiveOps returns the reads of whether the session of token is on (none for a
// malformed token), and what they say once they ran.
func (s *Store) sessionActiveOps(ctx context.Context, token string) ([]op, func() (bool, error)) {
	uid, dig, ok := parseSession(token)
	if !ok {
		return nil, func() (bool, error) { return false, nil }
	}
	key := s.k.user(uid)
	var cmd, apart *rdb.StringCmd
	var legacy *rdb.IntCmd
	ops := []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		cmd = p.HGet(ctx, key, sessionField(dig))
		return cmd, nil
	}}}
	if s.sessionsApart.Load() {
		akey := s.k.apartSessions(uid)
		ops = append(ops, op{key: akey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			apart = p.HGet(ctx, akey, dig)
			return apart, nil
		}})
	}
	if s.legacySessions.Load() {
		lkey := s.k.legacySession(uid, digest(token))
		ops = append(ops, op{key: lkey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			legacy = p.Exists(ctx, lkey)
			return legacy, nil
		}})
	}
	return ops, func() (bool, error) {
		var err error
		if !isNil(cmd.Err()) {
			err = cmd.Err()
		}
		if err == nil && apart != nil && !isNil(apart.Err()) {
			err = apart.Err()
		}
		if err == nil && legacy != nil {
			err = legacy.Err()
		}
		if err != nil {
			return false, fmt.Errorf("check session: %w", err)
		}
		now := s.now().UnixMilli()
		return atoi64(cmd.Val()) > now || (apart != nil && atoi64(apart.Val()) > now) || (legacy != nil && legacy.Val() == 1), nil
	}
}

// sessionKeys returns the keys of a session script on uid's sessions: the user's hash, then,
// while the keyspace may hold sessions of layouts 5 to 7 (sessionsApart), their hash, and, while
// it may hold those of layout 4 and token is not "", the token's string of layout 4 (see
// session_touch.lua).
func (s *Store) sessionKeys(uid, token string) []string {
	keys := []string{s.k.user(uid)}
	if s.sessionsApart.Load() {
		keys = append(keys, s.k.apartSessions(uid))
		if token != "" && s.legacySessions.Load() {
			keys = append(keys, s.k.legacySession(uid, digest(token)))
		}
	}
	return keys
}

// sessionsEnd runs sessions_end.lua on uid's sessions (see its header for mode, keep, old and
// next), for ids with mode "listed", and token's session of layout 4 when token is not "".
func (s *Store) sessionsEnd(ctx context.Context, uid, token, mode, keep, old, next string, ids ...string) error {
	keys := s.sessionKeys(uid, token)
	apart := "0"
	if len(keys) > 1 {
		apart = "1"
	}
	args := []any{mode, keep, old, next, s.k.chanSessions(uid), s.pubSubArg(), apart}
	for _, id := range ids {
		args = append(args, id)
	}
	_, err := s.run(ctx, "sessions_end", keys, args...)
	return err
}

// userSessions returns the sessions of uid's hash, id → expiry (Unix ms), expired ones included:
// the fields of the hash that hold sessions (sessionField), which HSCAN picks out on the server,
// so that the user's other fields (the password hash among them) never leave it.
func (s *Store) userSessions(ctx context.Context, uid string) (map[string]int64, error) {
	out := map[string]int64{}
	iter := s.cmd().HScanIterator(s.k.user(uid), sessionFieldPrefix+"*", 2*MaxSessions)
	for iter.Next(ctx) {
		field := iter.Val()
		if !iter.Next(ctx) {
			break
		}
		if id, ok := strings.CutPrefix(field, sessionFieldPrefix); ok {
			out[id] = atoi64(iter.Val())
		}
	}
	if err := iter.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// LogOut ends the session of token, and the live streams it opened on every replica (see
// sessions_end.lua). A malformed token has no session to end.
func (s *Store) LogOut(ctx context.Context, token string) error {
	uid, dig, ok := parseSession(token)
	if !ok {
		return nil
	}
	if err := s.sessionsEnd(ctx, uid, token, "listed", "", "", "", dig); err != nil {
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
	if u, dig, ok := parseSession(token); ok && u == string(uid) {
		keep = dig
	}
	if err := s.endSessions(ctx, string(uid), keep, old, s.hashPassword(next)); err != nil {
		return fmt.Errorf("change password: %w", err)
	}
	return nil
}

// endSessions ends every session of uid but keep (a session id; "" for none), setting the password
// hash from old to next when old is not "": one script, which finds the sessions in the user's
// hash and, while there may be any, in the hash of layouts 5 to 7 (those of layout 4 are moved
// into it first, while there may be any).
func (s *Store) endSessions(ctx context.Context, uid, keep, old, next string) error {
	if s.legacySessions.Load() {
		if _, err := s.moveUserSessions(ctx, uid, nil); err != nil {
			return err
		}
	}
	return s.sessionsEnd(ctx, uid, "", "all", keep, old, next)
}
