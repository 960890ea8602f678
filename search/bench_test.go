package search

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchList returns a posting list of the documents of 0..n-1 drawn with probability share.
func benchList(r *rand.Rand, n int, share float64) []byte {
	var out []byte
	for d := range n {
		if r.Float64() < share {
			out = Number.Append(out, Posting{Doc: Doc{A: uint64(d)}, Impact: uint8(1 + r.IntN(255))})
		}
	}
	return out
}

// BenchmarkQuery decodes the posting lists of a two-word query over 100,000 documents (one word
// in 30% of them, the other in 3%), intersects them and takes the best page: what one searchPosts
// costs agora's process for a common query. Reported per posting decoded.
func BenchmarkQuery(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ a, b float64 }{{0.30, 0.03}, {0.30, 0.30}, {0.01, 0.001}} {
		common, rare := benchList(r, 100_000, tc.a), benchList(r, 100_000, tc.b)
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

// BenchmarkQueryPrefix is the search harness's most common query: one common word typed as a
// prefix, over 100,000 documents. The word itself is in 30% of them and the 31 longer words it
// expands to in 0.01–3% each (a Zipf tail); their lists are decoded, merged into one, and the
// best page taken. Reported per posting decoded.
func BenchmarkQueryPrefix(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	lists := [][]byte{benchList(r, 100_000, 0.30)}
	for i := 1; i < 32; i++ {
		lists = append(lists, benchList(r, 100_000, 0.03/float64(i)))
	}
	var postings int
	bufs := make([][]Posting, len(lists))
	for b.Loop() {
		postings = 0
		for i, l := range lists {
			bufs[i], _ = Number.Decode(bufs[i][:0], l)
			postings += len(bufs[i])
		}
		hits := Match(nil, &Prefix{Lists: bufs, Exact: 0}, 100_000)
		Best(hits, nil, nil, 11, false)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(postings), "ns/posting")
}
