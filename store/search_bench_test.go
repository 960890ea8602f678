package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agora/agora/store"
)

// BenchmarkCreatePostSearch is createPost with the search index on and off (-search=false), on a
// real redis-server, with titles and bodies of the search harness's size: what indexing adds to
// a write.
func BenchmarkCreatePostSearch(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	words := make([]string, 3000)
	for i := range words {
		words[i] = fmt.Sprintf("w%cz%d", 'a'+rune(i%26), i)
	}
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[int(float64(len(words))*r.Float64()*r.Float64())]
		}
		return strings.Join(ws, " ")
	}
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("search=%v", on), func(b *testing.B) {
			s := benchStore(b, store.Options{NoSearch: !on})
			ctx := context.Background()
			if _, err := s.SignUp(ctx, "writer", "password1"); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := s.CreatePost(ctx, "writer", store.NewPost{Title: text(8), Body: text(70), Groups: []string{"g1"}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
