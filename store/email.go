package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	netmail "net/mail"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
	"github.com/agora/agora/mail"
)

// Email addresses, verification and password resets.
//
//   - A user's address is the field email of their hash, emailv "1" once verified.
//   - An address belongs to one account: the hash {e:<address>} (the address lower-cased) names
//     its user. setEmail claims it (email_claim.lua, one script on the address's slot) before it
//     writes the user's hash, and releases the old address after; a claim whose user's hash does
//     not hold the address (a process died between the two) is taken over once it is older than
//     emailClaimGrace. Every setEmail confirms the claim of the address its user's hash holds
//     after its write and its release (confirmClaim), and a take-over takes the address out of
//     the old claimant's hash after the claim is taken (dropTakenOver): concurrent calls leave no
//     address recorded without its account's claim, nor recorded by two accounts. They may leave
//     a claim that its account no longer records, which is stale and is taken over as above.
//   - An unverified claim lapses with its first link: once a claim is older than
//     MailOptions.VerifyTTL and its user has not verified the address, another account may take
//     it over (setEmail), which first takes the address out of the old claimant's hash
//     (email_drop.lua), so that their links stop working. Nobody can hold an address they cannot
//     read for longer than that: sending a new link does not renew the claim, and nor does a
//     release and a new claim (another address set, then this one again; or the address handed
//     to another account): a claim released unverified keeps its time for a link's life
//     (email_release.lua), which the next claim takes (email_claim.lua). Should the old
//     claimant's link still be used in the instant between the two steps, VerifyEmail finds the
//     claim someone else's and takes the address out again (CONFLICT).
//   - Tokens look like session tokens, "<user key>.<43 characters>", and only their digest is
//     stored, as {u:<user>}:verify:<digest> or {u:<user>}:reset:<digest> holding the address
//     they were sent to and their expiry: token_take.lua deletes it and compares the expiry with
//     the clock, so a token works once and expires to the millisecond. A reset's also holds the
//     SHA-1 of the password hash it was made under (token_put.lua), so that a password changed
//     since, or an account deleted, refuses it.
//   - Mails are jobs (jobMail) whose id derives from their token: see runMailJob.

// emailClaimGrace is how old a claim on an address whose user's hash does not hold it must be
// before another account may take the address over.
const emailClaimGrace = time.Minute

// mailSentTTL is how long the record that a mail was sent is kept.
const mailSentTTL = 7 * 24 * time.Hour

// MailOptions configures the mails the store sends.
type MailOptions struct {
	// Sender delivers mails. Default: the log (mail.Log with Options.Log).
	Sender mail.Sender
	// Templates render them. Default: the embedded templates.
	Templates *mail.Templates
	// PublicURL is the site's address, the start of the links in mails. Default
	// "http://localhost:8080".
	PublicURL string
	// ResetTTL is how long a password reset's link works. Default 1 hour.
	ResetTTL time.Duration
	// VerifyTTL is how long an address verification's link works. Default 24 hours.
	VerifyTTL time.Duration
	// ResetsPerEmail and ResetsPerClient bound password-reset requests per address and per
	// client address per ResetWindow. Default 5 and 20 per hour. Off with a negative
	// Options.WriteLimit.
	ResetsPerEmail, ResetsPerClient int
	ResetWindow                     time.Duration
	// VerificationsPerEmail bounds the verification links mailed to one address (whatever the
	// accounts) per ResetWindow, as ResetsPerEmail bounds its reset links, so that setting an
	// address again and again does not bomb its owner with mails. Default 5. Off with a negative
	// Options.WriteLimit.
	VerificationsPerEmail int
}

