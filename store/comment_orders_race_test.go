package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// splitReplyRead returns a client hook that, once armed, cuts the first pipeline holding a reply
// list read in a vote order (the read of a time order's first ReplyOrdersAt members, and the page
// of a TOP, BEST or CONTROVERSIAL sorted set) between those two reads, whichever comes first, and
// runs between between the two parts: a write of another client landing inside the pipeline, as
// it may on a shared Redis. It disarms itself.
func splitReplyRead(armed *atomic.Bool, between func()) *storetest.Hook {
	return &storetest.Hook{Pipeline: func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
		order, page := -1, -1
		for i, c := range cmds {
			args := make([]any, len(c.Args()))
			for j, arg := range c.Args() {
				args[j] = storetest.ArgString(arg) // keys may go by their address
			}
			a := fmt.Sprintln(args...) // spaces between every argument
			switch {
			case order < 0 && strings.HasPrefix(strings.ToLower(a), "zrange") &&
				strings.Contains(a, ":rt 0 "+fmt.Sprint(store.ReplyOrdersAt-1)):
				order = i
			case page < 0 && (strings.Contains(a, ":rs") || strings.Contains(a, ":rb") || strings.Contains(a, ":rc")):
				page = i
			}
		}
		if order < 0 || page < 0 || !armed.CompareAndSwap(true, false) {
			return next(ctx, cmds)
		}
		cut := max(order, page)
		if err := next(ctx, cmds[:cut]); err != nil {
			return err
		}
		between()
		return next(ctx, cmds[cut:])
	}}
}

// TestReplyOrdersCrossingDuringRead: a reply that brings a parent to ReplyOrdersAt replies while
// a read of its replies in TOP, BEST or CONTROVERSIAL is in flight (between the commands of its
// pipeline) leaves the read with every reply, not an empty page.
func TestReplyOrdersCrossingDuringRead(t *testing.T) {
	sorts := map[string]store.CommentSort{"TOP": store.CommentsTop, "BEST": store.CommentsBest,
		"CONTROVERSIAL": store.CommentsControversial}
	for name, sort := range sorts {
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				th := newThread(t, b, store.Options{WriteLimit: -1})
				parent := th.add("author", nil, "parent")
				for i := range store.ReplyOrdersAt - 1 {
					th.add("author", parent, fmt.Sprintf("reply %d", i))
				}
				var armed atomic.Bool
				hb := b.Hooked(t, splitReplyRead(&armed, func() { th.add("author", parent, "the crossing reply") }))
				reader := hb.NewStore(t, store.Options{Prefix: th.prefix, WriteLimit: -1})
				fresh := th.get(parent.ID)
				armed.Store(true)
				p, err := reader.NewLoader().Replies(context.Background(), fresh, sort, store.Window{First: 10}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if armed.Load() {
					t.Fatal("the read did not go through the hook")
				}
				if len(p.Items) != 10 || p.Total < store.ReplyOrdersAt-1 {
					t.Errorf("a read crossed by reply number %d: %d replies, total %d; want 10, total %d or more",
						store.ReplyOrdersAt, len(p.Items), p.Total, store.ReplyOrdersAt-1)
				}
			})
		})
	}
}
