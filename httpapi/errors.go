package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
)

// Error codes of CONTRACT.md.
const (
	CodeBadUserInput    = "BAD_USER_INPUT"
	CodeUnauthenticated = "UNAUTHENTICATED"
	CodeForbidden       = "FORBIDDEN"
	CodeNotFound        = "NOT_FOUND"
	CodeConflict        = "CONFLICT" // a name that is taken: do not retry
	// CodeConcurrentChange is a write that met concurrent changes on every try: nothing was
	// done; retry it.
	CodeConcurrentChange = "CONCURRENT_CHANGE"
	CodeVotingClosed     = "VOTING_CLOSED"
	CodeRateLimited      = "RATE_LIMITED"
	CodeResyncRequired   = "RESYNC_REQUIRED"
	CodeLimitReached     = "LIMIT_REACHED"
	CodeBanned           = "BANNED"
	CodeLocked           = "LOCKED"
	// CodeEmailUnverified is a write by an account that has not verified its email address,
	// on a server run with -require-email: retry once it has.
	CodeEmailUnverified = "EMAIL_UNVERIFIED"
	// CodeFiltered is text refused by the site filters; extensions.field names the argument.
	// The same text is refused again: do not retry it.
	CodeFiltered = "FILTERED"
	CodeInternal = "INTERNAL_SERVER_ERROR"
)

var kindCodes = map[store.Kind]string{
	store.KindInvalid:          CodeBadUserInput,
	store.KindUnauthenticated:  CodeUnauthenticated,
	store.KindForbidden:        CodeForbidden,
	store.KindNotFound:         CodeNotFound,
	store.KindConflict:         CodeConflict,
	store.KindVotingClosed:     CodeVotingClosed,
	store.KindRateLimited:      CodeRateLimited,
	store.KindResync:           CodeResyncRequired,
	store.KindUnavailable:      CodeUnavailable,
	store.KindLimitReached:     CodeLimitReached,
	store.KindBanned:           CodeBanned,
	store.KindLocked:           CodeLocked,
	store.KindConcurrentChange: CodeConcurrentChange,
	store.KindStorageFull:      CodeUnavailable, // with extensions.reason ReasonStorageFull
	store.KindEmailUnverified:  CodeEmailUnverified,
	store.KindFiltered:         CodeFiltered,
}

// ReasonStorageFull is the extensions.reason of an UNAVAILABLE error for a write refused because
// Redis is at its maxmemory: nothing was written; retry once memory is freed.
const ReasonStorageFull = "STORAGE_FULL"

// logFailure logs err, met while serving ctx, at ERROR, unless the client went away: a cancelled
// request, socket or operation (the client hung up, completed or stopped it) is not a failure of
// the server's, and is logged at DEBUG.
func logFailure(ctx context.Context, log *slog.Logger, msg string, err error) {
	level := slog.LevelError
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		level = slog.LevelDebug
	}
	log.Log(ctx, level, msg, "err", err)
}

// internalError marks an error that is the server's fault. Its cause has been logged; the client
// sees only a generic message.
type internalError struct{ cause error }

func (e *internalError) Error() string { return "internal server error" }
func (e *internalError) Unwrap() error { return e.cause }

