// Package jobs is agora's job engine: delayed and immediate jobs with leases, dead letters, and
// periodic work under a lock, all in Redis, run by every server process with no configuration.
// It knows Redis but not the domain: the store registers what each kind of job does.
//
// Keys (every one under the store's prefix):
//
//	{j:<n>}:due    zset  job id → when it is due (ms); immediate jobs are due now
//	{j:<n>}:lease  zset  job id → when its lease ends (ms): claimed, running somewhere
//	{j:<n>}:job    hash  job id → "<kind>\n<argument>"
//	{j:<n>}:tries  hash  job id → its claims, each claim's number, which its outcome names
//	{j:<n>}:base   hash  job id → its claims before its tries started: a try is a claim since
//	                     then (a run that succeeded while the job was caused again, and a try not
//	                     counted, move it); absent, 0
//	{j:<n>}:dead   zset  job id → when it was set aside (ms): failed MaxTries times
//	{j:<n>}:why    hash  job id → its last error
//	{lock:<name>}  string the token of the process that holds the lock, with a TTL
//
// A job lives in one of Shards shards, chosen by a hash of its id, so that each claim is one
// script on one hash slot and the jobs spread over a cluster. A claim moves due jobs from due to
// lease with a lease end; a job whose process died is due again when its lease ends and the
// next claim of its shard takes it. Job ids are derived from what caused the job, so enqueueing
// it again adds nothing, and handlers are idempotent, so a job that runs twice has the effect of
// one. A job that fails is retried with backoff; after MaxTries it is set aside as a dead letter,
// which Dead lists and Retry puts back. On shutdown, Run stops claiming, lets running jobs
// finish within Options.Drain, and releases the rest to the queue.
package jobs

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

//go:embed scripts/*.lua
var scriptFS embed.FS

// Scripts returns the engine's Lua scripts (scripts/*.lua), for the Runner to load with its own.
func Scripts() fs.FS {
	sub, _ := fs.Sub(scriptFS, "scripts") // the directory is embedded, so Sub cannot fail
	return sub
}

// Call is one script invocation: the script's file name without ".lua", its keys and arguments.
type Call struct {
	Script string
	Keys   []string
	Args   []any
}

// Runner runs the engine's scripts: the store's one way to run a script, with its retry policy
// and timeouts. Both send the calls in one pipeline: RunScripts returns each reply, or the first
// error; RunEach returns each call's reply or error, so that the shards that answered count
// when another fails.
type Runner interface {
	RunScripts(ctx context.Context, calls []Call) ([]any, error)
	RunEach(ctx context.Context, calls []Call) ([]any, []error)
}

// Job is one unit of background work.
type Job struct {
	// ID names the job and is derived from its cause ("publish:post:17"), so that a repeated
	// cause enqueues nothing new. It may not contain a newline.
	ID string
	// Kind selects the handler (see Engine.Handle); Arg is the handler's argument.
	Kind, Arg string
	// At is when the job is due; the zero time means now.
	At time.Time
	// Try counts the claims of the job since it was scheduled, 1 on its first run.
	Try int
}

// Handler carries out one job. It must be idempotent: a job runs at least once, and more often if
// its process dies, or stalls or loses Redis for longer than its lease, while it runs (the lease
// is renewed while the handler runs, so a job may run longer than its lease). An error makes the job be retried; Later
// makes it due again at a given time without counting a failure.
type Handler func(ctx context.Context, job Job) error

// Later is returned by a handler whose job is not due yet (its cause moved it later): the job is
// due again At, and the try does not count.
type Later struct{ At time.Time }

func (l Later) Error() string { return "not due until " + l.At.UTC().Format(time.RFC3339Nano) }

