package httpapi_test

import (
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// postReads counts the HMGETs of posts' hashes ({p:<id>}) a client sends (count, in a hook).
type postReads struct{ n atomic.Int64 }

var postHash = regexp.MustCompile(`\{p:[0-9]+\}$`)

func (h *postReads) count(cmds []rdb.Cmder) {
	for _, c := range cmds {
		if args := c.Args(); len(args) > 1 && strings.EqualFold(storetest.ArgString(args[0]), "hmget") &&
			postHash.MatchString(storetest.ArgString(args[1])) {
			h.n.Add(1)
		}
	}
}

// TestHideReadOfAFeedCostsItsRounds: with hideRead, a page that its reader's marks leave short
// reads on, up to two more windows of store.MaxFirst posts, each through the same load as a page
// of store.MaxFirst — for feed and groupFeed, the merge of every pulled author's or group's window
// of that size, which the estimate prices at FeedCost (GroupFeedCost) and FeedItemCost
// (GroupFeedItemCost) a post. The estimate charged those rounds HideReadCost, what two rounds of
// posts cost, so a page of one post of a feed whose newest 101 posts its reader marked read —
// marking is not rate limited — read as much as two pages of 100 for the price of about 1,700:
// 14 aliases under the limit did the work of 28 feed pages of 100, where 6 are allowed. They now
// cost FeedHideReadCost.
func TestHideReadOfAFeedCostsItsRounds(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		reads := &postReads{}
		hb := b.Hooked(t, storetest.Before(reads.count))
		a := newAPI(t, hb, store.Options{})
		author, _ := a.signUp("author")
		reader, _ := a.signUp("reader")
		a.do(reader, `mutation{follow(userId:"user:author"){id}}`, nil).decode(t, &struct{}{})
		var ids []string
		for i := range 2*store.MaxFirst + 10 {
			ids = append(ids, a.createPost(author, fmt.Sprintf("post %d", i), "g"))
		}
		a.do(reader, `mutation{joinGroup(name:"g"){name}}`, nil).decode(t, &struct{}{})
		a.settle()
		// The newest 101 posts, which a page of one in NEW order meets first, are marked read.
		for _, id := range ids[len(ids)-store.MaxFirst-1:] {
			a.do(reader, `mutation($id:ID!){markPostRead(id:$id){id}}`, map[string]any{"id": id}).decode(t, &struct{}{})
		}
		for _, field := range []string{"feed", "groupFeed"} {
			sort := ""
			if field == "groupFeed" {
				sort = "sort: NEW, "
			}
			full := a.do(reader, fmt.Sprintf(`{ %s(%sfirst: %d) { nodes { id } } }`, field, sort, store.MaxFirst), nil)
			reads.n.Store(0)
			one := a.do(reader, fmt.Sprintf(`{ %s(%sfirst: 1, hideRead: true) { nodes { id } } }`, field, sort), nil)
			if len(one.Errors) > 0 || len(full.Errors) > 0 {
				t.Fatalf("%s: %+v %+v", field, one.Errors, full.Errors)
			}
			read := reads.n.Load()
			if read < 2*store.MaxFirst {
				t.Fatalf("%s: a hideRead page of one read %d posts; the test expects two rounds of %d", field, read, store.MaxFirst)
			}
			// Its two more rounds are two merges of MaxFirst posts, each priced as full's merge is
			// beyond the executor's part (1 a field, or fieldCost: full's selection), with each
			// post's load.
			want := 2 * (httpapi.FeedCost + store.MaxFirst*(httpapi.FeedItemCost+1))
			if got := one.Extensions.Cost.Requested; got < want {
				t.Errorf("%s(first: 1, hideRead: true) read %d posts for cost %d; two pages of %d cost %d (FeedHideReadCost %d)",
					field, read, got, store.MaxFirst, want, httpapi.FeedHideReadCost)
			}
		}
	})
}
