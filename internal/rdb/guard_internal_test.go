package rdb

import (
	"context"
	"errors"
	"testing"
)

// TestGuardCostsNothingWithoutOne: a pipeline's check of the guard (WithGuard) allocates nothing
// while no guard is in force, also under context.WithoutCancel, as a response's reads run (its
// Value boxes the context: 2 more allocations on every small page); a guard holds, also for a
// command sent under context.WithoutCancel after its context ended, until it is released.
func TestGuardCostsNothingWithoutOne(t *testing.T) {
	ctx := context.WithoutCancel(context.WithValue(context.Background(), redisCountKey{}, &RedisCount{}))
	allocs := func() float64 {
		return testing.AllocsPerRun(100, func() {
			if checkGuard(ctx) != nil {
				t.Fatal("a guard where none was set")
			}
		})
	}
	if n := allocs(); n != 0 {
		t.Errorf("checkGuard allocates %v times without a guard, want 0", n)
	}
	stop := errors.New("stop")
	gctx, cancel := context.WithCancel(context.Background())
	guarded, release := WithGuard(gctx, func() error { return stop })
	cancel()
	if err := checkGuard(context.WithoutCancel(guarded)); !errors.Is(err, stop) {
		t.Errorf("checkGuard under a guard whose context ended = %v, want its error", err)
	}
	release()
	release() // a second release changes nothing
	if n := allocs(); n != 0 {
		t.Errorf("checkGuard allocates %v times once the guard was released, want 0", n)
	}
	if err := checkGuard(context.WithoutCancel(guarded)); err != nil {
		t.Errorf("checkGuard after the release = %v, want nil", err)
	}
}
