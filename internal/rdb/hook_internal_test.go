package rdb

import (
	"context"
	"testing"
	"time"
)

// BenchmarkDeadlineHookUnderBounded runs the deadline hook of a pipeline as the runner calls it:
// inside Runner.Bounded, whose ctx is already due within the hook's timeout.
//
//	go test ./internal/rdb -run '^$' -bench DeadlineHook -benchmem
func BenchmarkDeadlineHookUnderBounded(b *testing.B) {
	h := deadlineHook{timeout: 5 * time.Second}
	run := h.ProcessPipelineHook(func(ctx context.Context, cmds []Cmder) error { return nil })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if err := run(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDeadlineHookBounds checks that the hook bounds a call that has no deadline, or a later one,
// by its timeout, and leaves an earlier deadline as it is.
func TestDeadlineHookBounds(t *testing.T) {
	h := deadlineHook{timeout: time.Second}
	for _, c := range []struct {
		name   string
		parent time.Duration // 0: no deadline
		want   time.Duration
	}{
		{"no deadline", 0, time.Second},
		{"a later deadline", time.Hour, time.Second},
		{"an earlier deadline", 100 * time.Millisecond, 100 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			if c.parent > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.parent)
				defer cancel()
			}
			var left time.Duration
			run := h.ProcessPipelineHook(func(ctx context.Context, _ []Cmder) error {
				d, ok := ctx.Deadline()
				if !ok {
					t.Fatal("no deadline")
				}
				left = time.Until(d)
				return nil
			})
			if err := run(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if left > c.want || left < c.want-50*time.Millisecond {
				t.Errorf("the call had %s left, want about %s", left, c.want)
			}
		})
	}
}
