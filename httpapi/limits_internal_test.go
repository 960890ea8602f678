package httpapi

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/agora/agora/graph"
	"github.com/agora/agora/store"
)

// fragmentChain returns a document whose n fragments each spread the next twice, the last one
// selecting end: 2^n spreads when expanded.
func fragmentChain(op string, n int, end string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s { ...F0 }", op)
	for i := range n {
		fmt.Fprintf(&b, " fragment F%d on Query { ...F%d ...F%d }", i, i+1, i+1)
	}
	fmt.Fprintf(&b, " fragment F%d on Query { %s }", n, end)
	return b.String()
}

// selections counts the selections written in doc.
func selections(doc *ast.QueryDocument) int {
	n := 0
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			n++
			switch s := sel.(type) {
			case *ast.Field:
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			}
		}
	}
	for _, op := range doc.Operations {
		walk(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		walk(f.SelectionSet)
	}
	return n
}

// TestRepeatsWalkEachSpreadOnce checks that the repeats check of documents whose fragments spread
// each other many times — chains that end nowhere, cycles — visits a bounded number of selections
// per selection written, however long the chain: it used to walk every spread again each time
// it was spread, 2^n walks for n fragments.
func TestRepeatsWalkEachSpreadOnce(t *testing.T) {
	for _, tc := range []struct {
		name, op, end string
		over          bool
	}{
		{"unknown fragment at the end", "query", "...Unknown", false},
		{"self-spread at the end", "query", "...F16", false},
		{"mutual cycle", "query", "...F0", false},
		{"empty inline fragment at the end", "query", "... on Query { ...Unknown }", false},
		{"cycle through fields", "query", "a { ...F0 } b { ...F0 } c { ...F16 }", true},
		{"a field at the end", "query", "__typename", true},
		{"mutation", "mutation", "...F16", false},
		{"subscription", "subscription", "...Unknown", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: fragmentChain(tc.op, 16, tc.end)})
			if err != nil {
				t.Fatal(err)
			}
			lim := DefaultLimits
			g := newFragmentGraph(doc)
			rep := g.repeats([]ast.SelectionSet{doc.Operations[0].SelectionSet}, lim.MaxRepeats, lim.MaxDepth)
			if (rep.n > lim.MaxRepeats) != tc.over {
				t.Errorf("repeats %+v, want over the limit: %v", rep, tc.over)
			}
			auths := g.auths(doc.Operations[0].SelectionSet)
			// A fragment that selects nothing is walked once; one that selects fields is walked
			// until a name is over the limit, at most MaxRepeats + 1 times.
			bound := 4 * selections(doc)
			if tc.over {
				bound *= lim.MaxRepeats + 1
			}
			if g.walks > bound {
				t.Errorf("%d selections visited, more than %d (auths %d)", g.walks, bound, auths)
			}
		})
	}
}

// BenchmarkFragmentChain measures the limits check of chains of n fragments that each spread the
// next twice and end in an unknown fragment (2^n spreads when expanded), parsing included, and
// reports the time per spread written: constant as the chain grows, where it used to double with
// every fragment (n=16 took 2^17 walks, n=40 an hour).
//
//	go test ./httpapi -run '^$' -bench 'FragmentChain$'
func BenchmarkFragmentChain(b *testing.B) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	c := newLimitCheck(schema, DefaultLimits.withDefaults(), newDocCache(DefaultQueryCacheMiB<<20, nil), func(*graphql.OperationContext) bool { return true })
	for _, n := range []int{8, 16, 32, 64} {
		doc := fragmentChain("query", n, "...Unknown")
		spreads := 2*n + 2
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if err := c.MutateOperationParameters(context.Background(), &graphql.RawParams{Query: doc + " # " + strconv.Itoa(i)}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spreads), "ns/spread")
		})
	}
}

