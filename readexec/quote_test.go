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
		"ünïcødé 😀", "\xff\xfe invalid utf-8", "</script>&"} {
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
