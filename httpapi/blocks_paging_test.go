package httpapi_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestPagingPastAPageOfBlockedPosts: a page whose every post is by a user the viewer blocks
// (or, with hideRead, marked read) lists nothing, and must still say where it ended, so that
// the client pages on to the posts after it: it answered hasNextPage true with endCursor null,
// and the posts after it were out of reach.
func TestPagingPastAPageOfBlockedPosts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		ann, _ := a.signUp("ann")
		ben, benID := a.signUp("ben")
		cat, _ := a.signUp("cat")
		var want []string
		for i := range 2 {
			title := fmt.Sprintf("cat %d", i)
			a.createPost(cat, title, "pets")
			want = append([]string{title}, want...)
		}
		for i := range 3 {
			a.createPost(ben, fmt.Sprintf("ben %d", i), "pets")
		}
		a.do(ann, `mutation($id:ID!){blockUser(userId:$id){id}}`, map[string]any{"id": benID}).decode(t, &struct{}{})
		for _, q := range []struct{ name, query string }{
			{"posts", `query($a:String){list: posts(sort: NEW, first: 2, after: $a){edges{node{title}} pageInfo{hasNextPage endCursor}}}`},
			{"posts hideRead", `query($a:String){list: posts(sort: NEW, first: 2, after: $a, hideRead: true){edges{node{title}} pageInfo{hasNextPage endCursor}}}`},
		} {
			var got []string
			var after any
			for page := 0; ; page++ {
				if page > 5 {
					t.Fatalf("%s: the pages do not end", q.name)
				}
				var d struct {
					List struct {
						Edges []struct {
							Node struct{ Title string }
						}
						PageInfo struct {
							HasNextPage bool
							EndCursor   *string
						}
					}
				}
				a.do(ann, q.query, map[string]any{"a": after}).decode(t, &d)
				for _, e := range d.List.Edges {
					got = append(got, e.Node.Title)
				}
				if !d.List.PageInfo.HasNextPage {
					break
				}
				if d.List.PageInfo.EndCursor == nil {
					t.Errorf("%s: page %d (%d posts) has a next page and no endCursor", q.name, page, len(d.List.Edges))
					break
				}
				after = *d.List.PageInfo.EndCursor
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: ann pages through %v, want %v", q.name, got, want)
			}
		}
		// Backwards from the oldest, the blocked posts come last: the pages of them go on to
		// the start of the list, and end there.
		for _, q := range []struct{ name, query string }{
			{"posts backwards", `query($b:String){list: posts(sort: NEW, last: 1, before: $b){edges{node{title}} pageInfo{hasPreviousPage startCursor}}}`},
			{"posts hideRead backwards", `query($b:String){list: posts(sort: NEW, last: 1, before: $b, hideRead: true){edges{node{title}} pageInfo{hasPreviousPage startCursor}}}`},
		} {
			var got []string
			var before any
			for page := 0; ; page++ {
				if page > 8 {
					t.Fatalf("%s: the pages do not end", q.name)
				}
				var d struct {
					List struct {
						Edges []struct {
							Node struct{ Title string }
						}
						PageInfo struct {
							HasPreviousPage bool
							StartCursor     *string
						}
					}
				}
				a.do(ann, q.query, map[string]any{"b": before}).decode(t, &d)
				for i := len(d.List.Edges) - 1; i >= 0; i-- {
					got = append([]string{d.List.Edges[i].Node.Title}, got...)
				}
				if !d.List.PageInfo.HasPreviousPage {
					break
				}
				if d.List.PageInfo.StartCursor == nil {
					t.Errorf("%s: page %d (%d posts) has a previous page and no startCursor", q.name, page, len(d.List.Edges))
					break
				}
				before = *d.List.PageInfo.StartCursor
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: ann pages through %v, want %v", q.name, got, want)
			}
		}
	})
}
