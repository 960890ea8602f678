package store

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// A limit is a number of attempts per sliding window, kept in a sorted set by ratelimit.lua.
type limit struct {
	what   string // for the error message: "writes", "failed log-ins", …
	max    int
	window time.Duration
}

// AuthLimits bound password guessing and mass sign-ups. Every limit is off when
// Options.WriteLimit is negative (the switch load tests use).
type AuthLimits struct {
	// FailedLoginsPerAccount is how many failed log-ins one account accepts per window from the
	// addresses it is not known at, all together; each address it is known at (see
	// KnownAddressTTL) has a window of this size of its own, so that guessing from elsewhere
	// does not lock the owner out. Default 10.
	FailedLoginsPerAccount int
	// FailedLoginsPerAddress is how many failed log-ins one client address may make per window,
	// whatever the accounts. Default 50.
	FailedLoginsPerAddress int
	// LoginWindow is the window of both. Default 15 minutes.
	LoginWindow time.Duration
	// KnownAddressTTL is how long after a successful log-in (or the sign-up) from a client
	// address the account knows it. Default 30 days.
	KnownAddressTTL time.Duration
	// SignUpsPerAddress is how many sign-ups one client address may make per SignUpWindow.
	// Default 10 per hour.
	SignUpsPerAddress int
	SignUpWindow      time.Duration
}

func (o AuthLimits) withDefaults() AuthLimits {
	if o.FailedLoginsPerAccount <= 0 {
		o.FailedLoginsPerAccount = 10
	}
	if o.FailedLoginsPerAddress <= 0 {
		o.FailedLoginsPerAddress = 50
	}
	if o.LoginWindow <= 0 {
		o.LoginWindow = 15 * time.Minute
	}
	if o.KnownAddressTTL <= 0 {
		o.KnownAddressTTL = 30 * 24 * time.Hour
	}
	if o.SignUpsPerAddress <= 0 {
		o.SignUpsPerAddress = 10
	}
	if o.SignUpWindow <= 0 {
		o.SignUpWindow = time.Hour
	}
	return o
}

// allowWrite records a write by uid in its sliding window and fails with KindRateLimited when the
// window is full. With an item, it notes the write for repair (see repair.go) in the
// same round trip, and returns the note to settle once the write's derived writes are done. In
// the same round trip it reads uid's bans in force, and fails with KindBanned when one covers
// the write's scope (see bans.go): the first of scope, or the site when none is given; and,
// under Options.RequireEmail, whether uid's email address is verified, failing with
// KindEmailUnverified when it is not for any write a site ban refuses (site admins are exempt).
// Every write of a signed-in user passes here; an account's own email, password and session
// changes (SetEmail, VerifyEmail, ChangePassword, LogOut…) do not, and stay open.
func (s *Store) allowWrite(ctx context.Context, uid, item string, scope ...writeScope) (note, error) {
	return s.allowWriteWith(ctx, uid, item, nil, scope...)
}

// allowAuthor is allowWrite for a write that keeps its author's name (a post, a comment; see
// Loader.NamedAuthor): it reads the name in the same round trip, "" when uid has no user hash.
func (s *Store) allowAuthor(ctx context.Context, uid string, g *writeGuard, scope writeScope) (string, error) {
	o, name := s.nameRead(ctx, uid)
	if _, err := s.allowGuarded(ctx, uid, "", []op{o}, g, scope); err != nil {
		return "", err
	}
	return name()
}

// allowWriteWith is allowWrite that also sends extra reads in its round trip.
func (s *Store) allowWriteWith(ctx context.Context, uid, item string, extra []op, scope ...writeScope) (note, error) {
	return s.allowGuarded(ctx, uid, item, extra, nil, scope...)
}

