// Package jsontext holds the test by which agora's JSON writer (readexec) and its reader of
// request bodies (httpapi) pass over the text of a string eight bytes at a time.
package jsontext

// A byte repeated in each byte of a word.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// Plain reports whether none of the eight bytes of w, read little-endian from the text of a
// JSON string, needs a second look: none is a control character (below 0x20), a quote or a
// backslash. A byte below n shows as a high bit of (w - n·ones) &^ w, and a byte equal to c as a
// zero byte of w ^ c·ones, found the same way with n = 1 (the tests of "Bit Twiddling Hacks",
// exact as a whole word's answer).
func Plain(w uint64) bool {
	q, bs := w^('"'*ones), w^('\\'*ones)
	return ((w-0x20*ones)&^w|(q-ones)&^q|(bs-ones)&^bs)&highs == 0
}
