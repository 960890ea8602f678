package httpapi_test

import (
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestNullConditionIsAValidationFailure: a nullable variable with a default may be the if of
// @include or @skip, which takes a Boolean!; sent as an explicit null it is refused as a variable
// coercion failure (GRAPHQL_VALIDATION_FAILED), wherever the directive stands. It reached gqlgen's
// collection of the fields, which panicked: a 500 INTERNAL_SERVER_ERROR for one bad variable.
func TestNullConditionIsAValidationFailure(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		for _, tc := range []struct{ name, query string }{
			{"include on a root field", `query($x: Boolean = true) { posts @include(if: $x) { totalCount } }`},
			{"skip on a root field", `query($x: Boolean = false) { posts @skip(if: $x) { totalCount } }`},
			{"below a list", `query($x: Boolean = true) { posts { nodes { id title @include(if: $x) } } }`},
			{"on a field gqlgen runs", `query($x: Boolean = true) { posts { nodes { id reportCount @include(if: $x) } } }`},
			{"in a fragment", `query($x: Boolean = true) { posts { ...F } } fragment F on PostConnection { totalCount @skip(if: $x) }`},
			{"on an inline fragment", `query($x: Boolean = true) { posts { ... on PostConnection @include(if: $x) { totalCount } } }`},
			{"on a spread", `query($x: Boolean = true) { posts { ...F @include(if: $x) } } fragment F on PostConnection { totalCount }`},
			{"in a mutation", `mutation($x: Boolean = true) { logOut @include(if: $x) }`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := a.do("", tc.query, map[string]any{"x": nil})
				if r.code() != "GRAPHQL_VALIDATION_FAILED" || len(r.Errors) != 1 || len(r.Data) > 0 && string(r.Data) != "null" {
					t.Fatalf("status %d, code %q, errors %+v, data %s; want one GRAPHQL_VALIDATION_FAILED", r.Status, r.code(), r.Errors, r.Data)
				}
				// Left out, the default stands.
				if r := a.do("", tc.query, nil); r.code() == "GRAPHQL_VALIDATION_FAILED" || r.code() == "INTERNAL_SERVER_ERROR" {
					t.Errorf("the variable left out: %q %+v", r.code(), r.Errors)
				}
			})
		}
	})
}
