package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/jobs"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// engines returns n engines on one prefix of b, as n server processes would have, sharing clk.
func engines(t *testing.T, b storetest.Backend, n int, clk *storetest.Clock, opts jobs.Options) []*jobs.Engine {
	t.Helper()
	prefix := storetest.Prefix()
	out := make([]*jobs.Engine, n)
	for i := range out {
		st := b.NewStore(t, store.Options{Prefix: prefix, Now: clk.Now, Jobs: opts})
		out[i] = st.Jobs()
	}
	return out
}

// recorder is a handler that records the jobs it ran.
type recorder struct {
	mu  sync.Mutex
	ran []string
	err error // returned by every run
}

func (r *recorder) handle(_ context.Context, j jobs.Job) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ran = append(r.ran, j.ID+"="+j.Arg)
	return r.err
}

func (r *recorder) runs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ran)
}

func runDue(t *testing.T, e *jobs.Engine) int {
	t.Helper()
	n, err := e.RunDue(context.Background())
	if err != nil {
		t.Fatalf("run due jobs: %v", err)
	}
	return n
}

func TestJobsRunWhenDueAndOnce(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		e := engines(t, b, 1, clk, jobs.Options{})[0]
		var r recorder
		e.Handle("echo", r.handle)

		if err := e.Enqueue(ctx,
			jobs.Job{ID: "now", Kind: "echo", Arg: "a"},
			jobs.Job{ID: "soon", Kind: "echo", Arg: "b", At: clk.Now().Add(time.Minute)},
		); err != nil {
			t.Fatal(err)
		}
		// The same cause again adds nothing: not a second run, not a new time or argument.
		if err := e.Enqueue(ctx, jobs.Job{ID: "now", Kind: "echo", Arg: "other"}); err != nil {
			t.Fatal(err)
		}
		if n := runDue(t, e); n != 1 {
			t.Fatalf("ran %d jobs, want 1 (the due one)", n)
		}
		clk.Add(59 * time.Second)
		if n := runDue(t, e); n != 0 {
			t.Fatalf("ran %d jobs a second early", n)
		}
		clk.Add(time.Second)
		runDue(t, e)
		if got, want := r.runs(), []string{"now=a", "soon=b"}; !slices.Equal(got, want) {
			t.Fatalf("ran %v, want %v", got, want)
		}
		// Done jobs leave nothing behind, and may be caused again.
		if n := runDue(t, e); n != 0 {
			t.Fatalf("ran %d jobs after all were done", n)
		}
		if err := e.Enqueue(ctx, jobs.Job{ID: "now", Kind: "echo", Arg: "again"}); err != nil {
			t.Fatal(err)
		}
		runDue(t, e)
		if got := r.runs(); len(got) != 3 || got[2] != "now=again" {
			t.Fatalf("ran %v, want a third run of the re-caused job", got)
		}
	})
}

func TestJobsScheduleMovesAndCancelRemoves(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		e := engines(t, b, 1, clk, jobs.Options{})[0]
		var r recorder
		e.Handle("echo", r.handle)
		at := clk.Now().Add(time.Minute)
		for _, j := range []jobs.Job{{ID: "moved", At: at}, {ID: "cancelled", At: at}} {
			j.Kind, j.Arg = "echo", j.ID
			if err := e.Schedule(ctx, j); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Schedule(ctx, jobs.Job{ID: "moved", Kind: "echo", Arg: "later", At: at.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if err := e.Cancel(ctx, "cancelled"); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Minute)
		if n := runDue(t, e); n != 0 {
			t.Fatalf("ran %d jobs at the old time: %v", n, r.runs())
		}
		clk.Add(time.Hour)
		runDue(t, e)
		if got, want := r.runs(), []string{"moved=later"}; !slices.Equal(got, want) {
			t.Fatalf("ran %v, want %v", got, want)
		}
	})
}

