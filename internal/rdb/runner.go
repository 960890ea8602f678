package rdb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated is returned by a write that Redis applied but not enough replicas acknowledged
// within the runner's WaitTimeout. The write may or may not survive a failover; repeating it is
// safe.
var ErrNotReplicated = errors.New("write not acknowledged by enough replicas")

// MaxRedirectAttempts bounds how often an operation is resent after MOVED, ASK, TRYAGAIN and the
// like while a cluster moves slots or fails over; sharded subscriptions (pubsub.go) are bounded
// by it too.
const MaxRedirectAttempts = 8

// RunnerOptions configures a Runner.
type RunnerOptions struct {
	// Timeout bounds each attempt of a pipeline and each reload of the scripts (see Bounded).
	// Zero selects DefaultTimeout.
	Timeout time.Duration
	// WaitReplicas makes every pipeline run with wait end with WAIT for this many replicas on
	// each master it wrote to. Zero sends no WAIT.
	WaitReplicas int
	// WaitTimeout bounds the WAIT.
	WaitTimeout time.Duration
	// ShardedPubSub says that messages are published with SPUBLISH (a Redis 7 cluster), so that
	// a Subscription subscribes with SSUBSCRIBE on the master of each channel's slot.
	ShardedPubSub bool
}

// Runner is the one way commands reach Redis: it sends pipelines through one retry policy,
// counts their round trips (RedisCount) and traces each as a span.
type Runner struct {
	client  UniversalClient
	scripts Scripts
	opts    RunnerOptions
	guards  atomic.Int64 // the guards in force (WithGuard, until released)
}

// NewRunner returns the runner of client, which loads scripts again when Redis lost them.
func NewRunner(client UniversalClient, scripts Scripts, o RunnerOptions) *Runner {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return &Runner{client: client, scripts: scripts, opts: o}
}

// ShardedPubSub reports whether live events are published and subscribed with sharded pub/sub
// (RunnerOptions.ShardedPubSub).
func (r *Runner) ShardedPubSub() bool { return r.opts.ShardedPubSub }

// Op is an operation of a pipeline, as the runner sees it: a pointer to a caller's own type (the
// store's op), so that a pipeline of ops needs no allocation to be run.
type Op[T any] interface {
	*T
	// Slot returns the key on whose hash slot the op's commands go.
	Slot() string
	// Send adds the op's commands to p, and keeps them for Sent.
	Send(p Pipeliner)
	// Sent returns the commands the op added last (nil for none).
	Sent() [2]Cmder
}

// Pipeline sends ops in one pipeline (on a cluster, one per master, in parallel) and sends again
// those that failed for a passing reason: after NOSCRIPT (Redis lost its script cache in a
// restart or failover, or a slot moved to a node that never loaded the scripts) once the scripts
// are loaded again; after TRYAGAIN, CLUSTERDOWN, a redirect and the like (a slot moving, a
// failover in progress) after a pause doubling from 10ms; and a read script that met, in a slot
// being migrated, a key it did not declare. Every read and write goes through it: there is one
// retry policy. With wait and RunnerOptions.WaitReplicas, each pipeline ends with WAIT on the
// connection that carried the writes (WAIT counts what its own connection wrote), on every master
// written to. The commands keep their own errors; Pipeline returns an error when the retries ran
// out, the scripts could not be loaded again, or the replicas did not acknowledge.
//
// Each attempt, and each reload of the scripts, is bounded by RunnerOptions.Timeout (see
// Bounded): a Redis that does not answer fails the operation with KindUnavailable after one
// timeout, since a timeout is never retried here (go-redis retries within the attempt). The
// bound is per attempt, not over the whole loop, because the replies retried here are answers —
// a slot on the move, a failover under way — and cutting that short would turn a routine
// resharding into errors; MaxRedirectAttempts bounds the loop. A guard in ctx (Runner.WithGuard) is
// asked before each attempt, and its error ends the loop with nothing more sent.
func Pipeline[T any, P Op[T]](ctx context.Context, r *Runner, ops []T, wait bool) error {
	wait = wait && r.opts.WaitReplicas > 0
	pending := make([]int, len(ops))
	for i := range pending {
		pending[i] = i
	}
	var last error
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt == MaxRedirectAttempts {
			return fmt.Errorf("gave up after %d attempts: %w", attempt, last)
		}
		if attempt > 0 && !isNoScript(last) {
			if err := Pause(ctx, RetryPause(attempt)); err != nil {
				return err
			}
		}
		if err := r.checkGuard(ctx); err != nil {
			return err
		}
		var again []int
		err := r.Bounded(ctx, func(ctx context.Context) error {
			var err error
			again, err = pipelineOnce[T, P](ctx, r, ops, pending, wait)
			return err
		})
		if err != nil {
			return err
		}
		last = nil
		for _, i := range again {
			if err := FirstErr(P(&ops[i]).Sent()); last == nil || isNoScript(err) {
				last = err
			}
		}
		if isNoScript(last) {
			if err := r.Bounded(ctx, func(ctx context.Context) error { return r.scripts.LoadAll(ctx, r.client) }); err != nil {
				return err
			}
		}
		if cc, ok := r.client.(*redis.ClusterClient); ok && len(again) > 0 && wait {
			cc.ReloadState(ctx) // node pipelines do not follow redirects themselves
		}
		pending = again
	}
	return nil
}

