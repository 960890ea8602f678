package readexec

import (
	"bytes"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// appendQuoted must write strings byte for byte as gqlgen's MarshalString does, so that a
// response is the same whichever executor wrote it.
func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain", `a "quoted" \ word`, "tab\tnew\nline\rret", "\x00\x01\x1f\x7f",
		"ünïcødé 😀", "\xff\xfe invalid utf-8", "</script>&",
		// Longer than a word, with what needs an escape before, at and after a word's edges.
		"0123456\"89abcdef\\hijklmn\x1fpqrstuvw", "01234567\n9abcdef0123456789", "\x7f\x80\xa0\xdf\xe0\xff\x20\x21\x5b\x5d 0123456789"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		graphql.MarshalString(s).MarshalGQL(&want)
		if got := appendQuoted(nil, s); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("appendQuoted(%q) = %s, gqlgen writes %s", s, got, want.Bytes())
		}
	})
}
