package httpapi_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func TestSearchOverHTTP(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		alice, _ := a.signUp("alice")
		a.createPost(alice, "Kingfisher by the river", "birds")
		a.createPost(alice, "翠鸟在河边", "birds")
		a.createPost(alice, "Herons", "birds")
		const q = `query($q:String!,$s:SearchSort){searchPosts(query:$q,sort:$s,first:5){totalCount edges{node{title author{name} groups{name}}}}}`
		titles := func(query string) []string {
			t.Helper()
			var d struct {
				SearchPosts struct {
					TotalCount int
					Edges      []struct{ Node struct{ Title string } }
				}
			}
			a.do("", q, map[string]any{"q": query}).decode(t, &d)
			var out []string
			for _, e := range d.SearchPosts.Edges {
				out = append(out, e.Node.Title)
			}
			return out
		}
		if got := titles("kingf"); !slices.Equal(got, []string{"Kingfisher by the river"}) {
			t.Fatalf("kingf: %q", got)
		}
		if got := titles("河边"); !slices.Equal(got, []string{"翠鸟在河边"}) {
			t.Fatalf("河边: %q", got)
		}
		if r := a.do("", q, map[string]any{"q": "  "}); r.code() != "BAD_USER_INPUT" {
			t.Fatalf("an empty query: %+v", r.Errors)
		}
		var d struct {
			SearchComments struct{ TotalCount int }
		}
		a.do("", `{searchComments(query:"river"){totalCount}}`, nil).decode(t, &d)

		// A search costs SearchCost beyond its page.
		body := raw(t, a.h, "", `{searchPosts(query:"river",first:1){edges{node{title}}}}`, nil)
		var r struct {
			Extensions struct{ Cost struct{ Requested int } }
		}
		if err := json.Unmarshal(body, &r); err != nil || r.Extensions.Cost.Requested < httpapi.SearchCost {
			t.Fatalf("cost of a search: %s (%v)", body, err)
		}
		// Its totalCount, asked for directly or through fragments, costs SearchCountCost more, once,
		// and the field itself; a totalCount further down (a post's comments) costs its fields only,
		// each GqlgenFieldCost, as gqlgen executes searches.
		cost := func(q string) int {
			t.Helper()
			body := raw(t, a.h, "", q, nil)
			var r struct {
				Extensions struct{ Cost struct{ Requested int } }
			}
			if err := json.Unmarshal(body, &r); err != nil {
				t.Fatalf("%s: %s (%v)", q, body, err)
			}
			return r.Extensions.Cost.Requested
		}
		plain := cost(`{searchPosts(query:"river",first:1){edges{node{id}}}}`)
		for _, c := range []struct {
			q    string
			more int
		}{
			{`{searchPosts(query:"river",first:1){totalCount edges{node{id}}}}`, httpapi.SearchCountCost + httpapi.GqlgenFieldCost},
			{`{searchPosts(query:"river",first:1){...C edges{node{id}}}} fragment C on PostConnection{totalCount}`, httpapi.SearchCountCost + httpapi.GqlgenFieldCost},
			{`{searchPosts(query:"river",first:1){... on PostConnection{totalCount} edges{node{id}}}}`, httpapi.SearchCountCost + httpapi.GqlgenFieldCost},
			{`{searchPosts(query:"river",first:1){edges{node{id comments(first:1){totalCount}}}}}`, 2 * httpapi.GqlgenFieldCost},
		} {
			if got := cost(c.q) - plain; got != c.more {
				t.Errorf("%s: costs %d more than the plain search, want %d", c.q, got, c.more)
			}
		}
	})
}

func TestSearchOffIsForbidden(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1, NoSearch: true})
		if r := a.do("", `{searchPosts(query:"river"){totalCount}}`, nil); r.code() != "FORBIDDEN" {
			t.Fatalf("search with -search=false: %+v", r.Errors)
		}
	})
}
