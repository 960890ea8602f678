package storetest

import (
	"context"
	"sync/atomic"

	"github.com/agora/agora/internal/rdb"
)

// Hook is a client hook made of functions: the one way the tests look at, hold, cut, repeat or
// fail what a client sends. Command runs around each command sent alone and Pipeline around each
// pipeline (or transaction), each when set; one unset when they are sent passes them through. Add it
// with client.AddHook.
type Hook struct {
	Command  func(ctx context.Context, cmd rdb.Cmder, next rdb.ProcessHook) error
	Pipeline func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error
}

// OnEach returns a Hook that runs f around each pipeline and around each command sent alone, as
// a pipeline of one: for a test that treats both alike. f may hand next any part of its
// commands, in any number of calls.
func OnEach(f func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error) *Hook {
	return &Hook{
		Command: func(ctx context.Context, cmd rdb.Cmder, next rdb.ProcessHook) error {
			return f(ctx, []rdb.Cmder{cmd}, func(ctx context.Context, cmds []rdb.Cmder) error {
				for _, c := range cmds {
					if err := next(ctx, c); err != nil {
						return err
					}
				}
				return nil
			})
		},
		Pipeline: f,
	}
}

// Before returns a Hook that calls f with each pipeline, and each command sent alone as a
// pipeline of one, before it is sent.
func Before(f func(cmds []rdb.Cmder)) *Hook {
	return OnEach(func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
		f(cmds)
		return next(ctx, cmds)
	})
}

// After returns a Hook that calls f with each pipeline, and each command sent alone as a
// pipeline of one, once its replies are in.
func After(f func(cmds []rdb.Cmder)) *Hook {
	return OnEach(func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
		err := next(ctx, cmds)
		f(cmds)
		return err
	})
}

// Dying returns a client hook of a process that dies: once dead is set, every command fails with
// err and none reaches Redis. When dies is set, it is asked, after each pipeline (and each
// command sent alone, as a pipeline of one) has its replies, whether the process dies there.
func Dying(dead *atomic.Bool, err error, dies func(cmds []rdb.Cmder) bool) *Hook {
	return OnEach(func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
		if dead.Load() {
			return Fail(cmds, err)
		}
		e := next(ctx, cmds)
		if dies != nil && dies(cmds) {
			dead.Store(true)
		}
		return e
	})
}

// Drop returns a client hook that, while on is set, fails with err every command drop selects
// (alone or in a pipeline), unsent, and sends the others; drop sees each command once: a process that stopped before those
// commands, or a connection that lost them.
func Drop(on *atomic.Bool, err error, drop func(c rdb.Cmder) bool) *Hook {
	return OnEach(func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
		if !on.Load() {
			return next(ctx, cmds)
		}
		rest := make([]rdb.Cmder, 0, len(cmds))
		for _, c := range cmds {
			if drop(c) {
				c.SetErr(err)
			} else {
				rest = append(rest, c)
			}
		}
		if len(rest) == len(cmds) {
			return next(ctx, cmds)
		}
		if len(rest) > 0 {
			if e := next(ctx, rest); e != nil {
				return e
			}
		}
		return err
	})
}

// Fail sets err on every command of cmds and returns it: what a test hook answers for commands
// that never reach Redis.
func Fail(cmds []rdb.Cmder, err error) error {
	for _, c := range cmds {
		c.SetErr(err)
	}
	return err
}

// DialHook passes dialling through.
func (h *Hook) DialHook(next rdb.DialHook) rdb.DialHook { return next }

// ProcessHook runs Command around a command sent alone.
func (h *Hook) ProcessHook(next rdb.ProcessHook) rdb.ProcessHook {
	return func(ctx context.Context, cmd rdb.Cmder) error {
		if h.Command == nil {
			return next(ctx, cmd)
		}
		return h.Command(ctx, cmd, next)
	}
}

// ProcessPipelineHook runs Pipeline around a pipeline.
func (h *Hook) ProcessPipelineHook(next rdb.ProcessPipelineHook) rdb.ProcessPipelineHook {
	return func(ctx context.Context, cmds []rdb.Cmder) error {
		if h.Pipeline == nil {
			return next(ctx, cmds)
		}
		return h.Pipeline(ctx, cmds, next)
	}
}
