package httpapi_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSearchCommentsByVotesReadsNoBodies: searchComments(sort: TOP) ranks the newest 5,000
// matches by their votes, reading each one's hash; it read each one's body too, from its thread's
// bodies (60 bodies for a page of one here, up to 5,000 of up to 10,000 characters), where the
// votes are all it ranks by. Now it reads the bodies of the page it checks alone.
func TestSearchCommentsByVotesReadsNoBodies(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		var bodies atomic.Int64
		hb := b.Hooked(t, storetest.Before(func(cmds []rdb.Cmder) {
			for _, c := range cmds {
				if args := c.Args(); len(args) > 2 && strings.EqualFold(storetest.ArgString(args[0]), "hmget") &&
					strings.HasSuffix(storetest.ArgString(args[1]), ":body") {
					bodies.Add(int64(len(args) - 2))
				}
			}
		}))
		a := newAPI(t, hb, store.Options{WriteLimit: -1})
		tok, _ := a.signUp("writer")
		post := a.createPost(tok, "a thread", "g")
		for i := range 60 {
			a.do(tok, `mutation($p: ID!, $b: String!) { createComment(postId: $p, body: $b) { id } }`,
				map[string]any{"p": post, "b": fmt.Sprintf("comment %d about zebras", i)}).decode(t, &struct{}{})
		}
		a.settle()
		bodies.Store(0)
		var d struct {
			SearchComments struct{ Nodes []struct{ Body string } }
		}
		a.do(tok, `{ searchComments(query: "zebras", sort: TOP, first: 1) { nodes { body } } }`, nil).decode(t, &d)
		if len(d.SearchComments.Nodes) != 1 {
			t.Fatalf("got %d comments, want 1", len(d.SearchComments.Nodes))
		}
		if n := bodies.Load(); n > 10 {
			t.Errorf("a TOP page of one comment read %d comment bodies; want the page's alone (at most 10)", n)
		}
	})
}
