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

// TestCostOfFieldsThatReadMoreThanTheirPage sends the documents of a hostile client that read
// far more than their estimate said, and checks that they are refused before anything runs,
// while a reasonable use of the same fields still runs. Measured on a real Redis before the fix
// (100 groups joined, 100 posts each, 120 posts marked read): 100 aliased groupFeed pages were
// estimated at 1,868 and sent 30,161 commands (130 ms of Redis CPU); 100 aliased hideRead pages
// were estimated at 1,868 and cost 23 ms of Redis CPU; nodes(ids:) with 100 ids cost as one id,
// so a page of 100 × 100 comments under each of 100 users (a million comments) was estimated
// at 20,302; and Group.activeUsers, a PFCOUNT of up to 31 HyperLogLogs (925 µs of Redis CPU each
// for a month of a busy group's dense ones, redis-cli against redis-server 7.0), cost 1, so 99
// aliased month counts on each of 100 groups (9,900 PFCOUNTs, about 9 s of Redis's one thread)
// were estimated at 10,001; notifications(unreadOnly: true), which walks the whole inbox (500
// notifications) in one script, 2.1 to 4.4 ms of Redis CPU, cost as a plain page, so 99 aliased
// ones (210 ms of Redis's one thread) were estimated at 9,999.
func TestCostOfFieldsThatReadMoreThanTheirPage(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		sorts := []string{"NEW", "HOT", "TOP", "ACTIVE", "CONTROVERSIAL", "MOST_COMMENTS"}
		aliased := func(field string) string {
			var s strings.Builder
			s.WriteString("{")
			for i := range 100 {
				switch field {
				case "notifications":
					fmt.Fprintf(&s, " a%d: notifications(unreadOnly: true, first: %d) { pageInfo { hasNextPage } }", i, 1+i)
				default:
					fmt.Fprintf(&s, " a%d: %s(sort: %s, first: %d%s) { pageInfo { hasNextPage } }", i, field, sorts[i%len(sorts)], 1+i/6, map[bool]string{true: ", hideRead: true"}[field == "posts"])
				}
			}
			s.WriteString("}")
			return s.String()
		}
		tok, id := a.signUp("reader")
		ids := make([]string, 100)
		for i := range ids {
			ids[i] = id
		}
		const nested = `query($ids: [ID!]!) { nodes(ids: $ids) { ... on User { posts(first: 100) { nodes { id comments(first: 100) { nodes { id } } } } } } }`
		var m strings.Builder
		m.WriteString("{ groups(first: 100) { nodes {")
		for i := range 99 {
			fmt.Fprintf(&m, " m%d: activeUsers(window: MONTH)", i)
		}
		m.WriteString(" } } }")
		months := m.String()
		for _, tc := range []struct {
			name, query string
			vars        map[string]any
		}{
			{"100 aliased group feeds", aliased("groupFeed"), nil},
			{"100 aliased hideRead pages", aliased("posts"), nil},
			{"100 aliased pages of unread notifications", aliased("notifications"), nil},
			{"a million comments under 100 nodes", nested, map[string]any{"ids": ids}},
			{"99 month counts of 100 groups", months, nil},
		} {
			if r := a.do(tok, tc.query, tc.vars); r.code() != httpapi.CodeTooComplex {
				t.Errorf("%s: %q (cost %d), want %s", tc.name, r.code(), r.Extensions.Cost.Requested, httpapi.CodeTooComplex)
			}
		}
		for _, q := range []string{
			`{ groupFeed(first: 20, hideRead: true) { nodes { id title } } }`,
			`{ posts(first: 20, hideRead: true) { nodes { id title } } }`,
			`{ groups(first: 20) { nodes { name activeUsers } } }`,
			`{ notifications(first: 20, unreadOnly: true) { nodes { id } } }`,
		} {
			if r := a.do(tok, q, nil); len(r.Errors) > 0 {
				t.Errorf("%s: %+v", q, r.Errors)
			}
		}
		if r := a.do("", nested, map[string]any{"ids": ids[:1]}); len(r.Errors) > 0 {
			t.Errorf("one node: %+v", r.Errors)
		}
	})
}

