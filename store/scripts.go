package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora/agora/jobs"
)

//go:embed scripts/*.lua scripts/lib/*.lua
var scriptFS embed.FS

// includeMark starts a line of a script that names a file of scripts/lib (without ".lua") to put
// in its place: Lua code that several scripts share, such as a formula, is written once.
const includeMark = "--!include "

// scripts holds every Lua script by its file name without ".lua".
type scripts map[string]*redis.Script

// loadScripts reads the store's scripts and the job engine's, which run through the same runner.
func loadScripts() (scripts, error) {
	out := scripts{}
	for _, dir := range []fs.FS{must(fs.Sub(scriptFS, "scripts")), jobs.Scripts()} {
		files, err := fs.Glob(dir, "*.lua")
		if err != nil {
			return nil, fmt.Errorf("list scripts: %w", err)
		}
		for _, f := range files {
			src, err := fs.ReadFile(dir, f)
			if err != nil {
				return nil, fmt.Errorf("read script %s: %w", f, err)
			}
			text, err := withLibs(string(src))
			if err != nil {
				return nil, fmt.Errorf("script %s: %w", f, err)
			}
			out[strings.TrimSuffix(path.Base(f), ".lua")] = redis.NewScript(text)
		}
	}
	return out, nil
}

// withLibs returns src with each line "--!include NAME" replaced by the text of
// scripts/lib/NAME.lua.
func withLibs(src string) (string, error) {
	lines := strings.SplitAfter(src, "\n")
	for i, line := range lines {
		name, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), includeMark)
		if !ok {
			continue
		}
		lib, err := fs.ReadFile(scriptFS, "scripts/lib/"+name+".lua")
		if err != nil {
			return "", fmt.Errorf("include %s: %w", name, err)
		}
		lines[i] = string(lib)
	}
	return strings.Join(lines, ""), nil
}

// must returns v, panicking on err: for calls that cannot fail on embedded data.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
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

// scriptCall is one script invocation.
type scriptCall struct {
	name string
	keys []string
	args []any
	// unreplicated marks a call of a replicated script that need not wait for replicas (a
	// write's repair note: needed only if, besides, the write's derived writes fail, and rebuild
	// covers a note lost in a failover).
	unreplicated bool
}

// unrevised are the scripts that write nothing a response reads, so they raise no revision: the
// idempotency claim, the rate limit, the job engine's queues (repair notes among them), the live
// events' logs (and replay, which only reads), sessions with the password hash, and the groups'
// active users (read only by responses that are never cached). Every other write script takes its aggregate's revision counter as its last
// key and raises it (see revisions.go).
var unrevised = map[string]bool{"claim": true, "active": true, "ratelimit": true, "filters_get": true, "newaccount": true, "report_dismissed": true, "publish": true, "replay": true, "persisted": true,
	"session_start": true, "sessions_end": true, "known_address": true,
	"email_claim": true, "email_release": true, "token_put": true, "mail_sent": true,
	"jobs_enqueue": true, "jobs_claim": true, "jobs_done": true, "jobs_dead": true, "jobs_lock": true, "jobs_count": true, "layout": true}

// unreplicated are writes that need not wait for replicas: losing one in a failover is harmless
// (a rate limit forgets a write; a persisted query lost is sent again by its client) or nearly so
// (a live event lost with its log makes its resuming subscribers refetch; an active user lost
// undercounts an approximate count), or that only read (replay).
//
// Of the job engine's scripts only an enqueue must survive a failover (a scheduled post's
// publication, a write's repair note): a claim or an outcome lost with it makes a job run once
// more, which handlers allow, and a lock lost with it is taken again.
var unreplicated = map[string]bool{"ratelimit": true, "filters_get": true, "newaccount": true, "active": true, "known_address": true, "publish": true, "replay": true, "persisted": true,
	"jobs_claim": true, "jobs_done": true, "jobs_dead": true, "jobs_lock": true, "jobs_count": true}

// run runs one script and maps its error replies to typed errors (see runScripts).
func (s *Store) run(ctx context.Context, name string, keys []string, args ...any) (any, error) {
	vals, err := s.runScripts(ctx, []scriptCall{{name: name, keys: keys, args: args}})
	if err != nil {
		return nil, err
	}
	return vals[0], nil
}

// runMany runs independent script calls, on any hash slots, in one pipeline (see runScripts).
func (s *Store) runMany(ctx context.Context, calls []scriptCall) error {
	_, err := s.runScripts(ctx, calls)
	return err
}

// jobRunner runs the job engine's scripts through the store's one runner (jobs.Runner).
type jobRunner struct{ s *Store }

// RunScripts runs the calls in one pipeline and returns each reply.
func (r jobRunner) RunScripts(ctx context.Context, calls []jobs.Call) ([]any, error) {
	return r.s.runScripts(ctx, r.calls(calls))
}

