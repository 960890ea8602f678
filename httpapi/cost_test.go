package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agora/agora/graph"
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
		nestedOf := func(comments int) string {
			return fmt.Sprintf(`query($ids: [ID!]!) { nodes(ids: $ids) { ... on User { posts(first: 100) { nodes { id comments(first: %d) { nodes { id } } } } } } }`, comments)
		}
		nested := nestedOf(100)
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
		// One node's 100 posts with 10 comments each (gqlgen executes nodes: 2,302 at 1 a field,
		// 11,510 charged; with 100 comments each, 101,510, refused too).
		if r := a.do("", nestedOf(10), map[string]any{"ids": ids[:1]}); len(r.Errors) > 0 {
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

// TestCostByExecutor pins what operations are charged by the executor that runs them: readexec's
// pages at 1 a field, and the same pages with one field readexec does not plan (so gqlgen's
// executor runs them) at httpapi.GqlgenFieldCost a field — their fields, times the pages above
// them, not what fields cost beyond 1 for their reads of Redis (hideRead, activeUsers), which is
// charged once on both. Introspection is charged by the schema's sizes whatever the executor.
func TestCostByExecutor(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		tok, _ := a.signUp("reader")
		const gq = httpapi.GqlgenFieldCost
		types := len(graph.NewExecutableSchema(graph.Config{}).Schema().Types)
		for _, tc := range []struct {
			name, query     string
			vars            map[string]any
			cost, fieldCost int
		}{
			{"a page, readexec", `{ posts(first: 10) { nodes { title author { name } } } }`, nil, 41, 1},
			{"the page with reportCount, gqlgen", `{ posts(first: 10) { nodes { title author { name } reportCount } } }`, nil, 51 * gq, gq},
			{"a hideRead page, readexec", `{ posts(first: 10, hideRead: true) { nodes { title } } }`, nil, 21 + httpapi.HideReadCost, 1},
			{"the hideRead page with reportCount, gqlgen", `{ posts(first: 10, hideRead: true) { nodes { title reportCount } } }`, nil, 31*gq + httpapi.HideReadCost, gq},
			{"the field left out by a variable, readexec", `query($x: Boolean!) { posts(first: 10) { nodes { title reportCount @include(if: $x) } } }`, map[string]any{"x": false}, 31, 1},
			{"the field included by a variable, gqlgen", `query($x: Boolean!) { posts(first: 10) { nodes { title reportCount @include(if: $x) } } }`, map[string]any{"x": true}, 31 * gq, gq},
			// The directory with its active users (activeUsers' DAY window: 25 HyperLogLogs): 61
			// fields, 15,000 for Redis's reads (15,061 at 1 a field).
			{"the directory with its active users, gqlgen", `{ groups(first: 20) { nodes { name activeUsers } } }`, nil, 61*gq + 20*25*httpapi.ActiveUsersKeyCost, gq},
			{"introspection, gqlgen", `{ __schema { types { name } } }`, nil, 2 + types, gq},
			{"a mutation, gqlgen", `mutation { logOut }`, nil, gq, gq}, // last: it ends the session
		} {
			r := a.do(tok, tc.query, tc.vars)
			if len(r.Errors) > 0 {
				t.Errorf("%s: %+v", tc.name, r.Errors)
			}
			if c := r.Extensions.Cost; c.Requested != tc.cost || c.FieldCost != tc.fieldCost {
				t.Errorf("%s: cost %d, a field %d; want %d, a field %d", tc.name, c.Requested, c.FieldCost, tc.cost, tc.fieldCost)
			}
		}
	})
}

