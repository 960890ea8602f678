package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// validJSON must accept exactly what json.Valid accepts: it decides which bodies are 400.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{
		``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `01`, `1.`, `1.5e`, `1.5e+3`, `-`, `1E-07`, `.5`,
		`true`, `tru`, `nulll`, `false `, ` null`, `{"a":1,}`, `[1,]`, `[,1]`, `{"a" 1}`, `{1:2}`,
		`{"query":"query($p:ID!){ post(id: $p) { id } }","variables":{"p":"post:1"}}`,
		`"\u00e9\ud83d\ude00"`, `"\u00G0"`, `"\x"`, `"tab	in"`, "\"\x7f\x80\xff\"", `"a\"b\\c\/d\be\ff\ng\rh\ti"`,
		`"0123456\"89abcdef\\hijklmn\u001fpq"`, `{"a":[1,{"b":null}],"c":"d"}`, "{\"a\":\"\x01\"}",
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat("}", 10000),
		strings.Repeat(`{"a":`, 10001) + `1` + strings.Repeat("}", 10001),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}