// TestJobsDueByOnlyMovesEarlier checks that DueBy brings a job forward and never puts it back: a
// job due earlier keeps its time, a later one comes forward, a missing one is added.
func TestJobsDueByOnlyMovesEarlier(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		e := engines(t, b, 1, clk, jobs.Options{})[0]
		var r recorder
		e.Handle("echo", r.handle)
		at := clk.Now().Add(time.Hour)
		for _, j := range []jobs.Job{
			{ID: "kept", Arg: "first", At: at},
			{ID: "kept", Arg: "second", At: at.Add(time.Hour)}, // later: the job keeps its time
			{ID: "forward", Arg: "first", At: at.Add(time.Hour)},
			{ID: "forward", Arg: "second", At: at}, // earlier: the job comes forward
		} {
			j.Kind = "echo"
			if err := e.DueBy(ctx, j); err != nil {
				t.Fatal(err)
			}
		}
		clk.Add(time.Hour - time.Millisecond)
		if n := runDue(t, e); n != 0 {
			t.Fatalf("ran %d jobs early: %v", n, r.runs())
		}
		clk.Add(time.Millisecond)
		runDue(t, e)
		got := r.runs()
		slices.Sort(got)
		if want := []string{"forward=second", "kept=second"}; !slices.Equal(got, want) {
			t.Fatalf("ran %v at the earliest time, want %v", got, want)
		}
	})
}

func TestJobsFailuresRetryThenDeadLetters(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		e := engines(t, b, 1, clk, jobs.Options{MaxTries: 3})[0]
		r := recorder{err: errors.New("boom")}
		e.Handle("fail", r.handle)
		if err := e.Enqueue(ctx, jobs.Job{ID: "f", Kind: "fail", Arg: "x"}); err != nil {
			t.Fatal(err)
		}
		runDue(t, e)
		if n := runDue(t, e); n != 0 {
			t.Fatal("a failed job was retried at once, with no backoff")
		}
		clk.Add(time.Second) // the first backoff
		runDue(t, e)
		clk.Add(2 * time.Second)
		runDue(t, e)
		clk.Add(time.Hour)
		if n := runDue(t, e); n != 0 {
			t.Fatalf("a job that failed MaxTries times ran again")
		}
		if got := len(r.runs()); got != 3 {
			t.Fatalf("ran %d times, want 3", got)
		}
		dead, err := e.Dead(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(dead) != 1 || dead[0].ID != "f" || dead[0].Kind != "fail" || dead[0].Arg != "x" || dead[0].Err != "boom" {
			t.Fatalf("dead letters %+v, want job f with its error", dead)
		}
		if s := e.Stats(); s.Failed != 2 || s.Dead != 1 {
			t.Fatalf("stats %+v, want 2 failures and 1 dead", s)
		}
		// An operator puts it back once the cause is fixed.
		r.mu.Lock()
		r.err = nil
		r.mu.Unlock()
		if ok, err := e.Retry(ctx, "f"); err != nil || !ok {
			t.Fatalf("retry: %v %v", ok, err)
		}
		runDue(t, e)
		if dead, _ := e.Dead(ctx, 10); len(dead) != 0 {
			t.Fatalf("dead letters after retry: %+v", dead)
		}
		if got := len(r.runs()); got != 4 {
			t.Fatalf("ran %d times, want 4", got)
		}
	})
}

func TestJobsLaterDoesNotCountATry(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		e := engines(t, b, 1, clk, jobs.Options{MaxTries: 1})[0]
		var tries []int
		e.Handle("wait", func(_ context.Context, j jobs.Job) error {
			tries = append(tries, j.Try)
			if len(tries) < 3 {
				return jobs.Later{At: clk.Now().Add(time.Minute)}
			}
			return nil
		})
		if err := e.Enqueue(ctx, jobs.Job{ID: "w", Kind: "wait"}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			runDue(t, e)
			clk.Add(time.Minute)
		}
		if !slices.Equal(tries, []int{1, 1, 1}) {
			t.Fatalf("tries %v, want each run to be the first try", tries)
		}
		if dead, _ := e.Dead(ctx, 10); len(dead) != 0 {
			t.Fatalf("a postponed job became a dead letter: %+v", dead)
		}
	})
}

