// Package gqlvar tells whether parts of a GraphQL document name variables: what the caches that
// keep what a document derives — readexec's plans, the resolvers' needs — must work out per
// request rather than once per document. It is the one walk of a document for its variables, and
// of a selection for its directives (AnyDirective).
package gqlvar

import "github.com/vektah/gqlparser/v2/ast"

// InValue reports whether a value is a variable or holds one (in a list or an object).
func InValue(v *ast.Value) bool {
	if v == nil {
		return false
	}
	if v.Kind == ast.Variable {
		return true
	}
	for _, c := range v.Children {
		if InValue(c.Value) {
			return true
		}
	}
	return false
}

// InArguments reports whether an argument's value is or holds a variable.
func InArguments(args ast.ArgumentList) bool {
	for _, a := range args {
		if InValue(a.Value) {
			return true
		}
	}
	return false
}

// InDirectives reports whether an argument of a directive is or holds a variable.
func InDirectives(ds ast.DirectiveList) bool {
	for _, d := range ds {
		if InArguments(d.Arguments) {
			return true
		}
	}
	return false
}

// InSelection reports whether a selection set, with the fragments it spreads (found in doc, or
// by the spreads' own definitions when doc is nil), names a variable: in an argument of a field
// or of a directive. A spread of a fragment that cannot be found counts as naming one.
func InSelection(doc *ast.QueryDocument, set ast.SelectionSet) bool {
	return inSelection(doc, set, map[string]bool{})
}

func inSelection(doc *ast.QueryDocument, set ast.SelectionSet, seen map[string]bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if InArguments(s.Arguments) || InDirectives(s.Directives) || inSelection(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.InlineFragment:
			if InDirectives(s.Directives) || inSelection(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if InDirectives(s.Directives) {
				return true
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			def := s.Definition
			if doc != nil {
				if d := doc.Fragments.ForName(s.Name); d != nil {
					def = d
				}
			}
			if def == nil || InDirectives(def.Directives) || inSelection(doc, def.SelectionSet, seen) {
				return true
			}
		}
	}
	return false
}

// AnyDirective reports whether f holds for a directive of a selection set, with the fragments it
// spreads (found in doc, or by the spreads' own definitions when doc is nil), each once: on a
// field, an inline fragment, a spread or a fragment's definition.
func AnyDirective(doc *ast.QueryDocument, set ast.SelectionSet, f func(d *ast.Directive) bool) bool {
	return anyDirective(doc, set, f, map[string]bool{})
}

func anyDirective(doc *ast.QueryDocument, set ast.SelectionSet, f func(d *ast.Directive) bool, seen map[string]bool) bool {
	holds := func(ds ast.DirectiveList) bool {
		for _, d := range ds {
			if f(d) {
				return true
			}
		}
		return false
	}
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if holds(s.Directives) || anyDirective(doc, s.SelectionSet, f, seen) {
				return true
			}
		case *ast.InlineFragment:
			if holds(s.Directives) || anyDirective(doc, s.SelectionSet, f, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if holds(s.Directives) {
				return true
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			def := s.Definition
			if doc != nil {
				if d := doc.Fragments.ForName(s.Name); d != nil {
					def = d
				}
			}
			if def != nil && (holds(def.Directives) || anyDirective(doc, def.SelectionSet, f, seen)) {
				return true
			}
		}
	}
	return false
}
