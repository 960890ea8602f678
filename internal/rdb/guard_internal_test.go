package rdb

import (
	"context"
	"errors"
	"testing"
)

// TestGuardCostsNothingWithoutOne: a pipeline's check of the guard (Runner.WithGuard) allocates nothing
// while no guard is in force, also under context.WithoutCancel, as a response's reads run (its
// Value boxes the context: 2 more allocations on every small page); a guard holds, also for a
// command sent under context.WithoutCancel after its context ended, until it is released.
func TestGuardCostsNothingWithoutOne(t *testing.T) {
	r := NewRunner(NewPlainClient(&Options{Addr: "127.0.0.1:1"}), nil, RunnerOptions{})
	ctx := context.WithoutCancel(context.WithValue(context.Background(), redisCountKey{}, &RedisCount{}))
	allocs := func() float64 {
		return testing.AllocsPerRun(100, func() {
			if r.checkGuard(ctx) != nil {
				t.Fatal("a guard where none was set")
			}
		})
	}
	if n := allocs(); n != 0 {
		t.Errorf("checkGuard allocates %v times without a guard, want 0", n)
	}
	stop := errors.New("stop")
	gctx, cancel := context.WithCancel(context.Background())
	guarded, release := r.WithGuard(gctx, func() error { return stop })
	cancel()
	if err := r.checkGuard(context.WithoutCancel(guarded)); !errors.Is(err, stop) {
		t.Errorf("checkGuard under a guard whose context ended = %v, want its error", err)
	}
	release()
	release() // a second release changes nothing
	if n := allocs(); n != 0 {
		t.Errorf("checkGuard allocates %v times once the guard was released, want 0", n)
	}
	if err := r.checkGuard(context.WithoutCancel(guarded)); err != nil {
		t.Errorf("checkGuard after the release = %v, want nil", err)
	}
}

// TestGuardedCommandFailsUnsent: a single command (Commands) sent under a guard that refuses
// fails with the guard's error, unsent — it did not panic on the command never made (a migration
// that lost its lock stops with an error, not by crashing the server it runs in).
func TestGuardedCommandFailsUnsent(t *testing.T) {
	r := NewRunner(NewPlainClient(&Options{Addr: "127.0.0.1:1"}), nil, RunnerOptions{})
	stop := errors.New("stop")
	ctx, release := r.WithGuard(context.Background(), func() error { return stop })
	defer release()
	for name, err := range map[string]func() error{
		"HGET":   func() error { return r.Commands().HGet(ctx, "k", "f").Err() },
		"DEL":    func() error { return r.Commands().Del(ctx, "k").Err() },
		"INCR":   func() error { return r.Commands().Incr(ctx, "k").Err() },
		"EXISTS": func() error { return r.Commands().Exists(ctx, "k").Err() },
	} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s under a refusing guard panicked: %v", name, p)
				}
			}()
			if e := err(); !errors.Is(e, stop) {
				t.Errorf("%s under a refusing guard = %v, want the guard's error", name, e)
			}
		}()
	}
}