// TestJobsOfADeadProcessRunAgainAfterTheirLease: a process that claimed a job and died (here:
// hangs for ever) leaves it leased; when the lease ends another process runs it, and the dead
// one's late outcome changes nothing.
func TestJobsOfADeadProcessRunAgainAfterTheirLease(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		es := engines(t, b, 2, clk, jobs.Options{Lease: 30 * time.Second})
		hung, release := make(chan struct{}), make(chan struct{})
		es[0].Handle("j", func(context.Context, jobs.Job) error { close(hung); <-release; return nil })
		var r recorder
		es[1].Handle("j", r.handle)
		if err := es[0].Enqueue(ctx, jobs.Job{ID: "x", Kind: "j"}); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { defer close(done); runDue(t, es[0]) }()
		<-hung
		if n := runDue(t, es[1]); n != 0 {
			t.Fatal("a leased job was claimed twice within its lease")
		}
		clk.Add(30 * time.Second)
		if n := runDue(t, es[1]); n != 1 {
			t.Fatalf("ran %d jobs after the lease ended, want the dead process's job", n)
		}
		close(release) // the first process wakes up and reports success after all
		<-done
		clk.Add(time.Hour)
		if n := runDue(t, es[1]); n != 0 {
			t.Fatalf("ran %d jobs after both finished", n)
		}
	})
}

// TestRunReleasesRunningJobsOnShutdown: a process that stops lets running jobs finish within its
// drain time and puts back the rest, which another process can run at once.
func TestRunReleasesRunningJobsOnShutdown(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		es := engines(t, b, 2, clk, jobs.Options{Drain: 50 * time.Millisecond, Poll: 5 * time.Millisecond})
		started := make(chan string, 2)
		es[0].Handle("quick", func(ctx context.Context, j jobs.Job) error { started <- j.ID; return nil })
		es[0].Handle("slow", func(ctx context.Context, j jobs.Job) error {
			started <- j.ID
			<-ctx.Done() // longer than the drain
			return ctx.Err()
		})
		var r recorder
		es[1].Handle("slow", r.handle)
		if err := es[0].Enqueue(ctx, jobs.Job{ID: "s", Kind: "slow"}, jobs.Job{ID: "q", Kind: "quick"}); err != nil {
			t.Fatal(err)
		}
		run, stop := context.WithCancel(ctx)
		stopped := make(chan struct{})
		go func() { defer close(stopped); es[0].Run(run) }()
		<-started
		<-started
		stop()
		<-stopped
		if n := runDue(t, es[1]); n != 1 {
			t.Fatalf("another process ran %d jobs after the shutdown, want the released one", n)
		}
		if got := r.runs(); !slices.Equal(got, []string{"s="}) {
			t.Fatalf("ran %v, want the slow job", got)
		}
	})
}

// TestRunPicksUpJobsPromptly: an idle process runs a job enqueued elsewhere within its poll,
// and one enqueued by itself at once.
func TestRunPicksUpJobsPromptly(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		es := engines(t, b, 2, storetest.NewClock(), jobs.Options{Poll: 20 * time.Millisecond})
		for _, e := range es {
			e.Handle("j", func(context.Context, jobs.Job) error { return nil })
		}
		ran := make(chan string, 10)
		es[0].Handle("j", func(_ context.Context, j jobs.Job) error { ran <- j.ID; return nil })
		go es[0].Run(ctx)
		for _, e := range es {
			if err := e.Enqueue(ctx, jobs.Job{ID: "from-" + time.Now().String(), Kind: "j"}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ran:
			case <-time.After(5 * time.Second):
				t.Fatal("an enqueued job did not run")
			}
		}
	})
}