// RunEach runs the calls in one pipeline and returns each one's reply or error.
func (r jobRunner) RunEach(ctx context.Context, calls []jobs.Call) ([]any, []error) {
	out, errs, _ := r.s.runScriptsEach(ctx, r.calls(calls))
	return out, errs
}

func (r jobRunner) calls(calls []jobs.Call) []scriptCall {
	sc := make([]scriptCall, len(calls))
	for i, c := range calls {
		sc[i] = scriptCall{name: c.Script, keys: c.Keys, args: c.Args}
	}
	return sc
}

// runScripts is the one way a script runs: EVALSHA in a pipeline through the one retry policy
// (see pipeline), with the aggregate's revision counter appended to the keys of every write, and
// with Options.WaitReplicas a WAIT after the writes on each master they went to, so that a
// failover cannot lose a write reported done. It returns each call's reply, or the first error,
// typed (see scriptError). Plain commands (reads) may ride in the same pipeline as extra ops,
// whose commands their caller reads once it returns.
func (s *Store) runScripts(ctx context.Context, calls []scriptCall, extra ...op) ([]any, error) {
	out, errs, err := s.runScriptsEach(ctx, calls, extra...)
	if err != nil {
		if len(calls) == 0 {
			return nil, err
		}
		return nil, fmt.Errorf("run %s: %w", calls[0].name, err)
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runScriptsEach is runScripts with each call's own outcome: a reply or a typed error per call,
// so that calls on healthy slots keep their replies when another slot fails. err is the
// pipeline's own failure (retries ran out, replicas did not acknowledge); the calls it left
// without a reply carry it too.
func (s *Store) runScriptsEach(ctx context.Context, calls []scriptCall, extra ...op) (out []any, errs []error, err error) {
	cmds := make([]*redis.Cmd, len(calls))
	ops := make([]op, len(calls), len(calls)+len(extra))
	wait := false
	for i, c := range calls {
		keys := c.keys
		if !unrevised[c.name] {
			keys = append(keys[:len(keys):len(keys)], s.k.revOf(c.keys[0]))
		}
		sc := s.scripts.get(c.name)
		ops[i] = op{key: keys[0], fill: func(p redis.Pipeliner) (redis.Cmder, redis.Cmder) {
			cmds[i] = sc.EvalSha(ctx, p, keys, c.args...)
			return cmds[i], nil
		}}
		wait = wait || !(unreplicated[c.name] || c.unreplicated)
	}
	err = s.pipeline(ctx, append(ops, extra...), wait)
	out, errs = make([]any, len(calls)), make([]error, len(calls))
	for i, cmd := range cmds {
		if cmd == nil {
			errs[i] = err
			continue
		}
		v, cerr := cmd.Result()
		switch {
		case cerr != nil && !errors.Is(cerr, redis.Nil):
			errs[i] = scriptError(calls[i].name, cerr)
		case v == nil && !errors.Is(cerr, redis.Nil) && err != nil:
			errs[i] = err // never answered
		default:
			out[i] = v
		}
	}
	return out, errs, err
}

// ErrNotReplicated is returned by a write that Redis applied but not enough replicas acknowledged
// within Options.WaitTimeout. The write may or may not survive a failover; repeating it is safe.
var ErrNotReplicated = errors.New("write not acknowledged by enough replicas")

// MaxRedirectAttempts bounds how often an operation is resent after MOVED, ASK, TRYAGAIN and the
// like while a cluster moves slots or fails over; package live bounds its sharded subscriptions
// by it too.
const MaxRedirectAttempts = 8

// op is one operation of a pipeline: the one or two commands fill adds, on the hash slot of key.
type op struct {
	key  string
	fill func(p redis.Pipeliner) (redis.Cmder, redis.Cmder)
	// read, instead of fill, is a loader's read, filled with ctx (Loader.exec): a thread page
	// sends a thousand of them, which then need no closure each.
	read *call
	ctx  context.Context
	last [2]redis.Cmder // the commands fill added last
}

// send adds the op's commands to a pipeline and returns them.
func (o *op) send(p redis.Pipeliner) (redis.Cmder, redis.Cmder) {
	if c := o.read; c != nil {
		c.r.fill(o.ctx, p, c)
		return c.cmd, c.cmd2
	}
	return o.fill(p)
}

// pipeline sends ops in one pipeline (on a cluster, one per master, in parallel) and sends again
// those that failed for a passing reason: after NOSCRIPT (Redis lost its script cache in a
// restart or failover, or a slot moved to a node that never loaded the scripts) once the scripts
// are loaded again; after TRYAGAIN, CLUSTERDOWN, a redirect and the like (a slot moving, a
// failover in progress) after a pause doubling from 10ms; and a read script that met, in a slot
// being migrated, a key it did not declare. Every read and write of the store goes through it:
// there is one retry policy. With wait and Options.WaitReplicas, each pipeline ends with WAIT on
// the connection that carried the writes (WAIT counts what its own connection wrote), on every
// master written to. The commands keep their own errors; pipeline returns an error when the
// retries ran out, the scripts could not be loaded again, or the replicas did not acknowledge.
//
// Each attempt, and each reload of the scripts, is bounded by Options.RedisTimeout (see
// Bounded): a Redis that does not answer fails the operation with KindUnavailable after one
// timeout, since a timeout is never retried here (go-redis retries within the attempt). The
// bound is per attempt, not over the whole loop, because the replies retried here are answers —
// a slot on the move, a failover under way — and cutting that short would turn a routine
// resharding into errors; MaxRedirectAttempts bounds the loop.
func (s *Store) pipeline(ctx context.Context, ops []op, wait bool) error {
	wait = wait && s.opts.WaitReplicas > 0
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
		var again []int
		err := s.Bounded(ctx, func(ctx context.Context) error {
			var err error
			again, err = s.pipelineOnce(ctx, ops, pending, wait)
			return err
		})
		if err != nil {
			return err
		}
		last = nil
		for _, i := range again {
			if err := firstErr(ops[i].last); last == nil || isNoScript(err) {
				last = err
			}
		}
		if isNoScript(last) {
			if err := s.Bounded(ctx, func(ctx context.Context) error { return s.scripts.loadAll(ctx, s.rdb) }); err != nil {
				return err
			}
		}
		if cc, ok := s.rdb.(*redis.ClusterClient); ok && len(again) > 0 && wait {
			cc.ReloadState(ctx) // node pipelines do not follow redirects themselves
		}
		pending = again
	}
	return nil
}

// pipelineOnce sends the pending ops once and returns those to send again.
func (s *Store) pipelineOnce(ctx context.Context, ops []op, pending []int, wait bool) ([]int, error) {
	groups := [][]int{pending}
	var pipes []redis.Pipeliner
	if cc, ok := s.rdb.(*redis.ClusterClient); ok && wait {
		// WAIT must follow the writes on the very connection of each master.
		groups = nil
		byNode := map[*redis.Client]int{}
		for _, i := range pending {
			node, err := cc.MasterForKey(ctx, ops[i].key)
			if err != nil {
				return nil, fmt.Errorf("find the master of %s: %w", ops[i].key, err)
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
		pipes = []redis.Pipeliner{s.rdb.Pipeline()}
	}
	waits := make([]*redis.IntCmd, len(groups))
	for g, idx := range groups {
		for _, i := range idx {
			a, b := ops[i].send(pipes[g])
			ops[i].last = [2]redis.Cmder{a, b}
		}
		if wait {
			waits[g] = redis.NewIntCmd(ctx, "wait", s.opts.WaitReplicas, s.opts.WaitTimeout.Milliseconds())
			_ = pipes[g].Process(ctx, waits[g])
		}
	}
	countRedis(ctx, len(pipes), len(pending))
	ctx, span := pipelineSpan(ctx, len(pipes), len(pending))
	defer span.End()
	if len(pipes) == 1 {
		_, _ = pipes[0].Exec(ctx)
	} else {
		var wg sync.WaitGroup
		for _, p := range pipes {
			wg.Go(func() { _, _ = p.Exec(ctx) })
		}
		wg.Wait()
	}
	var again []int
	for _, i := range pending {
		markUnavailable(ctx, ops[i].last[:]) // a client without deadlineHook leaves them untyped
		if err := firstErr(ops[i].last); isNoScript(err) || isTransient(err) || isNonLocalKey(err) {
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
		if n < int64(s.opts.WaitReplicas) {
			return nil, fmt.Errorf("%w: %d of %d within %s", ErrNotReplicated, n, s.opts.WaitReplicas, s.opts.WaitTimeout)
		}
	}
	return again, nil
}

// Bounded runs one attempt of f with ctx bounded by Options.RedisTimeout, and makes its failure
// to complete in time an Error of KindUnavailable (see unavailable). The store's pipelines run
// through it, and so do the waits of live events for Redis to confirm a subscription.
func (s *Store) Bounded(ctx context.Context, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RedisTimeout)
	defer cancel()
	return unavailable(ctx, f(ctx))
}

// firstErr is the first error of an op's commands; redis.Nil is none.
func firstErr(cmds [2]redis.Cmder) error {
	for _, c := range cmds {
		if c == nil {
			continue
		}
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
	}
	return nil
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

// RetryPause is the pause before the attempt-th resend: 10ms doubling up to 640ms. It is the one
// backoff of whatever is sent to Redis again, here and in package live.
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

// isNoScript reports whether err is Redis's NOSCRIPT reply.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
