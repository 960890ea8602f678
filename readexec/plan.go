// Package readexec executes the read queries of agora's pages — a post with its comment thread,
// lists of posts, their authors — without gqlgen's per-field machinery, writing the response's
// JSON straight into one buffer.
//
// gqlgen's executor gives every field a FieldContext, a context and closures, computes the path
// of every object, and runs every resolver field and every list element in a goroutine: on an
// 800-comment thread that is more than 200 allocations and several goroutines per comment, 80% of
// the time of a read whose data the loader has already fetched level by level. A query whose every
// field is one readexec knows (see the tables in fields.go) is planned once per request — its
// fields collected, its arguments coerced, once per field of the document rather than once per
// object — and then written object by object, calling the same resolvers gqlgen would call, in
// the same order of data, with the same errors, paths and null propagation. Any other operation
// (mutations, subscriptions, introspection, @defer, a field readexec does not know) goes to
// gqlgen unchanged, so readexec is only ever a faster way to produce gqlgen's answer; the
// differential tests in httpapi hold the two to byte-identical data.
package readexec

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/agora/agora/graph"
	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/internal/gqlvar"
)

// Schema is a gqlgen ExecutableSchema that executes the queries it can plan itself and hands the
// rest to the schema it wraps.
type Schema struct {
	graphql.ExecutableSchema
	root graph.ResolverRoot

	// scratch holds buffers to write responses in (*[]byte), reused from response to response:
	// a response grown from nothing allocates and copies about twice its size on the way (half
	// a megabyte for a thread page); written in a buffer already grown, it costs one copy of its
	// exact size.
	scratch sync.Pool

	// plans keeps the plans of operations, by the operation in the executor's query cache (one
	// document per query text, parsed once). A plan holds what its variables do not change;
	// the arguments that name variables are bound per response (see run.bind).
	plans *lru.Cache[*ast.OperationDefinition, *plan]

	// ran and handed count the queries readexec executed and those it handed to gqlgen.
	ran, handed atomic.Uint64
}

// Counts returns how many queries readexec has executed itself and how many it handed to the
// schema it wraps (mutations and subscriptions are not counted).
func (s *Schema) Counts() (ran, handed uint64) { return s.ran.Load(), s.handed.Load() }

// planCacheSize is how many operations' plans are kept at most; a plan also goes when the
// executor's cache lets its document go (Forget).
const planCacheSize = 1000

// maxScratch is the largest buffer kept for reuse.
const maxScratch = 4 << 20

// Wrap returns es with the read queries it can plan executed by readexec, through the resolvers
// of root (the resolvers es was made with).
func Wrap(es graphql.ExecutableSchema, root graph.ResolverRoot) *Schema {
	plans, err := lru.New[*ast.OperationDefinition, *plan](planCacheSize)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &Schema{ExecutableSchema: es, root: root, plans: plans}
}

// Forget drops the plans of doc's operations: the executor no longer keeps doc, and a plan holds
// its operation, and through it the document's text.
func (s *Schema) Forget(doc *ast.QueryDocument) {
	for _, op := range doc.Operations {
		s.plans.Remove(op)
	}
}

// Runs reports whether readexec executes the operation of oc itself (Exec's decision), rather
// than handing it to the schema it wraps: a query whose every field readexec's tables list (see
// Tables). It plans the operation, and the plan is kept for Exec.
func (s *Schema) Runs(oc *graphql.OperationContext) bool { return s.planned(oc) != nil }

// planned returns the plan readexec executes oc's operation with, or nil when the schema it
// wraps executes it: a mutation, a subscription, or a query with a field readexec does not know.
func (s *Schema) planned(oc *graphql.OperationContext) *plan {
	if oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return nil
	}
	if pl := s.plan(oc); pl.root != nil {
		return pl
	}
	return nil
}

// Exec executes the operation of ctx's OperationContext.
func (s *Schema) Exec(ctx context.Context) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	pl := s.planned(oc)
	if pl == nil {
		if oc.Operation != nil && oc.Operation.Operation == ast.Query {
			s.handed.Add(1)
		}
		return s.ExecutableSchema.Exec(ctx)
	}
	s.ran.Add(1)
	done := false
	return func(ctx context.Context) *graphql.Response {
		if done {
			return nil
		}
		done = true
		buf, _ := s.scratch.Get().(*[]byte)
		if buf == nil {
			buf = new([]byte)
		}
		r := newRun(ctx, oc, s.root, (*buf)[:0])
		data := bytes.Clone(r.query(pl))
		if cap(r.buf) <= maxScratch {
			*buf = r.buf
			s.scratch.Put(buf)
		}
		return &graphql.Response{Data: data}
	}
}

// object is the plan of a selection set on one object type: the fields to write, in order.
type object struct {
	typ    objectType
	fields []field
}