// TestLockHasOneHolderAndIsTakenOverAfterItsTTL: under contention at most one token holds the
// lock at any time; a holder that dies without releasing is replaced once its TTL runs out.
func TestLockHasOneHolderAndIsTakenOverAfterItsTTL(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		es := engines(t, b, 4, storetest.NewClock(), jobs.Options{})
		var holders, maxHolders, turns atomic.Int32
		var wg sync.WaitGroup
		for _, e := range es {
			for range 2 {
				l := e.NewLock("contended", 5*time.Second)
				wg.Go(func() {
					deadline := time.Now().Add(500 * time.Millisecond)
					for time.Now().Before(deadline) {
						ok, err := l.Acquire(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						if !ok {
							continue
						}
						n := holders.Add(1)
						if n > maxHolders.Load() {
							maxHolders.Store(n)
						}
						turns.Add(1)
						time.Sleep(time.Millisecond)
						holders.Add(-1)
						if err := l.Release(ctx); err != nil {
							t.Error(err)
						}
					}
				})
			}
		}
		wg.Wait()
		if maxHolders.Load() != 1 || turns.Load() < 2 {
			t.Fatalf("at most %d holders at once over %d turns, want 1 over several", maxHolders.Load(), turns.Load())
		}

		dead := es[0].NewLock("takeover", 300*time.Millisecond)
		if ok, err := dead.Acquire(ctx); err != nil || !ok {
			t.Fatalf("acquire: %v %v", ok, err)
		}
		heir := es[1].NewLock("takeover", 300*time.Millisecond)
		if ok, _ := heir.Acquire(ctx); ok {
			t.Fatal("a held lock was taken")
		}
		start := time.Now()
		for {
			if ok, err := heir.Acquire(ctx); err != nil {
				t.Fatal(err)
			} else if ok {
				break
			}
			if time.Since(start) > 5*time.Second {
				t.Fatal("the lock of a dead holder was never taken over")
			}
			time.Sleep(10 * time.Millisecond)
			if b.Mini != nil {
				b.Mini.FastForward(10 * time.Millisecond) // miniredis moves TTLs only when told
			}
		}
		if ok, _ := dead.Renew(ctx); ok {
			t.Fatal("the dead holder renewed a lock it had lost")
		}
		if err := dead.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if ok, _ := heir.Renew(ctx); !ok {
			t.Fatal("the old holder's release freed the new holder's lock")
		}
	})
}

// TestSettleTakesBackOnlyItsOwnReminder: a cause settles the job it set for a time; a later cause
// that moved the job to a later time keeps it.
func TestSettleTakesBackOnlyItsOwnReminder(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		e := engines(t, b, 1, clk, jobs.Options{})[0]
		var r recorder
		e.Handle("repair", r.handle)
		first, second := clk.Now().Add(15*time.Second), clk.Now().Add(20*time.Second)
		for _, at := range []time.Time{first, second} {
			if err := e.Schedule(ctx, jobs.Job{ID: "r", Kind: "repair", At: at}); err != nil {
				t.Fatal(err)
			}
		}
		if c, err := e.Census(ctx); err != nil || c != (jobs.Census{Due: 1}) {
			t.Fatalf("census %+v %v, want one job due", c, err)
		}
		if err := e.Settle(ctx, "r", first); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Minute)
		if n := runDue(t, e); n != 1 {
			t.Fatalf("ran %d jobs: the first cause's settle took back the second's reminder", n)
		}
		if err := e.Schedule(ctx, jobs.Job{ID: "r", Kind: "repair", At: clk.Now()}); err != nil {
			t.Fatal(err)
		}
		if err := e.Settle(ctx, "r", clk.Now()); err != nil {
			t.Fatal(err)
		}
		if n := runDue(t, e); n != 0 {
			t.Fatalf("ran %d jobs after their cause settled them", n)
		}
		if c, err := e.Census(ctx); err != nil || c != (jobs.Census{}) {
			t.Fatalf("census %+v %v, want empty queues", c, err)
		}
	})
}

