package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/agora/agora/store"
)

// Limits bounds what one request may ask for. Every limit is checked before gqlgen validates the
// query, because validation itself (overlapping-field checks, for one) can be made to do quadratic
// work by a hostile document.
type Limits struct {
	MaxBodyBytes  int64 // request body; default 256 KiB
	MaxTokens     int   // lexer tokens in the query; default 10,000
	MaxDepth      int   // nesting of selection sets; default 40
	MaxAliases    int   // aliased fields in the document; default 100
	MaxComplexity int   // estimated result size, see complexity; default 25,000
	// MaxRepeats bounds how often one response name is selected in one selection set, counted
	// after merging (fragments and inline fragments spread, and the sub-selections of a repeated
	// field merged as the executor merges them); default 20. Validation compares every two
	// selections of one name, so repeats are what make it quadratic.
	MaxRepeats int
	// BodyTimeout bounds the time a request body may take to arrive; default 10 s.
	BodyTimeout time.Duration
}

// MaxUnknownNames is how many fields and arguments the schema does not have a document may name
// before it is refused, with GRAPHQL_VALIDATION_FAILED naming the first, before validation runs.
// Validation reports each one with suggestions, the edit distance of its name to every field or
// argument of its type: 2 KB of unknown fields (420 of them) cost 4 to 5 ms of CPU and a 63 KB
// answer of 420 errors, and 20 KB (3,500) 36 ms, half of it suggestions, against 0.4 ms for a
// front page of 30 posts; refused, they cost 0.3 and 2 ms (the parse and this walk).
const MaxUnknownNames = 20

// DefaultLimits are the limits used when a field of Limits is zero.
var DefaultLimits = Limits{MaxBodyBytes: 256 << 10, MaxTokens: 10000, MaxDepth: 40, MaxAliases: 100, MaxComplexity: 25000, MaxRepeats: 20, BodyTimeout: 10 * time.Second}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	if l.MaxTokens == 0 {
		l.MaxTokens = d.MaxTokens
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxAliases == 0 {
		l.MaxAliases = d.MaxAliases
	}
	if l.MaxComplexity == 0 {
		l.MaxComplexity = d.MaxComplexity
	}
	if l.MaxRepeats == 0 {
		l.MaxRepeats = d.MaxRepeats
	}
	if l.BodyTimeout == 0 {
		l.BodyTimeout = d.BodyTimeout
	}
	return l
}

// Error codes of the limits, in extensions.code.
const (
	CodeTooLarge   = "QUERY_TOO_LARGE"
	CodeTooDeep    = "QUERY_TOO_DEEP"
	CodeTooAliased = "TOO_MANY_ALIASES"
	CodeTooComplex = "QUERY_TOO_COMPLEX"
	// CodeTooRepetitive refuses a selection set that selects one response name too often.
	CodeTooRepetitive = "TOO_MANY_REPEATS"
	// CodeMethodNotAllowed refuses a mutation or subscription sent with GET.
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"
)

// onlyQueriesOverGET refuses a GET whose operation is a mutation or subscription with 405 before
// anything runs, with a code (gqlgen's own refusal carries none).
// It also refuses, with a code, what no transport serves: other methods, and POST bodies that
// are not JSON.
func onlyQueriesOverGET(maxTokens int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodOptions:
		case http.MethodPost:
			if !isJSON(header(r, "Content-Type")) {
				writeError(w, http.StatusUnsupportedMediaType, "send the request as Content-Type: application/json", CodeBadUserInput)
				return
			}
		default:
			w.Header().Set("Allow", "GET, POST, OPTIONS")
			writeError(w, http.StatusMethodNotAllowed, "use GET (queries) or POST", CodeMethodNotAllowed)
			return
		}
		if r.Method == http.MethodGet {
			q := r.URL.Query()
			if msg, refused := refusedOverGET(q.Get("query"), q.Get("operationName"), maxTokens); refused {
				w.Header().Set("Allow", "POST")
				writeError(w, http.StatusMethodNotAllowed, msg, CodeMethodNotAllowed)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// refusedOverGET reports whether a GET request for the operation name of query must be refused
// because it is a mutation or subscription, and says why. A query that does not parse is left to
// the executor to answer.
func refusedOverGET(query, name string, maxTokens int) (string, bool) {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, maxTokens)
	if err != nil {
		return "", false
	}
	for _, op := range doc.Operations {
		if op.Operation != ast.Query && (name == "" || op.Name == name) {
			return string(op.Operation) + "s are only accepted over POST", true
		}
	}
	return "", false
}

// limitCheck is a gqlgen extension that measures a query before the executor validates it: it
// takes the document from the executor's query cache, where a query seen before waits parsed, or
// else parses the query itself, with the token limit. Once the operation is validated and its
// executor known, it charges its fields at that executor's rate (see charge).
type limitCheck struct {
	schema *ast.Schema
	costs  *costModel
	lim    Limits
	docs   *docCache // the executor's query cache, which keeps the shapes of its documents
	// runs reports whether readexec executes an operation (readexec.Schema.Runs): the others
	// are gqlgen's, whose fields cost GqlgenFieldCost each.
	runs func(*graphql.OperationContext) bool
}

// docShape is what the limits check of a document that its variables do not change: measured
// once per document, not once per request.
type docShape struct {
	repeats []repeated // per operation of the document, in order
	// measures are the operations' depth and cost, in order, where no variable decides them
	// (see measureOperation): the same for every request.
	measures []fixedMeasure
	unused   repeated // of the fragments that nothing spreads
	auths    bool     // a mutation sends more than one field that hashes a password (hashesPassword)
	aliases  int
	unknown  unknownNames
}

// fixedMeasure is an operation's measure, when ok says that its variables do not change it.
type fixedMeasure struct {
	m  measure
	ok bool
}

// repeated is the first response name selected more than -max-repeats times in an operation
// (n is at most the limit when there is none; see fragmentGraph.repeats).
type repeated struct {
	name string
	n    int
}

// newLimitCheck returns the limits check of a server whose executor caches parsed documents in
// docs, and runs with readexec the operations runs reports.
func newLimitCheck(schema *ast.Schema, lim Limits, docs *docCache, runs func(*graphql.OperationContext) bool) limitCheck {
	return limitCheck{schema: schema, costs: newCostModel(schema), lim: lim, docs: docs, runs: runs}
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
	graphql.ResponseInterceptor
} = limitCheck{}

func (limitCheck) ExtensionName() string                   { return "AgoraLimits" }
func (limitCheck) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters rejects a query over any limit.
func (c limitCheck) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	doc, ok := c.docs.Get(ctx, p.Query)
	var err error
	if !ok {
		doc, err = parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, c.lim.MaxTokens)
	}
	if err != nil {
		if strings.Contains(err.Error(), "exceeded token limit") {
			return limitError(CodeTooLarge, "the query has more than %d tokens", c.lim.MaxTokens)
		}
		return nil // a plain syntax error: the executor reports it with its position
	}
	// Each operation in turn: its depth and cost, then its repeats, which the cost just checked
	// bounds (every field of the expanded document is visited once). The variable-free part,
	// measured for a document whose every operation passed, is kept with the document when the
	// executor keeps it (valid), for its next requests.
	sh, kept := c.docs.shape(p.Query)
	var g *fragmentGraph
	if !kept {
		sh = &docShape{repeats: make([]repeated, 0, len(doc.Operations)), measures: make([]fixedMeasure, 0, len(doc.Operations))}
		g = newFragmentGraph(doc)
	}
	for i, op := range doc.Operations {
		var r measure
		if kept && sh.measures[i].ok {
			r = sh.measures[i].m
		} else {
			var fixed bool
			r, fixed = measureOperation(c.costs, c.lim, doc, op, p.Variables)
			if !kept {
				sh.measures = append(sh.measures, fixedMeasure{m: r, ok: fixed})
			}
		}
		if r.depth > c.lim.MaxDepth {
			return limitError(CodeTooDeep, "the query is nested deeper than %d levels", c.lim.MaxDepth)
		}
		// Its executor is known once it is validated (MutateOperationContext); what is over the
		// limit at the least a field costs is refused now.
		if least := chargeOf(r, 1); least.cost > c.lim.MaxComplexity {
			return c.tooComplex(least)
		}
		if !kept {
			sh.repeats = append(sh.repeats, g.repeats([]ast.SelectionSet{op.SelectionSet}, c.lim.MaxRepeats, c.lim.MaxDepth))
		}
		if rep := sh.repeats[i]; rep.n > c.lim.MaxRepeats {
			return limitError(CodeTooRepetitive, "%q is selected more than %d times in one selection set", rep.name, c.lim.MaxRepeats)
		}
	}
	if !kept {
		// Validation checks the fragments that nothing spreads too, so they are measured as
		// operations are.
		for _, f := range g.unused {
			if sh.unused = g.repeats([]ast.SelectionSet{f.SelectionSet}, c.lim.MaxRepeats, c.lim.MaxDepth); sh.unused.n > c.lim.MaxRepeats {
				break
			}
		}
		for _, op := range doc.Operations {
			sh.auths = sh.auths || op.Operation == ast.Mutation && g.auths(op.SelectionSet) > 1
		}
		sh.aliases = countAliases(doc)
		sh.unknown = countUnknownNames(c.schema, doc)
		c.docs.setShape(p.Query, sh)
	}
	if rep := sh.unused; rep.n > c.lim.MaxRepeats {
		return limitError(CodeTooRepetitive, "%q is selected more than %d times in one selection set", rep.name, c.lim.MaxRepeats)
	}
	if sh.auths {
		return limitError(CodeBadUserInput, "send at most one of signUp, logIn, changePassword, setEmail, resetPassword and deleteAccount per request: each hashes a password")
	}
	if sh.aliases > c.lim.MaxAliases {
		return limitError(CodeTooAliased, "the query has %d aliases; at most %d are allowed", sh.aliases, c.lim.MaxAliases)
	}
	if u := sh.unknown; u.n > MaxUnknownNames {
		return limitError(errcode.ValidationFailed, "the query names %d fields and arguments the schema does not have, more than %d; the first is %s", u.n, MaxUnknownNames, u.first)
	}
	return nil
}

