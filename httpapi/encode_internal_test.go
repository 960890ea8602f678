package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestEncodeResponseIsJSON holds encodeResponse to encoding/json's bytes (without HTML escaping).
func TestEncodeResponseIsJSON(t *testing.T) {
	hasNext := true
	for _, tc := range []struct {
		name string
		resp graphql.Response
	}{
		{"data", graphql.Response{Data: json.RawMessage(`{"post":{"id":"post:1","title":"a \"b\" <c>"}}`)}},
		{"nil data", graphql.Response{}},
		{"null data with errors", graphql.Response{Data: json.RawMessage(`null`), Errors: gqlerror.List{
			{Message: "first must be 1..100", Path: ast.Path{ast.PathName("posts")}, Locations: []gqlerror.Location{{Line: 1, Column: 3}},
				Extensions: map[string]any{"code": "BAD_USER_INPUT"}},
			{Message: "second <&>"},
		}}},
		{"extensions", graphql.Response{Data: json.RawMessage(`{"a":1}`), Extensions: map[string]any{"cursor": "1-0", "n": 2}}},
		{"cost", graphql.Response{Data: json.RawMessage(`{"a":1}`), Extensions: map[string]any{"cost": map[string]int{"requested": 12, "limit": 25000}}}},
		{"cost and cursor", graphql.Response{Data: json.RawMessage(`{"a":1}`), Extensions: map[string]any{"cursor": "1700000000000-3", "cost": map[string]int{"requested": -1, "limit": 0}}}},
		{"empty extensions", graphql.Response{Data: json.RawMessage(`{"a":1}`), Extensions: map[string]any{}}},
		{"escaped extension string", graphql.Response{Data: json.RawMessage(`{"a":1}`), Extensions: map[string]any{"x": "a \"b\" \u2028 <é>\n"}}},
		{"escaped extension key", graphql.Response{Data: json.RawMessage(`{"a":1}`), Extensions: map[string]any{"<é>": 1}}},
		{"other extension values", graphql.Response{Data: json.RawMessage(`{"a":1}`), Extensions: map[string]any{"f": 1.5, "b": true, "n": nil, "l": []int{1}}}},
		{"errors and cost", graphql.Response{Data: json.RawMessage(`null`), Errors: gqlerror.List{{Message: "no"}}, Extensions: map[string]any{"cost": map[string]int{"requested": 1, "limit": 2}}}},
		{"incremental", graphql.Response{Data: json.RawMessage(`{}`), Label: "l", Path: ast.Path{ast.PathName("a"), ast.PathIndex(2)}, HasNext: &hasNext}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(&tc.resp); err != nil {
				t.Fatal(err)
			}
			want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			got, err := encodeResponse(&tc.resp)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encodeResponse = %s\njson.Marshal  = %s", got, want)
			}
		})
	}
}
