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
// ns/unit (time per unit of the estimate) besides ns/op. Measured on 2 shared cores: the front
// page 5.5 µs a unit (its round trips dominate), 6,000 one-item comment pages 1.1 µs (19.6 ms,
// 10 MB), the same sent to gqlgen's executor by one field readexec does not plan 6.3 µs (115 ms,
// 35 MB), and 6,000 one-item pages of the posts' authors' posts (User.posts is gqlgen's), a 3 KB
// anonymous query estimated at 24,101, 9.4 µs (226 ms, 40 MB and 680,000 allocations a request):
// the estimate does not know which executor runs the operation, and gqlgen's costs 4 to 6 times
// readexec's a unit (go test ./httpapi -run '^$' -bench CostPerUnit -benchtime 20x).
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
	sixty := func(field, extra string) string {
		var s strings.Builder
		s.WriteString("{ posts(first: 100) { nodes {")
		for i := range 60 {
			fmt.Fprintf(&s, " c%d: %s", i, field)
		}
		s.WriteString(" } }" + extra + " }")
		return s.String()
	}
	for _, tc := range []struct{ name, query string }{
		{"front", `{ posts(sort: HOT, first: 30) { edges { node { title author { name } commentCount } } } }`},
		{"comments", sixty("comments(first: 1) { pageInfo { hasNextPage } }", "")},
		{"comments-gqlgen", sixty("comments(first: 1) { pageInfo { hasNextPage } }", gqlgen)},
		{"authors-posts", sixty("author { posts(first: 1) { pageInfo { hasNextPage } } }", "")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := a.do("", tc.query, nil)
			if len(r.Errors) > 0 {
				b.Fatal(r.Errors)
			}
			cost := r.Extensions.Cost.Requested
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				a.do("", tc.query, nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(cost), "ns/unit")
			b.ReportMetric(float64(cost), "cost")
		})
	}
}
