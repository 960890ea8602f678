package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestWalkDeepThreadKeepsEveryPage walks a thread four levels deep whose comments show their
// authors' karma, so that every round of the walk reads both the items of the pages the round
// before read and the authors of the hashes it read (the rounds reuse their slices): the walk
// keeps every page of replies under its own list, the resolvers then list those pages, the same
// as a fresh read of each list, and listing them reads nothing more. TOP ranks these few replies in the reader; NEW reads its
// sorted sets.
func TestWalkDeepThreadKeepsEveryPage(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		th := newThread(t, b, store.Options{WriteLimit: -1})
		// Five top-level comments, the last with three replies, each with two, each with one:
		// a round may read fewer pages than the round before, or more.
		var add func(parent *store.Comment, depth, children int)
		n := 0
		add = func(parent *store.Comment, depth, children int) {
			for i := range children {
				n++
				c := th.add(fmt.Sprintf("a%d", n%5), parent, fmt.Sprintf("c%d", n))
				switch {
				case depth == 0 && i == children-1: // the newest, first in NEW
					add(c, 1, 3)
				case depth == 1:
					add(c, 2, 2)
				case depth == 2:
					add(c, 3, 1)
				}
			}
		}
		add(nil, 0, 5)
		post := th.reloadPost()
		for _, sort := range []store.CommentSort{store.CommentsNew, store.CommentsTop} {
			rw := store.Window{First: 3}
			author := &store.Needs{Karma: true}
			var needs *store.Needs
			for range 3 { // the levels below the top one
				below := &store.Needs{Author: author}
				if needs != nil {
					below.Lists = []store.List{{Kind: store.ListComments, Sort: sort, Window: rw, Needs: *needs}}
				}
				needs = below
			}
			top := &store.Needs{Author: author, Lists: []store.List{{Kind: store.ListComments, Sort: sort, Window: rw, Needs: *needs}}}
			l := th.s.NewLoader()
			page, err := l.PostComments(ctx, post, sort, store.Window{First: 5}, func() *store.Needs { return top })
			if err != nil {
				t.Fatal(err)
			}
			cctx, count := rdb.WithRedisCount(ctx)
			lists := 0
			var check func(cs []*store.Comment, depth int)
			check = func(cs []*store.Comment, depth int) { // depth: of cs, 0 at the top level
				if depth == 3 {
					return
				}
				for _, c := range cs {
					kept := l.KeptReplies("", c, sort, rw)
					if kept == nil && c.ReplyCount > 0 {
						t.Errorf("sort %d: the walk kept no page of the replies of %s", sort, c.ID)
					}
					got, err := l.Replies(cctx, c, sort, rw, nil)
					if err != nil {
						t.Fatal(err)
					}
					want, err := th.s.NewLoader().Replies(ctx, th.get(c.ID), sort, rw, nil)
					if err != nil {
						t.Fatal(err)
					}
					lists++
					if c.ReplyCount > 0 && got != kept { // a comment without replies lists none without reading
						t.Errorf("sort %d: the replies of %s are not the page the walk kept", sort, c.ID)
					}
					if !slices.Equal(ids(got.Items), ids(want.Items)) || !slices.Equal(got.Cursors, want.Cursors) ||
						got.HasNext != want.HasNext || got.Total != want.Total {
						t.Errorf("sort %d, depth %d, replies of %s: walked %v %v, read %v %v", sort, depth, c.ID,
							ids(got.Items), got.Cursors, ids(want.Items), want.Cursors)
					}
					for i, r := range got.Items {
						if r.Depth != depth+1 || r.ParentID != c.ID {
							t.Errorf("sort %d: reply %d of %s is %s at depth %d below %s", sort, i, c.ID, r.ID, r.Depth, r.ParentID)
						}
					}
					check(got.Items, depth+1)
				}
			}
			check(page.Items, 0)
			if lists != 14 {
				t.Fatalf("sort %d: %d lists checked", sort, lists)
			}
			if trips := count.RoundTrips.Load(); trips != 0 {
				t.Errorf("sort %d: listing the walked pages took %d round trips", sort, trips)
			}
		}
	})
}