// MutateOperationContext refuses a validated operation whose charge, its fields at its
// executor's rate, is over -max-complexity, and keeps the charge for InterceptResponse.
func (c limitCheck) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	ch := chargeOf(c.measure(oc), c.fieldCost(oc))
	oc.Stats.SetExtension(c.ExtensionName(), ch)
	if ch.cost > c.lim.MaxComplexity {
		return c.tooComplex(ch)
	}
	return nil
}

// tooComplex is the error of an operation charged more than -max-complexity.
func (c limitCheck) tooComplex(ch charge) *gqlerror.Error {
	if ch.fieldCost > 1 {
		return limitError(CodeTooComplex, "the query's estimated cost %d exceeds the limit of %d (each of its fields costs %d: it selects a field the server's own executor does not write)", ch.cost, c.lim.MaxComplexity, ch.fieldCost)
	}
	return limitError(CodeTooComplex, "the query's estimated cost %d exceeds the limit of %d", ch.cost, c.lim.MaxComplexity)
}

// reported is the charge reported for oc's operation: the one MutateOperationContext kept, or
// else its measure at 1 a field — an operation refused before its variables were coerced, when
// its executor is not known yet (readexec plans with them), or a subscription's shared event.
func (c limitCheck) reported(oc *graphql.OperationContext) charge {
	if ch, ok := oc.Stats.GetExtension(c.ExtensionName()).(charge); ok {
		return ch
	}
	return chargeOf(c.measure(oc), 1)
}

// measure is oc's operation's measure: kept with its document when its variables do not change
// it, else measured with them.
func (c limitCheck) measure(oc *graphql.OperationContext) measure {
	if m, ok := c.keptMeasure(oc); ok {
		return m
	}
	m, _ := measureOperation(c.costs, c.lim, oc.Doc, oc.Operation, oc.Variables)
	return m
}

// fieldCost is what each field of oc's operation costs: 1 when readexec executes it, and for a
// subscription, whose events are executed once for all their subscribers; GqlgenFieldCost when
// gqlgen's executor does. It plans the operation, so oc's variables must have been coerced.
func (c limitCheck) fieldCost(oc *graphql.OperationContext) int {
	if oc.Operation.Operation == ast.Subscription || c.runs(oc) {
		return 1
	}
	return GqlgenFieldCost
}

// InterceptResponse tells a client what its operation cost against -max-complexity, as
// extensions.cost: {requested, limit, fieldCost}, on every response, so that it can budget. A
// subscription's events carry it too: its executions are shared, so it is measured once per
// event and subscription, not per subscriber.
func (c limitCheck) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	oc := graphql.GetOperationContext(ctx)
	if oc == nil || oc.Operation == nil {
		return next(ctx)
	}
	ch := c.reported(oc)
	resp := next(ctx)
	if resp != nil {
		if resp.Extensions == nil {
			resp.Extensions = map[string]any{}
		}
		resp.Extensions["cost"] = map[string]int{"requested": ch.cost, "limit": c.lim.MaxComplexity, "fieldCost": ch.fieldCost}
	}
	return resp
}

