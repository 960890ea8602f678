package rdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/agora/agora/internal/fault"
)

// TestUnavailable checks which errors become KindUnavailable: every form of timeout, a connection
// that could not be made, and any failure other than a reply of Redis once the operation's
// deadline has passed; nothing else.
func TestUnavailable(t *testing.T) {
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	reply := Nil // a reply of Redis, like WRONGTYPE or a script's error
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
		{"no pooled connection in time", live, ErrPoolTimeout, true},
		{"refused, after the deadline", late, refused, true},
		{"connection closed, after the deadline", late, io.EOF, true},
		{"refused, in time: unreachable", live, refused, true},
		{"connection closed, in time", live, io.EOF, false},
		{"a reply, after the deadline", late, reply, false},
		{"cancelled by the caller", cancelled, context.Canceled, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Unavailable(c.ctx, c.err)
			if got := fault.IsKind(err, fault.KindUnavailable); got != c.want {
				t.Fatalf("KindUnavailable = %v, want %v (err %v)", got, c.want, err)
			}
			if !errors.Is(err, c.err) {
				t.Fatalf("%v no longer wraps %v", err, c.err)
			}
			if c.want && err.Error() != "Redis did not answer in time; retry" {
				t.Fatalf("message %q", err.Error())
			}
			if again := Unavailable(c.ctx, err); again != err {
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
