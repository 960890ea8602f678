package httpapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
)

// BenchmarkCostPerUnit measures what one unit of the estimate (extensions.cost.requested) costs
// in time, for an ordinary page and for hostile documents just under -max-complexity, on a real
// redis-server with the response cache off: 20 authors, 200 posts, 400 comments. It reports
// ns/unit (time per unit of the estimate) besides ns/op. The hostile documents select a page
// under each of 100 posts as many times as the limit lets them, at most 60: 60 one-comment pages
// (18,101) on readexec; on gqlgen, whose fields cost httpapi.GqlgenFieldCost each, 16 of the same
// with one field readexec does not plan (24,520), and 16 one-item pages of the posts' authors'
// posts (24,505). Medians of seven runs on 2 shared cores (go test ./httpapi -run '^$' -bench
// CostPerUnit -benchtime 20x; docs/PERFORMANCE.md): the front page 4 to 9 µs a unit (its round
// trips dominate), readexec's comment pages 1.1 µs (20 ms), gqlgen's 1.2 and 1.3 µs (30 and
// 33 ms); before gqlgen's fields cost 5, the same 60 pages on gqlgen cost 6.3 and 7.7 µs a unit
// (115 and 186 ms, 36 and 40 MB, 680,000 allocations a request).
func BenchmarkCostPerUnit(b *testing.B) {
	be := benchBackend(b)
	a := newAPI(b, be, store.Options{WriteLimit: -1})
	ctx := context.Background()
	var users []store.UserKey
	for i := range 20 {
		s, err := a.store.SignUp(ctx, fmt.Sprintf("user%d", i), "password1")
		if err != nil {
			b.Fatal(err)
		}
		users = append(users, s.User.Key())
	}
	var posts []string
	for i := range 200 {
		p, err := a.store.CreatePost(ctx, users[i%20], store.NewPost{Title: fmt.Sprint("post ", i), Groups: []string{fmt.Sprintf("g%d", i%5)}})
		if err != nil {
			b.Fatal(err)
		}
		posts = append(posts, p.ID)
	}
	for i := range 400 {
		if _, err := a.store.CreateComment(ctx, users[i%20], store.NewComment{PostID: posts[i%40], Body: "a comment"}); err != nil {
			b.Fatal(err)
		}
	}
	off := httptest.NewServer(httpapi.New(httpapi.Config{Store: a.store, Hub: a.hub, ResponseCacheMiB: -1}))
	b.Cleanup(off.Close)
	a.srv = off
	const gqlgen = ` u: user(name: "user1") { followers(first: 1) { totalCount } }` // readexec does not plan it
	// pages selects field n times under each of 100 posts, for n from 60 down to the first
	// the server accepts: the most of them a request may ask for.
	pages := func(field, extra string) func(b *testing.B) (string, response) {
		return func(b *testing.B) (string, response) {
			for n := 60; n > 0; n-- {
				var s strings.Builder
				s.WriteString("{ posts(first: 100) { nodes {")
				for i := range n {
					fmt.Fprintf(&s, " c%d: %s", i, field)
				}
				s.WriteString(" } }" + extra + " }")
				r := a.do("", s.String(), nil)
				if r.code() != httpapi.CodeTooComplex {
					return s.String(), r
				}
			}
			b.Fatalf("no page of %s is under the limit", field)
			return "", response{}
		}
	}
	one := func(query string) func(b *testing.B) (string, response) {
		return func(*testing.B) (string, response) { return query, a.do("", query, nil) }
	}
	for _, tc := range []struct {
		name  string
		query func(b *testing.B) (string, response)
	}{
		{"front", one(`{ posts(sort: HOT, first: 30) { edges { node { title author { name } commentCount } } } }`)},
		{"comments", pages("comments(first: 1) { pageInfo { hasNextPage } }", "")},
		{"comments-gqlgen", pages("comments(first: 1) { pageInfo { hasNextPage } }", gqlgen)},
		{"authors-posts", pages("author { posts(first: 1) { pageInfo { hasNextPage } } }", "")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			query, r := tc.query(b)
			if len(r.Errors) > 0 {
				b.Fatal(r.Errors)
			}
			cost := r.Extensions.Cost.Requested
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				a.do("", query, nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(cost), "ns/unit")
			b.ReportMetric(float64(cost), "cost")
		})
	}
}
