package store

import (
	"errors"
	"fmt"
	"strings"
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
	KindConflict
	KindVotingClosed
	KindRateLimited
	// KindResync ends a subscription resumed from a cursor older than the events kept: the
	// client refetches, then subscribes again.
	KindResync
)

// Error is the store's typed error. Its message is safe to show to the client.
type Error struct {
	Kind       Kind
	Msg        string
	RetryAfter time.Duration // only for KindRateLimited
}

// Error returns the client-facing message.
func (e *Error) Error() string { return e.Msg }

func invalidf(format string, args ...any) error {
	return &Error{Kind: KindInvalid, Msg: fmt.Sprintf(format, args...)}
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
}

// scriptError turns the error replies of the Lua scripts into typed errors. Scripts reply with
// redis.error_reply("<KIND> <message>"); any other error passes through wrapped.
func scriptError(op string, err error) error {
	if err == nil {
		return nil
	}
	word, rest, _ := strings.Cut(err.Error(), " ")
	if k, ok := scriptKinds[word]; ok {
		return &Error{Kind: k, Msg: rest}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// IsKind reports whether err is a store Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}
