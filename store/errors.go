package store

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agora/agora/internal/fault"
	"github.com/agora/agora/internal/rdb"
)

// Kind classifies the errors a client can act on. Each kind maps to one extensions.code; see
// package fault for each kind's meaning.
type Kind = fault.Kind

// The kinds of Error.
const (
	KindInternal         = fault.KindInternal
	KindInvalid          = fault.KindInvalid
	KindUnauthenticated  = fault.KindUnauthenticated
	KindForbidden        = fault.KindForbidden
	KindNotFound         = fault.KindNotFound
	KindConflict         = fault.KindConflict
	KindVotingClosed     = fault.KindVotingClosed
	KindRateLimited      = fault.KindRateLimited
	KindResync           = fault.KindResync
	KindUnavailable      = fault.KindUnavailable
	KindLimitReached     = fault.KindLimitReached
	KindBanned           = fault.KindBanned
	KindLocked           = fault.KindLocked
	KindConcurrentChange = fault.KindConcurrentChange
	KindStorageFull      = fault.KindStorageFull
	KindEmailUnverified  = fault.KindEmailUnverified
	KindFiltered         = fault.KindFiltered
)

// Error is the store's typed error. Its message is safe to show to the client. Package rdb makes
// the errors of KindUnavailable and KindStorageFull.
type Error = fault.Error

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
	// A write of the user's slot that found its account deleted (its checks passed just before).
	"UNAUTHENTICATED": KindUnauthenticated,
}

// scriptError turns the error replies of the Lua scripts into typed errors. Scripts reply with
// redis.error_reply("<KIND> <message>"), and a ban with "BANNED <until> <message>", until in Unix
// ms or "inf" for a permanent ban; Redis's own OOM reply is KindStorageFull; any other error passes
// through wrapped.
func scriptError(op string, err error) error {
	if err == nil {
		return nil
	}
	if err := rdb.StorageFull(err); IsKind(err, KindStorageFull) {
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
func IsKind(err error, k Kind) bool { return fault.IsKind(err, k) }
