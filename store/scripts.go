package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
)

//go:embed scripts/*.lua scripts/lib/*.lua
var scriptFS embed.FS

// includeMark starts a line of a script that names a file of scripts/lib (without ".lua") to put
// in its place: Lua code that several scripts share, such as a formula, is written once.
const includeMark = "--!include "

// scripts holds every Lua script by its file name without ".lua".
type scripts map[string]*rdb.Script

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
			out[strings.TrimSuffix(path.Base(f), ".lua")] = rdb.NewScript(text)
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

func (sc scripts) get(name string) *rdb.Script {
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
// active users (read only by responses that are never cached), a user's watch index (read only by
// their export, their deletion and their next watch). Every other write script takes its aggregate's revision counter as its last
// key and raises it (see revisions.go).
var unrevised = map[string]bool{"claim": true, "active": true, "ratelimit": true, "filters_get": true, "newaccount": true, "report_dismissed": true, "watch_index": true, "publish": true, "announce_comment": true, "notify_announce": true, "replay": true, "persisted": true,
	"session_start": true, "session_touch": true, "sessions_end": true, "sessions_move": true, "sessions_fold": true, "known_address": true,
	"email_claim": true, "email_release": true, "token_put": true, "mail_sent": true,
	"jobs_enqueue": true, "jobs_claim": true, "jobs_done": true, "jobs_dead": true, "jobs_lock": true, "jobs_count": true, "jobs_renew": true, "layout": true,
	"message_lease": true, "lease_note": true}

// unreplicated are writes that need not wait for replicas: losing one in a failover is harmless
// (a rate limit forgets a write; a session's extension lost shortens it back by the time since its
// last use; a persisted query lost is sent again by its client) or nearly so
// (a live event lost with its log makes its resuming subscribers refetch; an active user lost
// undercounts an approximate count), or that only read (replay).
//
// Of the job engine's scripts only an enqueue must survive a failover (a scheduled post's
// publication, a write's repair note): a claim or an outcome lost with it makes a job run once
// more, which handlers allow, and a lock lost with it is taken again.
var unreplicated = map[string]bool{"session_touch": true, "ratelimit": true, "filters_get": true, "newaccount": true, "active": true, "known_address": true, "publish": true, "announce_comment": true, "notify_announce": true, "replay": true, "persisted": true,
	"jobs_claim": true, "jobs_done": true, "jobs_dead": true, "jobs_lock": true, "jobs_count": true, "jobs_renew": true}

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
// so that calls on healthy slots keep their replies when another slot fails. The extra ops go
// after the calls in the pipeline, those marked before ahead of them. err is the
// pipeline's own failure (retries ran out, replicas did not acknowledge); the calls it left
// without a reply carry it too.
func (s *Store) runScriptsEach(ctx context.Context, calls []scriptCall, extra ...op) (out []any, errs []error, err error) {
	if s.paddedCommentKeys.Load() { // a keyspace being migrated from layout 5 or 6 (layout_shortkeys.go)
		var keys []string
		for _, c := range calls {
			keys = append(keys, c.keys...)
		}
		if err := s.shortenTouched(ctx, keys); err != nil {
			errs = make([]error, len(calls))
			for i := range errs {
				errs[i] = err
			}
			return make([]any, len(calls)), errs, err
		}
	}
	cmds := make([]*rdb.Cmd, len(calls))
	sends := make([]int, len(calls)) // how many times each call was sent: more than once, see rereads
	// One slice for the pipeline, in its order: the extra ops marked before, the calls, the
	// other extra ops (a post's search postings are a hundred of them).
	nbefore := 0
	for _, o := range extra {
		if o.before {
			nbefore++
		}
	}
	all := make([]op, len(extra)+len(calls))
	ops := all[nbefore : nbefore+len(calls)]
	wait := false
	for i, c := range calls {
		keys := c.keys
		if !unrevised[c.name] {
			keys = append(keys[:len(keys):len(keys)], s.k.revOf(c.keys[0]))
		}
		sc := s.scripts.get(c.name)
		ops[i] = op{key: keys[0], fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			sends[i]++
			cmds[i] = sc.EvalSha(ctx, p, keys, c.args...)
			return cmds[i], nil
		}}
		wait = wait || !(unreplicated[c.name] || c.unreplicated)
	}
	b, a := 0, nbefore+len(calls)
	for _, o := range extra {
		if o.before {
			all[b] = o
			b++
		} else {
			all[a] = o
			a++
		}
	}
	err = s.pipeline(ctx, all, wait)
	if err == nil && slices.ContainsFunc(sends, func(n int) bool { return n > 1 }) {
		err = s.rereads(ctx, all[nbefore+len(calls):])
	}
	out, errs = make([]any, len(calls)), make([]error, len(calls))
	for i, cmd := range cmds {
		if cmd == nil {
			errs[i] = err
			continue
		}
		v, cerr := cmd.Result()
		switch {
		case cerr != nil && !errors.Is(cerr, rdb.Nil):
			errs[i] = scriptError(calls[i].name, cerr)
		case v == nil && !errors.Is(cerr, rdb.Nil) && err != nil:
			errs[i] = err // never answered
		default:
			out[i] = v
		}
	}
	return out, errs, err
}