// Options configures an Engine. The zero value of each field selects its default.
type Options struct {
	// Prefix starts every key; it is the store's prefix.
	Prefix string
	// Shards is how many shards (hash slots) the jobs spread over. Every process of one
	// deployment must use the same number. Default 8.
	Shards int
	// Workers is how many jobs one process runs at once. Default 16.
	Workers int
	// Lease is how long a claimed job is held by its process without a renewal: the process
	// renews it every third of Lease while the job runs, and another process may claim a job
	// whose lease ended (its process died or stalled). Default 30s.
	Lease time.Duration
	// Poll is the longest an idle process waits before it looks for due jobs again. Between
	// polls it sleeps until the next job it knows of is due (every claim tells it), and a job
	// this process enqueues, due now or later, wakes it to look again, so jobs run on time;
	// the poll only finds, on an idle process, jobs that other processes queued. Default 1s: an
	// idle process costs Redis one claim per shard a second.
	Poll time.Duration
	// MaxTries is how often a job is tried before it is set aside as a dead letter. Default 10.
	MaxTries int
	// DeadCap is the most dead letters one shard keeps; the oldest go first. Default 10,000.
	DeadCap int
	// Drain bounds how long Run waits, when it stops, for the jobs that are running; the rest
	// are released to the queue. Default 10s.
	Drain time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Log receives every job failure, with the job's id. Default: discarded.
	Log *slog.Logger
	// Waiting reports whether a handler's error is the store's rather than the job's: Redis
	// refused a write for want of memory. Such a try does not count towards MaxTries: the job
	// is due again Wait later, however long it lasts, so that a full Redis turns no job into a
	// dead letter and every job runs once memory is freed. Default: none is.
	Waiting func(error) bool
	// Wait is how long a job waits after a try that does not count: one Waiting excused, or one
	// of a kind this process has no handler for (see execute). Default 30s.
	Wait time.Duration
}

