package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"math"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/agora/agora/store"
)

// Error codes of CONTRACT.md.
const (
	CodeBadUserInput    = "BAD_USER_INPUT"
	CodeUnauthenticated = "UNAUTHENTICATED"
	CodeForbidden       = "FORBIDDEN"
	CodeNotFound        = "NOT_FOUND"
	CodeConflict        = "CONFLICT"
	CodeVotingClosed    = "VOTING_CLOSED"
	CodeRateLimited     = "RATE_LIMITED"
	CodeInternal        = "INTERNAL_SERVER_ERROR"
)

var kindCodes = map[store.Kind]string{
	store.KindInvalid:         CodeBadUserInput,
	store.KindUnauthenticated: CodeUnauthenticated,
	store.KindForbidden:       CodeForbidden,
	store.KindNotFound:        CodeNotFound,
	store.KindConflict:        CodeConflict,
	store.KindVotingClosed:    CodeVotingClosed,
	store.KindRateLimited:     CodeRateLimited,
}

// internalError marks a resolver error that is the server's fault. Its cause has been logged; the
// client sees only a generic message.
type internalError struct{ cause error }

func (e *internalError) Error() string { return "internal server error" }
func (e *internalError) Unwrap() error { return e.cause }

// catchInternal is a field middleware: any resolver error that is not a store.Error (an error the
// client can act on) is logged with its cause and replaced by an internalError.
func catchInternal(log *slog.Logger) graphql.FieldMiddleware {
	return func(ctx context.Context, next graphql.Resolver) (any, error) {
		res, err := next(ctx)
		if err == nil {
			return res, nil
		}
		var se *store.Error
		var ie *internalError
		if errors.As(err, &se) || errors.As(err, &ie) {
			return res, err
		}
		if errors.Is(err, context.Canceled) {
			return res, err
		}
		fc := graphql.GetFieldContext(ctx)
		log.ErrorContext(ctx, "resolver failed", "path", fc.Path().String(), "err", err)
		return res, &internalError{cause: err}
	}
}

// presentError gives every error its extensions.code. Store errors carry their own code; errors the
// executor raises itself (parse, validation, limits) keep theirs; a bad argument value that the
// executor rejects during execution is BAD_USER_INPUT; anything else is internal and generic.
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		var se *store.Error
		var ie *internalError
		switch {
		case errors.As(err, &se):
			gerr.Message = se.Msg
			setCode(gerr, kindCodes[se.Kind])
			if se.Kind == store.KindRateLimited {
				gerr.Extensions["retryAfter"] = int(math.Ceil(se.RetryAfter.Seconds()))
			}
		case errors.Is(err, store.ErrSlowSubscriber):
			gerr.Message = store.ErrSlowSubscriber.Error()
			setCode(gerr, CodeSlowSubscriber)
		case errors.Is(err, store.ErrStoreClosed):
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
			if !errors.As(err, &ge) {
				// A plain error that bypassed the field middleware: never send its text.
				log.ErrorContext(ctx, "unclassified error", "err", err)
				gerr.Message = "internal server error"
				setCode(gerr, CodeInternal)
				break
			}
			setCode(gerr, CodeBadUserInput)
		}
		return gerr
	}
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