// rereads sends again, in a round trip of their own, those of after (the extra ops that followed
// a pipeline's script calls) that must run after the calls (op.follows), once a call was sent
// again: the runner sends again only what failed for a passing reason (NOSCRIPT, a slot on the
// move), so such a read answered in the first attempt ran before the call it follows.
func (s *Store) rereads(ctx context.Context, after []op) error {
	var again []op
	for _, o := range after {
		if o.follows {
			again = append(again, o)
		}
	}
	if len(again) == 0 {
		return nil
	}
	return s.pipeline(ctx, again, false)
}

// op is one operation of a pipeline: the one or two commands fill adds, on the hash slot of key.
type op struct {
	key  string
	fill func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder)
	// read, instead of fill, is a loader's read, filled with ctx (Loader.exec): a thread page
	// sends a thousand of them, which then need no closure each.
	read *call
	ctx  context.Context
	last [2]rdb.Cmder // the commands fill added last
	// before puts an extra op of runScriptsEach ahead of its script calls in the pipeline: on one
	// node, it runs first (a cluster runs each node's part apart).
	before bool
	// follows marks an extra op of runScriptsEach that must run after its script calls (the
	// read of a deletion that proves a write landed before it: authorGone); should a call be sent
	// again, the op is sent again after it (rereads).
	follows bool
}

// Slot returns the key on whose hash slot the op goes (rdb.Op).
func (o *op) Slot() string { return o.key }

// Send adds the op's commands to a pipeline and keeps them (rdb.Op).
func (o *op) Send(p rdb.Pipeliner) {
	if c := o.read; c != nil {
		c.r.fill(o.ctx, p, c)
		o.last = [2]rdb.Cmder{c.cmd, c.cmd2}
		return
	}
	a, b := o.fill(p)
	o.last = [2]rdb.Cmder{a, b}
}

// Sent returns the commands Send added last (rdb.Op).
func (o *op) Sent() [2]rdb.Cmder { return o.last }

// pipeline sends ops through the store's runner, the one retry policy of every read and write
// (see rdb.Pipeline); with wait, writes wait for Options.WaitReplicas replicas.
func (s *Store) pipeline(ctx context.Context, ops []op, wait bool) error {
	if s.paddedCommentKeys.Load() { // a keyspace being migrated from layout 5 or 6 (layout_shortkeys.go)
		keys := make([]string, len(ops))
		for i := range ops {
			keys[i] = ops[i].key
		}
		if err := s.shortenTouched(ctx, keys); err != nil {
			return err
		}
	}
	return rdb.Pipeline(ctx, s.runner, ops, wait)
}
