package jobs_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// BenchmarkRun measures how many jobs one process claims and runs a second, with handlers that
// do nothing: the engine's own cost (claim, outcome) on a real redis-server.
func BenchmarkRun(b *testing.B) {
	srv := storetest.RealServer(b)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	b.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	st, err := store.New(ctx, rdb, store.Options{Prefix: storetest.Prefix(), Jobs: jobs.Options{Workers: 64}})
	if err != nil {
		b.Fatal(err)
	}
	e := st.Jobs()
	var ran atomic.Int64
	e.Handle("noop", func(context.Context, jobs.Job) error { ran.Add(1); return nil })
	const batch = 1000
	enqueue := func(from, n int) {
		js := make([]jobs.Job, n)
		for i := range js {
			js[i] = jobs.Job{ID: fmt.Sprint("noop:", from+i), Kind: "noop"}
		}
		if err := e.Enqueue(ctx, js...); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	for i := 0; i < b.N; i += batch {
		enqueue(i, min(batch, b.N-i))
	}
	b.StartTimer()
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() { defer close(done); e.Run(run) }()
	for ran.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	stop()
	<-done
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
}