// TestCostNearTheLimitByExecutor: a page just under -max-complexity at 1 a field runs when
// readexec writes it, and the same size of page that gqlgen's executor runs is refused with
// QUERY_TOO_COMPLEX (before, 6,000 one-item pages of the posts' authors' posts were estimated at
// 24,101 and took 226 ms of CPU, against 20 ms for 6,000 one-comment pages on readexec: see
// BenchmarkCostPerUnit), with its charged cost in extensions.cost.
func TestCostNearTheLimitByExecutor(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		sixty := func(field string) string {
			var s strings.Builder
			s.WriteString("{ posts(first: 100) { nodes {")
			for i := range 60 {
				fmt.Fprintf(&s, " c%d: %s", i, field)
			}
			s.WriteString(" } } }")
			return s.String()
		}
		r := a.do("", sixty("comments(first: 1) { pageInfo { hasNextPage } }"), nil)
		if len(r.Errors) > 0 || r.Extensions.Cost.Requested != 18101 || r.Extensions.Cost.FieldCost != 1 {
			t.Errorf("6,000 comment pages on readexec: %+v, cost %+v; want 18,101 at 1 a field", r.Errors, r.Extensions.Cost)
		}
		r = a.do("", sixty("author { posts(first: 1) { pageInfo { hasNextPage } } }"), nil)
		if r.code() != httpapi.CodeTooComplex || r.Data != nil && string(r.Data) != "null" {
			t.Fatalf("6,000 pages of the authors' posts on gqlgen: %q, %+v", r.code(), r.Errors)
		}
		if c := r.Extensions.Cost; c.Requested != 24101*httpapi.GqlgenFieldCost || c.FieldCost != httpapi.GqlgenFieldCost {
			t.Errorf("the refused page reports cost %+v, want %d at %d a field", c, 24101*httpapi.GqlgenFieldCost, httpapi.GqlgenFieldCost)
		}
	})
}

// TestCostOfVariablesRefusedBeforeTheExecutorIsKnown: readexec plans an operation with its
// variables (the directives that name them), so an operation whose variables do not fit is
// refused by validation, as before, and reports its cost at 1 a field, without being planned.
func TestCostOfVariablesRefusedBeforeTheExecutorIsKnown(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		const q = `query($x: Boolean!) { posts(first: 10) { nodes { title reportCount @include(if: $x) } } }`
		for _, vars := range []map[string]any{{"x": "yes"}, nil} {
			r := a.do("", q, vars)
			if r.code() != "GRAPHQL_VALIDATION_FAILED" || r.Extensions.Cost.Requested != 31 || r.Extensions.Cost.FieldCost != 1 {
				t.Errorf("variables %v: %q %+v, cost %+v; want GRAPHQL_VALIDATION_FAILED, 31 at 1 a field", vars, r.code(), r.Errors, r.Extensions.Cost)
			}
		}
	})
}

// TestCostOfMergedReports: reports without a group merges, for a moderator, a page of each of up
// to 100 groups they moderate, whatever page it returns. Measured on a real Redis before the fix
// (a moderator of 100 groups holding 2,000 reports): 100 aliased pages of one report, each after
// a cursor, were estimated at 1,000 and sent 10,694 commands, 216 to 247 ms of Redis's one
// thread. They are refused before anything runs; one merged page, and one group's pages, still
// run.
func TestCostOfMergedReports(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		tok, _ := a.signUp("moder")
		a.makeModerator(b, "go", "moder")
		var s strings.Builder
		s.WriteString("{")
		for i := range 100 {
			fmt.Fprintf(&s, " a%d: reports(first: 1, after: \"c%d\") { totalCount }", i, i)
		}
		s.WriteString("}")
		if r := a.do(tok, s.String(), nil); r.code() != httpapi.CodeTooComplex {
			t.Errorf("100 aliased merged pages: %q (cost %d), want %s", r.code(), r.Extensions.Cost.Requested, httpapi.CodeTooComplex)
		}
		var g strings.Builder
		g.WriteString("{")
		for i := range 100 {
			fmt.Fprintf(&g, " a%d: reports(group: \"go\", first: 1) { totalCount }", i)
		}
		g.WriteString("}")
		for _, q := range []string{
			`{ reports(first: 20) { totalCount nodes { id reason post { id } } } }`,
			`query($g: String) { reports(group: $g, first: 20) { nodes { id } } }`,
			g.String(),
		} {
			if r := a.do(tok, q, map[string]any{"g": "go"}); len(r.Errors) > 0 {
				t.Errorf("%s: %+v", q, r.Errors)
			}
		}
	})
}
