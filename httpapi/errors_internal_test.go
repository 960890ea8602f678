package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
)

// TestPresentUnavailable checks the codes of the errors that say Redis could not serve a request:
// the store's KindUnavailable, however wrapped, and stopped live events (a closed hub) are
// UNAVAILABLE with a message the client can show; a raw timeout that escaped the store's typing
// stays a generic internal error, so that no Redis detail leaks.
func TestPresentUnavailable(t *testing.T) {
	present := presentError(slog.New(slog.DiscardHandler))
	unavailable := &store.Error{Kind: store.KindUnavailable, Msg: "Redis did not answer in time; retry"}
	for _, c := range []struct {
		name string
		err  error
		code string
		msg  string
	}{
		{"store timeout", unavailable, CodeUnavailable, "Redis did not answer in time; retry"},
		{"wrapped store timeout", fmt.Errorf("redis read: %w", unavailable), CodeUnavailable, "Redis did not answer in time; retry"},
		{"stopped live events", fmt.Errorf("subscribe: %w", live.ErrClosed), CodeUnavailable, "the server is shutting down; subscribe again"},
		{"untyped deadline", fmt.Errorf("redis read: %w", context.DeadlineExceeded), CodeInternal, "internal server error"},
		{"other failure", errors.New("dial tcp 10.0.0.7:6379: connection refused"), CodeInternal, "internal server error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := present(context.Background(), c.err)
			if got.Extensions["code"] != c.code || got.Message != c.msg {
				t.Fatalf("code %v, message %q; want %s, %q", got.Extensions["code"], got.Message, c.code, c.msg)
			}
		})
	}
}

// TestPresentConflicts checks that a name that is taken (final) and a write that met concurrent
// changes (retryable) carry different codes.
func TestPresentConflicts(t *testing.T) {
	present := presentError(slog.New(slog.DiscardHandler))
	for _, c := range []struct {
		name string
		kind store.Kind
		code string
	}{
		{"name taken", store.KindConflict, CodeConflict},
		{"concurrent change", store.KindConcurrentChange, "CONCURRENT_CHANGE"},
		{"email unverified", store.KindEmailUnverified, "EMAIL_UNVERIFIED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := present(context.Background(), &store.Error{Kind: c.kind, Msg: c.name})
			if got.Extensions["code"] != c.code {
				t.Fatalf("code %v, want %s", got.Extensions["code"], c.code)
			}
		})
	}
}

// levelOf is a slog.Handler that remembers the level of the last record.
type levelOf struct{ level *slog.Level }

func (h levelOf) Enabled(context.Context, slog.Level) bool { return true }
func (h levelOf) Handle(_ context.Context, r slog.Record) error {
	*h.level = r.Level
	return nil
}
func (h levelOf) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h levelOf) WithGroup(string) slog.Handler      { return h }

// TestLogFailureLevels: a client that went away is logged at DEBUG, a real failure at ERROR.
func TestLogFailureLevels(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	refused := errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want slog.Level
	}{
		{"cancelled context", cancelled, refused, slog.LevelDebug},
		{"cancellation error", context.Background(), fmt.Errorf("authenticate: %w", context.Canceled), slog.LevelDebug},
		{"redis failure", context.Background(), refused, slog.LevelError},
		{"deadline", context.Background(), fmt.Errorf("authenticate: %w", context.DeadlineExceeded), slog.LevelError},
	} {
		got := slog.Level(-100)
		logFailure(tc.ctx, slog.New(levelOf{&got}), "authenticate", tc.err)
		if got != tc.want {
			t.Errorf("%s: logged at %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestPresentStorageFull checks that a write refused because Redis is full is UNAVAILABLE (retry
// later) with extensions.reason STORAGE_FULL, however wrapped.
func TestPresentStorageFull(t *testing.T) {
	present := presentError(slog.New(slog.DiscardHandler))
	full := &store.Error{Kind: store.KindStorageFull, Msg: "the store is full: the write was refused; retry later"}
	got := present(context.Background(), fmt.Errorf("create post: %w", full))
	if got.Extensions["code"] != CodeUnavailable || got.Extensions["reason"] != ReasonStorageFull || got.Message != full.Msg {
		t.Fatalf("code %v, reason %v, message %q; want %s, %s, %q", got.Extensions["code"], got.Extensions["reason"], got.Message,
			CodeUnavailable, ReasonStorageFull, full.Msg)
	}
}