// TestRunLeasesNoMoreThanItsWorkers: a process leases only as many jobs as it has free workers,
// so the others stay free for other processes, and it stops in time even when a handler ignores
// the end of its context.
func TestRunLeasesNoMoreThanItsWorkers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		e := engines(t, b, 1, storetest.NewClock(), jobs.Options{Workers: 2, Drain: 100 * time.Millisecond, Poll: 10 * time.Millisecond})[0]
		release := make(chan struct{})
		var started atomic.Int32
		e.Handle("block", func(context.Context, jobs.Job) error { started.Add(1); <-release; return nil })
		for i := range 20 {
			if err := e.Enqueue(ctx, jobs.Job{ID: fmt.Sprint("j", i), Kind: "block"}); err != nil {
				t.Fatal(err)
			}
		}
		run, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); e.Run(run) }()
		for started.Load() < 2 {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond) // time for an overeager claim
		if c, err := e.Census(ctx); err != nil || c.Running != 2 || c.Due != 18 {
			t.Fatalf("census %+v %v: want 2 leased (the workers) and 18 waiting", c, err)
		}
		stop()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after its drain time with handlers that ignore their context")
		}
		close(release)
	})
}

// TestJobCausedAgainWhileRunningRunsOnceMore: a cause that repeats while its job runs (the job
// may have read its state before it) makes the job run once more; one that repeats while the job
// waits adds nothing.
func TestJobCausedAgainWhileRunningRunsOnceMore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		e := engines(t, b, 1, clk, jobs.Options{})[0]
		entered, release := make(chan struct{}), make(chan struct{})
		var runs atomic.Int32
		e.Handle("j", func(context.Context, jobs.Job) error {
			if runs.Add(1) == 1 {
				close(entered)
				<-release
			}
			return nil
		})
		if err := e.Enqueue(ctx, jobs.Job{ID: "x", Kind: "j"}); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { defer close(done); runDue(t, e) }()
		<-entered
		for range 2 { // caused again twice while it runs: once more, not twice more
			if err := e.Enqueue(ctx, jobs.Job{ID: "x", Kind: "j"}); err != nil {
				t.Fatal(err)
			}
		}
		close(release)
		<-done
		runDue(t, e)
		if n := runs.Load(); n != 2 {
			t.Fatalf("ran %d times, want 2", n)
		}
		if c, err := e.Census(ctx); err != nil || c != (jobs.Census{}) {
			t.Fatalf("census %+v %v, want empty queues", c, err)
		}
	})
}

// TestJobTriesAfterANewCause: a job caused again while it runs runs once more for the new cause,
// its tries counted afresh, so that a failure of that run is retried rather than set aside with
// MaxTries left unused — when the run it interrupted succeeded (the claim of a success is no
// failed try: a repair caused again and again while it runs must not die of its first failure),
// and when that run was its last try and failed (the new cause is new work, as a dead letter's new
// cause queues it).
func TestJobTriesAfterANewCause(t *testing.T) {
	// run is what the job does on its n-th run (from 1): cause itself again, then fail or not.
	type run struct{ recause, fail bool }
	for _, tc := range []struct {
		name   string
		runs   map[int]run
		rounds int
		want   []int
	}{
		{"caused again while it succeeds", map[int]run{1: {recause: true}, 2: {recause: true}, 3: {fail: true}}, 4, []int{1, 1, 1, 2}},
		{"caused again while its last try fails", map[int]run{1: {fail: true}, 2: {recause: true, fail: true}, 3: {fail: true}}, 5, []int{1, 2, 1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				clk := storetest.NewClock()
				e := engines(t, b, 1, clk, jobs.Options{MaxTries: 2})[0]
				var tries []int
				e.Handle("j", func(_ context.Context, j jobs.Job) error {
					tries = append(tries, j.Try)
					r := tc.runs[len(tries)]
					if r.recause {
						if err := e.Enqueue(ctx, jobs.Job{ID: "x", Kind: "j"}); err != nil {
							return err
						}
					}
					if r.fail {
						return errors.New("boom")
					}
					return nil
				})
				if err := e.Enqueue(ctx, jobs.Job{ID: "x", Kind: "j"}); err != nil {
					t.Fatal(err)
				}
				for range tc.rounds {
					runDue(t, e)
					clk.Add(time.Hour)
				}
				if !slices.Equal(tries, tc.want) {
					t.Errorf("tries %v, want %v: a run for a new cause counts from 1, and its failure is retried", tries, tc.want)
				}
				if dead, _ := e.Dead(ctx, 10); len(dead) != 0 {
					t.Errorf("dead letters %+v, want none", dead)
				}
			})
		})
	}
}

