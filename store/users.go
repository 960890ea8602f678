package store

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
	"golang.org/x/crypto/argon2"
)

// User is a member of the site.
type User struct {
	ID        string
	Name      string
	CreatedAt time.Time
	Admin     bool    // a site admin (see IsAdmin)
	Bio       *string // nil when none
	AvatarURL *string // an https URL; nil when none
}

// NodeID returns the user's global id.
func (u *User) NodeID() string { return u.ID }

// Key returns the user's key (the lower-cased name).
func (u *User) Key() UserKey { return UserKey(strings.TrimPrefix(u.ID, TypeUser+":")) }

// PasswordParams is the argon2id cost.
type PasswordParams struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
}

// DefaultPasswordParams is OWASP's minimum recommendation for argon2id.
var DefaultPasswordParams = PasswordParams{Memory: 19 * 1024, Time: 2, Threads: 1}

// Session is the result of signing up or logging in.
type Session struct {
	Token string
	User  *User
}

// SignUp creates a user and a first session; see SignUpWithEmail.
func (s *Store) SignUp(ctx context.Context, name, password string) (*Session, error) {
	return s.SignUpWithEmail(ctx, name, password, "")
}

// SignUpWithEmail creates a user and a first session. Names are unique ignoring case. A client
// address (WithClient) may sign up Options.Auth.SignUpsPerAddress times per window. With an
// email address (required under Options.RequireEmail, KindInvalid without one) the address is
// claimed for the account before it is created, as SetEmail claims it (KindConflict when another
// account holds it), and a link to verify it is mailed.
func (s *Store) SignUpWithEmail(ctx context.Context, name, password, email string) (*Session, error) {
	if !validUserName(name) {
		return nil, invalidf("name must be 3–32 of A-Z a-z 0-9 _ -")
	}
	if err := checkPassword(password); err != nil {
		return nil, err
	}
	var stored, key string
	if email != "" {
		var err error
		if stored, key, err = normalEmail(email); err != nil {
			return nil, err
		}
	} else if s.opts.RequireEmail {
		return nil, invalidf("an email address is required to sign up")
	}
	if err := s.signUpChecks(ctx, name); err != nil {
		return nil, err
	}
	uid := strings.ToLower(name)
	if key != "" {
		// A name that is taken claims no address: the one who tries another name may keep it.
		taken, err := s.cmd().Exists(ctx, s.k.user(uid)).Result()
		if err != nil {
			return nil, fmt.Errorf("sign up: %w", rdb.Unavailable(ctx, err))
		}
		if taken == 1 {
			return s.signUpAgain(ctx, name, password, stored, key, &Error{Kind: KindConflict, Msg: fmt.Sprintf("the name %q is taken", name)})
		}
		if err := s.claimEmail(ctx, uid, key); err != nil {
			return nil, err
		}
		if err := s.allowVerification(ctx, key); err != nil {
			return nil, err
		}
	}
	hash := s.hashPassword(password)
	now := s.now()
	n, err := s.noteRepair(ctx, repairUser+":"+uid)
	if err != nil {
		return nil, err
	}
	if _, err := s.run(ctx, "signup", []string{s.k.user(uid)}, name, hash, now.UnixMilli()); err != nil {
		if IsKind(err, KindConflict) {
			return s.signUpAgain(ctx, name, password, stored, key, err)
		}
		return nil, err
	}
	if err := s.registerUser(ctx, uid, false); err != nil {
		return nil, err
	}
	s.settled(ctx, n)
	if err := s.rememberAddress(ctx, uid); err != nil {
		return nil, err
	}
	if key != "" {
		if err := s.writeEmail(ctx, uid, name, stored, key); err != nil {
			return nil, err
		}
	}
	return s.newSession(ctx, &User{ID: userID(uid), Name: name, CreatedAt: fromMillis(now.UnixMilli())}, hash)
}

// signUpReplayWindow is how long after an account's creation a sign-up with the same name and
// password is taken as a retry of the one that created it.
const signUpReplayWindow = 24 * time.Hour

// signUpAgain answers a sign-up whose name is taken. When the account was created within
// signUpReplayWindow, the request may be a retry of the sign-up that created it, whose answer
// the client never got: it is then a log-in (with the log-in's limits on failures, so that it
// is no way around them), and a wrong password gets conflict. An older account gets conflict.
// A retry with an email address (stored; key lower-cased) that the account has not verified
// sets it again, as SetEmail does, so that a retry whose first attempt was cut off before its
// verification mail was queued gets one.
func (s *Store) signUpAgain(ctx context.Context, name, password, stored, key string, conflict error) (*Session, error) {
	uid := strings.ToLower(name)
	created, err := s.cmd().HGet(ctx, s.k.user(uid), "created").Result()
	if err != nil && !isNil(err) {
		return nil, fmt.Errorf("sign up: %w", err)
	}
	if created == "" || s.now().Sub(fromMillis(atoi64(created))) > signUpReplayWindow {
		return nil, conflict
	}
	sess, err := s.LogIn(ctx, name, password) // completes the sign-up's derived writes too
	if IsKind(err, KindUnauthenticated) {
		return nil, conflict
	}
	if err != nil || key == "" {
		return sess, err
	}
	addr, verified, err := s.Email(ctx, UserKey(uid))
	if err != nil {
		return nil, err
	}
	if verified && strings.ToLower(addr) == key {
		return sess, nil
	}
	if err := s.claimEmail(ctx, uid, key); err != nil {
		return nil, err
	}
	if err := s.allowVerification(ctx, key); err != nil {
		return nil, err
	}
	if err := s.writeEmail(ctx, uid, sess.User.Name, stored, key); err != nil {
		return nil, err
	}
	return sess, nil
}

