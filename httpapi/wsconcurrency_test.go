package httpapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// slowRedis makes every command and pipeline take delay while armed, and records the most that
// were in flight at once.
type slowRedis struct {
	delay          time.Duration
	armed          atomic.Bool
	inFlight, peak atomic.Int64
}

func (h *slowRedis) hold() func() {
	if !h.armed.Load() {
		return func() {}
	}
	n := h.inFlight.Add(1)
	for {
		p := h.peak.Load()
		if n <= p || h.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(h.delay)
	return func() { h.inFlight.Add(-1) }
}

// hook is the client hook that slows every command and pipeline down.
func (h *slowRedis) hook() *storetest.Hook {
	return storetest.OnEach(func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
		defer h.hold()()
		return next(ctx, cmds)
	})
}

// TestWebSocketBoundsOperationsAtOnce: queries and mutations sent over one WebSocket run at most
// a few at a time, as they would over one HTTP connection. Without a bound, one anonymous socket
// sending a burst of start messages had every one of them executing at once (a goroutine, a
// loader and Redis round trips each), bounded by nothing but the client's patience.
func TestWebSocketBoundsOperationsAtOnce(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		slow := &slowRedis{delay: 5 * time.Millisecond}
		b = b.Hooked(t, slow.hook())
		st := b.NewStore(t, store.Options{})
		hub := live.New(st, live.Options{})
		srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: hub, ResponseCacheMiB: -1}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { _ = hub.Close() })

		for _, proto := range []string{protoTransportWS, protoGraphQLWS} {
			t.Run(proto, func(t *testing.T) {
				c, _, err := dialWS(t.Context(), srv.URL, proto, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer c.close()
				c.init(t, "")
				slow.peak.Store(0)
				slow.armed.Store(true)
				defer slow.armed.Store(false)
				const n = 200
				var wg sync.WaitGroup
				wg.Go(func() {
					for i := range n {
						c.start(t, fmt.Sprint(i), `{ posts(first: 3) { totalCount } }`, nil)
					}
				})
				answered := 0
				for answered < n {
					m := c.recv(t)
					if m.Type == "complete" {
						answered++
					}
				}
				wg.Wait()
				// One query may have two reads in flight at once (225 for 200 queries unbounded), so
				// MaxSocketOperations of them may have twice as many round trips in flight.
				if p, most := slow.peak.Load(), int64(2*httpapi.MaxSocketOperations); p > most {
					t.Errorf("%d round trips to Redis in flight at once for %d queries on one socket, want at most %d", p, n, most)
				}
			})
		}
	})
}
