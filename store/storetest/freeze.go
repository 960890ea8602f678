//go:build unix

package storetest

import (
	"os"
	"syscall"
	"testing"
)

// PrivateServer starts a redis-server for one test alone and stops it when the test ends, for
// tests that disrupt their server (see Freeze). Like RealServer it skips the test when
// redis-server is not on PATH, or fails it under REQUIRE_REAL_REDIS=1.
func PrivateServer(t testing.TB) *Server {
	t.Helper()
	s, err := StartServer()
	if err != nil {
		if os.Getenv("REQUIRE_REAL_REDIS") == "1" {
			t.Fatalf("REQUIRE_REAL_REDIS=1 but no real redis: %v", err)
		}
		t.Skipf("no real redis: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Freeze stops the server's process (SIGSTOP): its connections stay open and the kernel still
// accepts new ones, but nothing is answered, as when the machine under Redis stalls. thaw resumes
// it (SIGCONT); the test's cleanup thaws it too, so a failing test never leaves it stopped.
func (s *Server) Freeze(t testing.TB) (thaw func()) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("freeze redis-server: %v", err)
	}
	thaw = func() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }
	t.Cleanup(thaw)
	return thaw
}
