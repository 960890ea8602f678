package httpapi

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestHeaderNamesCanonical holds every name the package's code looks up with header to its
// canonical form, which header, unlike http.Header.Get, does not make: a name written otherwise
// would never be found.
func TestHeaderNamesCanonical(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`\bheader\(r, "([^"]*)"\)`)
	seen := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(src), -1) {
			seen++
			if c := http.CanonicalHeaderKey(m[1]); c != m[1] {
				t.Errorf("%s: header(r, %q): write it %q", f, m[1], c)
			}
		}
	}
	if seen == 0 {
		t.Fatal("found no call of header")
	}
}

func TestHeaderLikeGet(t *testing.T) {
	r, _ := http.NewRequest(http.MethodPost, "/query", nil)
	r.Header.Add("content-type", "application/json")
	r.Header.Add("Accept", "a")
	r.Header.Add("Accept", "b")
	for _, name := range []string{"Content-Type", "Accept", "Upgrade"} {
		if got, want := header(r, name), r.Header.Get(name); got != want {
			t.Errorf("header(%q) = %q, Header.Get gives %q", name, got, want)
		}
	}
}