// TestJobOutcomeSentAgainAfterANewClaim: the outcome of a run that succeeded while its job was
// caused again, sent again (go-redis resends a script whose reply was lost) after the job's next
// claim, changes nothing: the claims keep their own numbers while the tries start afresh, so the
// old outcome does not end the new claim's lease or drop the job, and the new run's failure is
// retried.
func TestJobOutcomeSentAgainAfterANewClaim(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		e := engines(t, b, 1, clk, jobs.Options{MaxTries: 3})[0]
		var runs atomic.Int32
		e.Handle("j", func(context.Context, jobs.Job) error { runs.Add(1); return nil })
		if err := e.Enqueue(ctx, jobs.Job{ID: "x", Kind: "j"}); err != nil {
			t.Fatal(err)
		}
		first, err := e.Claim(ctx, 1024)
		if err != nil || len(first) != 1 {
			t.Fatalf("first claim: %v %v", first, err)
		}
		if err := e.Enqueue(ctx, jobs.Job{ID: "x", Kind: "j"}); err != nil { // caused again while it runs
			t.Fatal(err)
		}
		if err := e.Finish(ctx, first[0], "ok"); err != nil {
			t.Fatal(err)
		}
		second, err := e.Claim(ctx, 1024)
		if err != nil || len(second) != 1 {
			t.Fatalf("second claim: %v %v", second, err)
		}
		if second[0].Try != 1 {
			t.Errorf("the run after a success is try %d, want 1", second[0].Try)
		}
		if err := e.Finish(ctx, first[0], "ok"); err != nil { // the first outcome, sent again
			t.Fatal(err)
		}
		if err := e.Finish(ctx, second[0], "retry"); err != nil { // the second run failed
			t.Fatal(err)
		}
		clk.Add(time.Minute)
		runDue(t, e)
		if n := runs.Load(); n != 1 {
			t.Fatalf("the failed run was retried %d times, want once: the old outcome ended its claim", n)
		}
	})
}

// TestJobOutcomeSentAgainAfterTheJobCameBack: the outcome of a run that ended its job, sent
// again (go-redis resends a script whose reply was lost) after the job was caused again and
// claimed anew, changes nothing: the new job's claims count from 1 again, as the first's did,
// yet the old outcome must not pass for the new claim's — it would end its lease and drop the
// job, so that the new run's failure was never retried.
func TestJobOutcomeSentAgainAfterTheJobCameBack(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		e := engines(t, b, 1, clk, jobs.Options{MaxTries: 3})[0]
		var runs atomic.Int32
		e.Handle("j", func(context.Context, jobs.Job) error { runs.Add(1); return nil })
		if err := e.Enqueue(ctx, jobs.Job{ID: "x", Kind: "j"}); err != nil {
			t.Fatal(err)
		}
		first, err := e.Claim(ctx, 1024)
		if err != nil || len(first) != 1 {
			t.Fatalf("first claim: %v %v", first, err)
		}
		if err := e.Finish(ctx, first[0], "ok"); err != nil { // done: the job is gone
			t.Fatal(err)
		}
		clk.Add(time.Second)
		if err := e.Enqueue(ctx, jobs.Job{ID: "x", Kind: "j"}); err != nil { // caused again
			t.Fatal(err)
		}
		second, err := e.Claim(ctx, 1024)
		if err != nil || len(second) != 1 {
			t.Fatalf("second claim: %v %v", second, err)
		}
		if err := e.Finish(ctx, first[0], "ok"); err != nil { // the first outcome, sent again
			t.Fatal(err)
		}
		if err := e.Finish(ctx, second[0], "retry"); err != nil { // the second run failed
			t.Fatal(err)
		}
		clk.Add(time.Minute)
		runDue(t, e)
		if n := runs.Load(); n != 1 {
			t.Fatalf("the failed run was retried %d times, want once: the old outcome ended the new claim", n)
		}
	})
}

