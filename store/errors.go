package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kind classifies the errors a client can act on. Each kind maps to one extensions.code.
type Kind int

// The kinds of Error. KindInternal is never constructed by the store; it is the zero value so that
// a forgotten kind is treated as a server fault rather than as the client's.
const (
	KindInternal Kind = iota
	KindInvalid
	KindUnauthenticated
	KindForbidden
	KindNotFound
	// KindConflict is a name that is taken: a user or a group that exists already. Retrying
	// the same write cannot succeed.
	KindConflict
	KindVotingClosed
	KindRateLimited
	// KindResync ends a subscription resumed from a cursor older than the events kept: the
	// client refetches, then subscribes again.
	KindResync
	// KindUnavailable is Redis not answering, or not reachable, within the store's deadline
	// (Options.RedisTimeout, ClientConfig.Timeout): the operation may or may not have taken
	// effect, and the client should retry.
	KindUnavailable
	// KindLimitReached is a per-user cap that is full (pending scheduled posts, say).
	KindLimitReached
	// KindBanned is a write by a user banned from its scope (a group, or the site); Until says
	// when the ban ends (nil when it is permanent).
	KindBanned
	// KindLocked is a comment or vote on a post a moderator locked.
	KindLocked
	// KindConcurrentChange is a write that met concurrent changes of what it reads on every one
	// of its tries: nothing was done, and the same write may succeed when retried.
	KindConcurrentChange
	// KindStorageFull is a write that Redis refused because it is at its maxmemory (with
	// maxmemory-policy noeviction): the script that met it wrote nothing, and the same write
	// succeeds once memory is freed. A write's derived writes cut off by it are finished by its
	// repair job (see repair.go).
	KindStorageFull
	// KindEmailUnverified is a write by an account whose email address is not verified, under
	// Options.RequireEmail: it succeeds once the account verifies an address.
	KindEmailUnverified
	// KindFiltered is text refused by the site filters (sitefilters.go); Field names the field.
	// The same text is refused again: do not retry it.
	KindFiltered
)

// Error is the store's typed error. Its message is safe to show to the client.
type Error struct {
	Kind       Kind
	Msg        string
	RetryAfter time.Duration // only for KindRateLimited
	Until      *time.Time    // only for KindBanned: when the ban ends; nil when permanent
	Field      string        // only for KindFiltered: the argument whose text was refused

	cause error // what went wrong underneath, for logs and errors.Is; never shown to the client
}

// Error returns the client-facing message.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the underlying cause, if any: the Redis or network error behind a
// KindUnavailable.
func (e *Error) Unwrap() error { return e.cause }

// msgStorageFull is the message of every KindStorageFull error.
const msgStorageFull = "the store is full: the write was refused; retry later"

// storageFull returns err as an Error of KindStorageFull when it is Redis's OOM reply ("OOM
// command not allowed when used memory > 'maxmemory'"), and err unchanged otherwise.
func storageFull(err error) error {
	var reply redis.Error
	if errors.As(err, &reply) && strings.HasPrefix(reply.Error(), "OOM ") {
		return &Error{Kind: KindStorageFull, Msg: msgStorageFull, cause: err}
	}
	return err
}

// msgUnavailable is the message of every KindUnavailable error.
const msgUnavailable = "Redis did not answer in time; retry"

// unavailable returns err as an Error of KindUnavailable when the operation it ended did not
// complete in time: err is a timeout (a deadline that ran out, a socket read or write that timed
// out, no pooled connection free in time) or a connection that could not be made, or ctx — the operation's bounded context — is past its
// deadline and err is not a reply of Redis (a client that was still redialling a Redis refusing
// connections when time ran out returns the error of its last try). Any other error, nil
// included, is returned unchanged.
func unavailable(ctx context.Context, err error) error {
	if err == nil || IsKind(err, KindUnavailable) {
		return err
	}
	var reply redis.Error
	late := errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.As(err, &reply)
	if !late && !isTimeout(err) && !isUnreachable(err) {
		return err
	}
	return &Error{Kind: KindUnavailable, Msg: msgUnavailable, cause: err}
}

// isUnreachable reports whether err says that no connection to Redis could be made: refused,
// or a dial that failed.
func isUnreachable(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}

// isTimeout reports whether err says that Redis did not answer in time.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, redis.ErrPoolTimeout) || (errors.As(err, &ne) && ne.Timeout())
}

func invalidf(format string, args ...any) error {
	return &Error{Kind: KindInvalid, Msg: fmt.Sprintf(format, args...)}
}

// busyf is the error of a write that met concurrent changes on every one of its tries: nothing
// was done, and the client may retry (KindConcurrentChange).
func busyf(format string, args ...any) error {
	return &Error{Kind: KindConcurrentChange, Msg: fmt.Sprintf(format, args...)}
}

func notFoundf(format string, args ...any) error {
	return &Error{Kind: KindNotFound, Msg: fmt.Sprintf(format, args...)}
}

// scriptKinds maps the first word of a script's error reply to its kind.
var scriptKinds = map[string]Kind{
	"INVALID":   KindInvalid,
	"FORBIDDEN": KindForbidden,
	"NOTFOUND":  KindNotFound,
	"CONFLICT":  KindConflict,
	"CLOSED":    KindVotingClosed,
	"LIMIT":     KindLimitReached,
	"LOCKED":    KindLocked,
	"BANNED":    KindBanned,
}

// scriptError turns the error replies of the Lua scripts into typed errors. Scripts reply with
// redis.error_reply("<KIND> <message>"), and a ban with "BANNED <until> <message>", until in Unix
// ms or "inf" for a permanent ban; Redis's own OOM reply is KindStorageFull; any other error passes
// through wrapped.
func scriptError(op string, err error) error {
	if err == nil {
		return nil
	}
	if err := storageFull(err); IsKind(err, KindStorageFull) {
		return err
	}
	word, rest, _ := strings.Cut(err.Error(), " ")
	k, ok := scriptKinds[word]
	if !ok {
		return fmt.Errorf("%s: %w", op, err)
	}
	if k == KindBanned {
		until, msg, _ := strings.Cut(rest, " ")
		return bannedError(untilFromScore(until), msg)
	}
	return &Error{Kind: k, Msg: rest}
}

// bannedError is the error of a write refused by a ban that ends at until (nil: permanent).
func bannedError(until *time.Time, msg string) error {
	return &Error{Kind: KindBanned, Msg: msg, Until: until}
}

// untilFromScore reads the end of a ban from its sorted-set score: Unix ms, or "inf" (or
// anything not a number) for a ban that never ends.
func untilFromScore(score string) *time.Time {
	ms, err := strconv.ParseInt(score, 10, 64)
	if err != nil {
		return nil
	}
	t := fromMillis(ms)
	return &t
}

// IsKind reports whether err is a store Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}
