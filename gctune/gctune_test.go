package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name           string
		live, headroom uint64
		want           int
	}{
		{"small heap, large headroom", 4 * mib, 128 * mib, 3200},
		{"headroom not a multiple of the heap", 6 * mib, 128 * mib, 2133},
		{"heap larger than the headroom: Go's default", 512 * mib, 128 * mib, 100},
		{"heap equal to the headroom", 128 * mib, 128 * mib, 100},
		{"no headroom", 4 * mib, 0, 100},
		{"no collection yet: the goal is the headroom", 0, 128 * mib, 3200},
		{"tiny heap: the goal is the headroom", 10, 128 * mib, 3200},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Percent(c.live, c.headroom); got != c.want {
				t.Errorf("Percent(%d, %d) = %d, want %d", c.live, c.headroom, got, c.want)
			}
		})
	}
}

// gogc reads the GOGC percentage in effect.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// eventually waits up to two seconds, collecting, for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: GOGC is %d", what, gogc())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestPacing checks the pacing of the real collector: the goal follows the live heap after each
// collection, the largest headroom of the running tuners wins, and the last Stop puts back what
// was in effect before.
func TestPacing(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(80)) // a value to find again at the end
	const headroom = 256 << 20
	a := Start(headroom)
	want := func() int { return Percent(scanned(), headroom) }
	eventually(t, "after Start", func() bool { return gogc() == want() && gogc() > 100 })

	// The live heap grows: the percentage falls so that the goal stays live + headroom.
	before := gogc()
	ballast := make([][]byte, 64)
	for i := range ballast {
		ballast[i] = make([]byte, 1<<20)
	}
	eventually(t, "after the heap grew by 64 MiB", func() bool { return gogc() == want() && gogc() < before })
	runtime.KeepAlive(ballast)

	b := Start(2 * headroom)
	eventually(t, "with a second tuner of twice the headroom", func() bool { return gogc() == Percent(scanned(), 2*headroom) })
	b.Stop()
	eventually(t, "after the second stopped", func() bool { return gogc() == want() })
	a.Stop()
	a.Stop() // a second Stop is harmless
	if got := gogc(); got != 80 {
		t.Fatalf("after the last Stop GOGC is %d, want the 80 in effect before", got)
	}
	runtime.GC()
	runtime.GC()
	if got := gogc(); got != 80 {
		t.Fatalf("collections after the last Stop changed GOGC to %d", got)
	}

	// Started again before any collection: one chain of sentinels, still pacing.
	c := Start(headroom)
	defer c.Stop()
	eventually(t, "started again", func() bool { return gogc() == want() })
}

// TestHeadroomCountsStacks: with many goroutines, whose stacks GOGC applies to as well as the
// heap, the goal still stays the headroom above the live heap.
func TestHeadroomCountsStacks(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const headroom = 128 << 20
	tu := Start(headroom)
	defer tu.Stop()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 5000 {
		wg.Add(1)
		go func() { defer wg.Done(); deep(64, stop) }()
	}
	defer func() { close(stop); wg.Wait() }()
	read := func() (live, goal, stacks uint64) {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}, {Name: "/gc/scan/stack:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
	}
	eventually(t, "with 5,000 goroutines", func() bool {
		live, goal, stacks := read()
		// Within 2% of the headroom (the percentage is a whole number), once the stacks count.
		return stacks > 8<<20 && goal > live && goal-live <= headroom+headroom/50 && goal-live >= headroom-headroom/50
	})
}

// deep recurses n frames, each with some stack, and waits for stop.
func deep(n int, stop chan struct{}) byte {
	var pad [128]byte
	if n == 0 {
		<-stop
		return pad[0]
	}
	pad[n%128] = byte(n)
	return deep(n-1, stop) + pad[n%128]
}
