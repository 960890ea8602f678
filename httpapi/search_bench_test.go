package httpapi_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
)

// BenchmarkSearchPosts runs the search harness's request (searchPosts, first 10, ids and titles;
// ../shared/bench/search) anonymously (as the harness sends it) through the real HTTP handler on a
// real redis-server with the response cache off, over a corpus built as the harness builds its own: 10,000 posts (a tenth of the
// harness's) whose titles (5–10 words) and bodies (40–100 words) are drawn from a Zipf vocabulary
// of 30,000 made-up words (s = 1.07), in 20 groups. Each sub-benchmark cycles through 40 queries
// of one class of the harness's mix, the last word typed as a prefix as the harness sends it:
// one common word (ranks 20–500: in 5–35% of the posts), one rare word, a common and a middling
// word, three words, and one word in a group.
func BenchmarkSearchPosts(b *testing.B) {
	be := benchBackend(b)
	be, rt := be.Counted(b)
	a := newAPI(b, be, store.Options{})
	ctx := context.Background()
	const authors, posts, vocabulary = 8, 10_000, 30_000
	for i := range authors {
		if _, err := a.store.SignUp(ctx, fmt.Sprintf("writer%d", i), "password1"); err != nil {
			b.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	const consonants, vowels = "bcdfghjklmnprstvwz", "aeiou"
	words := make([]string, 0, vocabulary)
	seen := map[string]bool{}
	for len(words) < vocabulary {
		var w strings.Builder
		for range 2 + r.IntN(3) {
			w.WriteByte(consonants[r.IntN(len(consonants))])
			w.WriteByte(vowels[r.IntN(len(vowels))])
		}
		if r.Float64() < 0.3 {
			w.WriteByte(consonants[r.IntN(len(consonants))])
		}
		if !seen[w.String()] {
			seen[w.String()] = true
			words = append(words, w.String())
		}
	}
	zipf := rand.NewZipf(r, 1.07, 1, vocabulary-1)
	sentence := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	type doc struct{ title, body, group string }
	docs := make([]doc, posts)
	for i := range docs {
		docs[i] = doc{sentence(5 + r.IntN(6)), sentence(40 + r.IntN(61)), fmt.Sprintf("group%d", i%20)}
	}
	var wg sync.WaitGroup
	errs := make(chan error, authors)
	for w := range authors {
		wg.Go(func() {
			for i := w; i < posts; i += authors {
				d := docs[i]
				in := store.NewPost{Title: d.title, Body: d.body, Groups: []string{d.group}}
				if _, err := a.store.CreatePost(ctx, store.UserKey(fmt.Sprintf("writer%d", w)), in); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	off := httptest.NewServer(httpapi.New(httpapi.Config{Store: a.store, Hub: a.hub, ResponseCacheMiB: -1}))
	b.Cleanup(off.Close)
	a.srv = off
	in := func(lo, hi int) string { return words[lo+r.IntN(hi-lo)] }
	q := `query($q: String!, $g: String) { searchPosts(query: $q, group: $g, first: 10) { edges { node { id title } } } }`
	for _, class := range []struct {
		name  string
		terms func() []string
		group bool
	}{
		{"common", func() []string { return []string{in(20, 500)} }, false},
		{"rare", func() []string { return []string{in(3000, 20000)} }, false},
		{"two", func() []string { return []string{in(20, 500), in(500, 5000)} }, false},
		{"three", func() []string { return []string{in(50, 1000), in(200, 3000), in(1000, 8000)} }, false},
		{"group", func() []string { return []string{in(20, 2000)} }, true},
	} {
		vars := make([]map[string]any, 40)
		for i := range vars {
			vars[i] = map[string]any{"q": strings.Join(class.terms(), " ")}
			if class.group {
				vars[i]["g"] = fmt.Sprintf("group%d", r.IntN(20))
			}
		}
		b.Run(class.name, func(b *testing.B) {
			rt.Reset()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if r := a.do("", q, vars[n%len(vars)]); len(r.Errors) > 0 {
					b.Fatal(r.Errors)
				}
				n++
			}
			b.ReportMetric(float64(rt.Count())/float64(n), "roundtrips/op")
		})
	}
}
