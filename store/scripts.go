package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed scripts/*.lua
var scriptFS embed.FS

// scripts holds every Lua script by its file name without ".lua".
type scripts map[string]*redis.Script

func loadScripts() (scripts, error) {
	files, err := fs.Glob(scriptFS, "scripts/*.lua")
	if err != nil {
		return nil, fmt.Errorf("list scripts: %w", err)
	}
	out := make(scripts, len(files))
	for _, f := range files {
		src, err := scriptFS.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read script %s: %w", f, err)
		}
		out[strings.TrimSuffix(path.Base(f), ".lua")] = redis.NewScript(string(src))
	}
	return out, nil
}

// loadAll sends SCRIPT LOAD for every script. EVALSHA inside a pipeline cannot fall back to EVAL,
// so scripts must be in the script cache before the first pipelined read. On a cluster client
// go-redis sends SCRIPT LOAD to every master.
func (sc scripts) loadAll(ctx context.Context, rdb redis.UniversalClient) error {
	for name, s := range sc {
		if err := s.Load(ctx, rdb).Err(); err != nil {
			return fmt.Errorf("load script %s: %w", name, err)
		}
	}
	return nil
}

func (sc scripts) get(name string) *redis.Script {
	s, ok := sc[name]
	if !ok {
		panic("store: no script " + name) // a programming error, caught by any test of the caller
	}
	return s
}

// run runs a script by name with EVALSHA, falling back to EVAL when Redis lost its script cache
// (a restart, a failover, or a slot moved to a node that never saw SCRIPT LOAD), and maps the
// scripts' error replies to typed errors. With Options.WaitReplicas set it returns only once that
// many replicas have the write (see runWaiting).
func (s *Store) run(ctx context.Context, name string, keys []string, args ...any) (any, error) {
	sc := s.scripts.get(name)
	var v any
	var err error
	if s.opts.WaitReplicas > 0 && !unreplicatedScripts[name] {
		v, err = s.runWaiting(ctx, sc, keys, args)
	} else {
		v, err = sc.Run(ctx, s.rdb, keys, args...).Result()
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, scriptError(name, err)
	}
	return v, nil
}

// unreplicatedScripts are writes that need not wait for replicas: losing one in a failover is
// harmless (a rate limit forgets a write).
var unreplicatedScripts = map[string]bool{"ratelimit": true}

// ErrNotReplicated is returned by a write that Redis applied but not enough replicas acknowledged
// within Options.WaitTimeout. The write may or may not survive a failover; repeating it is safe.
var ErrNotReplicated = errors.New("write not acknowledged by enough replicas")

// maxRedirectAttempts bounds how often a write is resent after MOVED, ASK, TRYAGAIN and the like
// while a cluster moves slots or fails over.
const maxRedirectAttempts = 8

// runWaiting runs a script followed by WAIT on the same connection. WAIT counts the replicas
// that have every write sent on its connection so far, so it must follow the script on the very
// connection that ran it: on a cluster the pipeline goes to the master of the script's slot.
// Redirects (a slot moving) and transient errors (a failover in progress) are retried after
// refreshing the cluster's slot map; the scripts are safe to repeat.
func (s *Store) runWaiting(ctx context.Context, sc *redis.Script, keys []string, args []any) (any, error) {
	var err error
	for attempt := 0; attempt < maxRedirectAttempts; attempt++ {
		if attempt > 0 {
			if werr := sleepCtx(ctx, backoff(attempt)); werr != nil {
				return nil, werr
			}
		}
		var p redis.Pipeliner
		if cc, ok := s.rdb.(*redis.ClusterClient); ok {
			node, nerr := cc.MasterForKey(ctx, keys[0])
			if nerr != nil {
				err = nerr
				continue
			}
			p = node.Pipeline()
		} else {
			p = s.rdb.Pipeline()
		}
		var v any
		v, err = s.evalWait(ctx, p, sc, keys, args)
		if !isTransient(err) {
			return v, err
		}
		if cc, ok := s.rdb.(*redis.ClusterClient); ok {
			cc.ReloadState(ctx)
		}
	}
	return nil, err
}

// evalWait sends EVALSHA (EVAL when the script is not cached) and WAIT in one pipeline.
func (s *Store) evalWait(ctx context.Context, p redis.Pipeliner, sc *redis.Script, keys []string, args []any) (any, error) {
	send := func(eval func(ctx context.Context, c redis.Scripter, keys []string, args ...any) *redis.Cmd) (*redis.Cmd, *redis.IntCmd) {
		ev := eval(ctx, p, keys, args...)
		w := redis.NewIntCmd(ctx, "wait", s.opts.WaitReplicas, s.opts.WaitTimeout.Milliseconds())
		_ = p.Process(ctx, w)
		_, _ = p.Exec(ctx)
		return ev, w
	}
	ev, w := send(sc.EvalSha)
	if isNoScript(ev.Err()) {
		ev, w = send(sc.Eval)
	}
	v, err := ev.Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	n, werr := w.Result()
	if werr != nil {
		return nil, fmt.Errorf("wait for replicas: %w", werr)
	}
	if n < int64(s.opts.WaitReplicas) {
		return nil, fmt.Errorf("%w: %d of %d within %s", ErrNotReplicated, n, s.opts.WaitReplicas, s.opts.WaitTimeout)
	}
	return v, err
}

// isTransient reports errors after which a write should be resent: cluster redirects, a slot
// in migration, a cluster or master that is down for the moment, a replica that was the master a
// moment ago, and a server still loading its data.
func isTransient(err error) bool {
	if err == nil {
		return false
	}
	if _, ok := redis.IsMovedError(err); ok {
		return true
	}
	if _, ok := redis.IsAskError(err); ok {
		return true
	}
	return redis.IsTryAgainError(err) || redis.IsClusterDownError(err) || redis.IsMasterDownError(err) ||
		redis.IsReadOnlyError(err) || redis.IsLoadingError(err)
}

// isNonLocalKey reports the error of a script that touched, in a slot being migrated, a key it
// did not declare and that is not (or no longer) on this node. Write scripts declare every key
// and never meet it; a read script may, and can simply be sent again.
func isNonLocalKey(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Script attempted to access a non local key")
}

// backoff is the pause before the attempt-th resend: 10ms doubling up to 640ms.
func backoff(attempt int) time.Duration {
	return 10 * time.Millisecond << min(attempt-1, 6)
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// isNoScript reports whether err is Redis's NOSCRIPT reply.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