// LogIn checks a name and password and starts a session. Failed log-ins are limited per account
// and per client address (WithClient; see checkCredentials): once a limit is reached, log-ins are
// refused with KindRateLimited before the password is checked, until the window has room, so
// guessing costs the guesser time and the server no hashing.
func (s *Store) LogIn(ctx context.Context, name, password string) (*Session, error) {
	bad := &Error{Kind: KindUnauthenticated, Msg: "wrong name or password"}
	if !validUserName(name) || len(password) > MaxPasswordBytes {
		return nil, bad
	}
	uid := strings.ToLower(name)
	vals, pass, err := s.checkCredentials(ctx, uid, password)
	if errors.Is(err, errWrongPassword) {
		return nil, bad
	}
	if err != nil {
		return nil, err
	}
	// Completes a sign-up whose indexing was cut off; idempotent and cheap otherwise.
	if err := s.registerUser(ctx, uid, false); err != nil {
		return nil, err
	}
	return s.newSession(ctx, s.userFromFields(uid, strs(vals)), pass)
}

// userFromFields builds a User from the values of userFields.
func (s *Store) userFromFields(uid string, v []string) *User {
	ms, _ := strconv.ParseInt(v[1], 10, 64)
	u := &User{ID: userID(uid), Name: v[0], CreatedAt: fromMillis(ms), Admin: s.IsAdmin(UserKey(uid))}
	if b := v[2]; b != "" {
		u.Bio = &b
	}
	if a := v[3]; a != "" {
		u.AvatarURL = &a
	}
	return u
}

func checkPassword(p string) error {
	if len(p) < MinPasswordBytes || len(p) > MaxPasswordBytes {
		return invalidf("password must be %d–%d bytes", MinPasswordBytes, MaxPasswordBytes)
	}
	return nil
}

// digest is the hex SHA-256 of a token; only digests are stored.
func digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// hashPassword returns the compact encoding of password's argon2id hash under the configured
// cost (see encodeHash).
func (s *Store) hashPassword(password string) string {
	release := s.acquireHashing()
	defer release()
	p := s.opts.Password
	salt := randomBytes(16)
	key := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, 32)
	return encodeHash(p.Memory, p.Time, p.Threads, salt, key)
}

// compactHash is the first byte of the compact encoding of an argon2id hash (version 0x13).
const compactHash = 0x13

// encodeHash writes an argon2id hash compactly, in binary: the byte compactHash, the memory and
// passes as uvarints, the lanes, the 16-byte salt and the 32-byte key — 54 bytes for the default
// cost. The PHC string ($argon2id$v=19$m=…,t=…,p=…$salt$key, ~97 bytes) is longer than Redis's
// hash-max-listpack-value (64), which would turn every user's hash into a hashtable (~260 bytes
// more per user); the compact form keeps it a listpack.
func encodeHash(m, t uint32, p uint8, salt, key []byte) string {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen32+1+len(salt)+len(key))
	b = append(b, compactHash)
	b = binary.AppendUvarint(b, uint64(m))
	b = binary.AppendUvarint(b, uint64(t))
	b = append(b, p)
	b = append(b, salt...)
	return string(append(b, key...))
}

// decodeHash reads a hash written by encodeHash, or one in the PHC string form that layouts
// before 3 stored.
func decodeHash(encoded string) (m, t uint32, p uint8, salt, key []byte, ok bool) {
	if strings.HasPrefix(encoded, "$") {
		parts := strings.Split(encoded, "$")
		if len(parts) != 6 || parts[1] != "argon2id" {
			return 0, 0, 0, nil, nil, false
		}
		if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
			return 0, 0, 0, nil, nil, false
		}
		salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
		key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
		return m, t, p, salt, key, err1 == nil && err2 == nil
	}
	b := []byte(encoded)
	if len(b) == 0 || b[0] != compactHash {
		return 0, 0, 0, nil, nil, false
	}
	b = b[1:]
	m64, n := binary.Uvarint(b)
	if n <= 0 || m64 > math.MaxUint32 {
		return 0, 0, 0, nil, nil, false
	}
	b = b[n:]
	t64, n := binary.Uvarint(b)
	if n <= 0 || t64 > math.MaxUint32 || len(b) < n+1+16+16 {
		return 0, 0, 0, nil, nil, false
	}
	b = b[n:]
	return uint32(m64), uint32(t64), b[0], b[1:17], b[17:], true
}

// compactedHash returns a PHC string hash in the compact encoding, unchanged otherwise: the
// migration from layout 2's step for users.
func compactedHash(encoded string) string {
	if !strings.HasPrefix(encoded, "$") {
		return encoded
	}
	m, t, p, salt, key, ok := decodeHash(encoded)
	if !ok {
		return encoded
	}
	return encodeHash(m, t, p, salt, key)
}

// acquireHashing waits for a hashing slot and returns its release.
func (s *Store) acquireHashing() func() {
	s.hashing <- struct{}{}
	return func() { <-s.hashing }
}

// verifyPassword checks password against an encoding made by hashPassword (or a PHC string from
// before layout 3), with the cost recorded in the encoding (so the cost can be raised without
// invalidating old hashes).
func (s *Store) verifyPassword(password, encoded string) bool {
	m, t, th, salt, want, ok := decodeHash(encoded)
	if !ok {
		return false
	}
	if s.onVerify != nil {
		s.onVerify()
	}
	release := s.acquireHashing()
	got := argon2.IDKey([]byte(password), salt, t, m, th, uint32(len(want)))
	release()
	return subtle.ConstantTimeCompare(got, want) == 1
}
