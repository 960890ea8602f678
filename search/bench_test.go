package search

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkQuery decodes the posting lists of a two-word query over 100,000 documents (one word
// in 30% of them, the other in 3%), intersects them and takes the best page: what one searchPosts
// costs agora's process for a common query. Reported per posting decoded.
func BenchmarkQuery(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	list := func(share float64) []byte {
		var out []byte
		for d := range 100_000 {
			if r.Float64() < share {
				out = Number.Append(out, Posting{Doc: Doc{A: uint64(d)}, Impact: uint8(1 + r.IntN(255))})
			}
		}
		return out
	}
	for _, tc := range []struct{ a, b float64 }{{0.30, 0.03}, {0.30, 0.30}, {0.01, 0.001}} {
		common, rare := list(tc.a), list(tc.b)
		b.Run(fmt.Sprintf("%.3f×%.3f", tc.a, tc.b), func(b *testing.B) {
			var postings int
			var bufA, bufB []Posting
			for b.Loop() {
				pa, _ := Number.Decode(bufA[:0], common)
				pb, _ := Number.Decode(bufB[:0], rare)
				bufA, bufB = pa, pb
				hits := Match([][]Posting{pa, pb}, nil, 100_000)
				Best(hits, nil, nil, 21, false)
				postings = len(pa) + len(pb)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(postings), "ns/posting")
		})
	}
}
