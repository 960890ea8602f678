// Package resolvers holds agora's GraphQL resolvers. They are thin: they turn arguments into store
// calls (or reads through the request's loader) and store values into GraphQL values.
package resolvers

import (
	"log/slog"

	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
)

// Resolver is the root resolver. It holds no per-request state; that travels in the context.
type Resolver struct {
	Store *store.Store
	Live  *live.Hub // subscriptions subscribe through it
	Log   *slog.Logger
}
