// Package fault holds the typed error of agora's data layer: an Error of a Kind, whose message is
// safe to show to a client. Package store names it store.Error (the store's kinds are its
// vocabulary); package rdb, below store, makes the two kinds the Redis layer itself knows of:
// KindUnavailable (Redis did not answer in time) and KindStorageFull (Redis is at its maxmemory).
// The package imports nothing of agora, so that both can use it.
package fault

import (
	"errors"
	"time"
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
	// repair job (see store/repair.go).
	KindStorageFull
	// KindEmailUnverified is a write by an account whose email address is not verified, under
	// Options.RequireEmail: it succeeds once the account verifies an address.
	KindEmailUnverified
	// KindFiltered is text refused by the site filters (store/sitefilters.go); Field names the
	// field. The same text is refused again: do not retry it.
	KindFiltered
)

// Error is the data layer's typed error. Its message is safe to show to the client.
type Error struct {
	Kind       Kind
	Msg        string
	RetryAfter time.Duration // only for KindRateLimited
	Until      *time.Time    // only for KindBanned: when the ban ends; nil when permanent
	Field      string        // only for KindFiltered: the argument whose text was refused

	cause error // what went wrong underneath, for logs and errors.Is; never shown to the client
}

// Wrap returns an Error of kind k with message msg (shown to the client) over cause (kept for
// logs and errors.Is, never shown).
func Wrap(k Kind, msg string, cause error) *Error {
	return &Error{Kind: k, Msg: msg, cause: cause}
}

// Error returns the client-facing message.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the underlying cause, if any: the Redis or network error behind a
// KindUnavailable.
func (e *Error) Unwrap() error { return e.cause }

// IsKind reports whether err is an Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}
