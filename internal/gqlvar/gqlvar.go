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
	w := walker{doc: doc, field: func(f *ast.Field) bool { return InArguments(f.Arguments) },
		directives: InDirectives, missing: true, seen: map[string]bool{}}
	return w.any(set)
}

// AnyDirective reports whether f holds for a directive of a selection set, with the fragments it
// spreads (found in doc, or by the spreads' own definitions when doc is nil), each once: on a
// field, an inline fragment, a spread or a fragment's definition.
func AnyDirective(doc *ast.QueryDocument, set ast.SelectionSet, f func(d *ast.Directive) bool) bool {
	w := walker{doc: doc, directives: func(ds ast.DirectiveList) bool {
		for _, d := range ds {
			if f(d) {
				return true
			}
		}
		return false
	}, seen: map[string]bool{}}
	return w.any(set)
}

// walker is the one walk of a selection set and the fragments it spreads, each once, asking of
// every field (field, when set) and every list of directives whether it holds what is looked for.
type walker struct {
	doc        *ast.QueryDocument
	field      func(f *ast.Field) bool
	directives func(ds ast.DirectiveList) bool
	missing    bool // what a spread of a fragment that cannot be found counts as
	seen       map[string]bool
}

// any reports whether a field or directive list of set, or of what it spreads, holds.
func (w walker) any(set ast.SelectionSet) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if w.field != nil && w.field(s) || w.directives(s.Directives) || w.any(s.SelectionSet) {
				return true
			}
		case *ast.InlineFragment:
			if w.directives(s.Directives) || w.any(s.SelectionSet) {
				return true
			}
		case *ast.FragmentSpread:
			if w.directives(s.Directives) {
				return true
			}
			if w.seen[s.Name] {
				continue
			}
			w.seen[s.Name] = true
			def := s.Definition
			if w.doc != nil {
				if d := w.doc.Fragments.ForName(s.Name); d != nil {
					def = d
				}
			}
			if def == nil {
				if w.missing {
					return true
				}
				continue
			}
			if w.directives(def.Directives) || w.any(def.SelectionSet) {
				return true
			}
		}
	}
	return false
}
