package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadAll checks that readAll reads a body whole whatever the Content-Length announced —
// exact, short, long, unknown, beyond presize — and into one allocation when it is exact.
func TestReadAll(t *testing.T) {
	long := strings.Repeat("x", presize+100)
	for _, tc := range []struct {
		name string
		body string
		size int64
	}{
		{"exact", `{"query":"{ viewer { id } }"}`, 29},
		{"empty", "", 0},
		{"unknown", `{"query":"{ viewer { id } }"}`, -1},
		{"announced short", `{"query":"{ viewer { id } }"}`, 3},
		{"announced long", `{"query":"{ viewer { id } }"}`, 1000},
		{"beyond presize", long, int64(len(long))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One byte a read: every read of the loop, and growth past a short announcement.
			got, err := readAll(iotest.OneByteReader(strings.NewReader(tc.body)), tc.size)
			if err != nil || string(got) != tc.body {
				t.Fatalf("readAll = %.40q, %v; want %.40q", got, err, tc.body)
			}
		})
	}
	// Longer than io.ReadAll's first buffer (512 bytes), which would grow it.
	body := []byte(`{"query":"{ viewer { id } }", "variables": {"pad": "` + strings.Repeat("x", 700) + `"}}`)
	rd := bytes.NewReader(body)
	if n := testing.AllocsPerRun(100, func() {
		rd.Reset(body)
		_, _ = readAll(rd, int64(len(body)))
	}); n != 1 {
		t.Errorf("readAll of a body of its announced size: %v allocations, want 1", n)
	}
	wantErr := errors.New("cut")
	if _, err := readAll(iotest.ErrReader(wantErr), 10); !errors.Is(err, wantErr) {
		t.Errorf("readAll of a failing body: %v, want %v", err, wantErr)
	}
}

// TestRequestBody checks that requestBody leaves a body for the next reader: capBody's as it is,
// without a copy, and any other after reading it once.
func TestRequestBody(t *testing.T) {
	const body = `{"query":"{ viewer { id } }"}`
	r := httptest.NewRequest("POST", "/query", nil)
	r.Body = newBufferedBody([]byte(body))
	for range 2 {
		got, err := requestBody(r)
		if err != nil || string(got) != body {
			t.Fatalf("requestBody = %q, %v; want %q", got, err, body)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = requestBody(r) }); n != 0 {
		t.Errorf("requestBody of a buffered body: %v allocations, want 0", n)
	}
	if got, _ := io.ReadAll(r.Body); string(got) != body {
		t.Errorf("the body read after requestBody = %q, want %q", got, body)
	}

	r = httptest.NewRequest("POST", "/query", strings.NewReader(body))
	for range 2 {
		if got, err := requestBody(r); err != nil || string(got) != body {
			t.Fatalf("requestBody of an unbuffered body = %q, %v; want %q", got, err, body)
		}
	}
	if got, _ := io.ReadAll(r.Body); string(got) != body {
		t.Errorf("the unbuffered body read after requestBody = %q, want %q", got, body)
	}
}