// allowGuarded is allowWriteWith that also checks the write against the new-account limits g asks
// for (newaccounts.go). Its round trip also reads the site filters when they are due to be checked
// (sitefilters.go), for the write's filterText.
func (s *Store) allowGuarded(ctx context.Context, uid, item string, extra []op, g *writeGuard, scope ...writeScope) (note, error) {
	var calls []scriptCall
	l := limit{"writes", s.opts.WriteLimit, s.opts.WriteWindow}
	member := randomHex(8)
	if g != nil && g.member != "" {
		member = g.member
	}
	if s.opts.WriteLimit >= 0 {
		calls = append(calls, s.rateCall(s.k.userRate(uid), l, member))
	}
	var n note
	if item != "" {
		var call scriptCall
		n, call = s.noteCall(item)
		calls = append(calls, call)
	}
	if g != nil {
		calls = append(calls, g.also...) // before the reads, which follow every call
	}
	filterAt, filterIdx := s.now(), -1
	if c, ok := s.filterCall(); ok {
		filterIdx = len(calls)
		calls = append(calls, c)
	}
	newIdx := -1
	if c, ok := s.newAccountCall(uid, g); ok {
		newIdx = len(calls)
		calls = append(calls, c)
	}
	dismissIdx, dl := -1, s.dismissalLimit()
	if g != nil && g.reporting && s.opts.WriteLimit >= 0 && !s.IsAdmin(UserKey(uid)) {
		dismissIdx = len(calls)
		calls = append(calls, s.rateCall(s.k.userDismissed(uid), dl, ""))
	}
	msgIdx, ml := -1, limit{"messages", s.opts.Messages.PerWindow, s.opts.Messages.Window}
	if g != nil && g.messaging && s.opts.WriteLimit >= 0 {
		msgIdx = len(calls)
		calls = append(calls, s.rateCall(s.k.msgRate(uid), ml, member))
	}
	check, reads := s.banReads(ctx, uid, scope)
	reads = append(reads, extra...)
	if len(calls) == 0 && len(reads) == 0 {
		return n, nil
	}
	vals, err := s.runScripts(ctx, calls, reads...)
	if err != nil {
		return n, err
	}
	// A message's count in the requests window is noted before anything below refuses it: its
	// caller takes a message counted that was no request back out, refused or not (sendGate).
	if newIdx >= 0 && g.count == "requests" {
		if err := s.newAccountResult(ctx, uid, g, vals[newIdx], check); err != nil {
			return n, err
		}
	}
	if filterIdx >= 0 {
		if err := s.applyFilters(calls[filterIdx].name, vals[filterIdx], filterAt); err != nil {
			return n, err
		}
	}
	if err := check.err(); err != nil {
		return n, err
	}
	if s.opts.WriteLimit >= 0 {
		if err := rateResult(vals[0], l); err != nil {
			return n, err
		}
	}
	if dismissIdx >= 0 {
		if err := rateResult(vals[dismissIdx], dl); err != nil {
			return n, err
		}
	}
	if msgIdx >= 0 {
		if err := rateResult(vals[msgIdx], ml); err != nil {
			return n, err
		}
	}
	if newIdx >= 0 && g.count != "requests" {
		if err := s.newAccountResult(ctx, uid, g, vals[newIdx], check); err != nil {
			return n, err
		}
	}
	if s.onChecked != nil {
		s.onChecked(uid)
	}
	return n, nil
}

// allow checks one more attempt against a limit kept in key, recording it when record is set, and
// fails with KindRateLimited (with the time until the window has room) when the window is full.
func (s *Store) allow(ctx context.Context, key string, l limit, record bool) error {
	if s.opts.WriteLimit < 0 {
		return nil
	}
	member := ""
	if record {
		member = randomHex(8)
	}
	c := s.rateCall(key, l, member)
	v, err := s.run(ctx, c.name, c.keys, c.args...)
	if err != nil {
		return err
	}
	return rateResult(v, l)
}

// rateCall is the script call that checks one more attempt against the limit kept in key, and
// records it as member when member is not "" (a random member unique to the attempt, so that the
// call is safe to run twice and the attempt can be forgiven later by removing it).
func (s *Store) rateCall(key string, l limit, member string) scriptCall {
	return scriptCall{name: "ratelimit", keys: []string{key}, args: []any{s.now().UnixMilli(), l.window.Milliseconds(), l.max, member}}
}

// rateResult turns the reply of a rate-limit call into KindRateLimited, with the time until the
// window has room, when the window is full.
func rateResult(v any, l limit) error {
	wait, err := replyInt("ratelimit", v)
	if err != nil {
		return err
	}
	if wait <= 0 {
		return nil
	}
	retry := time.Duration(wait) * time.Millisecond
	secs := int((retry + time.Second - 1) / time.Second)
	return &Error{Kind: KindRateLimited, Msg: fmt.Sprintf("too many %s; retry in %d s", l.what, secs),
		RetryAfter: time.Duration(secs) * time.Second}
}

type clientKey struct{}

// WithClient returns ctx carrying the address of the client a request comes from (an IP
// address, or host:port), which the per-address limits on log-ins and sign-ups count by.
// Without it those limits do not apply; the per-account limit always does. An IPv6 client is
// counted by its /64 ("2001:db8:1:2::/64"), the smallest block a host is given (RFC 6177), so
// that one host cannot spread its attempts over 2^64 addresses; an IPv4-mapped IPv6 address is
// its IPv4 address.
func WithClient(ctx context.Context, addr string) context.Context {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	return context.WithValue(ctx, clientKey{}, clientAddress(addr))
}

// clientAddress is the client addr counts as (see WithClient); addr unchanged when it is not an
// IP address.
func clientAddress(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.Prefix(64)
	if err != nil {
		return addr
	}
	return p.String()
}

// ClientFrom returns the client address WithClient put in ctx, or "" when there is none.
func ClientFrom(ctx context.Context) string {
	a, _ := ctx.Value(clientKey{}).(string)
	return a
}
