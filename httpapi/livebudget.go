package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/agora/agora/resolvers"
	"github.com/agora/agora/store"
)

// The work the server accepts for live subscriptions is bounded in cost: a subscription costs
// what its document would cost as a query (see measurer), which is about the work every event it
// receives makes the server do. A subscription is refused with TOO_MANY_SUBSCRIPTIONS when it
// would take its WebSocket or event stream, its client address, or the whole process over the
// budget; anonymous subscriptions have smaller budgets than signed-in ones. The WebSockets and
// event streams one address may hold open at once are capped too.

// liveBudget holds the costs of the open subscriptions by client address and in total, and the
// streams open by address.
type liveBudget struct {
	live Live

	mu    sync.Mutex
	total int64
	addrs map[string]*addrUse
}

// addrUse is what one client address holds.
type addrUse struct {
	streams  int   // WebSockets and event streams open
	cost     int64 // cost of its open subscriptions
	anonCost int64 // the part of cost held by anonymous subscriptions
}

func newLiveBudget(l Live) *liveBudget {
	return &liveBudget{live: l, addrs: map[string]*addrUse{}}
}

// use returns the entry of addr, creating it; callers hold mu.
func (b *liveBudget) use(addr string) *addrUse {
	u := b.addrs[addr]
	if u == nil {
		u = &addrUse{}
		b.addrs[addr] = u
	}
	return u
}

// forget drops the entry of addr once it holds nothing; callers hold mu.
func (b *liveBudget) forget(addr string, u *addrUse) {
	if u.streams == 0 && u.cost == 0 {
		delete(b.addrs, addr)
	}
}

// openStream counts a WebSocket or event stream from addr. It reports false, taking nothing,
// when addr already holds MaxStreamsPerAddress.
func (b *liveBudget) openStream(addr string) (release func(), ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.use(addr)
	if max := b.live.MaxStreamsPerAddress; max > 0 && u.streams >= max {
		b.forget(addr, u)
		return nil, false
	}
	u.streams++
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			u.streams--
			b.forget(addr, u)
		})
	}, true
}

// reserve takes cost for a subscription from addr's budget and the process's. It returns the
// refusal instead when either would be exceeded.
func (b *liveBudget) reserve(addr string, anon bool, cost int64) (release func(), refusal *gqlerror.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if max := int64(b.live.MaxProcessCost); max > 0 && b.total+cost > max {
		return nil, limitError(CodeTooManySubscriptions,
			"the server holds as many live subscriptions as it takes (cost %d of %d, this one %d); retry later", b.total, max, cost)
	}
	u := b.use(addr)
	if max := int64(b.live.MaxAddressCost); max > 0 && u.cost+cost > max {
		b.forget(addr, u)
		return nil, limitError(CodeTooManySubscriptions,
			"the subscriptions open from your address would cost more than %d (this one costs %d)", max, cost)
	}
	if max := int64(b.live.MaxAnonAddressCost); anon && max > 0 && u.anonCost+cost > max {
		b.forget(addr, u)
		return nil, limitError(CodeTooManySubscriptions,
			"the anonymous subscriptions open from your address would cost more than %d (this one costs %d); sign in for a larger budget", max, cost)
	}
	b.total += cost
	u.cost += cost
	if anon {
		u.anonCost += cost
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.total -= cost
			u.cost -= cost
			if anon {
				u.anonCost -= cost
			}
			b.forget(addr, u)
		})
	}, nil
}

// limitStreams caps the WebSockets and event streams open at once from one client address; an
// upgrade or event-stream request over the cap is answered 429.
func (b *liveBudget) limitStreams(w http.ResponseWriter, r *http.Request, next func()) {
	release, ok := b.openStream(store.ClientFrom(r.Context()))
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(retryStreamsAfter))
		writeError(w, http.StatusTooManyRequests, "your address has too many WebSockets and event streams open; close one first", CodeTooManySubscriptions)
		return
	}
	defer release()
	next()
}

// retryStreamsAfter is the Retry-After, in seconds, of a refused stream: streams end when their
// clients close them, so there is no exact time to give.
const retryStreamsAfter = 5

