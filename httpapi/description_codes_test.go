package httpapi_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// documentedCodes reads the error codes of docs/API.md's error-code table: the backquoted words
// of its first column.
func documentedCodes(t *testing.T) map[string]bool {
	t.Helper()
	doc, err := os.ReadFile("../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "### Error codes")
	if !ok {
		t.Fatal("docs/API.md has no error-code table")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	codes := map[string]bool{}
	tick := regexp.MustCompile("`([A-Z_]+)`")
	for line := range strings.Lines(table) {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, m := range tick.FindAllStringSubmatch(first, -1) {
			codes[m[1]] = true
		}
	}
	if !codes["BAD_USER_INPUT"] || !codes["RATE_LIMITED"] {
		t.Fatalf("the error-code table reads as %v", codes)
	}
	return codes
}

// TestDescriptionsNameDocumentedCodes: a word means one thing. Every error code the schema's
// descriptions name — an upper-case word that is not an enum value of the schema — is one of the
// codes of docs/API.md's table, the code the server answers with.
func TestDescriptionsNameDocumentedCodes(t *testing.T) {
	codes := documentedCodes(t)
	a := newAPI(t, storetest.Backends(t)[0], store.Options{})
	var d struct {
		Schema struct {
			Types []struct {
				Name, Description string
				Fields            []struct {
					Name, Description string
					Args              []struct{ Name, Description string }
				}
				InputFields []struct{ Name, Description string }
				EnumValues  []struct{ Name, Description string }
			}
		} `json:"__schema"`
	}
	a.do("", introspectionQuery, nil).decode(t, &d)
	enums := map[string]bool{}
	texts := map[string]string{} // where → description
	for _, ty := range d.Schema.Types {
		texts[ty.Name] = ty.Description
		for _, v := range ty.EnumValues {
			enums[v.Name] = true
			texts[ty.Name+"."+v.Name] = v.Description
		}
		for _, f := range ty.Fields {
			texts[ty.Name+"."+f.Name] = f.Description
			for _, arg := range f.Args {
				texts[ty.Name+"."+f.Name+"("+arg.Name+")"] = arg.Description
			}
		}
		for _, f := range ty.InputFields {
			texts[ty.Name+"."+f.Name] = f.Description
		}
	}
	word := regexp.MustCompile(`\b[A-Z]{2,}(?:_[A-Z]+)+\b|\b[A-Z]{6,}\b`)
	for where, text := range texts {
		for _, w := range word.FindAllString(text, -1) {
			if !codes[w] && !enums[w] && w != "README" {
				t.Errorf("%s names %s, which is neither a documented error code nor an enum value: %q", where, w, text)
			}
		}
	}
}
