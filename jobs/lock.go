package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// Lock is a lock in Redis held by a random token: only its holder can renew or release it, and
// it frees itself TTL after its last renewal, so a holder that died is taken over within one TTL.
type Lock struct {
	e     *Engine
	key   string
	token string
	ttl   time.Duration
}

// NewLock returns a lock named name with its own token, not yet acquired. Each process (each
// would-be holder) makes its own.
func (e *Engine) NewLock(name string, ttl time.Duration) *Lock {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return &Lock{e: e, key: e.opts.Prefix + "{lock:" + name + "}", token: hex.EncodeToString(b), ttl: ttl}
}

func (l *Lock) do(ctx context.Context, op string) (bool, error) {
	reply, err := l.e.r.RunScripts(ctx, []Call{{Script: "jobs_lock", Keys: []string{l.key},
		Args: []any{l.token, op, l.ttl.Milliseconds()}}})
	if err != nil {
		return false, fmt.Errorf("%s lock %s: %w", op, l.key, err)
	}
	n, _ := reply[0].(int64)
	return n == 1, nil
}

// Acquire takes the lock if it is free, or renews it if this token holds it, and reports whether
// this token holds it now.
func (l *Lock) Acquire(ctx context.Context) (bool, error) { return l.do(ctx, "acquire") }

// Renew extends the lock by its TTL and reports whether this token still held it.
func (l *Lock) Renew(ctx context.Context) (bool, error) { return l.do(ctx, "renew") }

// Release frees the lock if this token holds it.
func (l *Lock) Release(ctx context.Context) error {
	_, err := l.do(ctx, "release")
	return err
}

// Every runs fn every interval in one process at a time among all that call it with the same
// name, until ctx ends: each process tries the lock named name every interval; its holder runs
// fn and renews the lock, which lasts three intervals, so another process takes over within
// three intervals of the holder's death. On return the lock is released. Failures of fn are
// logged and do not give up the lock.
func (e *Engine) Every(ctx context.Context, name string, interval time.Duration, fn func(ctx context.Context) error) {
	l := e.NewLock(name, 3*interval)
	defer func() {
		if err := l.Release(context.WithoutCancel(ctx)); err != nil {
			e.opts.Log.WarnContext(ctx, "release lock", "lock", name, "err", err)
		}
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		held, err := l.Acquire(ctx)
		if err != nil && ctx.Err() == nil {
			e.opts.Log.WarnContext(ctx, "take lock", "lock", name, "err", err)
		}
		if held {
			if err := fn(ctx); err != nil && ctx.Err() == nil {
				e.opts.Log.WarnContext(ctx, "periodic work failed", "work", name, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