// pipelineOnce sends the pending ops once and returns those to send again.
func pipelineOnce[T any, P Op[T]](ctx context.Context, r *Runner, ops []T, pending []int, wait bool) ([]int, error) {
	groups := [][]int{pending}
	var pipes []redis.Pipeliner
	if cc, ok := r.client.(*redis.ClusterClient); ok && wait {
		// WAIT must follow the writes on the very connection of each master.
		groups = nil
		byNode := map[*redis.Client]int{}
		for _, i := range pending {
			key := P(&ops[i]).Slot()
			node, err := cc.MasterForKey(ctx, key)
			if err != nil {
				return nil, fmt.Errorf("find the master of %s: %w", key, err)
			}
			g, ok := byNode[node]
			if !ok {
				g = len(groups)
				byNode[node] = g
				groups, pipes = append(groups, nil), append(pipes, node.Pipeline())
			}
			groups[g] = append(groups[g], i)
		}
	} else {
		pipes = []redis.Pipeliner{r.client.Pipeline()}
	}
	waits := make([]*redis.IntCmd, len(groups))
	for g, idx := range groups {
		reserve(ctx, pipes[g], len(idx)+1) // +1: a second command of an op, or the WAIT
		for _, i := range idx {
			P(&ops[i]).Send(pipes[g])
		}
		if wait {
			waits[g] = redis.NewIntCmd(ctx, "wait", r.opts.WaitReplicas, r.opts.WaitTimeout.Milliseconds())
			_ = pipes[g].Process(ctx, waits[g])
		}
	}
	countRedis(ctx, len(pipes), len(pending))
	// The span's context is a new variable: the goroutines below capture it, and a reassigned
	// parameter they capture would go to the heap on entry, one allocation a pipeline.
	sctx, span := pipelineSpan(ctx, len(pipes), len(pending))
	defer span.End()
	if len(pipes) == 1 {
		_, _ = pipes[0].Exec(sctx)
	} else {
		var wg sync.WaitGroup
		for _, p := range pipes {
			wg.Go(func() { _, _ = p.Exec(sctx) })
		}
		wg.Wait()
	}
	var again []int
	for _, i := range pending {
		sent := P(&ops[i]).Sent()
		markUnavailable(ctx, sent[:]) // a client without deadlineHook leaves them untyped
		if err := FirstErr(sent); isNoScript(err) || isTransient(err) || isNonLocalKey(err) {
			again = append(again, i)
		}
	}
	for _, w := range waits {
		if w == nil {
			continue
		}
		n, err := w.Result()
		if err != nil {
			return nil, fmt.Errorf("wait for replicas: %w", err)
		}
		if n < int64(r.opts.WaitReplicas) {
			return nil, fmt.Errorf("%w: %d of %d within %s", ErrNotReplicated, n, r.opts.WaitReplicas, r.opts.WaitTimeout)
		}
	}
	return again, nil
}

// reserve gives a go-redis pipeline room for n commands before they are queued: it appends each
// command to its slice, which otherwise grows from nothing step by step (five allocations for
// the 16 commands of a small page, ten for a thread's 500). Room for up to 64 commands comes from
// the stack; the pipeline keeps the one slice it copies them into.
func reserve(ctx context.Context, p redis.Pipeliner, n int) {
	rp, ok := p.(*redis.Pipeline)
	if !ok || n < 2 {
		return
	}
	var room [64]redis.Cmder
	if n <= len(room) {
		_ = rp.BatchProcess(ctx, room[:n]...)
	} else {
		_ = rp.BatchProcess(ctx, make([]redis.Cmder, n)...)
	}
	rp.Discard() // empty again, its room kept
}

// Bounded runs one attempt of f with ctx bounded by RunnerOptions.Timeout, and makes its failure
// to complete in time a fault.Error of KindUnavailable (see Unavailable). Pipelines run through
// it, and so do the waits of live events for Redis to confirm a subscription.
func (r *Runner) Bounded(ctx context.Context, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	return Unavailable(ctx, f(ctx))
}

// RetryPause is the pause before the attempt-th resend: 10ms doubling up to 640ms. It is the one
// backoff of whatever is sent to Redis again, here and in pubsub.go.
func RetryPause(attempt int) time.Duration {
	return 10 * time.Millisecond << min(attempt-1, 6)
}

// Pause sleeps for d or until ctx ends, and returns ctx's error then.
func Pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
