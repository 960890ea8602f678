package httpapi

import (
	"context"

	"github.com/agora/agora/internal/gqlvar"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// strictVariables is a gqlgen extension that refuses, as the variable coercion failures the spec
// says they are (GRAPHQL_VALIDATION_FAILED, status 400), what gqlparser's validation of the
// variables lets through and the execution then failed on as an internal error:
//
//   - an enum value not spelled as the schema spells it: gqlparser compares them ignoring case, so
//     `"sort": "top"` passed it and failed inside the field;
//   - a variable given null that is the if of @include or @skip, which takes a Boolean!: a
//     nullable variable with a default may stand there, and an explicit null then reached
//     gqlgen's collection of the fields, which panicked (500).
//
// It runs before the operation is planned or its cost charged (handler.go registers it first).
type strictVariables struct {
	schema *ast.Schema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = strictVariables{}

// ExtensionName names the extension for gqlgen.
func (strictVariables) ExtensionName() string { return "AgoraStrictVariables" }

// Validate accepts any schema.
func (strictVariables) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext checks the enum values among the operation's variables, and the
// variables that are the if of a directive.
func (e strictVariables) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	for _, def := range oc.Operation.VariableDefinitions {
		if !e.enumTyped(def.Type) {
			continue // most variables: nothing to check, and no path to make
		}
		if err := e.check(def.Type, oc.Variables[def.Variable], ast.Path{ast.PathName("variable"), ast.PathName(def.Variable)}); err != nil {
			errcode.Set(err, errcode.ValidationFailed)
			return err
		}
	}
	if name, dir, ok := nullCondition(oc.Doc, oc.Operation, oc.Variables); ok {
		err := gqlerror.ErrorPathf(ast.Path{ast.PathName("variable"), ast.PathName(name)},
			"variable $%s is null, where @%s(if:) takes a Boolean!", name, dir)
		errcode.Set(err, errcode.ValidationFailed)
		return err
	}
	return nil
}

// nullCondition finds a variable of vars that is null and the if of an @include or @skip of op's
// selections (the fragments it spreads included), and the directive's name.
func nullCondition(doc *ast.QueryDocument, op *ast.OperationDefinition, vars map[string]any) (name, dir string, ok bool) {
	ok = gqlvar.AnyDirective(doc, op.SelectionSet, func(d *ast.Directive) bool {
		if d.Name != "include" && d.Name != "skip" {
			return false
		}
		a := d.Arguments.ForName("if")
		if a == nil || a.Value == nil || a.Value.Kind != ast.Variable {
			return false
		}
		if v, given := vars[a.Value.Raw]; given && v == nil {
			name, dir = a.Value.Raw, d.Name
			return true
		}
		return false
	})
	return name, dir, ok
}

// enumTyped reports whether t is an enum type, or a list of one at any depth.
func (e strictVariables) enumTyped(t *ast.Type) bool {
	for t.Elem != nil {
		t = t.Elem
	}
	def := e.schema.Types[t.NamedType]
	return def != nil && def.Kind == ast.Enum
}

// check checks a value of type t: every enum value in it must be one of the enum's, exactly.
func (e strictVariables) check(t *ast.Type, v any, path ast.Path) *gqlerror.Error {
	if v == nil {
		return nil
	}
	if t.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return e.check(t.Elem, v, path) // a single value stands for a list of one
		}
		for i, item := range list {
			if err := e.check(t.Elem, item, append(path, ast.PathIndex(i))); err != nil {
				return err
			}
		}
		return nil
	}
	def := e.schema.Types[t.NamedType]
	if def == nil || def.Kind != ast.Enum {
		return nil
	}
	s, _ := v.(string)
	if def.EnumValues.ForName(s) == nil {
		return gqlerror.ErrorPathf(path, "%v is not a valid %s", v, def.Name)
	}
	return nil
}