// field is one field of an object's plan: its response key, what it shows, and, when it shows an
// object or a list of objects, the plan of that object. A field with a resolver has a
// FieldContext, for the resolvers that read their own selection or arguments, its coerced
// arguments, and a slot: the place of its binding in a response (see run.bind), which holds the
// response's context with the FieldContext — once per field of the document, not once per
// object — and, when its arguments name variables, the FieldContext and arguments of that
// response's variables.
type field struct {
	key     []byte // `"alias":`, quoted as gqlgen quotes it
	alias   string
	id      fieldID
	nonNull bool
	loc     *ast.Position
	child   *object
	fc      *graphql.FieldContext // nil for a field without a resolver
	slot    int
	varArgs bool    // its arguments name variables: bound per response
	argKind argKind // what coerce makes of its arguments
	args    args    // coerced, when they name no variable
	argErr  error
}

// plan is a planned operation: the plan of its root object, nil when readexec does not know one
// of its fields, and the number of its resolver fields' slots.
type plan struct {
	root  *object
	slots int
}

// args are a field's arguments, coerced as gqlgen coerces them.
type args struct {
	id          string
	name        string
	commentSort *model.CommentSort
	postSort    *model.PostSort
	group       *string
	hideRead    *bool // Query.posts only
	first, last *int
	after       *string
	before      *string
	// revealSpoiler is Post.body's argument.
	revealSpoiler *bool
}

// requestPlan names the plan of one request's operation in its OperationContext's stats: the
// plan of an operation whose directives name variables, made once for the request by the first
// of Runs (the limits check's question) and Exec to ask, and used by the other.
const requestPlan = "readexec.plan"

// plan returns the plan of the operation, planned once per operation of the executor's query
// cache unless a directive's argument names a variable (@include(if: $x)): what such an
// operation selects depends on its variables, so it is planned once for every request, and
// kept with the request's OperationContext.
func (s *Schema) plan(oc *graphql.OperationContext) *plan {
	if pl, ok := s.plans.Get(oc.Operation); ok {
		return pl
	}
	if pl, ok := oc.Stats.GetExtension(requestPlan).(*plan); ok {
		return pl
	}
	p := planner{oc: oc}
	pl := &plan{}
	if root, ok := p.object(oc.Operation.SelectionSet, typeQuery, &pl.slots); ok {
		pl.root = root
	}
	if directiveVariables(oc.Doc, oc.Operation) {
		oc.Stats.SetExtension(requestPlan, pl)
	} else {
		s.plans.Add(oc.Operation, pl)
	}
	return pl
}

// directiveVariables reports whether a directive in op or in a fragment of doc takes a variable.
func directiveVariables(doc *ast.QueryDocument, op *ast.OperationDefinition) bool {
	takesOne := func(d *ast.Directive) bool { return gqlvar.InArguments(d.Arguments) }
	if gqlvar.AnyDirective(doc, op.SelectionSet, takesOne) {
		return true
	}
	for _, f := range doc.Fragments {
		if gqlvar.AnyDirective(doc, f.SelectionSet, takesOne) {
			return true
		}
	}
	return false
}

// planner plans the selection sets of one operation.
type planner struct {
	oc *graphql.OperationContext
}

// object plans a selection set on an object of type t.
// Each resolver field takes the next of slots.
func (p planner) object(sel ast.SelectionSet, t objectType, slots *int) (*object, bool) {
	info := &types[t]
	collected := graphql.CollectFields(p.oc, sel, info.implements)
	o := &object{typ: t, fields: make([]field, 0, len(collected))}
	for _, cf := range collected {
		if len(cf.Deferrables) > 0 {
			return nil, false
		}
		f := field{key: quoteKey(cf.Alias), alias: cf.Alias, loc: cf.Position}
		if cf.Name == "__typename" {
			f.id = fieldTypename
			f.nonNull = true
			o.fields = append(o.fields, f)
			continue
		}
		spec, ok := info.fields[cf.Name]
		if !ok || cf.Definition == nil {
			return nil, false
		}
		f.id = spec.id
		f.nonNull = cf.Definition.Type.NonNull
		if spec.child != typeNone {
			if elem := cf.Definition.Type.Elem; elem != nil && !elem.NonNull {
				return nil, false // readexec writes lists of non-null objects only
			}
			child, ok := p.object(cf.Selections, spec.child, slots)
			if !ok {
				return nil, false
			}
			f.child = child
		}
		if spec.resolver || spec.args != argsNone { // a slot: a resolver's context, a field's arguments
			f.fc = &graphql.FieldContext{Object: info.name, Field: cf, IsMethod: true, IsResolver: spec.resolver}
			f.slot, f.argKind, f.varArgs = *slots, spec.args, gqlvar.InArguments(cf.Arguments)
			*slots++
			if !f.varArgs && (len(cf.Arguments) > 0 || len(cf.Definition.Arguments) > 0) {
				f.fc.Args = cf.ArgumentMap(nil)
				f.args, f.argErr = coerce(spec.args, f.fc.Args)
			}
		}
		o.fields = append(o.fields, f)
	}
	return o, true
}

// quoteKey returns a response key as gqlgen writes it: quoted, followed by a colon.
func quoteKey(alias string) []byte {
	b := appendQuoted(make([]byte, 0, len(alias)+3), alias)
	return append(b, ':')
}