// TestUserPostsSortCost checks that User.posts costs UserPostsSortCost more in every order but
// NEW, however the order is given: left out (NEW), a literal, a variable, a variable's default
// or the schema's, or a variable of no known value (charged).
func TestUserPostsSortCost(t *testing.T) {
	measureOf := sortCostMeasure(t)
	const sel = `{ edges { node { id } } }`
	base := measureOf(`{ user(name: "a") { posts(first: 10) `+sel+` } }`, nil)
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		ranked      bool
	}{
		{"NEW literal", `{ user(name: "a") { posts(sort: NEW, first: 10) ` + sel + ` } }`, nil, false},
		{"TOP literal", `{ user(name: "a") { posts(sort: TOP, first: 10) ` + sel + ` } }`, nil, true},
		{"HOT variable", `query($s: PostSort) { user(name: "a") { posts(sort: $s, first: 10) ` + sel + ` } }`, map[string]any{"s": "HOT"}, true},
		{"NEW variable", `query($s: PostSort) { user(name: "a") { posts(sort: $s, first: 10) ` + sel + ` } }`, map[string]any{"s": "NEW"}, false},
		{"variable left out, default TOP_DAY", `query($s: PostSort = TOP_DAY) { user(name: "a") { posts(sort: $s, first: 10) ` + sel + ` } }`, nil, true},
		{"variable left out, no default", `query($s: PostSort) { user(name: "a") { posts(sort: $s, first: 10) ` + sel + ` } }`, nil, false},
		{"variable of no known value", `query($s: PostSort) { user(name: "a") { posts(sort: $s, first: 10) ` + sel + ` } }`, map[string]any{"s": 3}, true},
		{"site listing", `{ posts(sort: TOP, first: 10) ` + sel + ` }`, nil, false},
	} {
		want := base
		if tc.ranked {
			want += UserPostsSortCost
		}
		if tc.name == "site listing" {
			want = base - 1 // no user field
		}
		if got := measureOf(tc.query, tc.vars); got != want {
			t.Errorf("%s: cost %d, want %d", tc.name, got, want)
		}
	}
}

// sortCostMeasure returns a function that measures the cost of a query with variables, checking
// that a measure a variable decided is not kept for the document's next requests.
func sortCostMeasure(t *testing.T) func(query string, vars map[string]any) int {
	costs := newCostModel(graph.NewExecutableSchema(graph.Config{}).Schema())
	return func(query string, vars map[string]any) int {
		t.Helper()
		doc, err := parser.ParseQuery(&ast.Source{Input: query})
		if err != nil {
			t.Fatal(err)
		}
		m, fixed := measureOperation(costs, DefaultLimits.withDefaults(), doc, doc.Operations[0], vars)
		if byVar := strings.Contains(query, "$"); fixed == byVar {
			t.Fatalf("%s: measured as fixed %v, want %v", query, fixed, !byVar)
		}
		return m.cost
	}
}

// TestUserCommentsSortCost checks that User.comments costs UserCommentsSortCost more in TOP,
// BEST and CONTROVERSIAL, and nothing more in NEW and OLD, however the order is given.
func TestUserCommentsSortCost(t *testing.T) {
	measureOf := sortCostMeasure(t)
	const sel = `{ edges { node { id } } }`
	base := measureOf(`{ user(name: "a") { comments(first: 10) `+sel+` } }`, nil)
	const byVar = `query($s: CommentSort) { user(name: "a") { comments(sort: $s, first: 10) ` + sel + ` } }`
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		ranked      bool
	}{
		{"NEW literal", `{ user(name: "a") { comments(sort: NEW, first: 10) ` + sel + ` } }`, nil, false},
		{"OLD literal", `{ user(name: "a") { comments(sort: OLD, first: 10) ` + sel + ` } }`, nil, false},
		{"TOP literal", `{ user(name: "a") { comments(sort: TOP, first: 10) ` + sel + ` } }`, nil, true},
		{"BEST variable", byVar, map[string]any{"s": "BEST"}, true},
		{"CONTROVERSIAL variable", byVar, map[string]any{"s": "CONTROVERSIAL"}, true},
		{"OLD variable", byVar, map[string]any{"s": "OLD"}, false},
		{"variable left out, default BEST", `query($s: CommentSort = BEST) { user(name: "a") { comments(sort: $s, first: 10) ` + sel + ` } }`, nil, true},
		{"variable left out, no default", byVar, nil, false},
		{"variable of no known value", byVar, map[string]any{"s": 3}, true},
		{"a post's comments", `{ post(id: "p") { comments(sort: BEST, first: 10) ` + sel + ` } }`, nil, false},
	} {
		want := base
		if tc.ranked {
			want += UserCommentsSortCost
		}
		got := measureOf(tc.query, tc.vars)
		if tc.name == "a post's comments" {
			if got >= base+UserCommentsSortCost {
				t.Errorf("%s: cost %d, want no ranking charge (base %d)", tc.name, got, base)
			}
			continue
		}
		if got != want {
			t.Errorf("%s: cost %d, want %d", tc.name, got, want)
		}
	}
}

