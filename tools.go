//go:build tools

// Package tools pins the gqlgen code generator so that "go generate ./..." uses the version in go.mod.
package tools

import _ "github.com/99designs/gqlgen"