// GqlgenFieldCost is what each field of an operation's estimate costs when gqlgen's executor runs
// it rather than readexec: the executor's part of the estimate (measure.fields, 1 a field times
// the pages above it) is charged this many times, what fields cost beyond 1 for their reads of
// Redis once. BenchmarkCostPerUnit times a unit of the estimate at 1.1 µs on readexec's pages and
// a field at 6.2 to 6.7 µs on gqlgen's (medians of seven runs on 2 shared cores; 3.9 to 4.2 µs
// the fastest): at 5, the largest pages gqlgen may run take 30 to 33 ms a request, about what
// readexec's may at the limit (~27 ms), where before they took 115 to 186 ms (see
// docs/PERFORMANCE.md).
const GqlgenFieldCost = 5

// charge is what an operation is charged against -max-complexity (extensions.cost.requested),
// and what each of its fields cost.
type charge struct {
	cost      int
	fieldCost int
}

// chargeOf is the cost of an operation measured m whose fields cost fieldCost each: the one
// place the estimate becomes what is checked against -max-complexity and reported.
func chargeOf(m measure, fieldCost int) charge {
	return charge{cost: satAdd(m.cost, satMul(fieldCost-1, m.fields)), fieldCost: fieldCost}
}

// keptMeasure returns the measure of oc's operation kept with its document, when its variables do
// not change it.
func (c limitCheck) keptMeasure(oc *graphql.OperationContext) (measure, bool) {
	sh, ok := c.docs.shape(oc.RawQuery)
	if !ok || oc.Doc == nil {
		return measure{}, false
	}
	for i, op := range oc.Doc.Operations {
		if op == oc.Operation && i < len(sh.measures) {
			return sh.measures[i].m, sh.measures[i].ok
		}
	}
	return measure{}, false
}

func limitError(code, format string, args ...any) *gqlerror.Error {
	return &gqlerror.Error{Message: fmt.Sprintf(format, args...), Extensions: map[string]any{"code": code}}
}

// measureOperation estimates the cost and depth of op, an operation of doc, with vars, and reports
// whether no variable decided them (then they hold for any variables).
func measureOperation(costs *costModel, lim Limits, doc *ast.QueryDocument, op *ast.OperationDefinition, vars map[string]any) (measure, bool) {
	schema := costs.schema
	m := measurer{costModel: costs, doc: doc, op: op, vars: vars, lim: lim, frags: map[fragmentKey]*measure{}}
	r := m.selections(op.SelectionSet, rootType(schema, op), 1, false)
	return r, !m.varsRead
}

// rootType is the schema's type that op's selection set selects from: Query, Mutation or
// Subscription.
func rootType(schema *ast.Schema, op *ast.OperationDefinition) *ast.Definition {
	switch op.Operation {
	case ast.Mutation:
		return schema.Mutation
	case ast.Subscription:
		return schema.Subscription
	}
	return schema.Query
}

// measure is the cost and depth of a selection set, and whether it selects totalCount itself
// (directly or through fragments), which a search charges for (see SearchCountCost).
type measure struct {
	cost int
	// fields is the executor's part of cost: 1 a field times the pages above it, without what
	// fields cost beyond 1 for the reads of Redis (own, perItem, flagged… of costModel) and
	// without introspection (charged by the schema's sizes). See charge.
	fields int
	depth  int
	counts bool
}

// measurer estimates a document's cost: every field costs 1, and a field with a page size (first
// or last, leaderboardAround's radius, or the number of ids of nodes) multiplies the cost of its
// selections by that size, as a list with a bound and no page size does by its bound, and an
// introspection list by the schema's size of it (see costModel).
// Fragments are measured once and memoized, so a document of fragments that spread each other
// many times costs linear work to measure while its estimate grows as its result would.
type measurer struct {
	*costModel
	doc   *ast.QueryDocument
	op    *ast.OperationDefinition // variable defaults come from the operation being measured
	vars  map[string]any
	lim   Limits
	frags map[fragmentKey]*measure // nil value while being measured (a cycle)
	// varsRead says that a variable was read: the measure holds for these variables only.
	varsRead bool
}

// fragmentKey is a fragment measured for one item of a schema-wide list or not (see costModel).
type fragmentKey struct {
	name string
	all  bool
}

const costCap = math.MaxInt32

// selections measures set, selected on typ at depth; all says that set is selected on every
// item of a list of the whole schema (every type, or every field of every type), which costs
// introspection lists at their average size rather than their largest.
func (m *measurer) selections(set ast.SelectionSet, typ *ast.Definition, depth int, all bool) measure {
	out := measure{depth: depth - 1}
	if depth > m.lim.MaxDepth+1 {
		return measure{depth: depth} // deep enough to fail; stop walking
	}
	for _, sel := range set {
		var r measure
		switch s := sel.(type) {
		case *ast.Field:
			var def *ast.FieldDefinition
			var child *ast.Definition
			if typ != nil {
				def = typ.Fields.ForName(s.Name)
			}
			if def != nil {
				child = m.schema.Types[def.Type.Name()]
			}
			size, listed := listSize{}, false
			if typ != nil {
				size, listed = m.lists[listField{typ.Name, s.Name}]
			}
			sub := measure{depth: depth}
			if len(s.SelectionSet) > 0 {
				sub = m.selections(s.SelectionSet, child, depth+1, listed && size.all(all))
			}
			n := 1
			if listed {
				r = measure{cost: satAdd(1, size.of(sub.cost, all)), fields: satAdd(1, size.of(sub.fields, all)), depth: sub.depth}
			} else {
				n = m.multiplier(s, def)
				if typ != nil {
					if b, ok := m.bounded[listField{typ.Name, s.Name}]; ok {
						n = b
					}
				}
				r = measure{cost: satAdd(1, satMul(n, sub.cost)), fields: satAdd(1, satMul(n, sub.fields)), depth: sub.depth}
			}
			if introspection(s.Name) {
				r.fields = 0
			}
			if typ != nil {
				r.cost = satAdd(r.cost, m.own[listField{typ.Name, s.Name}])
				r.cost = satAdd(r.cost, satMul(n, m.perItem[listField{typ.Name, s.Name}]))
				if fc, ok := m.flagged[listField{typ.Name, s.Name}]; ok && m.boolArg(s, def, fc.arg) {
					r.cost = satAdd(r.cost, fc.cost)
				}
				if fc, ok := m.unnamed[listField{typ.Name, s.Name}]; ok && m.argNull(s, fc.arg) {
					r.cost = satAdd(r.cost, fc.cost)
				}
				if sub.counts {
					r.cost = satAdd(r.cost, m.counted[listField{typ.Name, s.Name}])
				}
				if ec, ok := m.byEnum[listField{typ.Name, s.Name}]; ok {
					r.cost = satAdd(r.cost, ec.of(m.enumArg(s, def, ec.arg)))
				}
			}
			r.counts = s.Name == "totalCount"
		case *ast.InlineFragment:
			t := typ
			if s.TypeCondition != "" {
				t = m.schema.Types[s.TypeCondition]
			}
			r = m.selections(s.SelectionSet, t, depth, all)
		case *ast.FragmentSpread:
			r = m.fragment(s.Name, depth, all)
		}
		out.cost = satAdd(out.cost, r.cost)
		out.fields = satAdd(out.fields, r.fields)
		out.depth = max(out.depth, r.depth)
		out.counts = out.counts || r.counts
	}
	return out
}

