package httpapi

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// strictEnums is a gqlgen extension that refuses a variable whose enum value is not spelled as
// the schema spells it. gqlparser's variable validation compares enum values ignoring case, so
// `"sort": "top"` passed it and then failed inside the field, as an internal error; here it is
// what the spec says it is, a variable coercion failure (GRAPHQL_VALIDATION_FAILED, status 400).
type strictEnums struct {
	schema *ast.Schema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = strictEnums{}

// ExtensionName names the extension for gqlgen.
func (strictEnums) ExtensionName() string { return "AgoraStrictEnums" }

// Validate accepts any schema.
func (strictEnums) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext checks the enum values among the operation's variables.
func (e strictEnums) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	for _, def := range oc.Operation.VariableDefinitions {
		if err := e.check(def.Type, oc.Variables[def.Variable], ast.Path{ast.PathName("variable"), ast.PathName(def.Variable)}); err != nil {
			errcode.Set(err, errcode.ValidationFailed)
			return err
		}
	}
	return nil
}

// check checks a value of type t: every enum value in it must be one of the enum's, exactly.
func (e strictEnums) check(t *ast.Type, v any, path ast.Path) *gqlerror.Error {
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