func (o Options) withDefaults() Options {
	if o.Shards <= 0 {
		o.Shards = 8
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.Lease <= 0 {
		o.Lease = 30 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.MaxTries <= 0 {
		o.MaxTries = 10
	}
	if o.DeadCap <= 0 {
		o.DeadCap = 10_000
	}
	if o.Drain <= 0 {
		o.Drain = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Waiting == nil {
		o.Waiting = func(error) bool { return false }
	}
	if o.Wait <= 0 {
		o.Wait = 30 * time.Second
	}
	return o
}

// Engine enqueues, claims and runs jobs. It is safe for concurrent use.
type Engine struct {
	r        Runner
	opts     Options
	handlers map[string]Handler
	wake     chan struct{} // a job was enqueued here, due now
	next     atomic.Uint32 // the shard the next claim round starts with

	done, failed, dead atomic.Uint64

	mu      sync.Mutex
	notHere map[string]time.Time // kinds of jobs put back as not this release's → when it last said so
}

// New returns an engine that runs its scripts through r. Register handlers with Handle before
// Run.
func New(r Runner, opts Options) *Engine {
	return &Engine{r: r, opts: opts.withDefaults(), handlers: map[string]Handler{}, wake: make(chan struct{}, 1)}
}

// Handle registers the handler of a kind of job. It is not safe to call once Run has started.
func (e *Engine) Handle(kind string, h Handler) { e.handlers[kind] = h }

// Options returns the options in effect, defaults filled in.
func (e *Engine) Options() Options { return e.opts }

// score is a due time as the queues keep it: Unix milliseconds to the microsecond, so that two
// reminders of one id set within a millisecond (see Settle) can be told apart.
func score(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMicro())/1000, 'f', 3, 64)
}

// shard returns the hash tag of the shard that holds id.
func (e *Engine) shard(id string) int {
	return int(crc32.ChecksumIEEE([]byte(id)) % uint32(e.opts.Shards))
}

// keys returns the keys of shard n: due, lease, job, tries, dead, why, base.
func (e *Engine) keys(n int) [7]string {
	tag := e.opts.Prefix + "{j:" + strconv.Itoa(n) + "}:"
	return [7]string{tag + "due", tag + "lease", tag + "job", tag + "tries", tag + "dead", tag + "why", tag + "base"}
}

func (e *Engine) now() time.Time { return e.opts.Now() }

func checkJob(j Job) error {
	switch {
	case j.ID == "" || strings.ContainsRune(j.ID, '\n'):
		return fmt.Errorf("job id %q: must be non-empty and hold no newline", j.ID)
	case j.Kind == "" || strings.ContainsRune(j.Kind, '\n'):
		return fmt.Errorf("job %s: kind %q must be non-empty and hold no newline", j.ID, j.Kind)
	}
	return nil
}

// EnqueueCall is the script call that enqueues j, for a caller that sends it in a pipeline with
// other scripts (a write's own calls). With move, a job already waiting is moved to j.At; without,
// it keeps its time. A job that is running runs once more at j.At either way: it may have read
// its state before this cause. Claims keep counting across moves, so that each claim's number is
// its own and the outcome of an old run never passes for a newer one's.
func (e *Engine) EnqueueCall(j Job, move bool) (Call, error) {
	mode := modeAdd
	if move {
		mode = modeMove
	}
	return e.enqueueCall(j, mode)
}

// NoteCall is the call that sets a reminder: job j, due at j.At, for a cause that takes it back
// with Settle(j.ID, j.At) once it has finished, and that the job redoes should the cause stop
// half-way. A reminder that another cause set meanwhile (or this one, sent twice) is not moved to
// j.At: the job is then due just after the later of the two times, where neither cause's Settle
// takes it back, so it runs once for both — the first cause to finish cannot take back the
// reminder of one that stopped.
func (e *Engine) NoteCall(j Job) (Call, error) { return e.enqueueCall(j, modeNote) }

// The modes of jobs_enqueue.lua that add a job.
const (
	modeAdd     = "add"     // a job already waiting keeps its time
	modeMove    = "move"    // a job already waiting moves to the new time
	modeEarlier = "earlier" // a job already waiting moves to the new time if that is earlier
	modeNote    = "note"    // a reminder: see NoteCall
)

func (e *Engine) enqueueCall(j Job, mode string) (Call, error) {
	if err := checkJob(j); err != nil {
		return Call{}, err
	}
	at := j.At
	if at.IsZero() {
		at = e.now()
	}
	k := e.keys(e.shard(j.ID))
	return Call{Script: "jobs_enqueue", Keys: []string{k[0], k[2], k[3], k[1], k[4], k[6]},
		Args: []any{j.ID, j.Kind + "\n" + j.Arg, score(at), mode}}, nil
}

// Enqueue adds jobs, in one pipeline. A job whose id is already waiting is left as it is: its
// cause was repeated, and it will see it. A dead letter of the id is a job no longer waiting: a
// new cause takes it out of the dead letters and queues it anew, its tries counted from 1 (so
// do Schedule, DueBy and NoteCall).
func (e *Engine) Enqueue(ctx context.Context, jobs ...Job) error {
	return e.enqueue(ctx, jobs, modeAdd)
}

// Schedule adds jobs or moves them to their new time, in one pipeline.
func (e *Engine) Schedule(ctx context.Context, jobs ...Job) error {
	return e.enqueue(ctx, jobs, modeMove)
}

// DueBy adds jobs, or brings them forward to their time; a job already due earlier keeps its
// time (a running one runs once more at the new time, as with Schedule). It is for a job whose
// handler reads the true time of its cause and answers Later while that is ahead: two causes
// that move the job concurrently, each in two steps (its state, then the job), then leave it due
// at the earliest of their times, never after the time the state was left with — whichever
// order their steps interleave in — and the handler's Later brings it to that time exactly.
func (e *Engine) DueBy(ctx context.Context, jobs ...Job) error {
	return e.enqueue(ctx, jobs, modeEarlier)
}

func (e *Engine) enqueue(ctx context.Context, jobs []Job, mode string) error {
	if len(jobs) == 0 {
		return nil
	}
	calls := make([]Call, len(jobs))
	for i, j := range jobs {
		c, err := e.enqueueCall(j, mode)
		if err != nil {
			return err
		}
		calls[i] = c
	}
	if _, err := e.r.RunScripts(ctx, calls); err != nil {
		return fmt.Errorf("enqueue %s: %w", jobs[0].ID, err)
	}
	e.Wake() // to run it now, or to learn when it is due
	return nil
}

// Wake makes an idle Run look for due jobs at once, and learn when the next one is due.
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Cancel removes a job that has not run yet; a job that is running finishes. Cancelling a job
// that does not exist does nothing.
func (e *Engine) Cancel(ctx context.Context, id string) error { return e.cancel(ctx, id, "0") }

// Settle removes a job that is still due at at, to the microsecond: a cause that set itself a
// reminder (a write noting that it must be finished, should it stop half-way) takes it back
// without touching a later reminder of the same id, set meanwhile by a later cause.
func (e *Engine) Settle(ctx context.Context, id string, at time.Time) error {
	return e.cancel(ctx, id, score(at))
}

// SettleCall is Settle as a call, for a caller that sends it in a pipeline of its own.
func (e *Engine) SettleCall(id string, at time.Time) Call { return e.cancelCall(id, score(at)) }

func (e *Engine) cancelCall(id string, at string) Call {
	k := e.keys(e.shard(id))
	return Call{Script: "jobs_enqueue", Keys: []string{k[0], k[2], k[3], k[1], k[4], k[6]}, Args: []any{id, "", at, "cancel"}}
}

func (e *Engine) cancel(ctx context.Context, id string, at string) error {
	if _, err := e.r.RunScripts(ctx, []Call{e.cancelCall(id, at)}); err != nil {
		return fmt.Errorf("cancel job %s: %w", id, err)
	}
	return nil
}

// claimed is a job taken from a shard, with the try its claim counted, and the claim's number
// and lease end, which its outcome names: the number alone is not unique, since a job that ended
// counts its claims from 1 again when it is caused anew.
type claimed struct {
	Job
	shard int
	claim int64
	lease string
	// maybe is a lease end that a renewal whose reply never came may have set, or "": the lease
	// ends at lease or maybe, and the outcome names both.
	maybe string
}

// claim takes at most max due jobs over all shards, in one pipeline, and returns them with the
// time the next job is due (or its lease ends) in any shard, zero if none. The max is shared out
// exactly, starting with a shard that rotates, so that a process never leases more jobs than it
// has workers for. A shard that fails is logged and skipped; the others' jobs run.
func (e *Engine) claim(ctx context.Context, max int) ([]claimed, time.Time, error) {
	now := e.now()
	lease := score(now.Add(e.opts.Lease))
	start := int(e.next.Add(1))
	var calls []Call
	var shards []int
	for i := range e.opts.Shards {
		per := max / e.opts.Shards
		if i < max%e.opts.Shards {
			per++
		}
		if per == 0 && max > 0 {
			continue
		}
		n := (start + i) % e.opts.Shards
		k := e.keys(n)
		calls = append(calls, Call{Script: "jobs_claim", Keys: []string{k[0], k[1], k[2], k[3], k[6]},
			Args: []any{score(now), lease, per}})
		shards = append(shards, n)
	}
	replies, errs := e.r.RunEach(ctx, calls)
	var out []claimed
	var next time.Time
	var failed error
	for i, reply := range replies {
		n := shards[i]
		arr, _ := reply.([]any)
		if errs[i] == nil && len(arr) != 2 {
			errs[i] = fmt.Errorf("unexpected reply %v", reply)
		}
		if errs[i] != nil {
			failed = fmt.Errorf("claim jobs of shard %d: %w", n, errs[i])
			continue
		}
		items, _ := arr[0].([]any)
		for j := 0; j+3 < len(items); j += 4 {
			id, _ := items[j].(string)
			payload, _ := items[j+1].(string)
			claim, _ := items[j+2].(int64)
			try, _ := items[j+3].(int64)
			kind, arg, _ := strings.Cut(payload, "\n")
			out = append(out, claimed{Job: Job{ID: id, Kind: kind, Arg: arg, Try: int(try)}, shard: n, claim: claim, lease: lease})
		}
		if s, ok := arr[1].(string); ok {
			if ms, err := strconv.ParseFloat(s, 64); err == nil {
				if t := time.UnixMilli(int64(ms)); next.IsZero() || t.Before(next) {
					next = t
				}
			}
		}
	}
	return out, next, failed
}

// finish records what became of a claimed job: "ok", "retry", "dead", "later" or "release".
func (e *Engine) finish(ctx context.Context, c claimed, outcome string, at time.Time, why string) error {
	k := e.keys(c.shard)
	_, err := e.r.RunScripts(ctx, []Call{{Script: "jobs_done", Keys: k[:],
		Args: []any{c.ID, c.claim, outcome, score(at), why, e.opts.DeadCap, c.lease, c.maybe}}})
	if err != nil {
		return fmt.Errorf("finish job %s (%s): %w", c.ID, outcome, err)
	}
	return nil
}

// backoff is how long a job waits after its try-th failure: 1s doubling, at most 5 minutes.
func backoff(try int) time.Duration {
	return min(time.Second<<min(max(try-1, 0), 9), 5*time.Minute)
}

// ErrNotHere is what a handler's error wraps when its job names work this release does not know:
// a step of a newer release's (an account deletion's step, say). The job is then put back as one
// of a kind without a handler is (see execute), not failed.
var ErrNotHere = errors.New("work of a newer release")

// execute runs one claimed job and records the outcome. A job of a kind this process has no
// handler for, or whose handler says ErrNotHere, is not its to fail: a process of a newer release
// queued it, in a rolling upgrade or beside a canary, and only such a process runs it. It goes
// back to the queue, due Options.Wait later, its try not counted, until one claims it (however
// long that takes: after a roll-back it waits for the next upgrade). Counted, the tries of such
// a job ran out in minutes whenever the older processes happened to claim it ten times in a row,
// and it became a dead letter.
func (e *Engine) execute(ctx context.Context, c claimed) {
	h, ok := e.handlers[c.Kind]
	var err error
	if ok {
		c, err = e.runHeld(ctx, h, c)
	}
	if !ok || errors.Is(err, ErrNotHere) {
		e.warnNotHere(ctx, c, err)
		if err := e.finish(context.WithoutCancel(ctx), c, "later", e.now().Add(e.opts.Wait), ""); err != nil {
			e.opts.Log.WarnContext(ctx, "job outcome not recorded: it runs again when its lease ends", "job", c.ID, "err", err)
		}
		return
	}
	// Record the outcome even if ctx ended meanwhile: the job ran.
	rec := context.WithoutCancel(ctx)
	var later Later
	switch {
	case err == nil:
		e.done.Add(1)
		err = e.finish(rec, c, "ok", time.Time{}, "")
	case errors.As(err, &later):
		err = e.finish(rec, c, "later", later.At, "")
	case ctx.Err() != nil:
		// Stopped mid-way: the job goes back to the queue untried.
		err = e.finish(rec, c, "release", e.now(), "")
	case e.opts.Waiting(err):
		// The store could not take the job's writes (Redis is full): not the job's failure.
		e.failed.Add(1)
		e.opts.Log.WarnContext(ctx, "job failed for want of room in Redis: it waits, its try not counted",
			"job", c.ID, "kind", c.Kind, "try", c.Try, "retry_in", e.opts.Wait, "err", err)
		err = e.finish(rec, c, "later", e.now().Add(e.opts.Wait), "")
	case c.Try >= e.opts.MaxTries:
		e.dead.Add(1)
		e.opts.Log.ErrorContext(ctx, "job failed for the last time: set aside as a dead letter",
			"job", c.ID, "kind", c.Kind, "try", c.Try, "err", err)
		err = e.finish(rec, c, "dead", e.now(), err.Error())
	default:
		e.failed.Add(1)
		retry := backoff(c.Try)
		e.opts.Log.WarnContext(ctx, "job failed: it will be retried",
			"job", c.ID, "kind", c.Kind, "try", c.Try, "retry_in", retry, "err", err)
		err = e.finish(rec, c, "retry", e.now().Add(retry), err.Error())
	}
	if err != nil {
		// The lease ends by itself and the job runs again: handlers are idempotent.
		e.opts.Log.WarnContext(ctx, "job outcome not recorded: it runs again when its lease ends", "job", c.ID, "err", err)
	}
}

// runHeld runs h on c's job and renews the job's lease every third of Options.Lease while it
// runs, so that a job that runs longer than its lease is not claimed by another process
// meanwhile. It returns c with the lease end its last renewal set, which the outcome names, and
// the handler's error. Without renewals, a job that took longer than the lease ran again on
// another process, and again, each run's outcome refused because a newer claim held the job: it
// never ended. A renewal that finds the job claimed again (this process stalled past the lease)
// stops renewing; the handler runs on, its outcome refused, as handlers allow.
func (e *Engine) runHeld(ctx context.Context, h Handler, c claimed) (claimed, error) {
	stop, renewed := make(chan struct{}), make(chan claimed, 1)
	go func() {
		held := c
		defer func() { renewed <- held }()
		t := time.NewTicker(max(e.opts.Lease/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			next := score(e.now().Add(e.opts.Lease))
			ok, err := e.renew(context.WithoutCancel(ctx), held, next)
			switch {
			case err != nil:
				// The renewal may have reached Redis: the lease ends at either time.
				held.maybe = next
				e.opts.Log.WarnContext(ctx, "job lease not renewed: it is tried again", "job", c.ID, "err", err)
			case !ok:
				e.opts.Log.WarnContext(ctx, "job claimed again after its lease ended: it runs elsewhere too", "job", c.ID)
				return
			default:
				held.lease, held.maybe = next, ""
			}
		}
	}()
	err := safely(ctx, h, c.Job)
	close(stop)
	return <-renewed, err
}

// renew moves the lease of c's job to end at next, if c's claim still holds it (jobs_renew.lua).
func (e *Engine) renew(ctx context.Context, c claimed, next string) (bool, error) {
	k := e.keys(c.shard)
	reply, err := e.r.RunScripts(ctx, []Call{{Script: "jobs_renew", Keys: []string{k[1], k[3]},
		Args: []any{c.ID, c.claim, c.lease, next, c.maybe}}})
	if err != nil {
		return false, fmt.Errorf("renew the lease of job %s: %w", c.ID, err)
	}
	n, _ := reply[0].(int64)
	return n == 1, nil
}

// warnNotHere logs that a job this process cannot run (err nil: no handler for its kind) was put
// back, once a minute for each kind, not once a try.
func (e *Engine) warnNotHere(ctx context.Context, c claimed, err error) {
	now := time.Now()
	e.mu.Lock()
	last, seen := e.notHere[c.Kind]
	warn := !seen || now.Sub(last) >= time.Minute
	if warn {
		if e.notHere == nil {
			e.notHere = map[string]time.Time{}
		}
		e.notHere[c.Kind] = now
	}
	e.mu.Unlock()
	if !warn {
		return
	}
	if err == nil {
		err = fmt.Errorf("no handler for jobs of kind %q", c.Kind)
	}
	e.opts.Log.WarnContext(ctx, "a job this release cannot run (a newer release's?): put back for a process that can",
		"job", c.ID, "kind", c.Kind, "retry_in", e.opts.Wait, "err", err)
}

// safely runs h, turning a panic into an error so that one bad job cannot stop the engine.
func safely(ctx context.Context, h Handler, j Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return h(ctx, j)
}

// Run claims and runs jobs until ctx ends, never more at once than Options.Workers. Then it
// stops claiming, waits up to Options.Drain for the running jobs, and releases those still
// running to the queue (their handlers see their context end; Run waits a second more for them).
// Every server process runs it.
func (e *Engine) Run(ctx context.Context) {
	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	slots := make(chan struct{}, e.opts.Workers)
	var wg sync.WaitGroup
	defer func() {
		drained := make(chan struct{})
		go func() { wg.Wait(); close(drained) }()
		t := time.NewTimer(e.opts.Drain)
		defer t.Stop()
		select {
		case <-drained:
		case <-t.C:
			stopWork() // the rest are released as their handlers return
			// A handler that ignores its context cannot be stopped: give it a moment, then
			// leave it. Its job's lease ends by itself if the process exits first.
			select {
			case <-drained:
			case <-time.After(time.Second):
			}
		}
	}()
	freed := make(chan struct{}, e.opts.Workers)
	var warned time.Time
	for ctx.Err() == nil {
		free := e.opts.Workers - len(slots)
		var next time.Time
		if free > 0 {
			jobs, n, err := e.claim(ctx, free)
			if err != nil && ctx.Err() == nil && time.Since(warned) > time.Minute {
				warned = time.Now() // once a minute while a shard fails, not every poll
				e.opts.Log.WarnContext(ctx, "claim jobs", "err", err)
			}
			next = n
			for _, c := range jobs {
				slots <- struct{}{}
				wg.Go(func() {
					defer func() {
						<-slots
						select {
						case freed <- struct{}{}:
						default:
						}
					}()
					e.execute(work, c)
				})
			}
			if len(jobs) > 0 {
				continue // there may be more
			}
		}
		wait := e.opts.Poll
		if !next.IsZero() {
			wait = min(wait, max(time.Until(next), time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-e.wake:
		case <-freed:
		case <-t.C:
		}
		t.Stop()
	}
}

// RunDue claims and runs every job that is due now, in this goroutine, until none is left, and
// returns how many ran. Tests use it to run jobs at a chosen moment of a driven clock.
func (e *Engine) RunDue(ctx context.Context) (int, error) {
	ran := 0
	for {
		jobs, _, err := e.claim(ctx, e.opts.Workers)
		for _, c := range jobs {
			e.execute(ctx, c)
		}
		ran += len(jobs)
		if err != nil {
			return ran, err
		}
		if len(jobs) == 0 {
			return ran, nil
		}
	}
}

// Stats counts what this process's engine did since it started.
type Stats struct {
	Done, Failed, Dead uint64
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	return Stats{Done: e.done.Load(), Failed: e.failed.Load(), Dead: e.dead.Load()}
}

// Census is the size of every queue, over all shards.
type Census struct {
	Due     int // waiting, due now or later
	Running int // claimed, with a lease
	Dead    int // set aside after failing MaxTries times
}

// Census counts the jobs in every shard's queues, in one pipeline.
func (e *Engine) Census(ctx context.Context) (Census, error) {
	calls := make([]Call, e.opts.Shards)
	for n := range calls {
		k := e.keys(n)
		calls[n] = Call{Script: "jobs_count", Keys: []string{k[0], k[1], k[4]}}
	}
	replies, err := e.r.RunScripts(ctx, calls)
	if err != nil {
		return Census{}, fmt.Errorf("count jobs: %w", err)
	}
	var c Census
	for _, reply := range replies {
		arr, _ := reply.([]any)
		if len(arr) != 3 {
			return Census{}, fmt.Errorf("count jobs: unexpected reply %v", reply)
		}
		due, _ := arr[0].(int64)
		running, _ := arr[1].(int64)
		dead, _ := arr[2].(int64)
		c.Due, c.Running, c.Dead = c.Due+int(due), c.Running+int(running), c.Dead+int(dead)
	}
	return c, nil
}

// DeadJob is a job set aside after failing Options.MaxTries times.
type DeadJob struct {
	Job
	At  time.Time // when it was set aside
	Err string    // its last error
}

// Dead lists up to limit dead letters of every shard, newest first within a shard.
func (e *Engine) Dead(ctx context.Context, limit int) ([]DeadJob, error) {
	calls := make([]Call, e.opts.Shards)
	for n := range calls {
		k := e.keys(n)
		calls[n] = Call{Script: "jobs_dead", Keys: []string{k[0], k[4], k[2], k[3], k[5], k[6]}, Args: []any{"list", limit}}
	}
	replies, err := e.r.RunScripts(ctx, calls)
	if err != nil {
		return nil, fmt.Errorf("list dead jobs: %w", err)
	}
	var out []DeadJob
	for _, reply := range replies {
		arr, _ := reply.([]any)
		for i := 0; i+3 < len(arr) && len(out) < limit; i += 4 {
			id, _ := arr[i].(string)
			payload, _ := arr[i+1].(string)
			at, _ := arr[i+2].(string)
			why, _ := arr[i+3].(string)
			kind, arg, _ := strings.Cut(payload, "\n")
			ms, _ := strconv.ParseFloat(at, 64)
			out = append(out, DeadJob{Job: Job{ID: id, Kind: kind, Arg: arg}, At: time.UnixMilli(int64(ms)).UTC(), Err: why})
		}
	}
	return out, nil
}

// Retry puts a dead letter back in the queue, due now with its tries reset. It reports whether
// id was a dead letter.
func (e *Engine) Retry(ctx context.Context, id string) (bool, error) {
	k := e.keys(e.shard(id))
	reply, err := e.r.RunScripts(ctx, []Call{{Script: "jobs_dead", Keys: []string{k[0], k[4], k[2], k[3], k[5], k[6]},
		Args: []any{"retry", id, score(e.now())}}})
	if err != nil {
		return false, fmt.Errorf("retry job %s: %w", id, err)
	}
	e.Wake()
	n, _ := reply[0].(int64)
	return n == 1, nil
}