// introspection reports whether a field is an introspection root, __schema or __type: what it
// selects is charged by the schema's sizes (see listSize), not by its executor.
func introspection(name string) bool { return name == "__schema" || name == "__type" }

// fragment measures a named fragment at depth, memoizing its depth-independent measure.
func (m *measurer) fragment(name string, depth int, all bool) measure {
	key := fragmentKey{name, all}
	if r, seen := m.frags[key]; seen {
		if r == nil {
			return measure{depth: depth} // a cycle; validation rejects it
		}
		return measure{cost: r.cost, fields: r.fields, depth: depth - 1 + r.depth, counts: r.counts}
	}
	f := m.doc.Fragments.ForName(name)
	if f == nil {
		return measure{depth: depth}
	}
	m.frags[key] = nil
	r := m.selections(f.SelectionSet, m.schema.Types[f.TypeCondition], 1, all)
	m.frags[key] = &r
	return measure{cost: r.cost, fields: r.fields, depth: depth - 1 + r.depth, counts: r.counts}
}

// costModel is what the estimate knows of a schema: the sizes of its introspection lists.
type costModel struct {
	schema *ast.Schema
	lists  map[listField]listSize
	// own is what a field costs itself beyond 1, for fields whose work does not show in their
	// page: a search reads the posting lists of its words whatever page it returns.
	own map[listField]int
	// counted is what a field costs beyond own when its selection asks for totalCount: a search's
	// count checks its candidates as a page checks its results.
	counted map[listField]int
	// byEnum is what a field costs beyond own by the value of one of its enum arguments: an
	// order, a time window.
	byEnum map[listField]enumCost
	// bounded is how many items a list field with no page size returns at most: what its
	// selections are multiplied by.
	bounded map[listField]int
	// perItem is what a field costs beyond own for each item of its page (see GroupFeedItemCost).
	perItem map[listField]int
	// flagged is what a field costs beyond own when one of its Boolean arguments is true (or
	// cannot be known before execution).
	flagged map[listField]flaggedCost
	// unnamed is what a field costs beyond own when one of its arguments is null (left out,
	// null, or a variable that is): reports without a group merges many lists (ReportsMergeCost).
	unnamed map[listField]flaggedCost
}

// flaggedCost is what a field costs more when its Boolean argument arg is true (see
// costModel.flagged), or when its argument arg is null (costModel.unnamed).
type flaggedCost struct {
	arg  string
	cost int
}

// enumCost is what a field costs by the value of its enum argument arg (see costModel.byEnum):
// costs of the value when it lists it, else other, which is also the cost of a value that cannot
// be known before execution.
type enumCost struct {
	arg   string
	costs map[string]int
	other int
}

// of is the cost of the argument's value v ("" when it cannot be known).
func (e enumCost) of(v string) int {
	if c, ok := e.costs[v]; ok {
		return c
	}
	return e.other
}

// UserPostsSortCost is what User.posts costs beyond its page in an order other than NEW: it ranks
// up to the user's 1,000 newest posts (a ZRANGE WITHSCORES of them and a ZMSCORE of them on the
// site's ranking), which on a real Redis costs about as much as 185 HMGETs of a post's 20 fields
// (INFO commandstats, 1,000 members of a 200,000-post ranking).
const UserPostsSortCost = 200

// UserCommentsSortCost is what User.comments costs beyond its page in TOP, BEST or
// CONTROVERSIAL: it ranks up to the user's 1,000 newest comments (a ZREVRANGE of them and an
// HMGET of the vote counts of each, on the comments' own slots), which on a real Redis costs
// about as much as 760 to 1,000 HMGETs of a post's fields (INFO commandstats: 1,140 to 1,500 µs
// more than NEW's page of 20, against 1.5 µs a post HMGET; docs/API.md).
const UserCommentsSortCost = 1000

// SearchCost is what one search field costs beyond its page: its reads of the index are bounded
// (8 words, 32 prefix words, the newest 64 blocks of each list) whatever page it returns.
const SearchCost = 100

// SearchCountCost is what a search's totalCount costs beyond SearchCost: the count checks up to
// 10,000 candidates, a few fields each, as a page checks its results (about a quarter of what
// reading as many items would cost).
const SearchCountCost = 2500

// SearchCommentsTopCost is what searchComments costs beyond SearchCost in the order TOP (or an
// order that cannot be known before execution): it ranks the newest 5,000 matches by their votes,
// an HMGET of each comment's hash, whatever page it returns — priced as UserCommentsSortCost
// prices its 1,000 HMGETs, a unit each. TestCostCalibration measured a TOP page of one comment
// among 310 matches at 261 commands for a cost of 120 (2.0 commands a unit beyond its allowance,
// twice CommandsPerUnitBound; 5,000 matches would have been about 5,000 commands); it costs
// 5,120 now. searchPosts' TOP reads its 5,000 posts' places in two rankings in chunks of 500
// (ZMSCORE), 20 commands at most, and costs nothing more.
const SearchCommentsTopCost = 5000

// HideReadCost is what a page with hideRead costs beyond its page: leaving out the posts the
// reader marked read, it may read up to two more pages of store.MaxFirst posts and their read
// marks (store.PageWithoutRead), whatever page it returns: 1.2 to 1.3 ms of a real Redis's CPU
// for a page of one post, against 0.1 ms without hideRead (INFO commandstats), about 600
// commands.
const HideReadCost = 1200

// UnreadOnlyCost is what notifications costs beyond its page with unreadOnly: it walks the
// whole inbox, up to store.NotificationCap notifications with their records, in one script
// (unread_page.lua), whatever page it returns: 2.1 to 4.4 ms of a real Redis's CPU for 500
// notifications, against 0.06 ms without unreadOnly (INFO commandstats).
const UnreadOnlyCost = 2500

