// Package gctune paces Go's garbage collector for a server whose live heap is small next to what
// it allocates.
//
// Go starts a collection each time the heap has grown by GOGC percent (100 by default) of what was
// live after the last one. agora's live heap is small — a few MiB of connections and plans when
// its response cache is off — while an 800-comment thread page allocates 2.4 MB: with the default,
// the collector ran every few requests, and a profile of the thread page under load put a quarter of
// the process's CPU in it (marking, write barriers while it runs, sweeping). The work of a
// collection grows with the live heap, not with the garbage, so collecting less often costs
// only memory.
//
// A Tuner keeps the collector's goal at the live heap plus a fixed headroom: after every
// collection it sets GOGC to the percentage that the headroom is of what GOGC applies to — the
// live heap, the goroutine stacks and the globals (Go's goal is live + (live + stacks + globals)
// × GOGC/100) — never below Go's 100. The memory this costs is the headroom, known in advance, rather than a multiple of a
// live heap that grows with the response cache. A memory limit (GOMEMLIMIT) still applies: Go
// collects sooner as the heap nears it.
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// minPercent is Go's default GOGC: never less room than it gives.
const minPercent = 100

// minScanned is Go's smallest heap goal at GOGC=100 (4 MiB), which Go scales with GOGC. Below it
// — no collection has run yet, or almost nothing is live — what the collector scans counts as
// this much, so that the goal is the headroom, not a multiple of nothing.
const minScanned = 4 << 20

// Percent returns the GOGC percentage that puts the collector's goal headroom bytes above the
// live heap, given scanned, the bytes GOGC applies to (live heap, stacks and globals); never below
// 100, and scanned counts as at least 4 MiB.
func Percent(scanned, headroom uint64) int {
	scanned = max(scanned, minScanned)
	p := headroom/scanned*100 + headroom%scanned*100/scanned
	return int(max(p, minPercent))
}

// The collector is one per process, and so is its pacing: every running Tuner shares it, the
// largest headroom wins, and the last one to stop puts back the percentage in effect before the
// first started.
var pacing struct {
	sync.Mutex
	running map[*Tuner]bool
	saved   int    // GOGC before the first Tuner started
	chain   uint64 // the chain of sentinels of the current run of Tuners (see arm)
}

// Tuner paces the collector with a headroom above the live heap (see the package comment).
type Tuner struct {
	headroom uint64
}

// Start paces the collector with headroom bytes above the live heap until Stop is called.
func Start(headroom uint64) *Tuner {
	t := &Tuner{headroom: headroom}
	pacing.Lock()
	defer pacing.Unlock()
	if len(pacing.running) == 0 {
		pacing.running = map[*Tuner]bool{}
		pacing.saved = debug.SetGCPercent(minPercent)
		pacing.chain++
		arm()
	}
	pacing.running[t] = true
	tune()
	return t
}

// Stop ends t's pacing; when it was the last Tuner running, the percentage in effect before the
// first Tuner started is put back.
func (t *Tuner) Stop() {
	pacing.Lock()
	defer pacing.Unlock()
	if !pacing.running[t] {
		return
	}
	delete(pacing.running, t)
	if len(pacing.running) == 0 {
		debug.SetGCPercent(pacing.saved)
		return
	}
	tune()
}

// sentinel is garbage made to be collected: its finalizer runs after the collection that found
// it unreachable, which is how the pacing hears of every collection.
type sentinel struct {
	chain uint64
	_     *sentinel // a pointer, so that it is never a tiny allocation (those may never be finalized)
}

// arm makes the sentinel of the next collection. The caller holds pacing.
func arm() {
	runtime.SetFinalizer(&sentinel{chain: pacing.chain}, afterGC)
}

// afterGC runs after each collection while a Tuner runs: it sets the next goal and re-arms. A
// sentinel of an earlier run of Tuners (all stopped, then one started again before a collection)
// ends its chain, so that there is only ever one.
func afterGC(s *sentinel) {
	pacing.Lock()
	defer pacing.Unlock()
	if len(pacing.running) == 0 || s.chain != pacing.chain {
		return
	}
	tune()
	arm()
}

// tune sets GOGC from the live heap and the largest headroom of the running Tuners. The caller
// holds pacing.
func tune() {
	var headroom uint64
	for t := range pacing.running {
		headroom = max(headroom, t.headroom)
	}
	debug.SetGCPercent(Percent(scanned(), headroom))
}

// scanned returns what GOGC applies to: the heap the last collection found live, the stacks it
// scanned and the globals.
func scanned() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
	metrics.Read(s)
	var n uint64
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			n += v.Value.Uint64()
		}
	}
	return n
}
