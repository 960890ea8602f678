package storetest

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// Goroutines counts the process's goroutines and returns their stacks, leaving out those serving
// miniredis connections (their number follows the Redis client's pool, not the code under test).
func Goroutines() (int, string) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var kept []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "miniredis/v2/server") {
			kept = append(kept, g)
		}
	}
	return len(kept), strings.Join(kept, "\n\n")
}

// WaitGoroutines waits up to timeout for the goroutine count to return to base, failing the test
// with every stack when it does not.
func WaitGoroutines(t testing.TB, base int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n, stacks := Goroutines()
		if n <= base {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, want at most %d:\n%s", n, base, stacks)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
