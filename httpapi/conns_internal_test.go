package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLimitConnections holds the limit's connections open and checks that one more is answered
// 503 at once, and that a closed connection frees its slot.
func TestLimitConnections(t *testing.T) {
	if busyBodyLen != "110" || len(busyBody) != 110 {
		t.Fatalf("busyBody is %d bytes; fix busyBodyLen", len(busyBody))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })}
	go func() { _ = srv.Serve(LimitConnections(ln, 2)) }()
	t.Cleanup(func() { _ = srv.Close() })
	dial := func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	status := func(c net.Conn) string {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		line, _ := bufio.NewReader(c).ReadString('\n')
		return strings.TrimSpace(line)
	}
	a, b := dial(), dial()
	if s := status(a); !strings.Contains(s, "200") {
		t.Fatalf("first connection: %q", s)
	}
	if s := status(b); !strings.Contains(s, "200") {
		t.Fatalf("second connection: %q", s)
	}
	if s := status(dial()); !strings.Contains(s, "503") {
		t.Fatalf("a connection over the limit: %q, want 503", s)
	}
	a.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if s := status(dial()); strings.Contains(s, "200") {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("after a close the slot is still taken: %q", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
