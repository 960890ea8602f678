package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// The three pages of ../shared/bench/compare.sh, with the same data shapes and queries.
const (
	nestedQuery = `query($p:ID!){ post(id: $p) { id title score author { id name } comments(sort: TOP, first: 50) { edges { node { id body upvotes author { id name } replies(first: 5) { edges { node { id body upvotes author { id name } replies(first: 2) { edges { node { id body upvotes author { id name } } } } } } } } } } } }`
	frontQuery  = `query { posts(sort: HOT, first: 30) { edges { node { id title score createdAt commentCount author { id name } } } } }`
	smallQuery  = `query($p:ID!){ post(id: $p) { id title score author { id name } comments(sort: TOP, first: 10) { edges { node { id body author { id name } } } } } }`
)

// pageWorld writes the data of one page straight through the store: 60 authors, one post, and
// the page's comments or posts.
func pageWorld(b *testing.B, be storetest.Backend, page string) (*store.Store, string) {
	b.Helper()
	ctx := context.Background()
	st := be.NewStore(b, store.Options{WriteLimit: -1})
	var authors []string
	for i := range 60 {
		s, err := st.SignUp(ctx, fmt.Sprintf("user%d", i+1), "password1")
		if err != nil {
			b.Fatal(err)
		}
		authors = append(authors, string(s.User.Key()))
	}
	body := strings.Repeat("x", 200)
	p, err := st.CreatePost(ctx, store.UserKey(authors[0]), store.NewPost{Title: "the thread", Body: body})
	if err != nil {
		b.Fatal(err)
	}
	switch page {
	case "nested":
		buildThread(b, st, p.ID, authors, 50, 5, 2)
	case "small":
		buildThread(b, st, p.ID, authors, 10, 0, 0)
	case "front":
		for i := range 299 {
			if _, err := st.CreatePost(ctx, store.UserKey(authors[i%60]), store.NewPost{Title: fmt.Sprint("post ", i+1), Body: body}); err != nil {
				b.Fatal(err)
			}
		}
		buildThread(b, st, p.ID, authors, 30, 0, 0)
	}
	return st, p.ID
}

// redisCPU returns the microseconds of CPU Redis has spent on commands (INFO commandstats).
func redisCPU(b *testing.B, c rdb.UniversalClient) float64 {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	total := 0.0
	for _, line := range strings.Split(info, "\n") {
		_, rest, ok := strings.Cut(line, "usec=")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		v, _, _ := strings.Cut(rest, ",")
		f, _ := strconv.ParseFloat(v, 64)
		total += f
	}
	return total
}

// BenchmarkPages reads each page of compare.sh through the real handler on a real redis-server,
// with the response cache off (every read executes) and as a cache hit (one revision check),
// and reports the Redis round trips and the microseconds of Redis CPU each read costs.
//
//	go test ./httpapi -run '^$' -bench Pages -benchtime 200x
func BenchmarkPages(b *testing.B) {
	be := benchBackend(b)
	for _, page := range []string{"nested", "front", "small"} {
		// Each page's data is written within its own sub-benchmark, so that -bench naming one
		// page writes only that page's.
		b.Run(page, func(b *testing.B) { benchPage(b, be, page) })
	}
}

// benchPage is BenchmarkPages of one page.
func benchPage(b *testing.B, be storetest.Backend, page string) {
	st, post := pageWorld(b, be, page)
	q := map[string]string{"nested": nestedQuery, "front": frontQuery, "small": smallQuery}[page]
	body, _ := json.Marshal(map[string]any{"query": q, "variables": map[string]any{"p": post}})
	for _, mode := range []string{"off", "hit"} {
		b.Run("cache-"+mode, func(b *testing.B) {
			counted, rt := be.Counted(b)
			st2 := counted.NewStore(b, store.Options{Prefix: st.Options().Prefix})
			mib := -1
			if mode == "hit" {
				mib = 64
			}
			h := httpapi.New(httpapi.Config{Store: st2, Hub: newHub(b, st2), ResponseCacheMiB: mib})
			read := func(warm bool) {
				req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !bytes.HasPrefix(rec.Body.Bytes(), []byte(`{"data":`)) {
					b.Fatalf("status %d: %.300s", rec.Code, rec.Body.Bytes())
				}
				if mode == "hit" && !warm && rec.Header().Get(httpapi.CacheHeader) != "hit" {
					b.Fatalf("not a cache hit")
				}
			}
			read(true) // warm: connections, and the cache entry for "hit"
			rt.Reset()
			cpu0 := redisCPU(b, be.Client)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				read(false)
			}
			b.StopTimer()
			b.ReportMetric(float64(rt.Count())/float64(b.N), "roundtrips/op")
			b.ReportMetric((redisCPU(b, be.Client)-cpu0)/float64(b.N), "redis-µs/op")
		})
	}
}
