package httpapi_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// fragmentChain returns a document of n fragments, each spreading the next twice, the last one
// selecting end: 2^n spreads when expanded, in about 45 bytes per fragment.
func fragmentChain(op string, n int, end string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s { ...F0 }", op)
	for i := range n {
		fmt.Fprintf(&b, " fragment F%d on Query { ...F%d ...F%d }", i, i+1, i+1)
	}
	fmt.Fprintf(&b, " fragment F%d on Query { %s }", n, end)
	return b.String()
}

// TestFragmentBombsAreRefused sends chains of 40 fragments that each spread the next twice —
// 2^40 spreads — over HTTP and as a WebSocket subscribe, and checks that each is answered:
// refused by validation when the chain ends in an unknown fragment or a cycle, by its cost when
// it ends in fields. The limits used to walk every spread (an hour of CPU, where
// 1 KB of it took 8 s); a fragment that nothing spreads was not measured at all, and validation
// compared its 9,990 selections pairwise.
func TestFragmentBombsAreRefused(t *testing.T) {
	a := newAPI(t, storetest.Backends(t)[0], store.Options{})
	for _, tc := range []struct {
		name, query, code string
	}{
		{"unknown fragment at the end", fragmentChain("query", 40, "...Unknown"), "GRAPHQL_VALIDATION_FAILED"},
		{"self-spread at the end", fragmentChain("query", 40, "...F40"), "GRAPHQL_VALIDATION_FAILED"},
		{"mutual cycle", fragmentChain("query", 40, "...F0"), "GRAPHQL_VALIDATION_FAILED"},
		{"cycle through fields", fragmentChain("query", 40, "a: viewer { ...F0 } b: viewer { ...F0 }"), httpapi.CodeTooComplex},
		{"a field at the end", fragmentChain("query", 40, "__typename"), httpapi.CodeTooComplex},
		{"mutation", fragmentChain("mutation", 40, "...Unknown"), "GRAPHQL_VALIDATION_FAILED"},
		{"a fragment nothing spreads", "{ __typename } fragment U on Query {" + strings.Repeat(" __typename", 9990) + " }", httpapi.CodeTooRepetitive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for try := range 2 { // the second from the checks kept for the document
				if r := a.doRaw(tc.query); r.code() != tc.code {
					t.Fatalf("try %d: %+v, want code %s", try+1, r.Errors, tc.code)
				}
			}
		})
	}
	for i, proto := range protos {
		t.Run(proto, func(t *testing.T) {
			// A fresh document per transport, so that none is measured from the shapes kept.
			s := subscribe(t, a.srv.URL, proto, "", fragmentChain("subscription", 40, "...Unknown")+" # "+strconv.Itoa(i), nil)
			defer s.close()
			if r, _ := s.result(t); r.code() != "GRAPHQL_VALIDATION_FAILED" {
				t.Errorf("got %+v, want GRAPHQL_VALIDATION_FAILED", r)
			}
		})
	}
}