// TestCostCountsWhatAFieldReads checks that the estimate charges what a field reads beyond what
// its page size says: a field that returns a list with no first argument costs its items at their
// bound (nodes(ids) at the number of ids, a post's groups at MaxGroupsPerPost, a group's moderators
// at MaxGroupModerators), hideRead its rounds, groupFeed the windows of its groups, and
// activeUsers the buckets its window counts, notifications with unreadOnly the walk of the inbox. Each used to cost as if it returned or read one item.
func TestCostCountsWhatAFieldReads(t *testing.T) {
	measureOf := sortCostMeasure(t)
	const sel = `{ nodes { id } }`
	page := measureOf(`{ posts(first: 10) `+sel+` }`, nil)
	inbox := measureOf(`{ notifications(first: 10) `+sel+` }`, nil)
	hundred := make([]any, 100)
	for i := range hundred {
		hundred[i] = "post:" + strconv.Itoa(i)
	}
	const byIDs = `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`
	const hideByVar = `query($h: Boolean) { posts(first: 10, hideRead: $h) ` + sel + ` }`
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		want        int
	}{
		{"nodes, three literal ids", `{ nodes(ids: ["a", "b", "c"]) { id } }`, nil, 1 + 3},
		{"nodes, one literal id", `{ nodes(ids: "a") { id } }`, nil, 1 + 1},
		{"nodes, 100 ids in a variable", byIDs, map[string]any{"ids": hundred}, 1 + 100},
		{"nodes, 2 ids in a variable", byIDs, map[string]any{"ids": hundred[:2]}, 1 + 2},
		{"nodes, one id in a variable, not a list", byIDs, map[string]any{"ids": "a"}, 1 + 1},
		{"nodes, ids of no known value", byIDs, map[string]any{"ids": map[string]any{"a": 1}}, 1 + 100},
		{"nodes, ids left out", byIDs, nil, 1 + 100},
		{"a post's groups", `{ post(id: "p") { groups { name } } }`, nil, 1 + 1 + store.MaxGroupsPerPost},
		{"a post's pins", `{ post(id: "p") { pinnedIn { name } } }`, nil, 1 + 1 + store.MaxGroupsPerPost},
		{"a group's moderators", `{ group(name: "g") { moderators { name } } }`, nil, 1 + 1 + store.MaxGroupModerators},
		{"hideRead false", `{ posts(first: 10, hideRead: false) ` + sel + ` }`, nil, page},
		{"hideRead true", `{ posts(first: 10, hideRead: true) ` + sel + ` }`, nil, page + HideReadCost},
		{"feed", `{ feed(first: 10) ` + sel + ` }`, nil, page + FeedCost + 10*FeedItemCost},
		{"feed hideRead true", `{ feed(first: 10, hideRead: true) ` + sel + ` }`, nil, page + FeedCost + 10*FeedItemCost + FeedHideReadCost},
		{"hideRead variable true", hideByVar, map[string]any{"h": true}, page + HideReadCost},
		{"hideRead variable false", hideByVar, map[string]any{"h": false}, page},
		{"hideRead variable left out", hideByVar, nil, page},
		{"hideRead variable default true", `query($h: Boolean = true) { posts(first: 10, hideRead: $h) ` + sel + ` }`, nil, page + HideReadCost},
		{"hideRead variable of no known value", hideByVar, map[string]any{"h": "yes"}, page + HideReadCost},
		{"groupFeed", `{ groupFeed(first: 10) ` + sel + ` }`, nil, page + GroupFeedCost + 10*GroupFeedItemCost},
		{"activeUsers, default DAY", `{ group(name: "g") { activeUsers } }`, nil, 1 + 1 + 25*ActiveUsersKeyCost},
		{"activeUsers HOUR", `{ group(name: "g") { activeUsers(window: HOUR) } }`, nil, 1 + 1 + 2*ActiveUsersKeyCost},
		{"activeUsers MONTH", `{ group(name: "g") { activeUsers(window: MONTH) } }`, nil, 1 + 1 + 31*ActiveUsersKeyCost},
		{"activeUsers YEAR variable", `query($w: Window) { group(name: "g") { activeUsers(window: $w) } }`, map[string]any{"w": "YEAR"}, 1 + 1 + 13*ActiveUsersKeyCost},
		{"activeUsers variable of no known value", `query($w: Window) { group(name: "g") { activeUsers(window: $w) } }`, map[string]any{"w": 1}, 1 + 1 + 31*ActiveUsersKeyCost},
		{"notifications unreadOnly", `{ notifications(first: 10, unreadOnly: true) ` + sel + ` }`, nil, inbox + UnreadOnlyCost},
		{"notifications unreadOnly false", `{ notifications(first: 10, unreadOnly: false) ` + sel + ` }`, nil, inbox},
		{"groupFeed hideRead", `{ groupFeed(first: 10, hideRead: true) ` + sel + ` }`, nil, page + GroupFeedCost + 10*GroupFeedItemCost + FeedHideReadCost},
	} {
		if got := measureOf(tc.query, tc.vars); got != tc.want {
			t.Errorf("%s: cost %d, want %d", tc.name, got, tc.want)
		}
	}
}
