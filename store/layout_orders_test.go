package store_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// asLayout5 writes the reply orders of parent (nil for the top level) as layout 5 kept them, with
// the thread's keys named as layout 5 named them:
// every parent with replies keeps TOP, BEST and CONTROVERSIAL, CONTROVERSIAL scored with
// math.Pow (as C's pow scored it, up to the last bit), and no parent is marked.
func (th *thread) asLayout5(parent *store.Comment) {
	th.t.Helper()
	ctx := context.Background()
	if _, err := th.s.PadThreadKeysForTest(ctx, th.post.Key()); err != nil { // layout 5's names
		th.t.Fatal(err)
	}
	num := "0"
	mark := th.prefix + "{p:" + th.post.Key() + "}"
	if parent != nil {
		num = commentNum(parent.ID)
		mark += ":c:" + num
	}
	base := th.prefix + "{p:" + th.post.Key() + "}:c:"
	members, err := th.b.Client.ZRange(ctx, base+num+":rt", 0, -1).Result()
	if err != nil {
		th.t.Fatal(err)
	}
	for _, m := range members {
		h, err := th.b.Client.HMGet(ctx, base+m, "up", "down").Result()
		if err != nil {
			th.t.Fatal(err)
		}
		up, _ := strconv.Atoi(fmt.Sprint(h[0]))
		down, _ := strconv.Atoi(fmt.Sprint(h[1]))
		best := store.ReplyScoreForTest(store.CommentsBest, up, down)
		for suffix, score := range map[string]float64{":rs": float64(up - down), ":rb": best, ":rc": store.Controversy(up, down)} {
			if err := th.b.Client.ZAdd(ctx, base+num+suffix, rdb.Z{Score: score, Member: m}).Err(); err != nil {
				th.t.Fatal(err)
			}
		}
	}
	if err := th.b.Client.HDel(ctx, mark, "o").Err(); err != nil {
		th.t.Fatal(err)
	}
}

// TestMigrateReplyOrders writes a thread, turns its reply orders into layout 5's (every parent
// keeps all four), and migrates: reads are the same before (the migration runs beside traffic),
// after a first run and after a second; afterwards only the parent with ReplyOrdersAt replies or
// more keeps its orders, marked, with this layout's scores, and a reply added to a parent below
// it leaves that parent without them.
func TestMigrateReplyOrders(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{WriteLimit: -1})
		var tops []*store.Comment
		for i := range store.ReplyOrdersAt + 3 {
			vc := votedComments[i%len(votedComments)]
			vc.name = fmt.Sprintf("%s%d", vc.name, i)
			tops = append(tops, th.voted(nil, vc))
		}
		small := tops[4]
		for i, vc := range votedComments {
			vc.name = fmt.Sprintf("r%d", i)
			th.voted(small, vc)
		}
		want := th.listEvery(nil)
		wantSmall := th.listEvery(small)
		th.asLayout5(nil)
		th.asLayout5(small)
		if err := b.Client.HSet(ctx, th.prefix+"{meta}:layout", "version", 5).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := th.s.CheckLayout(ctx); err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			sameLists(t, when+", the top level", th.listEvery(nil), want)
			sameLists(t, when+", the replies of a comment", th.listEvery(small), wantSmall)
		}
		for _, sort := range allCommentSorts[2:] { // the layout-5 orders' cursors of CONTROVERSIAL may differ in the last bit
			if sort == store.CommentsControversial {
				continue
			}
			sameLists(t, "before the migration", map[store.CommentSort]listed{sort: th.listAll(nil, sort, 4)},
				map[store.CommentSort]listed{sort: want[sort]})
		}
		if !th.keepsOrders(small) {
			t.Fatal("layout 5: the small parent keeps no orders")
		}

		for run := range 2 {
			if n, err := th.s.MigrateReplyOrdersForTest(ctx); err != nil || n != 1 {
				t.Fatalf("run %d went through %d threads (%v), want 1", run, n, err)
			}
			check(fmt.Sprintf("after run %d", run))
			if th.keepsOrders(small) || !th.keepsOrders(nil) {
				t.Fatalf("run %d: the small parent keeps its orders %v, the top level %v", run, th.keepsOrders(small), th.keepsOrders(nil))
			}
			th.check() // CheckThread: marks and orders as this layout keeps them
		}
		ran, err := th.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != store.Layout-5 || ran[0].From != 5 {
			t.Fatalf("ran %+v, %v; want the migration from layout 5", ran, err)
		}
		check("after Migrate")
		th.voted(small, votedComment{name: "late", up: 1})
		if th.keepsOrders(small) {
			t.Fatal("a reply to the small parent built its orders")
		}
		th.check()
	})
}