// GroupFeedCost is what groupFeed costs beyond its page: it reads a window of the ranking of
// each of the store.MaxGroupFeedGroups groups merged (three commands a group, 300 in all) and
// merges them, whatever page it returns: 0.4 to 0.6 ms of a real Redis's CPU for a page of one
// post, against 0.1 ms for posts (INFO commandstats).
const GroupFeedCost = 500

// GroupFeedItemCost is what each post of a groupFeed page costs beyond its selection: the
// window of every merged group holds as many posts as the page, so each post of the page reads
// up to store.MaxGroupFeedGroups ranking entries (a page of 100 posts over 100 groups of 100
// posts cost a real Redis 3.8 ms, against 0.36 ms for posts(first: 100): 34 µs more a post).
const GroupFeedItemCost = 35

// FeedCost is what feed costs beyond its page: besides the pushed entries it reads a page of the
// posts of each author it pulls (store.FeedOptions.MaxPulledAuthors, 100 by default), a page
// and a count of each (two of each when NSFW posts are shown) — up to 400 commands — and
// merges them, whatever page it returns: groupFeed's shape (GroupFeedCost) with as many sources.
// A server run with a larger -feed-max-pulled reads more than this counts.
const FeedCost = GroupFeedCost

// FeedItemCost is what each post of a feed page costs beyond its selection: each pulled author's
// page holds as many posts as the page, as each merged group's window does in groupFeed.
const FeedItemCost = GroupFeedItemCost

// FeedHideReadCost is what feed and groupFeed cost beyond their page with hideRead: HideReadCost,
// and the two more rounds it may read, each a whole merge of the feed's sources for a window of
// store.MaxFirst posts (FeedCost, and FeedItemCost and the post's load, 1, a post) — what a page of
// store.MaxFirst costs beyond its selection. Priced as posts' rounds, a page of one post read 201
// posts through three merges for 1,738.
const FeedHideReadCost = HideReadCost + 2*(FeedCost+store.MaxFirst*(FeedItemCost+1))

// ReportsMergeCost is what Query.reports costs beyond its page without a group: for a moderator
// it reads the moderators and generation of the 500 groups most recently reported and merges a
// page of each of the up to 100 they moderate (store.MaxReportGroupsMerged), whatever page it
// returns. On a real Redis, for a moderator of 100 groups holding 2,000 reports, a page of one
// report after a cursor cost 2.2 to 5 ms of its CPU (100 page scripts), and one without a cursor
// 0.6 to 0.8 ms, against 0.1 to 0.2 ms for one group's (INFO commandstats). An admin's merges
// nothing, but the estimate does not know who asks.
const ReportsMergeCost = 2500

// ActiveUsersKeyCost is what Group.activeUsers costs beyond 1 for each HyperLogLog its window
// counts (store.ActivityBuckets: 2 for HOUR, 25 for DAY, 8 for WEEK, 31 for MONTH, 13 for
// YEAR): a PFCOUNT of several keys merges their 16,384 registers, so a month of a busy group's
// dense HyperLogLogs costs a real Redis 925 µs, 30 µs a key (redis-cli, redis-server 7.0,
// INFO commandstats; 32 µs for 31 sparse ones of 50 users, 2 µs for none).
const ActiveUsersKeyCost = 30

// listField is a list field of an introspection type: __Schema.types, __Type.fields…
type listField struct{ typ, field string }

// listSize is how many items an introspection list returns: for one parent at most largest
// (the type with the most fields…); for every item of a schema-wide list (__schema's types, their
// fields), total items over parents, the average, so that the estimate of a whole
// introspection query is about the size of its answer.
type listSize struct {
	largest        int
	total, parents int // total is 0 when the list is never averaged
	// allBelow says that the list's items are themselves a schema-wide list when its parents are
	// (the fields of every type), or always (the schema's types).
	allBelow, always bool
}

// of is the cost of the list's items, each costing sub.
func (s listSize) of(sub int, all bool) int {
	if (all || s.always) && s.parents > 0 {
		n := satMul(s.total, sub)
		return min(n/s.parents+min(n%s.parents, 1), costCap) // rounded up
	}
	return satMul(max(s.largest, 1), sub)
}

// all reports whether the list's items are a schema-wide list when its parents are (all).
func (s listSize) all(all bool) bool { return s.always || all && s.allBelow }

// newCostModel counts the introspection lists of schema.
func newCostModel(schema *ast.Schema) *costModel {
	types, fields, inputs, enums, ifaces, possible, fieldArgs, dirArgs := 0, 0, 0, 0, 0, 0, 0, 0
	var maxFields, maxInputs, maxEnums, maxIfaces, maxPossible, maxArgs int
	for _, t := range schema.Types {
		types++
		switch t.Kind {
		case ast.Object, ast.Interface:
			fields += len(t.Fields)
			maxFields = max(maxFields, len(t.Fields))
			for _, f := range t.Fields {
				fieldArgs += len(f.Arguments)
				maxArgs = max(maxArgs, len(f.Arguments))
			}
		case ast.InputObject:
			inputs += len(t.Fields)
			maxInputs = max(maxInputs, len(t.Fields))
		case ast.Enum:
			enums += len(t.EnumValues)
			maxEnums = max(maxEnums, len(t.EnumValues))
		}
		ifaces += len(t.Interfaces)
		maxIfaces = max(maxIfaces, len(t.Interfaces))
		if t.Kind == ast.Interface || t.Kind == ast.Union {
			n := len(schema.GetPossibleTypes(t))
			possible += n
			maxPossible = max(maxPossible, n)
		}
	}
	for _, d := range schema.Directives {
		dirArgs += len(d.Arguments)
		maxArgs = max(maxArgs, len(d.Arguments))
	}
	return &costModel{schema: schema, lists: map[listField]listSize{
		{"__Schema", "types"}:       {largest: types, total: types, parents: 1, always: true},
		{"__Schema", "directives"}:  {largest: len(schema.Directives), total: len(schema.Directives), parents: 1, always: true},
		{"__Type", "fields"}:        {largest: maxFields, total: fields, parents: types, allBelow: true},
		{"__Type", "inputFields"}:   {largest: maxInputs, total: inputs, parents: types},
		{"__Type", "enumValues"}:    {largest: maxEnums, total: enums, parents: types},
		{"__Type", "interfaces"}:    {largest: maxIfaces, total: ifaces, parents: types},
		{"__Type", "possibleTypes"}: {largest: maxPossible, total: possible, parents: types},
		{"__Field", "args"}:         {largest: maxArgs, total: fieldArgs, parents: max(fields, 1)},
		{"__Directive", "args"}:     {largest: maxArgs, total: dirArgs, parents: max(len(schema.Directives), 1)},
	}, own: map[listField]int{
		{"Query", "searchPosts"}:    SearchCost,
		{"Query", "searchComments"}: SearchCost,
		{"Query", "searchGroups"}:   SearchCost,
		{"Query", "searchUsers"}:    SearchCost,
		{"Query", "groupFeed"}:      GroupFeedCost,
		{"Query", "feed"}:           FeedCost,
	}, counted: map[listField]int{
		{"Query", "searchPosts"}:    SearchCountCost,
		{"Query", "searchComments"}: SearchCountCost,
		{"Query", "searchGroups"}:   SearchCountCost,
		{"Query", "searchUsers"}:    SearchCountCost,
	}, byEnum: map[listField]enumCost{
		{"User", "posts"}:           {arg: "sort", costs: map[string]int{"NEW": 0}, other: UserPostsSortCost},
		{"User", "comments"}:        {arg: "sort", costs: map[string]int{"NEW": 0, "OLD": 0}, other: UserCommentsSortCost},
		{"Group", "activeUsers"}:    activeUsersCost(),
		{"Query", "searchComments"}: {arg: "sort", costs: map[string]int{"RELEVANCE": 0, "NEW": 0}, other: SearchCommentsTopCost},
	}, bounded: map[listField]int{
		{"Post", "groups"}:      store.MaxGroupsPerPost,
		{"Post", "pinnedIn"}:    store.MaxGroupsPerPost, // pinned only in its own groups
		{"Report", "groups"}:    store.MaxGroupsPerPost, // the groups of the reported post
		{"Group", "moderators"}: store.MaxGroupModerators,
	}, perItem: map[listField]int{
		{"Query", "groupFeed"}: GroupFeedItemCost,
		{"Query", "feed"}:      FeedItemCost,
	}, flagged: map[listField]flaggedCost{
		{"Query", "posts"}:         {arg: "hideRead", cost: HideReadCost},
		{"Query", "feed"}:          {arg: "hideRead", cost: FeedHideReadCost},
		{"Query", "groupFeed"}:     {arg: "hideRead", cost: FeedHideReadCost},
		{"Query", "notifications"}: {arg: "unreadOnly", cost: UnreadOnlyCost},
	}, unnamed: map[listField]flaggedCost{
		{"Query", "reports"}: {arg: "group", cost: ReportsMergeCost},
	}}
}

