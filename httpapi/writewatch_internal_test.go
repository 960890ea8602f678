package httpapi

import (
	"testing"
	"time"
)

// TestWriteWatch checks that a write that takes the timeout is expired and that writes that end
// in time are not. The bounds are liveness bounds, generous for a loaded machine.
func TestWriteWatch(t *testing.T) {
	const timeout = 20 * time.Millisecond
	for _, tc := range []struct {
		name   string
		writes func(w *writeWatch)
		expire bool
	}{
		{"a write that does not end", func(w *writeWatch) { w.start() }, true},
		{"a write that ends late", func(w *writeWatch) { w.start(); time.Sleep(10 * timeout); w.end() }, true},
		{"writes that end in time", func(w *writeWatch) {
			for range 20 {
				w.start()
				w.end()
				time.Sleep(timeout / 4)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expired := make(chan struct{}, 1)
			w := watchWrites(timeout, func() { expired <- struct{}{} })
			defer w.stop()
			tc.writes(w)
			select {
			case <-expired:
				if !tc.expire {
					t.Error("expired writes that ended in time")
				}
			case <-time.After(10 * timeout):
				if tc.expire {
					t.Error("did not expire a write that took the timeout")
				}
			}
		})
	}
}