// TestJobsRefusedByAFullRedisWait: a job whose writes a full Redis refused (KindStorageFull) has
// not failed: it is tried again after Options.Wait, as often as it takes, without counting a try,
// so it never becomes a dead letter and runs once Redis has room. A failure of its own after
// that still has its MaxTries.
func TestJobsRefusedByAFullRedisWait(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		e := engines(t, b, 1, clk, jobs.Options{MaxTries: 2, Wait: time.Minute})[0]
		full := &store.Error{Kind: store.KindStorageFull, Msg: "the store is full"}
		var tries []int
		e.Handle("write", func(_ context.Context, j jobs.Job) error {
			tries = append(tries, j.Try)
			switch {
			case len(tries) <= 5:
				return fmt.Errorf("write: %w", full)
			case len(tries) == 6:
				return errors.New("boom")
			}
			return nil
		})
		if err := e.Enqueue(ctx, jobs.Job{ID: "w", Kind: "write"}); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if n := runDue(t, e); n != 1 {
				t.Fatalf("try %d on a full Redis: %d jobs ran, want 1", i+1, n)
			}
			if n := runDue(t, e); n != 0 {
				t.Fatalf("a job refused for want of room was tried again at once")
			}
			clk.Add(time.Minute)
		}
		if dead, _ := e.Dead(ctx, 10); len(dead) != 0 {
			t.Fatalf("a job refused by a full Redis became a dead letter: %+v", dead)
		}
		runDue(t, e) // its own failure: retried after the first backoff
		clk.Add(time.Second)
		runDue(t, e)
		if !slices.Equal(tries, []int{1, 1, 1, 1, 1, 1, 2}) {
			t.Fatalf("tries %v, want five refused tries not counted, then tries 1 and 2", tries)
		}
		if c, err := e.Census(ctx); err != nil || c != (jobs.Census{}) {
			t.Fatalf("queues after the job ran: %+v %v, want empty", c, err)
		}
	})
}

// TestJobCausedAgainAfterItsDeadLetterRuns: a job set aside as a dead letter is caused again
// (enqueued, scheduled or brought forward): the new cause runs it, with its tries counted anew,
// and it leaves the dead letters.
func TestJobCausedAgainAfterItsDeadLetterRuns(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause func(e *jobs.Engine, j jobs.Job) error
	}{
		{"enqueue", func(e *jobs.Engine, j jobs.Job) error { return e.Enqueue(context.Background(), j) }},
		{"schedule", func(e *jobs.Engine, j jobs.Job) error { return e.Schedule(context.Background(), j) }},
		{"due by", func(e *jobs.Engine, j jobs.Job) error { return e.DueBy(context.Background(), j) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				clk := storetest.NewClock()
				e := engines(t, b, 1, clk, jobs.Options{MaxTries: 2})[0]
				var tries []int
				e.Handle("k", func(_ context.Context, j jobs.Job) error {
					tries = append(tries, j.Try)
					if len(tries) <= 3 {
						return errors.New("boom")
					}
					return nil
				})
				j := jobs.Job{ID: "x", Kind: "k", Arg: "a"}
				if err := e.Enqueue(ctx, j); err != nil {
					t.Fatal(err)
				}
				runDue(t, e)
				clk.Add(time.Second)
				runDue(t, e)
				if dead, err := e.Dead(ctx, 10); err != nil || len(dead) != 1 {
					t.Fatalf("dead letters %+v %v, want job x", dead, err)
				}
				j.Arg = "b"
				if err := tc.cause(e, j); err != nil {
					t.Fatal(err)
				}
				runDue(t, e) // fails once more: its first try since the new cause
				clk.Add(time.Second)
				runDue(t, e)
				if !slices.Equal(tries, []int{1, 2, 1, 2}) {
					t.Fatalf("tries %v, want 1 and 2, then 1 and 2 again after the new cause", tries)
				}
				if dead, err := e.Dead(ctx, 10); err != nil || len(dead) != 0 {
					t.Fatalf("dead letters after the job ran: %+v %v, want none", dead, err)
				}
				if c, err := e.Census(ctx); err != nil || c != (jobs.Census{}) {
					t.Fatalf("queues after the job ran: %+v %v, want empty", c, err)
				}
			})
		})
	}
}

