package rdb

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/agora/agora/internal/fault"
)

// The classification of what Redis and the network answer: which errors are a Redis that did not
// answer in time (Unavailable), a full Redis (StorageFull), and which are passing, so that the
// runner sends again (isTransient, isNoScript, isNonLocalKey).

// msgStorageFull is the message of every KindStorageFull error.
const msgStorageFull = "the store is full: the write was refused; retry later"

// StorageFull returns err as a fault.Error of KindStorageFull when it is Redis's OOM reply ("OOM
// command not allowed when used memory > 'maxmemory'"), and err unchanged otherwise.
func StorageFull(err error) error {
	var reply redis.Error
	if errors.As(err, &reply) && strings.HasPrefix(reply.Error(), "OOM ") {
		return fault.Wrap(fault.KindStorageFull, msgStorageFull, err)
	}
	return err
}

// msgUnavailable is the message of every KindUnavailable error.
const msgUnavailable = "Redis did not answer in time; retry"

// Unavailable returns err as a fault.Error of KindUnavailable when the operation it ended did not
// complete in time: err is a timeout (a deadline that ran out, a socket read or write that timed
// out, no pooled connection free in time) or a connection that could not be made, or ctx — the
// operation's bounded context — is past its deadline and err is not a reply of Redis (a client
// that was still redialling a Redis refusing connections when time ran out returns the error of
// its last try). Any other error, nil included, is returned unchanged.
func Unavailable(ctx context.Context, err error) error {
	if err == nil || fault.IsKind(err, fault.KindUnavailable) {
		return err
	}
	var reply redis.Error
	late := errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.As(err, &reply)
	if !late && !IsTimeout(err) && !isUnreachable(err) {
		return err
	}
	return fault.Wrap(fault.KindUnavailable, msgUnavailable, err)
}

// isUnreachable reports whether err says that no connection to Redis could be made: refused,
// or a dial that failed.
func isUnreachable(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}

// IsTimeout reports whether err says that Redis did not answer in time.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, redis.ErrPoolTimeout) || (errors.As(err, &ne) && ne.Timeout())
}

// FirstErr is the first error of an op's commands; Nil is none.
func FirstErr(cmds [2]Cmder) error {
	for _, c := range cmds {
		if c == nil {
			continue
		}
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
	}
	return nil
}

// isTransient reports errors after which a write should be resent: cluster redirects, a slot
// in migration, a cluster or master that is down for the moment, a replica that was the master a
// moment ago, and a server still loading its data.
func isTransient(err error) bool {
	if err == nil {
		return false
	}
	if _, ok := redis.IsMovedError(err); ok {
		return true
	}
	if _, ok := redis.IsAskError(err); ok {
		return true
	}
	return redis.IsTryAgainError(err) || redis.IsClusterDownError(err) || redis.IsMasterDownError(err) ||
		redis.IsReadOnlyError(err) || redis.IsLoadingError(err)
}

// isNonLocalKey reports the error of a script that touched, in a slot being migrated, a key it
// did not declare and that is not (or no longer) on this node. Write scripts declare every key
// and never meet it; a read script may, and can simply be sent again.
func isNonLocalKey(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Script attempted to access a non local key")
}

// isNoScript reports whether err is Redis's NOSCRIPT reply.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
