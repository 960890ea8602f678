package httpapi

import (
	"io"
	"net/http"
)

// A POST's body is read from the network once, by capBody, and then read by every layer that
// needs it — persisted queries, the response cache, the transport — as the bytes capBody kept:
// each used to read it again with io.ReadAll and put back a fresh reader, four copies of the
// body and six allocations a request for what one read gives.

// bufferedBody is a request body held in memory: a reader of its bytes that also hands them out
// without a copy (see requestBody).
type bufferedBody struct {
	b   []byte
	off int
}

// newBufferedBody returns a request body that reads b.
func newBufferedBody(b []byte) *bufferedBody { return &bufferedBody{b: b} }

// Read reads the bytes not read yet.
func (r *bufferedBody) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

// Close does nothing: the bytes are in memory.
func (r *bufferedBody) Close() error { return nil }

// requestBody returns what is left to read of a POST's body without consuming it: the bytes
// themselves when capBody buffered the body (their owner: the caller must not change them);
// otherwise the body read to its end, which then replaces r.Body for the readers after it.
func requestBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	if b, ok := r.Body.(*bufferedBody); ok {
		return b.b[b.off:], nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body = newBufferedBody(body)
	return body, err
}

// presize bounds the buffer readAll makes before the bytes arrive: a client may announce a
// Content-Length it never sends.
const presize = 64 << 10

// readAll is io.ReadAll into a buffer sized for size bytes (a request's Content-Length, -1 when
// unknown; at most presize) and the end of the body, so that a body of the size announced is read
// without growing the buffer; it reads any size.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size < 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, min(size, presize)+1) // +1: the read that meets the end needs room
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // longer than announced: grow as io.ReadAll does
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