// activeUsersCost is what Group.activeUsers costs in each window: ActiveUsersKeyCost a
// HyperLogLog it counts, and for a window that cannot be known before execution, the most.
func activeUsersCost() enumCost {
	windows := map[string]store.ActivityWindow{"HOUR": store.ActiveHour, "DAY": store.ActiveDay,
		"WEEK": store.ActiveWeek, "MONTH": store.ActiveMonth, "YEAR": store.ActiveYear}
	e := enumCost{arg: "window", costs: map[string]int{}}
	for name, w := range windows {
		e.costs[name] = store.ActivityBuckets(w) * ActiveUsersKeyCost
		e.other = max(e.other, e.costs[name])
	}
	return e
}

// multiplier is how many items a field returns at most: its last argument when the query sets it
// (a backward page), else its first argument (a literal, a variable or the schema's default),
// 2 × radius + 1 for a radius, the number of its ids (nodes), or 1. A last left out or null is a
// forward page, so it does not count; a query that sets both first and last is refused before
// anything is read.
func (m *measurer) multiplier(f *ast.Field, def *ast.FieldDefinition) int {
	if n, ok := m.listArgLen(f, def, "ids"); ok {
		return min(max(n, 1), 1000)
	}
	for _, name := range []string{"last", "first", "radius"} {
		if name == "last" && m.argNull(f, name) {
			continue
		}
		n, ok := m.intArg(f, def, name)
		if !ok {
			continue
		}
		if name == "radius" {
			n = 2*n + 1
		}
		return min(max(n, 1), 1000)
	}
	return 1
}

// intArg is the value an Int argument will have: a literal; a variable's value, its default in
// the operation, or the schema's default when the request leaves it out; the schema's default when
// the argument is absent. When the value cannot be known before execution (a null or a
// non-number, which validation or the resolver will reject) it is the largest page size, so that
// variables can never make a query look cheaper than it is.
func (m *measurer) intArg(f *ast.Field, def *ast.FieldDefinition, name string) (int, bool) {
	var schemaDefault *ast.Value
	if def != nil {
		if ad := def.Arguments.ForName(name); ad != nil {
			schemaDefault = ad.DefaultValue
		} else {
			return 0, false // the field takes no such argument
		}
	}
	v := schemaDefault
	if a := f.Arguments.ForName(name); a != nil {
		v = a.Value
	}
	if v == nil {
		return 0, false
	}
	if v.Kind == ast.Variable {
		m.varsRead = true
		raw, present := m.vars[v.Raw]
		if !present {
			if vd := m.op.VariableDefinitions.ForName(v.Raw); vd != nil && vd.DefaultValue != nil {
				return literalInt(vd.DefaultValue)
			}
			if schemaDefault != nil {
				return literalInt(schemaDefault)
			}
			return pessimistic, true
		}
		switch x := raw.(type) {
		case float64:
			return int(x), true
		case int:
			return x, true
		case int64:
			return int(x), true
		case json.Number:
			if n, err := x.Int64(); err == nil {
				return int(n), true
			}
		}
		return pessimistic, true
	}
	return literalInt(v)
}

// enumArg is the value an enum argument will have (see argValue); "" when it cannot be known
// before execution (a null, or a variable of another type, which validation or the resolver will
// reject), so that variables can never make a query look cheaper than it is.
func (m *measurer) enumArg(f *ast.Field, def *ast.FieldDefinition, name string) string {
	v, raw, sent := m.argValue(f, def, name)
	if sent {
		s, _ := raw.(string)
		return s
	}
	if v == nil || v.Kind != ast.EnumValue {
		return ""
	}
	return v.Raw
}

// argValue is what a field's argument will be: the variable's value when the request sends one
// (raw, with sent true); otherwise the literal, the operation's default of a variable left out, or
// the schema's default (v, nil when there is none). intArg, which tells an argument the field does
// not take from one left out, finds its value itself.
func (m *measurer) argValue(f *ast.Field, def *ast.FieldDefinition, name string) (v *ast.Value, raw any, sent bool) {
	var schemaDefault *ast.Value
	if def != nil {
		if ad := def.Arguments.ForName(name); ad != nil {
			schemaDefault = ad.DefaultValue
		}
	}
	v = schemaDefault
	if a := f.Arguments.ForName(name); a != nil {
		v = a.Value
	}
	if v == nil || v.Kind != ast.Variable {
		return v, nil, false
	}
	m.varsRead = true
	if raw, present := m.vars[v.Raw]; present {
		return nil, raw, true
	}
	if vd := m.op.VariableDefinitions.ForName(v.Raw); vd != nil && vd.DefaultValue != nil {
		return vd.DefaultValue, nil, false
	}
	return schemaDefault, nil, false
}