// TestUnknownNamesAreRefusedBeforeValidation: validation reports every field and argument the
// schema does not have, each with suggestions (the edit distance of its name to every field or
// argument of its type), so before the fix 2 KB of unknown fields cost 4 to 5 ms of CPU and 1.3 MB
// of allocations, and answered 420 errors in 63 KB (20 KB: 3,500 errors, 36 ms); past
// httpapi.MaxUnknownNames the document is refused with one error before validation runs, while a
// few typos still get validation's own errors with their suggestions.
func TestUnknownNamesAreRefusedBeforeValidation(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		many := func(format string) string {
			var s strings.Builder
			for i := 0; s.Len() < 2000; i++ {
				fmt.Fprintf(&s, format, i)
			}
			return s.String()
		}
		for _, tc := range []struct{ name, query string }{
			{"unknown root fields", "{" + many("p%d ") + "}"},
			{"unknown fields of a post", "{posts{nodes{" + many("t%d ") + "}}}"},
			{"unknown arguments", "{posts(" + many("a%d:1 ") + "){totalCount}}"},
			{"unknown fields in a fragment", "{...F} fragment F on Query{" + many("p%d ") + "}"},
			{"unknown fields in an inline fragment", "{node(id:\"x\"){...on Post{" + many("t%d ") + "}}}"},
		} {
			r := a.do("", tc.query, nil)
			if r.code() != "GRAPHQL_VALIDATION_FAILED" || len(r.Errors) != 1 || r.Data != nil {
				t.Errorf("%s: %d errors, the first %q, data %s; want one GRAPHQL_VALIDATION_FAILED", tc.name, len(r.Errors), r.code(), r.Data)
			}
		}
		r := a.do("", `{posts(frist: 2){nodes{titel author{nmae}}}}`, nil)
		if b, _ := json.Marshal(r.Errors); len(r.Errors) != 3 || !strings.Contains(string(b), `Did you mean \"title\"`) {
			t.Errorf("a few typos: %+v, want validation's three errors with suggestions", r.Errors)
		}
		if r := a.do("", `{posts{nodes{__typename title}} __typename}`, nil); len(r.Errors) > 0 {
			t.Errorf("__typename: %+v", r.Errors)
		}
	})
}

// TestRequestErrorsAreCapped: validation reports every unused variable and fragment, so before the
// fix 45 KB of unused fragments (under the token limit) were answered with 1,281 errors, 180 KB,
// and 20 KB of unused variables with 1,919; the first httpapi.MaxRequestErrors are kept and one
// more error counts the rest.
func TestRequestErrorsAreCapped(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		many := func(n int, format string) string {
			var s strings.Builder
			for i := range n {
				fmt.Fprintf(&s, format, i)
			}
			return s.String()
		}
		for _, tc := range []struct {
			name, query string
			errors      int
		}{
			{"300 unused fragments", "{__typename} " + many(300, "fragment f%d on Query{__typename} "), httpapi.MaxRequestErrors + 1},
			{"300 unused variables", "query(" + many(300, "$v%d:Int ") + "){__typename}", httpapi.MaxRequestErrors + 1},
			{"3 unused variables", "query(" + many(3, "$v%d:Int ") + "){__typename}", 3},
		} {
			r := a.do("", tc.query, nil)
			if len(r.Errors) != tc.errors || r.Data != nil || r.code() != "GRAPHQL_VALIDATION_FAILED" {
				t.Errorf("%s: %d errors (%q), data %s; want %d", tc.name, len(r.Errors), r.code(), r.Data, tc.errors)
				continue
			}
			if last := r.Errors[len(r.Errors)-1]; tc.errors > httpapi.MaxRequestErrors && (!strings.Contains(last.Message, "more errors are left out") || last.Extensions["code"] != "GRAPHQL_VALIDATION_FAILED") {
				t.Errorf("%s: the last error is %+v, want the count of those left out", tc.name, last)
			}
		}
	})
}
