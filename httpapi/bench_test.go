package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// benchBackend returns the real redis-server backend, or skips.
func benchBackend(b *testing.B) storetest.Backend {
	b.Helper()
	for _, be := range storetest.Backends(b) {
		if be.Name == "redis" {
			return be
		}
	}
	b.Skip("no real redis-server")
	return storetest.Backend{}
}

// BenchmarkFrontPage lists the HOT front page — 25 posts with authors, groups, group sizes and
// the viewer's votes — through the real HTTP handler on a real redis-server.
func BenchmarkFrontPage(b *testing.B) {
	be := benchBackend(b)
	be, rt := be.Counted(b)
	a := newAPI(b, be, store.Options{})
	viewer, _ := a.signUp("viewer")
	for i := 0; i < 100; i++ {
		tok, _ := a.signUp(fmt.Sprintf("author%03d", i))
		a.createPost(tok, fmt.Sprint("post ", i), fmt.Sprintf("g%d", i%5))
	}
	q := `{ posts(sort: HOT, first: 25) { totalCount edges { cursor node { id title score upvotes downvotes viewerVote createdAt author { name } groups { name postCount } } } pageInfo { hasNextPage endCursor } } }`
	// Every read executes: the response cache is off (BenchmarkPages measures hits).
	off := httptest.NewServer(httpapi.New(httpapi.Config{Store: a.store, Hub: a.hub, ResponseCacheMiB: -1}))
	b.Cleanup(off.Close)
	a.srv = off
	rt.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := a.do(viewer, q, nil); len(r.Errors) > 0 {
			b.Fatal(r.Errors)
		}
	}
	b.ReportMetric(float64(rt.Count())/float64(b.N), "roundtrips/op")
}

// BenchmarkVote votes on one post from many users in parallel through the real handler.
func BenchmarkVote(b *testing.B) {
	be := benchBackend(b)
	a := newAPI(b, be, store.Options{})
	author, _ := a.signUp("author")
	post := a.createPost(author, "hot topic")
	const voters = 64
	tokens := make([]string, voters)
	for i := range tokens {
		tokens[i], _ = a.signUp(fmt.Sprintf("voter%03d", i))
	}
	var n atomic.Int64
	q := `mutation($id: ID!, $d: VoteDirection!) { votePost(postId: $id, direction: $d) { upvotes downvotes score } }`
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			dir := "UP"
			if i%2 == 0 {
				dir = "DOWN"
			}
			if r := a.do(tokens[i%voters], q, map[string]any{"id": post, "d": dir}); len(r.Errors) > 0 {
				b.Error(r.Errors)
				return
			}
		}
	})
}

// BenchmarkHostileDocuments sends documents that cost the validator seconds when unbounded —
// one field selected 9,990 times, or merged repeats through fragments — and measures how long the
// server takes to refuse them. Each request carries a fresh comment, which defeats the query cache.
//
//	go test ./httpapi -run '^$' -bench Hostile
func BenchmarkHostileDocuments(b *testing.B) {
	be := storetest.Backends(b)[0]
	st := be.NewStore(b, store.Options{})
	h := httpapi.New(httpapi.Config{Store: st, Hub: newHub(b, st)})
	docs := map[string]string{
		"typename-9990": "{" + strings.Repeat(" __typename", 9990) + "}",
		"fragments":     "{ ...F ...F ...F } fragment F on Query {" + strings.Repeat(" __typename", 2000) + " }",
	}
	for name, doc := range docs {
		b.Run(name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				body := raw(b, h, "", doc+" # "+strconv.Itoa(i), nil)
				if !bytes.Contains(body, []byte("TOO_MANY_REPEATS")) {
					b.Fatalf("not refused: %.200s", body)
				}
			}
		})
	}
}

// BenchmarkFragmentChainRequest sends chains of n fragments that each spread the next twice and
// end in an unknown fragment — 2^n spreads when expanded, refused by validation — through the
// handler, and reports the time per spread written. BenchmarkFragmentChain measures the limits
// alone. Each request carries a fresh comment, which defeats the query cache.
//
//	go test ./httpapi -run '^$' -bench FragmentChain
func BenchmarkFragmentChainRequest(b *testing.B) {
	be := storetest.Backends(b)[0]
	st := be.NewStore(b, store.Options{})
	h := httpapi.New(httpapi.Config{Store: st, Hub: newHub(b, st)})
	for _, n := range []int{8, 16, 32, 64} {
		doc := fragmentChain("query", n, "...Unknown")
		spreads := 2*n + 2
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				body := raw(b, h, "", doc+" # "+strconv.Itoa(i), nil)
				if !bytes.Contains(body, []byte("GRAPHQL_VALIDATION_FAILED")) {
					b.Fatalf("not refused: %.200s", body)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spreads), "ns/spread")
		})
	}
}
