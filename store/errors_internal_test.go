package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestUnavailable checks which errors become KindUnavailable: every form of timeout, a connection
// that could not be made, and any failure other than a reply of Redis once the operation's
// deadline has passed; nothing else.
func TestUnavailable(t *testing.T) {
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	reply := redis.Nil // a reply of Redis, like WRONGTYPE or a script's error
	live := context.Background()
	late, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	cancelled, stop := context.WithCancel(context.Background())
	stop()
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"deadline exceeded", live, context.DeadlineExceeded, true},
		{"socket read timeout", live, timeout, true},
		{"wrapped socket timeout", live, fmt.Errorf("redis read: %w", timeout), true},
		{"no pooled connection in time", live, redis.ErrPoolTimeout, true},
		{"refused, after the deadline", late, refused, true},
		{"connection closed, after the deadline", late, io.EOF, true},
		{"refused, in time: unreachable", live, refused, true},
		{"connection closed, in time", live, io.EOF, false},
		{"a reply, after the deadline", late, reply, false},
		{"cancelled by the caller", cancelled, context.Canceled, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := unavailable(c.ctx, c.err)
			if got := IsKind(err, KindUnavailable); got != c.want {
				t.Fatalf("KindUnavailable = %v, want %v (err %v)", got, c.want, err)
			}
			if !errors.Is(err, c.err) {
				t.Fatalf("%v no longer wraps %v", err, c.err)
			}
			if c.want && err.Error() != "Redis did not answer in time; retry" {
				t.Fatalf("message %q", err.Error())
			}
			if again := unavailable(c.ctx, err); again != err {
				t.Fatalf("typed twice: %v", again)
			}
		})
	}
}

// timeoutErr is a net.Error that timed out.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestConflictKinds checks that a name that is taken and a write that met concurrent changes are
// different kinds: the first is final, the second may be retried.
func TestConflictKinds(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want Kind
	}{
		{"name taken (signup.lua)", scriptError("signup", errors.New(`CONFLICT the name "alice" is taken`)), KindConflict},
		{"group exists (group_create.lua)", scriptError("group_create", errors.New("CONFLICT the group already exists")), KindConflict},
		{"thread kept changing", busyf("the thread of comment %s kept changing while it was being deleted; retry", "comment:1:2"), KindConcurrentChange},
		{"sessions kept starting", busyf("sessions kept starting while they were being ended; retry"), KindConcurrentChange},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !IsKind(c.err, c.want) {
				t.Fatalf("%v: kind %v, want %v", c.err, c.err.(*Error).Kind, c.want)
			}
		})
	}
}
