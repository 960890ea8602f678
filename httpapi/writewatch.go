package httpapi

import (
	"sync"
	"sync/atomic"
	"time"
)

// writeWatch bounds how long one write to a streaming client may take, without a timer per
// write: the writer marks where each write starts and ends, and one timer per stream looks at the
// write under way when it could have taken the timeout, and calls expire (which must make the
// write fail) when it has.
type writeWatch struct {
	timeout time.Duration
	expire  func()
	born    time.Time
	began   atomic.Int64 // when the write under way began, in ns since born, plus one; 0: none

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// watchWrites starts watching the writes of a stream.
func watchWrites(timeout time.Duration, expire func()) *writeWatch {
	w := &writeWatch{timeout: timeout, expire: expire, born: time.Now()}
	w.mu.Lock()
	w.timer = time.AfterFunc(timeout, w.check)
	w.mu.Unlock()
	return w
}

// start marks the start of a write.
func (w *writeWatch) start() { w.began.Store(int64(time.Since(w.born)) + 1) }

// end marks the end of the write under way.
func (w *writeWatch) end() { w.began.Store(0) }

// check expires the write under way if it has taken the timeout, and otherwise looks again when
// it, or the next write, could have.
func (w *writeWatch) check() {
	wait := w.timeout
	if b := w.began.Load(); b != 0 {
		busy := time.Since(w.born) - time.Duration(b-1)
		if busy >= wait {
			w.expire()
			return
		}
		wait -= busy
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.timer.Reset(wait)
	}
}

// stop ends the watch.
func (w *writeWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.timer.Stop()
}
