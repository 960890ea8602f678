package readexec

import "github.com/99designs/gqlgen/graphql"

// PlanOf returns the plan s executes oc's operation with, as an opaque value tests compare.
func PlanOf(s *Schema, oc *graphql.OperationContext) any { return s.plan(oc) }