// TestJobOfANewerReleaseWaitsForAProcessThatKnowsIt runs jobs queued by a newer release on a
// process of an older one, more often than MaxTries: one of a kind it has no handler for, one
// whose handler finds a step it does not know (jobs.ErrNotHere). Each is put back every time, its
// tries not counted, never a dead letter, and the newer process runs both.
func TestJobOfANewerReleaseWaitsForAProcessThatKnowsIt(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		es := engines(t, b, 2, clk, jobs.Options{MaxTries: 3, Wait: time.Minute})
		older, newer := es[0], es[1]
		older.Handle("steps", func(_ context.Context, j jobs.Job) error {
			return fmt.Errorf("step %q: %w", j.Arg, jobs.ErrNotHere)
		})
		var r recorder
		newer.Handle("new-kind", r.handle)
		newer.Handle("steps", r.handle)
		if err := newer.Enqueue(ctx, jobs.Job{ID: "j1", Kind: "new-kind", Arg: "x"},
			jobs.Job{ID: "j2", Kind: "steps", Arg: "new-step"}); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if n := runDue(t, older); n != 2 {
				t.Fatalf("claim %d by the older process: %d jobs, want 2", i, n)
			}
			if n := runDue(t, older); n != 0 {
				t.Fatalf("%d jobs due again at once after claim %d", n, i)
			}
			clk.Add(time.Minute)
		}
		if st := older.Stats(); st != (jobs.Stats{}) {
			t.Fatalf("the older process counted the jobs: %+v", st)
		}
		dead, err := older.Dead(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(dead) != 0 {
			t.Fatalf("dead letters: %+v", dead)
		}
		if n := runDue(t, newer); n != 2 {
			t.Fatalf("the newer process ran %d jobs, want 2", n)
		}
		got := r.runs()
		slices.Sort(got)
		if !slices.Equal(got, []string{"j1=x", "j2=new-step"}) {
			t.Fatalf("ran %v", got)
		}
		if st := newer.Stats(); st.Done != 2 || st.Failed != 0 {
			t.Fatalf("newer process's stats %+v", st)
		}
	})
}

// TestJobLongerThanItsLeaseRunsOnce: a job that runs longer than its lease keeps it, renewed
// while it runs, so that no other process claims it meanwhile, and its outcome ends it. Before
// leases were renewed, another process claimed it when its lease ended and ran it again, and
// again, each run's outcome refused for the newer claim: a job longer than its lease never
// ended, and ran on every process at once.
func TestJobLongerThanItsLeaseRunsOnce(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		const lease = 150 * time.Millisecond
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		prefix := storetest.Prefix()
		var runs atomic.Int32
		finished := make(chan struct{}, 8)
		var es []*jobs.Engine
		for range 2 { // two processes on the real clock, as leases are renewed on it
			e := b.NewStore(t, store.Options{Prefix: prefix, Jobs: jobs.Options{Lease: lease, Poll: 5 * time.Millisecond}}).Jobs()
			e.Handle("long", func(context.Context, jobs.Job) error {
				runs.Add(1)
				time.Sleep(4 * lease)
				finished <- struct{}{}
				return nil
			})
			es = append(es, e)
		}
		if err := es[0].Enqueue(ctx, jobs.Job{ID: "x", Kind: "long"}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, e := range es {
			wg.Go(func() { e.Run(ctx) })
		}
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Fatal("the job never finished")
		}
		time.Sleep(2 * lease) // time for a claim of a job whose outcome was refused
		cancel()
		wg.Wait()
		if n := runs.Load(); n != 1 {
			t.Errorf("the job ran %d times, want once", n)
		}
		if c, err := es[0].Census(context.Background()); err != nil || c != (jobs.Census{}) {
			t.Errorf("census %+v %v, want empty queues: the job's outcome ended it", c, err)
		}
	})
}
