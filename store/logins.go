package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agora/agora/internal/rdb"
)

// Limits on failed log-ins. Every log-in reserves an attempt in its windows before its password
// is hashed, atomically (ratelimit.lua records it only while the window has room), and a right
// password forgives the reservation: so however many log-ins arrive at once, no more passwords
// are checked than the limits allow, and a failure is counted the moment it starts.
//
// The windows a log-in counts in:
//
//   - the client address's, {a:<address>}:fails (AuthLimits.FailedLoginsPerAddress), over every
//     account;
//   - the account's. An address the account knows — the user proved their password from it
//     within AuthLimits.KnownAddressTTL, {u:<user>}:known — has a window of its own on the
//     account, {u:<user>}:fails:<address>; every other address shares {u:<user>}:fails. Both
//     allow AuthLimits.FailedLoginsPerAccount. Guessing from elsewhere, from one address or a
//     thousand, fills the shared window and leaves the owner's own: the owner still logs in from
//     where they did before, while the guessers wait (OWASP's advice: lock the guesser, not the
//     account). A guesser sharing the owner's address (one NAT, a proxy) shares their window.
//     Without a client address (WithClient) a log-in counts in the shared window only.
//
// A log-in refused by one window leaves no attempt in the others.

// maxKnownAddresses is how many client addresses an account knows at most.
const maxKnownAddresses = 20

// errWrongPassword is checkCredentials' answer to a wrong password or an unknown user.
var errWrongPassword = errors.New("wrong name or password")

// checkCredentials checks password against the user uid's under the limits on failed log-ins
// (see above). It returns the user's userFields and their encoded password hash; errWrongPassword
// for a wrong password or an unknown user, which costs the same time as a right one so that
// timing does not reveal which names exist.
func (s *Store) checkCredentials(ctx context.Context, uid, password string) (vals []any, encoded string, err error) {
	addr := ClientFrom(ctx)
	vals, known, err := s.readCredentials(ctx, uid, addr)
	if err != nil {
		return nil, "", err
	}
	forgive, err := s.reserveLogin(ctx, uid, addr, known)
	if err != nil {
		return nil, "", err
	}
	encoded, _ = vals[len(userFields)].(string)
	if encoded == "" {
		// Spend the same time as a real check so that timing does not reveal which names exist.
		s.verifyPassword(password, s.decoy)
		return nil, "", errWrongPassword
	}
	if !s.verifyPassword(password, encoded) {
		return nil, "", errWrongPassword // the reservations stay: they are the failure
	}
	if err := forgive(); err != nil {
		return nil, "", err
	}
	return vals[:len(userFields)], encoded, nil
}

// readCredentials reads, in one round trip on the user's slot, the user's userFields and password
// hash, and whether the account knows the client address addr.
func (s *Store) readCredentials(ctx context.Context, uid, addr string) (vals []any, known bool, err error) {
	userKey, knownKey := s.k.user(uid), s.k.userKnown(uid)
	var fields *rdb.SliceCmd
	var until *rdb.FloatCmd
	ops := []op{{key: userKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		fields = p.HMGet(ctx, userKey, slices.Concat(userFields, []string{"pass"})...)
		return fields, nil
	}}}
	if addr != "" && s.opts.WriteLimit >= 0 {
		ops = append(ops, op{key: knownKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			until = p.ZScore(ctx, knownKey, addr)
			return until, nil
		}})
	}
	err = s.pipeline(ctx, ops, false)
	if err == nil {
		err = fields.Err()
	}
	if err == nil && until != nil && !isNil(until.Err()) {
		err = until.Err()
	}
	if err != nil {
		return nil, false, fmt.Errorf("check password: %w", err)
	}
	known = until != nil && until.Err() == nil && int64(until.Val()) > s.now().UnixMilli()
	return fields.Val(), known, nil
}

// reserveLogin reserves one attempt in each window the log-in of uid from addr counts in, in one
// round trip, and fails with KindRateLimited when one of them is full (releasing the others). On
// a right password, forgive takes the attempts back and records addr as known to the account.
func (s *Store) reserveLogin(ctx context.Context, uid, addr string, known bool) (forgive func() error, err error) {
	if s.opts.WriteLimit < 0 {
		return func() error { return nil }, nil
	}
	a := s.opts.Auth
	account := limit{"failed log-ins on this account", a.FailedLoginsPerAccount, a.LoginWindow}
	accountKey := s.k.userFails(uid)
	if known {
		account.what, accountKey = "failed log-ins on this account from this address", s.k.userAddrFails(uid, addr)
	}
	keys, limits := []string{accountKey}, []limit{account}
	if addr != "" {
		keys = append(keys, s.k.addrFails(addr))
		limits = append(limits, limit{"failed log-ins from this address", a.FailedLoginsPerAddress, a.LoginWindow})
	}
	calls := make([]scriptCall, len(keys))
	for i, key := range keys {
		calls[i] = s.rateCall(key, limits[i], randomHex(8))
	}
	replies, errs, err := s.runScriptsEach(ctx, calls)
	if err != nil {
		return nil, fmt.Errorf("log in: %w", err) // an attempt it may have recorded counts as a failure
	}
	var refused error
	var held []int // the calls that recorded their attempt
	for i := range calls {
		if e := cmp.Or(errs[i], rateResult(replies[i], limits[i])); e != nil {
			refused = cmp.Or(refused, e)
		} else {
			held = append(held, i)
		}
	}
	release := func(extra ...scriptCall) error {
		ops := make([]op, 0, len(held))
		for _, i := range held {
			key, member := calls[i].keys[0], calls[i].args[3]
			ops = append(ops, op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				return p.ZRem(ctx, key, member), nil
			}})
		}
		// Released even when the caller has gone: an attempt left would count as a failure.
		if _, err := s.runScripts(context.WithoutCancel(ctx), extra, ops...); err != nil {
			return fmt.Errorf("log in: %w", err)
		}
		return nil
	}
	if refused != nil {
		if err := release(); err != nil {
			return nil, err
		}
		return nil, refused
	}
	return func() error {
		if addr == "" {
			return release()
		}
		return release(s.knownCall(uid, addr))
	}, nil
}

// knownCall is the script call that records addr as known to the account uid.
func (s *Store) knownCall(uid, addr string) scriptCall {
	return scriptCall{name: "known_address", keys: []string{s.k.userKnown(uid)},
		args: []any{addr, s.now().UnixMilli(), s.opts.Auth.KnownAddressTTL.Milliseconds(), maxKnownAddresses}}
}

// rememberAddress records the request's client address as known to the account uid (see above);
// nothing without an address or with the limits off.
func (s *Store) rememberAddress(ctx context.Context, uid string) error {
	addr := ClientFrom(ctx)
	if addr == "" || s.opts.WriteLimit < 0 {
		return nil
	}
	c := s.knownCall(uid, addr)
	if _, err := s.run(ctx, c.name, c.keys, c.args...); err != nil {
		return fmt.Errorf("remember the address: %w", err)
	}
	return nil
}