// limitSubscriptions is an operation middleware: subscriptions run only on streaming transports,
// at most MaxSubscriptions at once on one WebSocket, within the socket's budgets of document
// bytes and cost, and within the budgets of their client address and of the process.
func limitSubscriptions(schema *ast.Schema, lim Limits, live Live, budget *liveBudget) graphql.OperationMiddleware {
	costs := newCostModel(schema)
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		if oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
			return next(ctx)
		}
		if streaming, _ := ctx.Value(streamingKey{}).(bool); !streaming {
			return refuseOperation(limitError(CodeStreamingRequired,
				"subscriptions need a WebSocket or server-sent events (POST with Accept: text/event-stream)"))
		}
		req := resolvers.RequestFrom(ctx)
		anon := req == nil || req.Viewer == ""
		m, _ := measureOperation(costs, lim, oc.Doc, oc.Operation, oc.Variables)
		cost := int64(max(m.cost, 1))
		socketCost := int64(live.MaxSocketCost)
		if anon {
			socketCost = int64(live.MaxAnonSocketCost)
		}

		var releases []func()
		undo := func() {
			for _, r := range releases {
				r()
			}
		}
		s, _ := ctx.Value(socketKey{}).(*socket)
		if s == nil { // server-sent events: one subscription per stream
			if cost > socketCost {
				return refuseOperation(socketCostError(socketCost, cost, anon))
			}
		} else {
			if !take(&s.subscriptions, 1, int64(live.MaxSubscriptions)) {
				return refuseOperation(limitError(CodeTooManySubscriptions, "this connection already has %d subscriptions open", live.MaxSubscriptions))
			}
			releases = append(releases, func() { s.subscriptions.Add(-1) })
			size := documentBytes(oc)
			if !take(&s.docBytes, size, live.MaxSocketBytes) {
				undo()
				return refuseOperation(limitError(CodeTooManySubscriptions,
					"the subscriptions open on this connection would hold more than %d bytes of documents", live.MaxSocketBytes))
			}
			releases = append(releases, func() { s.docBytes.Add(-size) })
			if !take(&s.cost, cost, socketCost) {
				undo()
				return refuseOperation(socketCostError(socketCost, cost, anon))
			}
			releases = append(releases, func() { s.cost.Add(-cost) })
		}
		release, refusal := budget.reserve(store.ClientFrom(ctx), anon, cost)
		if refusal != nil {
			undo()
			return refuseOperation(refusal)
		}
		releases = append(releases, release)

		// Everything is given back when the response loop sees the end of the stream, before the
		// transport sends complete, so a client that starts another subscription on seeing
		// complete finds room for it; and, as a backstop, when the transport cancels the
		// operation's context, which it does however the operation ends.
		var once sync.Once
		free := func() { once.Do(undo) }
		context.AfterFunc(ctx, free)
		h := next(ctx)
		return func(ctx context.Context) *graphql.Response {
			r := h(ctx)
			if r == nil {
				free()
			}
			return r
		}
	}
}

func socketCostError(max, cost int64, anon bool) *gqlerror.Error {
	if anon {
		return limitError(CodeTooManySubscriptions,
			"the subscriptions open on this connection would cost more than %d (this one costs %d); sign in for a larger budget", max, cost)
	}
	return limitError(CodeTooManySubscriptions, "the subscriptions open on this connection would cost more than %d (this one costs %d)", max, cost)
}

// take adds n to c unless that takes it over max, in which case it leaves c as it was.
func take(c *atomic.Int64, n, max int64) bool {
	if c.Add(n) > max {
		c.Add(-n)
		return false
	}
	return true
}

// documentBytes is the size of an operation's document and variables, which a socket keeps while
// the subscription runs.
func documentBytes(oc *graphql.OperationContext) int64 {
	size := int64(len(oc.RawQuery))
	for _, v := range oc.Variables {
		if b, err := json.Marshal(v); err == nil {
			size += int64(len(b))
		}
	}
	return size
}

// refuseOperation answers an operation with one error instead of running it.
func refuseOperation(e *gqlerror.Error) graphql.ResponseHandler {
	return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{e}})
}
