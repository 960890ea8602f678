package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// introspectionQuery is graphql-js's getIntrospectionQuery with every option on, as GraphiQL,
// Apollo's and urql's tooling send it.
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    description
    queryType { name kind }
    mutationType { name kind }
    subscriptionType { name kind }
    types { ...FullType }
    directives {
      name
      description
      isRepeatable
      locations
      args(includeDeprecated: true) { ...InputValue }
    }
  }
}
fragment FullType on __Type {
  kind
  name
  description
  specifiedByURL
  fields(includeDeprecated: true) {
    name
    description
    args(includeDeprecated: true) { ...InputValue }
    type { ...TypeRef }
    isDeprecated
    deprecationReason
  }
  inputFields(includeDeprecated: true) { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue {
  name
  description
  type { ...TypeRef }
  defaultValue
  isDeprecated
  deprecationReason
}
fragment TypeRef on __Type {
  kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType {
  kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } }
}`

// TestIntrospectionIsCostedByListSize checks that introspection lists count at the schema's
// sizes of them in the estimate: the full introspection query of GraphiQL and client tooling is
// answered, within the limit, while a hundred aliased deep introspections — 3.3 MB of answer
// each request, at a cost of a few hundred when every list counted 1 — are refused before they
// run.
func TestIntrospectionIsCostedByListSize(t *testing.T) {
	a := newAPI(t, storetest.Backends(t)[0], store.Options{})
	var full struct {
		Data struct {
			Schema struct {
				Types []struct{ Name string }
			} `json:"__schema"`
		}
		Errors     []gqlError
		Extensions struct {
			Cost struct{ Requested, Limit int }
		}
	}
	if err := json.Unmarshal(raw(t, a.h, "", introspectionQuery, nil), &full); err != nil {
		t.Fatal(err)
	}
	if len(full.Errors) > 0 || len(full.Data.Schema.Types) == 0 {
		t.Fatalf("the introspection query: %+v", full.Errors)
	}
	if c := full.Extensions.Cost; c.Requested > c.Limit || c.Requested < len(full.Data.Schema.Types) {
		t.Errorf("the introspection query costs %d of %d", c.Requested, c.Limit)
	}
	t.Logf("the introspection query costs %d of %d", full.Extensions.Cost.Requested, full.Extensions.Cost.Limit)

	deep := map[string]string{
		"__schema": `__schema { types { name fields { name args { name type { name ofType { name ofType { name } } } } type { name ofType { name ofType { name } } } } } }`,
		"__type":   `__type(name: "Query") { fields { name args { name type { name ofType { name } } } type { name ofType { name } } } }`,
	}
	for name, sel := range deep {
		var b strings.Builder
		b.WriteString("{")
		for i := range 100 {
			fmt.Fprintf(&b, " a%d: %s", i, sel)
		}
		b.WriteString(" }")
		if r := a.doRaw(b.String()); r.code() != httpapi.CodeTooComplex {
			t.Errorf("100 aliased %s: %+v, want %s", name, r.Errors, httpapi.CodeTooComplex)
		}
		if r := a.doRaw("{ " + sel + " }"); len(r.Errors) > 0 {
			t.Errorf("one %s: %+v", name, r.Errors)
		}
	}
}
