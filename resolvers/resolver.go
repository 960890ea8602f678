// Package resolvers holds agora's GraphQL resolvers and its HTTP handler. Resolvers are thin: they
// turn arguments into store calls and store values into GraphQL values.
package resolvers

import (
	"log/slog"

	"github.com/agora/agora/store"
)

// Resolver is the root resolver. It holds no per-request state; that travels in the context.
type Resolver struct {
	Store *store.Store
	Log   *slog.Logger
}