// presentError gives every error its extensions.code, where errors are mapped: no field
// middleware runs on the hot path. Store errors carry their own code; errors the executor raises
// itself (parse, validation, limits, a null in a non-null field) keep theirs or are
// BAD_USER_INPUT; an error a resolver returned that is not a store error — Redis refusing
// connections, a broken invariant — is logged with its path and answered as a generic
// INTERNAL_SERVER_ERROR. Redis not answering in time is a store error, UNAVAILABLE.
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		var se *store.Error
		var ie *internalError
		switch {
		case errors.As(err, &se):
			gerr.Message = se.Msg
			if gerr.Extensions == nil {
				gerr.Extensions = map[string]any{}
			}
			maps.Copy(gerr.Extensions, storeErrorExtensions(se))
			if se.Kind == store.KindRateLimited {
				setRetryAfter(ctx, retryAfterSeconds(se))
			}
		case isBadTime(err):
			gerr.Message = "not a time: give an RFC 3339 date and time, like 2026-12-24T18:00:00Z"
			setCode(gerr, CodeBadUserInput)
		case errors.Is(err, live.ErrSlowSubscriber):
			gerr.Message = live.ErrSlowSubscriber.Error()
			setCode(gerr, CodeSlowSubscriber)
		case errors.Is(err, live.ErrClosed):
			gerr.Message = "the server is shutting down; subscribe again"
			setCode(gerr, CodeUnavailable)
		case errors.As(err, &ie) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			gerr.Message = "internal server error"
			setCode(gerr, CodeInternal)
		default:
			var ge *gqlerror.Error
			if errors.As(err, &ge) && ge.Extensions["code"] != nil {
				return gerr
			}
			if ge == nil || ge.Unwrap() != nil {
				// A resolver's own error (wrapped by the executor with its path): never send its text.
				log.ErrorContext(ctx, "resolver failed", "path", gerr.Path.String(), "err", err)
				gerr.Message = "internal server error"
				setCode(gerr, CodeInternal)
				break
			}
			setCode(gerr, CodeBadUserInput)
		}
		return gerr
	}
}

// storeErrorExtensions is the extensions of a store error, on every transport and outside the
// executor too: its code, and what the code promises with it — retryAfter for RATE_LIMITED,
// field for FILTERED, reason for a full Redis, until for BANNED.
func storeErrorExtensions(se *store.Error) map[string]any {
	ext := map[string]any{"code": kindCodes[se.Kind]}
	switch se.Kind {
	case store.KindRateLimited:
		ext["retryAfter"] = retryAfterSeconds(se)
	case store.KindFiltered:
		ext["field"] = se.Field
	case store.KindStorageFull:
		ext["reason"] = ReasonStorageFull
	case store.KindBanned:
		var until any // null for a permanent ban
		if se.Until != nil {
			until = se.Until.UTC().Format(time.RFC3339)
		}
		ext["until"] = until
	}
	return ext
}

// retryAfterSeconds is the whole seconds a RATE_LIMITED error asks the client to wait, rounded up.
func retryAfterSeconds(se *store.Error) int { return int(math.Ceil(se.RetryAfter.Seconds())) }

// isBadTime reports the error of a Time argument that is not a time: graphql.UnmarshalTime
// returns an untyped error with this text.
func isBadTime(err error) bool {
	return strings.Contains(err.Error(), "time should be RFC3339Nano formatted string")
}

func setCode(e *gqlerror.Error, code string) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = code
}

// recoverPanic logs a resolver panic and answers with a generic internal error.
func recoverPanic(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "resolver panicked", "panic", p)
		return &internalError{cause: errors.New("panic")}
	}
}

// retryAfterHeader lets the error presenter set the Retry-After header of an HTTP response: it
// runs while the operation executes, before the transport writes the response.
type retryAfterHeader struct {
	mu sync.Mutex
	h  http.Header
}

type retryAfterKey struct{}

// withRetryAfter returns ctx through which a RATE_LIMITED error sets w's Retry-After header.
func withRetryAfter(ctx context.Context, w http.ResponseWriter) context.Context {
	return context.WithValue(ctx, retryAfterKey{}, &retryAfterHeader{h: w.Header()})
}

// setRetryAfter sets Retry-After to the longest wait a response's errors ask for, when the
// transport is HTTP.
func setRetryAfter(ctx context.Context, secs int) {
	ra, ok := ctx.Value(retryAfterKey{}).(*retryAfterHeader)
	if !ok {
		return
	}
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if old, err := strconv.Atoi(ra.h.Get("Retry-After")); err == nil && old >= secs {
		return
	}
	ra.h.Set("Retry-After", strconv.Itoa(secs))
}
