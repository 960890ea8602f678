package jsontext

import (
	"encoding/binary"
	"testing"
)

// Plain must find a byte that needs a look wherever it is in the word, whatever the other bytes.
func TestPlain(t *testing.T) {
	fill := []byte{' ', 'a', '!', '#', '[', ']', '~', 0x7f, 0x80, 0xc3, 0xff}
	for _, f := range fill {
		for pos := range 8 {
			for c := range 256 {
				var b [8]byte
				for i := range b {
					b[i] = f
				}
				b[pos] = byte(c)
				want := c >= 0x20 && c != '"' && c != '\\'
				if got := Plain(binary.LittleEndian.Uint64(b[:])); got != want {
					t.Fatalf("Plain(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}