func (o MailOptions) withDefaults(log func() mail.Sender) MailOptions {
	if o.Sender == nil {
		o.Sender = log()
	}
	if o.Templates == nil {
		o.Templates = must(mail.LoadTemplates(""))
	}
	if o.PublicURL == "" {
		o.PublicURL = "http://localhost:8080"
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	if o.ResetTTL <= 0 {
		o.ResetTTL = time.Hour
	}
	if o.VerifyTTL <= 0 {
		o.VerifyTTL = 24 * time.Hour
	}
	if o.ResetsPerEmail <= 0 {
		o.ResetsPerEmail = 5
	}
	if o.ResetsPerClient <= 0 {
		o.ResetsPerClient = 20
	}
	if o.ResetWindow <= 0 {
		o.ResetWindow = time.Hour
	}
	if o.VerificationsPerEmail <= 0 {
		o.VerificationsPerEmail = 5
	}
	return o
}

const (
	jobMail      = "mail"       // a mailJob in JSON: send one mail
	jobMailDecoy = "mail-decoy" // the job of a reset for an unknown address: does nothing
)

// mailJob is the argument of a mail job.
type mailJob struct {
	Kind  string `json:"kind"` // mail.KindVerify, mail.KindReset
	To    string `json:"to"`
	Name  string `json:"name"`
	Token string `json:"token"` // the link's token; the job is deleted once done
	Exp   int64  `json:"exp"`   // the token's expiry (Unix ms)
}

// normalEmail checks an address and returns it as stored and as keyed (lower-cased).
func normalEmail(addr string) (stored, key string, err error) {
	addr = strings.TrimSpace(addr)
	a, perr := netmail.ParseAddress(addr)
	if perr != nil || a.Address != addr || len(addr) > 254 || strings.ContainsAny(addr, " \r\n{}") {
		return "", "", invalidf("not an email address: %q", addr)
	}
	return addr, strings.ToLower(addr), nil
}

func (k keys) emailOwner(addr string) string  { return k.prefix + "{e:" + addr + "}" }
func (k keys) emailResets(addr string) string { return k.emailOwner(addr) + ":resets" }
func (k keys) addrResets(addr string) string  { return k.prefix + "{a:" + addr + "}:resets" }
func (k keys) emailVerifies(addr string) string {
	return k.emailOwner(addr) + ":verifies"
}
func (k keys) userToken(uid, purpose, dig string) string {
	return k.user(uid) + ":" + purpose + ":" + dig
}
func (k keys) mailSent(id string) string { return k.prefix + "{m:" + id + "}:sent" }

// newUserToken returns a fresh token of uid and its digest.
func newUserToken(uid string) (token, dig string) {
	token = uid + "." + base64.RawURLEncoding.EncodeToString(randomBytes(32))
	return token, digest(token)
}

// Email returns the address of uid and whether it is verified; "" when none.
func (s *Store) Email(ctx context.Context, uid UserKey) (string, bool, error) {
	v, err := s.cmd().HMGet(ctx, s.k.user(string(uid)), "email", "emailv").Result()
	if err != nil {
		return "", false, fmt.Errorf("read email: %w", rdb.Unavailable(ctx, err))
	}
	addr, _ := v[0].(string)
	ok, _ := v[1].(string)
	return addr, ok == "1", nil
}

// SetEmail sets the address of uid, who proves it is them with password (a wrong one counts as a
// failed log-in), and mails a verification link to it. An address held by another account
// (ignoring case) is KindConflict. It counts against the write limit, before the password's
// check: each call mails whatever address it is given. A site ban does not refuse it.
func (s *Store) SetEmail(ctx context.Context, uid UserKey, addr, password string) (*User, error) {
	stored, key, err := normalEmail(addr)
	if err != nil {
		return nil, err
	}
	if _, err := s.allowWrite(ctx, string(uid), "", banFree); err != nil {
		return nil, err
	}
	if len(password) > MaxPasswordBytes {
		return nil, &Error{Kind: KindForbidden, Msg: "the password is wrong"}
	}
	vals, _, err := s.checkCredentials(ctx, string(uid), password)
	if errors.Is(err, errWrongPassword) {
		return nil, &Error{Kind: KindForbidden, Msg: "the password is wrong"}
	}
	if err != nil {
		return nil, err
	}
	if err := s.claimEmail(ctx, string(uid), key); err != nil {
		return nil, err
	}
	if err := s.allowVerification(ctx, key); err != nil {
		return nil, err
	}
	u := s.userFromFields(string(uid), strs(vals))
	if err := s.writeEmail(ctx, string(uid), u.Name, stored, key); err != nil {
		return nil, err
	}
	return u, nil
}

// writeEmail sets the address of uid (stored; key lower-cased), which claimEmail claimed for
// them, unverified — unless it is uid's address already in another case, which keeps its
// verification —, releases the address it replaces, and mails a verification link to it.
func (s *Store) writeEmail(ctx context.Context, uid, name, stored, key string) error {
	mj, old, err := s.setAddress(ctx, uid, name, stored, key)
	if err != nil {
		return err
	}
	return s.settleAddress(ctx, uid, key, old, mj)
}

// replaced is the address an address's write replaced in its user's hash, and whether it was
// verified.
type replaced struct {
	addr     string
	verified bool
}

// setAddress is the first half of writeEmail: it queues the verification mail and writes the
// address into uid's hash (email_set.lua), and returns the mail's job and the address it
// replaced.
func (s *Store) setAddress(ctx context.Context, uid, name, stored, key string) (jobs.Job, replaced, error) {
	token, dig := newUserToken(uid)
	exp := s.now().Add(s.opts.Mail.VerifyTTL)
	mj, err := s.queueMail(ctx, false, "verify:"+dig, mailJob{Kind: mail.KindVerify, To: stored, Name: name, Token: token, Exp: exp.UnixMilli()})
	if err != nil {
		return jobs.Job{}, replaced{}, fmt.Errorf("set email: %w", err)
	}
	// The address in another case is the same address (keyed ignoring case): it stays verified.
	cur, err := s.cmd().HGet(ctx, s.k.user(uid), "email").Result()
	if err != nil && !isNil(err) {
		return jobs.Job{}, replaced{}, fmt.Errorf("set email: %w", rdb.Unavailable(ctx, err))
	}
	same := ""
	if cur != stored && strings.ToLower(cur) == key {
		same = cur
	}
	reply, err := s.run(ctx, "email_set", []string{s.k.user(uid), s.k.userToken(uid, "verify", dig)},
		stored, exp.UnixMilli(), s.opts.Mail.VerifyTTL.Milliseconds(), same)
	if err != nil {
		return jobs.Job{}, replaced{}, fmt.Errorf("set email: %w", err)
	}
	v, err := replyArrayLen("email_set", reply, 2)
	if err != nil {
		return jobs.Job{}, replaced{}, fmt.Errorf("set email: %w", err)
	}
	o, err := replyString("email_set", v[0])
	if err != nil {
		return jobs.Job{}, replaced{}, fmt.Errorf("set email: %w", err)
	}
	was, err := replyString("email_set", v[1])
	if err != nil {
		return jobs.Job{}, replaced{}, fmt.Errorf("set email: %w", err)
	}
	if s.opts.RequireEmail && same == "" {
		// The address is no longer verified, which stops the account's messages: the send
		// leases its checks granted end (message_leases.go).
		if err := s.revokeSendLeases(ctx, uid); err != nil {
			return jobs.Job{}, replaced{}, fmt.Errorf("set email: %w", err)
		}
	}
	return mj, replaced{addr: o, verified: was == "1"}, nil
}

// settleAddress is the second half of writeEmail: it releases old, the address the new one (key)
// replaced, confirms the claim of the address uid's hash holds now, and sends the mail. An old
// address that was not verified keeps its claim's time for the next claim (releaseEmail).
//
// The release and the hash are in different slots, so a concurrent setEmail of the same account
// can write old back into the hash between this call's email_set and its release: one call
// replaces a with b while the other, which claimed a (theirs already) before the release, puts a
// back. The hash then held a, which nobody claimed, for any account to take. So the release is
// followed by confirmClaim, which claims again the address the hash holds (or, should another
// account have taken it meanwhile, takes it out of the hash: CONFLICT). Whichever of the two
// calls releases last confirms after it, so the hash and the claims agree once both are done.
// A call that releases nothing confirms too: another account may have taken over its claim
// (claimEmail, dropTakenOver) between its claim and its email_set.
func (s *Store) settleAddress(ctx context.Context, uid, key string, old replaced, mj jobs.Job) error {
	if old.addr != "" && strings.ToLower(old.addr) != key {
		if err := s.releaseEmail(ctx, uid, strings.ToLower(old.addr), !old.verified); err != nil {
			return fmt.Errorf("set email: %w", err)
		}
	}
	if err := s.confirmClaim(ctx, uid); err != nil {
		return err
	}
	return s.sendMail(ctx, mj)
}

// releaseEmail releases uid's claim on the address key (email_release.lua). When unverified is
// true, the claim's time is kept for a link's life (MailOptions.VerifyTTL), so that the next
// claim of the address, by uid or any other account, lapses when this one would have: an
// account that cannot read an address does not hold it for longer by setting another address
// and then this one again, or by handing it to another account of its own.
func (s *Store) releaseEmail(ctx context.Context, uid, key string, unverified bool) error {
	_, err := s.run(ctx, "email_release", []string{s.k.emailOwner(key)}, uid, boolArg(unverified), s.opts.Mail.VerifyTTL.Milliseconds())
	return err
}

// allowVerification counts one more verification link mailed to the address key against
// MailOptions.VerificationsPerEmail: KindRateLimited when its window is full. It is asked once the
// address is claimed, so that attempts on an address another account holds do not count; a claim
// left by a refusal is the caller's own address already, or lapses as a stale claim does.
func (s *Store) allowVerification(ctx context.Context, key string) error {
	m := s.opts.Mail
	return s.allow(ctx, s.k.emailVerifies(key), limit{"verification mails to this address", m.VerificationsPerEmail, m.ResetWindow}, true)
}

// claimEmail claims the address key for uid, taking over a stale claim (see above).
func (s *Store) claimEmail(ctx context.Context, uid, key string) error {
	stale := ""
	for range 2 {
		v, err := s.run(ctx, "email_claim", []string{s.k.emailOwner(key)}, uid, s.now().UnixMilli(), stale)
		if err != nil {
			return fmt.Errorf("claim email: %w", err)
		}
		if v == "OK" {
			if stale != "" {
				// Taken over: the old claimant may have written the address into their hash since
				// it was read (a setEmail of theirs that found the claim still theirs).
				return s.dropTakenOver(ctx, stale, key)
			}
			return nil // the address is uid's now
		}
		owner, err := replyArray("email_claim", v, 2)
		if err != nil {
			return fmt.Errorf("claim email: %w", err)
		}
		other, err := replyString("email_claim", owner[0])
		if err != nil {
			return fmt.Errorf("claim email: %w", err)
		}
		at, err := replyString("email_claim", owner[1])
		if err != nil {
			return fmt.Errorf("claim email: %w", err)
		}
		vals, err := s.cmd().HMGet(ctx, s.k.user(other), "email", "emailv").Result()
		if err != nil {
			return fmt.Errorf("claim email: %w", rdb.Unavailable(ctx, err))
		}
		held, verified := strs(vals)[0], strs(vals)[1] == "1"
		age := s.now().Sub(fromMillis(atoi64(at)))
		switch {
		case strings.ToLower(held) != key && age >= emailClaimGrace:
			// A claim its user's hash does not hold: a setEmail cut off, or a dropped one.
		case strings.ToLower(held) == key && !verified && age >= s.opts.Mail.VerifyTTL:
			// A claim that lapsed unverified: its user's links stop working first. Should they
			// have verified it since it was read, it is theirs.
			dropped, err := s.run(ctx, "email_drop", []string{s.k.user(other)}, held, "0")
			if err != nil {
				return fmt.Errorf("claim email: %w", err)
			}
			n, err := replyInt("email_drop", dropped)
			if err != nil {
				return fmt.Errorf("claim email: %w", err)
			}
			if n != 1 {
				return &Error{Kind: KindConflict, Msg: "this email address belongs to another account"}
			}
		default:
			return &Error{Kind: KindConflict, Msg: "this email address belongs to another account"}
		}
		stale = other
	}
	return &Error{Kind: KindConflict, Msg: "this email address belongs to another account"}
}

// dropTakenOver takes the address key out of the hash of other, whose claim on it claimEmail
// took over, if it holds it: other may have written it since claimEmail read their hash, or be
// writing it now, and then finds the claim someone else's when it confirms it (settleAddress,
// confirmClaim), so that either way no two accounts record the address.
func (s *Store) dropTakenOver(ctx context.Context, other, key string) error {
	held, err := s.cmd().HGet(ctx, s.k.user(other), "email").Result()
	if err != nil && !isNil(err) {
		return fmt.Errorf("claim email: %w", rdb.Unavailable(ctx, err))
	}
	if held == "" || strings.ToLower(held) != key {
		return nil
	}
	if err := s.dropEmail(ctx, other, held); err != nil {
		return fmt.Errorf("claim email: %w", err)
	}
	return nil
}

// dropEmail takes the address addr out of uid's hash, verified or not (email_drop.lua), which
// under Options.RequireEmail stops the account's messages: the send leases its checks granted
// end too (message_leases.go).
func (s *Store) dropEmail(ctx context.Context, uid, addr string) error {
	if _, err := s.run(ctx, "email_drop", []string{s.k.user(uid)}, addr, "1"); err != nil {
		return err
	}
	if s.opts.RequireEmail {
		return s.revokeSendLeases(ctx, uid)
	}
	return nil
}

// VerifyEmail marks the address a verification token was sent to as verified, once.
func (s *Store) VerifyEmail(ctx context.Context, token string) (*User, error) {
	uid, err := s.takeToken(ctx, token, "verify")
	if err != nil {
		return nil, err
	}
	if err := s.confirmClaim(ctx, uid); err != nil {
		return nil, err
	}
	return s.userByKey(ctx, uid)
}

// confirmClaim checks, after a token proved uid's address, that the address's claim is still
// uid's: a claim that lapsed unverified may have been taken over between another account's
// two steps (see above). When it is not, the address leaves uid's hash (CONFLICT).
func (s *Store) confirmClaim(ctx context.Context, uid string) error {
	addr, err := s.cmd().HGet(ctx, s.k.user(uid), "email").Result()
	if err != nil && !isNil(err) {
		return fmt.Errorf("verify email: %w", rdb.Unavailable(ctx, err))
	}
	key := strings.ToLower(addr)
	if key == "" {
		return nil
	}
	owner, err := s.cmd().HGet(ctx, s.k.emailOwner(key), "user").Result()
	if err != nil && !isNil(err) {
		return fmt.Errorf("verify email: %w", rdb.Unavailable(ctx, err))
	}
	if owner == uid {
		return nil
	}
	if owner == "" {
		// No claim (released by a write cut off, say): the address is uid's if nobody took it.
		v, err := s.run(ctx, "email_claim", []string{s.k.emailOwner(key)}, uid, s.now().UnixMilli(), "")
		if err != nil {
			return fmt.Errorf("verify email: %w", err)
		}
		if v == "OK" {
			return nil
		}
	}
	if err := s.dropEmail(ctx, uid, addr); err != nil {
		return fmt.Errorf("verify email: %w", err)
	}
	return &Error{Kind: KindConflict, Msg: "this email address belongs to another account"}
}

// takeToken uses a token of purpose and returns its user and their password hash.
func (s *Store) takeToken(ctx context.Context, token, purpose string) (string, error) {
	bad := invalidf("invalid or expired token")
	uid, dig, ok := parseToken(token)
	if !ok {
		return "", bad
	}
	if _, err := s.run(ctx, "token_take", []string{s.k.userToken(uid, purpose, dig), s.k.user(uid)}, s.now().UnixMilli()); err != nil {
		return "", err
	}
	return uid, nil
}

// userByKey reads a user.
func (s *Store) userByKey(ctx context.Context, uid string) (*User, error) {
	vals, err := s.cmd().HMGet(ctx, s.k.user(uid), userFields...).Result()
	if err != nil {
		return nil, fmt.Errorf("read user: %w", rdb.Unavailable(ctx, err))
	}
	if vals[0] == nil {
		return nil, notFoundf("no such user")
	}
	return s.userFromFields(uid, strs(vals)), nil
}

// RequestPasswordReset mails a reset link to the account of addr, if there is one. Its answer
// and its work are the same whether or not there is (an unknown address enqueues a decoy job),
// so that it does not tell which addresses have accounts; it is limited per address and per
// client address (WithClient).
func (s *Store) RequestPasswordReset(ctx context.Context, addr string) error {
	_, key, err := normalEmail(addr)
	if err != nil {
		return err
	}
	m := s.opts.Mail
	if err := s.allow(ctx, s.k.emailResets(key), limit{"password resets for this address", m.ResetsPerEmail, m.ResetWindow}, true); err != nil {
		return err
	}
	if client := ClientFrom(ctx); client != "" {
		if err := s.allow(ctx, s.k.addrResets(client), limit{"password resets from this address", m.ResetsPerClient, m.ResetWindow}, true); err != nil {
			return err
		}
	}
	owner, err := s.cmd().HGet(ctx, s.k.emailOwner(key), "user").Result()
	if err != nil && !isNil(err) {
		return fmt.Errorf("request password reset: %w", rdb.Unavailable(ctx, err))
	}
	return s.sendReset(ctx, owner, key)
}

// SendPasswordReset mails a reset link to the user uid (an admin's help); no such user (or a
// deleted account) is KindNotFound, a user with no address KindInvalid.
func (s *Store) SendPasswordReset(ctx context.Context, uid UserKey) error {
	v, err := s.cmd().HMGet(ctx, s.k.user(string(uid)), "created", "deleted", "email").Result()
	if err != nil {
		return fmt.Errorf("send password reset: %w", rdb.Unavailable(ctx, err))
	}
	if str(v[0]) == "" || str(v[1]) == "1" {
		return notFoundf("no user %q", truncate(string(uid), 40))
	}
	addr := str(v[2])
	if addr == "" {
		return invalidf("this user has no email address")
	}
	return s.sendReset(ctx, string(uid), strings.ToLower(addr))
}

// decoyUser is the user key of the reset tokens of addresses that have no account: no user has
// it (see validUserName), so its tokens work for nobody.
const decoyUser = "~decoy"

// sendReset stores a reset token of owner (the claim of the address key; "" for none) and
// enqueues its mail; for an address that is not owner's, or an owner whose account was deleted,
// it does the same work on a decoy: the same commands in the same order
// (TestPasswordResetSameWork), reading the decoy's hash, which does not exist, where it would
// read the owner's.
func (s *Store) sendReset(ctx context.Context, owner, key string) error {
	uid := owner
	if uid == "" {
		uid = decoyUser
	}
	v, err := s.cmd().HMGet(ctx, s.k.user(uid), "name", "email").Result()
	if err != nil {
		return fmt.Errorf("request password reset: %w", rdb.Unavailable(ctx, err))
	}
	name, _ := v[0].(string)
	to, _ := v[1].(string)
	// A deleted account's marker keeps its address, without a name, until its deletion's chain
	// releases it (account_delete.lua): it gets no reset either.
	decoy := to == "" || name == "" || strings.ToLower(to) != key
	if decoy {
		uid = decoyUser
	}
	token, dig := newUserToken(uid)
	exp := s.now().Add(s.opts.Mail.ResetTTL)
	mj, err := s.queueMail(ctx, decoy, "reset:"+dig, mailJob{Kind: mail.KindReset, To: to, Name: name, Token: token, Exp: exp.UnixMilli()})
	if err != nil {
		return fmt.Errorf("request password reset: %w", err)
	}
	if _, err := s.run(ctx, "token_put", []string{s.k.userToken(uid, "reset", dig), s.k.user(uid)},
		to, exp.UnixMilli(), s.opts.Mail.ResetTTL.Milliseconds()); err != nil {
		return fmt.Errorf("request password reset: %w", err)
	}
	return s.sendMail(ctx, mj)
}

// ResetPassword sets a new password for the user of a reset token, once, ends every session of
// theirs and starts a new one.
func (s *Store) ResetPassword(ctx context.Context, token, next string) (*Session, error) {
	if err := checkPassword(next); err != nil {
		return nil, err
	}
	uid, dig, ok := parseToken(token)
	if !ok {
		return nil, invalidf("invalid or expired token")
	}
	v, err := s.run(ctx, "token_take", []string{s.k.userToken(uid, "reset", dig), s.k.user(uid)}, s.now().UnixMilli())
	if err != nil {
		return nil, err
	}
	old, err := replyString("token_take", v)
	if err != nil {
		return nil, err
	}
	hash := s.hashPassword(next)
	if err := s.endSessions(ctx, uid, "", old, hash); err != nil {
		if IsKind(err, KindForbidden) {
			// The password changed since the token was taken (another link used at the same
			// moment, a changePassword): the link ended with the password it was mailed under.
			return nil, invalidf("invalid or expired token")
		}
		return nil, fmt.Errorf("reset password: %w", err)
	}
	u, err := s.userByKey(ctx, uid)
	if err != nil {
		return nil, err
	}
	return s.newSession(ctx, u, hash)
}

// queueMail queues the mail of cause, whose token the caller is about to store, due RepairGrace
// from now, and returns its job for sendMail to bring forward once the token is stored. A write
// cut off in between (the process stopping, Redis full) still has its mail sent, and one cut off
// before it stored its token sends none: runMailJob sends a link only while its token is stored.
func (s *Store) queueMail(ctx context.Context, decoy bool, cause string, m mailJob) (jobs.Job, error) {
	arg, err := json.Marshal(m)
	if err != nil {
		return jobs.Job{}, fmt.Errorf("mail job: %w", err)
	}
	kind := jobMail
	if decoy {
		kind = jobMailDecoy
	}
	j := jobs.Job{ID: "mail:" + cause, Kind: kind, Arg: string(arg)}
	later := j
	later.At = s.now().Add(RepairGrace)
	if err := s.jobs.Enqueue(ctx, later); err != nil {
		return jobs.Job{}, fmt.Errorf("queue mail: %w", err)
	}
	return j, nil
}

// sendMail brings the mail job j that queueMail queued forward to now.
func (s *Store) sendMail(ctx context.Context, j jobs.Job) error {
	if err := s.jobs.DueBy(ctx, j); err != nil {
		return fmt.Errorf("queue mail: %w", err)
	}
	return nil
}

// runMailJob sends one mail, once: its message id derives from the job's id (its cause), and
// the mail is recorded as sent ({m:<id>}:sent) after the server took it, so that a job that runs
// again after that sends nothing. A process killed between the claim and the send leaves the job
// to be claimed again when its lease ends; one killed between the send and the record sends the
// mail again, with the same Message-ID.
func (s *Store) runMailJob(ctx context.Context, j jobs.Job) error {
	var m mailJob
	if err := json.Unmarshal([]byte(j.Arg), &m); err != nil {
		return fmt.Errorf("mail job %s: %w", j.ID, err)
	}
	id := strings.ReplaceAll(strings.TrimPrefix(j.ID, "mail:"), ":", ".")
	sent := s.k.mailSent(id)
	if n, err := s.cmd().Exists(ctx, sent).Result(); err != nil {
		return fmt.Errorf("mail job %s: %w", j.ID, err)
	} else if n == 1 {
		return nil
	}
	o := s.opts.Mail
	path, purpose := "/verify-email", "verify"
	if m.Kind == mail.KindReset {
		path, purpose = "/reset-password", "reset"
	}
	// A token never stored (its write was cut off before), used or expired, or one of an account
	// deleted since: no link to send. Both reads are on the user's slot: one round trip.
	if uid, dig, ok := parseToken(m.Token); ok {
		tokenKey, userKey := s.k.userToken(uid, purpose, dig), s.k.user(uid)
		var stored *rdb.IntCmd
		var deleted *rdb.StringCmd
		err := s.pipeline(ctx, []op{{key: userKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			stored, deleted = p.Exists(ctx, tokenKey), p.HGet(ctx, userKey, "deleted")
			return stored, deleted
		}}}, false)
		if err == nil {
			err = stored.Err()
		}
		if err == nil && !isNil(deleted.Err()) {
			err = deleted.Err()
		}
		if err != nil {
			return fmt.Errorf("mail job %s: %w", j.ID, rdb.Unavailable(ctx, err))
		}
		if stored.Val() == 0 || deleted.Val() == "1" {
			return nil
		}
	}
	exp := fromMillis(m.Exp)
	msg, err := o.Templates.Render(m.Kind, "<"+id+"@agora>", m.To, mail.Data{
		Site: o.PublicURL, Name: m.Name, Link: o.PublicURL + path + "?token=" + m.Token,
		Expires: exp.Format("2006-01-02 15:04 MST"),
	})
	if err != nil {
		return err
	}
	if err := o.Sender.Send(ctx, msg); err != nil {
		return err
	}
	if _, err := s.run(context.WithoutCancel(ctx), "mail_sent", []string{sent}, mailSentTTL.Milliseconds()); err != nil {
		return fmt.Errorf("mail job %s: %w", j.ID, err)
	}
	return nil
}

// runMailDecoy is the job of a reset for an unknown address: it does nothing.
func (s *Store) runMailDecoy(context.Context, jobs.Job) error { return nil }