// listArgLen is how many items a list argument will hold: a literal list's, a variable's value's
// (a single value counts one, as GraphQL coerces it to a list of one), or the largest page size
// when it cannot be known before execution (left out, null, not a list), which validation or the
// resolver will reject, so that variables can never make a query look cheaper than it is.
// It reports false when the field takes no such argument.
func (m *measurer) listArgLen(f *ast.Field, def *ast.FieldDefinition, name string) (int, bool) {
	if def == nil || def.Arguments.ForName(name) == nil {
		return 0, false
	}
	a := f.Arguments.ForName(name)
	if a == nil || a.Value == nil {
		return pessimistic, true
	}
	switch v := a.Value; v.Kind {
	case ast.ListValue:
		return len(v.Children), true
	case ast.Variable:
		m.varsRead = true
		switch x := m.vars[v.Raw].(type) {
		case []any:
			return len(x), true
		case string:
			return 1, true
		}
		return pessimistic, true
	case ast.NullValue:
		return pessimistic, true
	}
	return 1, true
}

// boolArg reports whether a Boolean argument will be true (see argValue); true when it cannot be
// known before execution (a variable of another type, which validation will reject), so that
// variables can never make a query look cheaper than it is.
func (m *measurer) boolArg(f *ast.Field, def *ast.FieldDefinition, name string) bool {
	v, raw, sent := m.argValue(f, def, name)
	if sent {
		if raw == nil {
			return false
		}
		b, ok := raw.(bool)
		return b || !ok
	}
	return v != nil && v.Kind == ast.BooleanValue && v.Raw == "true"
}

// argNull reports whether a field's argument will be null: left out, null, or a variable that is
// null or left out without a default in the operation.
func (m *measurer) argNull(f *ast.Field, name string) bool {
	a := f.Arguments.ForName(name)
	if a == nil || a.Value == nil || a.Value.Kind == ast.NullValue {
		return true
	}
	if a.Value.Kind != ast.Variable {
		return false
	}
	m.varsRead = true
	if raw, present := m.vars[a.Value.Raw]; present {
		return raw == nil
	}
	vd := m.op.VariableDefinitions.ForName(a.Value.Raw)
	return vd == nil || vd.DefaultValue == nil || vd.DefaultValue.Kind == ast.NullValue
}

// pessimistic is the page size charged for an argument whose value is unknown: the largest a
// client may ask for.
const pessimistic = 100

func literalInt(v *ast.Value) (int, bool) {
	if v.Kind != ast.IntValue {
		return pessimistic, true
	}
	n, err := strconv.Atoi(v.Raw)
	if err != nil {
		return pessimistic, true
	}
	return n, true
}

// fragmentGraph is what the checks that spread fragments know of a document's fragments, found
// in one pass over them: the spreads that close a cycle, and memos per fragment. A document with
// a cycle or an unknown fragment is invalid and validation rejects it, but the checks run first;
// they skip such spreads, so that what they walk is a finite DAG, and they memoize what a
// fragment contributes, so that a fragment spread many times is not walked again each time it
// selects nothing (a chain of fragments each spreading the next twice would cost 2^n walks).
type fragmentGraph struct {
	doc   *ast.QueryDocument
	defs  map[string]*ast.FragmentDefinition
	back  map[*ast.FragmentSpread]bool // spreads of a fragment being spread: a cycle
	empty map[string]bool              // the fragment selects no field at its top level
	auth  map[string]int               // signUp and logIn fields at the fragment's top level
	// unused are the fragments that no operation and no other fragment spreads: validation
	// checks their selections too, so the repeats check starts from them as from operations.
	unused []*ast.FragmentDefinition
	walks  int // selections visited by repeats and auths, for the tests
}

// newFragmentGraph finds the cycles of doc's fragments with one depth-first search over them.
func newFragmentGraph(doc *ast.QueryDocument) *fragmentGraph {
	g := &fragmentGraph{doc: doc, defs: make(map[string]*ast.FragmentDefinition, len(doc.Fragments)),
		back: map[*ast.FragmentSpread]bool{}, empty: map[string]bool{}, auth: map[string]int{}}
	for _, f := range doc.Fragments {
		if g.defs[f.Name] == nil { // a second definition of a name is a validation error
			g.defs[f.Name] = f
		}
	}
	spread := map[string]bool{}
	for _, op := range doc.Operations {
		eachSpread(op.SelectionSet, func(s *ast.FragmentSpread) { spread[s.Name] = true })
	}
	const (
		unseen = iota
		open
		done
	)
	state := make(map[string]int, len(g.defs))
	var dfs func(f *ast.FragmentDefinition)
	dfs = func(f *ast.FragmentDefinition) {
		state[f.Name] = open
		eachSpread(f.SelectionSet, func(s *ast.FragmentSpread) {
			next := g.defs[s.Name]
			switch {
			case next == nil:
			case state[s.Name] == open:
				g.back[s] = true
			default:
				spread[s.Name] = true
				if state[s.Name] == unseen {
					dfs(next)
				}
			}
		})
		state[f.Name] = done
	}
	for _, f := range doc.Fragments {
		if state[f.Name] == unseen {
			dfs(f)
		}
	}
	for _, f := range doc.Fragments {
		if !spread[f.Name] && g.defs[f.Name] == f {
			g.unused = append(g.unused, f)
		}
	}
	return g
}

// eachSpread calls fn with every fragment spread written in set, at any depth.
func eachSpread(set ast.SelectionSet, fn func(*ast.FragmentSpread)) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			eachSpread(s.SelectionSet, fn)
		case *ast.InlineFragment:
			eachSpread(s.SelectionSet, fn)
		case *ast.FragmentSpread:
			fn(s)
		}
	}
}

// follow returns the fragment that s spreads, or nil when it is unknown, closes a cycle or
// selects no field at its top level: spreading it then adds nothing to the selection set.
func (g *fragmentGraph) follow(s *ast.FragmentSpread) *ast.FragmentDefinition {
	f := g.defs[s.Name]
	if f == nil || g.back[s] {
		return nil
	}
	empty, known := g.empty[s.Name]
	if !known {
		empty = g.selectsNothing(f.SelectionSet)
		g.empty[s.Name] = empty
	}
	if empty {
		return nil
	}
	return f
}

// selectsNothing reports whether set selects no field at its top level, fragments spread.
func (g *fragmentGraph) selectsNothing(set ast.SelectionSet) bool {
	for _, sel := range set {
		g.walks++
		switch s := sel.(type) {
		case *ast.Field:
			return false
		case *ast.InlineFragment:
			if !g.selectsNothing(s.SelectionSet) {
				return false
			}
		case *ast.FragmentSpread:
			if g.follow(s) != nil {
				return false
			}
		}
	}
	return true
}

// repeats finds a response name selected more than max times in the merged selection set of
// sets, or in the merged sub-selections below (down to depth levels): fragment spreads and inline
// fragments are spread, and the sub-selections of every selection of one name are merged, as the
// executor and validation merge them. It stops at the first name over max and returns it with
// its count; otherwise the count is at most max.
func (g *fragmentGraph) repeats(sets []ast.SelectionSet, max, depth int) repeated {
	if depth <= 0 {
		return repeated{}
	}
	counts := map[string]int{}
	children := map[string][]ast.SelectionSet{}
	var order []string
	over := ""
	var visit func(set ast.SelectionSet)
	visit = func(set ast.SelectionSet) {
		for _, sel := range set {
			if over != "" {
				return
			}
			g.walks++
			switch s := sel.(type) {
			case *ast.Field:
				name := s.Alias
				if name == "" {
					name = s.Name
				}
				if counts[name] == 0 {
					order = append(order, name)
				}
				counts[name]++
				if counts[name] > max {
					over = name
					return
				}
				if len(s.SelectionSet) > 0 {
					children[name] = append(children[name], s.SelectionSet)
				}
			case *ast.InlineFragment:
				visit(s.SelectionSet)
			case *ast.FragmentSpread:
				if f := g.follow(s); f != nil {
					visit(f.SelectionSet)
				}
			}
		}
	}
	for _, set := range sets {
		visit(set)
	}
	if over != "" {
		return repeated{over, counts[over]}
	}
	for _, name := range order {
		if kids := children[name]; len(kids) > 0 {
			if r := g.repeats(kids, max, depth-1); r.n > max {
				return r
			}
		}
	}
	return repeated{}
}

// hashesPassword reports whether the mutation field name hashes a password with argon2id (~19
// MiB and tens of milliseconds of a core each, two for changePassword): a request carries at most
// one, or a hundred aliases of one would hold the hashing workers for seconds.
func hashesPassword(name string) bool {
	switch name {
	case "signUp", "logIn", "changePassword", "setEmail", "resetPassword", "deleteAccount":
		return true
	}
	return false
}

// auths counts the fields of a mutation's root selection that hash a password (hashesPassword),
// fragments spread.
func (g *fragmentGraph) auths(set ast.SelectionSet) int {
	n := 0
	for _, sel := range set {
		g.walks++
		switch s := sel.(type) {
		case *ast.Field:
			if hashesPassword(s.Name) {
				n++
			}
		case *ast.InlineFragment:
			n = satAdd(n, g.auths(s.SelectionSet))
		case *ast.FragmentSpread:
			if f := g.follow(s); f != nil {
				c, known := g.auth[s.Name]
				if !known {
					c = g.auths(f.SelectionSet)
					g.auth[s.Name] = c
				}
				n = satAdd(n, c)
			}
		}
	}
	return n
}

// MaxRequestErrors is how many errors a request refused before execution (by validation, mostly)
// is answered with; the rest are left out, counted by one more error. Validation reports every
// unused variable and fragment: 45 KB of unused fragments (under the token limit) were answered
// with 1,281 errors, 19.5 ms of CPU (the server's and the test's client's) and 180 KB, and 20 KB
// of unused variables with 1,919 errors, 16.6 ms; capped, 9.9 and 8.0 ms, the rest being the
// parse and the validation walk.
const MaxRequestErrors = 100

// capRequestErrors keeps the first MaxRequestErrors of errs, errors refused before execution, and
// says how many more there were.
func capRequestErrors(errs gqlerror.List) gqlerror.List {
	if len(errs) <= MaxRequestErrors {
		return errs
	}
	code := any(errcode.ValidationFailed)
	if c, ok := errs[MaxRequestErrors].Extensions["code"]; ok {
		code = c
	}
	return append(errs[:MaxRequestErrors:MaxRequestErrors], &gqlerror.Error{
		Message:    fmt.Sprintf("%d more errors are left out", len(errs)-MaxRequestErrors),
		Extensions: map[string]any{"code": code},
	})
}

// unknownNames counts the fields and arguments a document names that the schema does not have,
// each as validation reports it: once where it is written (a fragment's once, however often it is
// spread). first describes the first one.
type unknownNames struct {
	n     int
	first string
}

// countUnknownNames counts the fields and arguments of doc that its schema does not have, as
// validation finds them: a field its parent type does not have (__typename aside), an argument its
// field does not take. Below a field or a type condition the schema does not know, nothing is
// counted, as validation reports nothing there.
func countUnknownNames(schema *ast.Schema, doc *ast.QueryDocument) unknownNames {
	var u unknownNames
	note := func(what string) {
		if u.n == 0 {
			u.first = what
		}
		u.n++
	}
	var walk func(ast.SelectionSet, *ast.Definition)
	walk = func(set ast.SelectionSet, typ *ast.Definition) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				if typ == nil || s.Name == "__typename" {
					continue
				}
				def := typ.Fields.ForName(s.Name)
				if def == nil {
					note(fmt.Sprintf("field %q on %s", s.Name, typ.Name))
					continue
				}
				for _, a := range s.Arguments {
					if def.Arguments.ForName(a.Name) == nil {
						note(fmt.Sprintf("argument %q of %s.%s", a.Name, typ.Name, s.Name))
					}
				}
				walk(s.SelectionSet, schema.Types[def.Type.Name()])
			case *ast.InlineFragment:
				t := typ
				if s.TypeCondition != "" {
					t = schema.Types[s.TypeCondition]
				}
				walk(s.SelectionSet, t)
			}
		}
	}
	for _, op := range doc.Operations {
		walk(op.SelectionSet, rootType(schema, op))
	}
	for _, f := range doc.Fragments {
		walk(f.SelectionSet, schema.Types[f.TypeCondition])
	}
	return u
}

// countAliases counts aliased fields written in the document.
func countAliases(doc *ast.QueryDocument) int {
	n := 0
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				if s.Alias != "" && s.Alias != s.Name {
					n++
				}
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

func satAdd(a, b int) int { return min(a+b, costCap) }

func satMul(a, b int) int {
	if a != 0 && b > costCap/a {
		return costCap
	}
	return a * b
}
