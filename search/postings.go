package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Codec says how a kind of document names its documents in a posting list. Numbers are written
// as unsigned varints, so a posting of a post costs its id's 1–5 bytes and one byte of impact.
type Codec int

// The codecs.
const (
	Number Codec = iota // one number: a post
	Pair                // two numbers: a comment (its post, its number in the thread)
	Text                // a string: a user or a group, by name
)

// Doc names one document: A for Number; A and B for Pair; S for Text.
type Doc struct {
	A, B uint64
	S    string
}

// Compare orders documents: by A, then B, then S. For posts and comments it is the order of
// creation.
func (d Doc) Compare(o Doc) int {
	switch {
	case d.A != o.A:
		return cmpU(d.A, o.A)
	case d.B != o.B:
		return cmpU(d.B, o.B)
	}
	return strings.Compare(d.S, o.S)
}

func cmpU(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

// Posting is one document in the list of one term, with its impact: how much the term weighs in
// the document (see Impacts), from 1 to 255.
type Posting struct {
	Doc    Doc
	Impact uint8
}

// ErrCorrupt is the error of a posting list that cannot be decoded.
var ErrCorrupt = errors.New("corrupt posting list")

// Append adds a posting to a list in codec c. Lists only grow: a document indexed again (after
// an edit, or a write repeated) is appended again, and the last posting of a document is the one
// that counts (see Decode).
func (c Codec) Append(dst []byte, p Posting) []byte {
	switch c {
	case Number:
		dst = binary.AppendUvarint(dst, p.Doc.A)
	case Pair:
		dst = binary.AppendUvarint(dst, p.Doc.A)
		dst = binary.AppendUvarint(dst, p.Doc.B)
	default:
		dst = binary.AppendUvarint(dst, uint64(len(p.Doc.S)))
		dst = append(dst, p.Doc.S...)
	}
	return append(dst, max(p.Impact, 1))
}

// Decode appends the postings of list to dst, sorted by document with one posting per document:
// where a document was appended more than once, the last posting stands.
func (c Codec) Decode(dst []Posting, list []byte) ([]Posting, error) {
	start := len(dst)
	if c == Number {
		return decodeNumbers(dst, list)
	}
	for len(list) > 0 {
		var p Posting
		var n int
		p.Doc.A, n = binary.Uvarint(list)
		if n <= 0 {
			return dst, ErrCorrupt
		}
		list = list[n:]
		switch c {
		case Pair:
			p.Doc.B, n = binary.Uvarint(list)
			if n <= 0 {
				return dst, ErrCorrupt
			}
			list = list[n:]
		case Text:
			l := p.Doc.A
			p.Doc.A = 0
			if l > uint64(len(list)) {
				return dst, ErrCorrupt
			}
			p.Doc.S, list = string(list[:l]), list[l:]
		}
		if len(list) == 0 {
			return dst, ErrCorrupt
		}
		p.Impact, list = list[0], list[1:]
		dst = append(dst, p)
	}
	return dst[:start+normalize(dst[start:])], nil
}

// decodeNumbers is Decode for Number, the codec of the longest lists: one pass that also checks
// the order, sorting only a list that has a document indexed again.
func decodeNumbers(dst []Posting, list []byte) ([]Posting, error) {
	start := len(dst)
	dst = slices.Grow(dst, len(list)/3)
	sorted := true
	var last uint64
	for i := 0; i < len(list); {
		var a uint64
		var shift uint
		for {
			if i >= len(list) || shift > 63 {
				return dst, ErrCorrupt
			}
			b := list[i]
			i++
			a |= uint64(b&0x7f) << shift
			if b < 0x80 {
				break
			}
			shift += 7
		}
		if i >= len(list) {
			return dst, ErrCorrupt
		}
		if len(dst) > start && a <= last {
			sorted = false
		}
		last = a
		dst = append(dst, Posting{Doc: Doc{A: a}, Impact: list[i]})
		i++
	}
	if sorted {
		return dst, nil
	}
	return dst[:start+normalize(dst[start:])], nil
}

// normalize sorts ps by document, stably, and keeps the last posting of each document; it returns
// how many remain at the front of ps. Lists are appended in creation order, so the sort finds
// them sorted but for the documents indexed again.
func normalize(ps []Posting) int {
	sorted := true
	for i := 1; i < len(ps); i++ {
		if ps[i-1].Doc.Compare(ps[i].Doc) >= 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return len(ps)
	}
	slices.SortStableFunc(ps, func(a, b Posting) int { return a.Doc.Compare(b.Doc) })
	n := 0
	for i := range ps {
		if n > 0 && ps[n-1].Doc == ps[i].Doc {
			ps[n-1] = ps[i]
			continue
		}
		ps[n] = ps[i]
		n++
	}
	return n
}

// Encode writes a whole list anew, one posting per document: what a rebuild stores.
func (c Codec) Encode(ps []Posting) []byte {
	var out []byte
	for _, p := range ps {
		out = c.Append(out, p)
	}
	return out
}

// BM25's parameters: k1 bounds what repeating a term adds, b how much a long field is
// discounted.
const (
	k1 = 1.2
	b  = 0.75
)

// Field is one field of a document, its weight and its usual length: a word in a post's title
// counts as Weight words of its body, and a field longer than AvgLen (in terms) is discounted.
type Field struct {
	Text   string
	Weight float64
	// AvgLen is the usual length of the field in terms (BM25's avgdl, for this field); 0 for a
	// field whose length is not discounted.
	AvgLen float64
}

// Impacts returns the impact of each term of a document: its BM25F term-frequency component,
// scaled to 1..255. Each field's count of the term is weighted and normalized by that field's own
// length against its AvgLen, and the sum saturates once (Zaragoza et al., "Microsoft Cambridge at
// TREC-13: Web and HARD tracks", 2004): so a word of a short title weighs the same whatever the
// length of the body, where one length for the whole document would let a long body bury the
// title's words. A query's score for the document is the sum over the query's terms of the term's
// IDF times its impact, so that a search reads only posting lists. It also returns the
// document's tokens, field after field, with an empty token between fields so that no phrase
// spans two fields.
func Impacts(fields []Field) (map[string]uint8, []string) {
	tf := map[string]float64{}
	var tokens []string
	for i, f := range fields {
		ts := Analyze(f.Text)
		if i > 0 {
			tokens = append(tokens, "")
		}
		tokens = append(tokens, ts...)
		norm := 1.0
		if f.AvgLen > 0 {
			norm = 1 - b + b*float64(len(ts))/f.AvgLen
		}
		for _, t := range ts {
			tf[t] += f.Weight / norm
		}
	}
	out := make(map[string]uint8, len(tf))
	for t, f := range tf {
		w := f / (f + k1) // 0..1: BM25's f(k1+1)/(f+k1) over its bound k1+1
		out[t] = uint8(max(1, min(255, math.Round(w*255))))
	}
	return out, tokens
}

// IDF is BM25's inverse document frequency of a term in df of n documents.
func IDF(df, n int) float64 {
	n = max(n, df)
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Hit is a document that matched, with its score.
type Hit struct {
	Doc   Doc
	Score float64
}

// Prefix is what the last word of a query, as a prefix, matches: the decoded lists of the words
// it expands to. Exact is the index in Lists of the word itself, -1 when no document has it.
type Prefix struct {
	Lists [][]Posting
	Exact int
}

// prefixDiscount is what a longer word counts, against the word typed itself, for a prefix.
const prefixDiscount = 0.8

// Match intersects the decoded lists of a query's terms (each sorted, one posting per document)
// and, when prefix is not nil, the union of the lists of the words the query's prefix expands to;
// it returns every document in all of them with its BM25 score over n documents, in document
// order. The prefix counts as one term, as rare as its union: a rare longer word is no better
// than the common word typed, which counts fully where longer words count prefixDiscount. Empty
// terms with a nil prefix match nothing.
func Match(terms [][]Posting, prefix *Prefix, n int) []Hit {
	hits, _ := MatchAt(terms, prefix, Stats{N: n})
	return hits
}

// Stats are what a score depends on besides a document's own impacts: the number of documents,
// and the document frequency of each list of a Match (its terms' in order, then the prefix's
// union). Every document indexed changes them, and so every score: a cursor that kept only its
// hit's score would compare it with scores of other statistics, and skip or repeat the results
// around it. A search's cursors carry the statistics its first page scored with, and its next
// pages score with them again (MatchAt), so that the order stays the first page's.
type Stats struct {
	N  int
	DF []int
}

// MatchAt is Match scoring with the statistics st: with st.DF nil (or not one per list), those
// of the lists given, over st.N documents. It returns the statistics it scored with.
func MatchAt(terms [][]Posting, prefix *Prefix, st Stats) ([]Hit, Stats) {
	nLists := len(terms)
	if prefix != nil {
		nLists++
	}
	frozen := len(st.DF) == nLists && nLists > 0
	used := Stats{N: st.N, DF: make([]int, 0, nLists)}
	df := func(i, own int) int {
		if frozen {
			return st.DF[i]
		}
		return own
	}
	lists := make([]scored, 0, nLists)
	for i, t := range terms {
		d := df(i, len(t))
		used.DF = append(used.DF, d)
		lists = append(lists, scored{ps: t, idf: IDF(d, st.N)})
	}
	if prefix != nil {
		u := union(*prefix)
		d := df(len(terms), len(u.ps))
		used.DF = append(used.DF, d)
		idf := IDF(d, st.N)
		for i := range u.weights {
			u.weights[i] *= idf
		}
		lists = append(lists, u)
	}
	if len(lists) == 0 {
		return nil, used
	}
	// The shortest list drives the intersection; the others are searched with galloping steps.
	slices.SortFunc(lists, func(a, b scored) int { return len(a.ps) - len(b.ps) })
	pos := make([]int, len(lists))
	var hits []Hit
	if len(lists) == 1 {
		hits = make([]Hit, 0, len(lists[0].ps)) // every posting is a hit
	}
next:
	for i, p := range lists[0].ps {
		score := lists[0].weight(i)
		for j := 1; j < len(lists); j++ {
			k, ok := seek(lists[j].ps, pos[j], p.Doc)
			pos[j] = k
			if !ok {
				continue next
			}
			score += lists[j].weight(k)
		}
		hits = append(hits, Hit{Doc: p.Doc, Score: score})
	}
	return hits, used
}

// scored is one list of Match with its term's IDF, or with a weight per posting (a union).
type scored struct {
	ps      []Posting
	idf     float64
	weights []float64
}

func (s scored) weight(i int) float64 {
	if s.weights != nil {
		return s.weights[i]
	}
	return s.idf * float64(s.ps[i].Impact) / 255 * (k1 + 1)
}

// union merges the lists of a prefix's words into one, each document weighing as its best word
// (before the union's IDF, which MatchAt applies). The lists are sorted already: the two shortest
// are merged, again and again, so that the long list of a common word is walked once or twice
// rather than sorted with the rest.
func union(pr Prefix) scored {
	var ls []scored
	for i, l := range pr.Lists {
		if len(l) == 0 {
			continue
		}
		f := prefixDiscount
		if i == pr.Exact {
			f = 1
		}
		w := make([]float64, len(l))
		for j, p := range l {
			w[j] = f * float64(p.Impact) / 255 * (k1 + 1)
		}
		ls = append(ls, scored{ps: l, weights: w})
	}
	out := scored{weights: []float64{}}
	for len(ls) > 1 {
		slices.SortFunc(ls, func(a, b scored) int { return len(b.ps) - len(a.ps) }) // the shortest last
		a, b := ls[len(ls)-1], ls[len(ls)-2]
		ls = append(ls[:len(ls)-2], merge(a, b))
	}
	if len(ls) == 1 {
		out = ls[0]
	}
	return out
}

// merge merges two weighted lists sorted by document; a document in both weighs as its better.
func merge(a, b scored) scored {
	out := scored{ps: make([]Posting, 0, len(a.ps)+len(b.ps)), weights: make([]float64, 0, len(a.ps)+len(b.ps))}
	i, j := 0, 0
	for i < len(a.ps) && j < len(b.ps) {
		switch c := a.ps[i].Doc.Compare(b.ps[j].Doc); {
		case c < 0:
			out.ps, out.weights = append(out.ps, a.ps[i]), append(out.weights, a.weights[i])
			i++
		case c > 0:
			out.ps, out.weights = append(out.ps, b.ps[j]), append(out.weights, b.weights[j])
			j++
		default:
			out.ps, out.weights = append(out.ps, a.ps[i]), append(out.weights, max(a.weights[i], b.weights[j]))
			i++
			j++
		}
	}
	out.ps, out.weights = append(out.ps, a.ps[i:]...), append(out.weights, a.weights[i:]...)
	out.ps, out.weights = append(out.ps, b.ps[j:]...), append(out.weights, b.weights[j:]...)
	return out
}

// seek finds doc in ps at or after from, galloping then bisecting: it returns the position of
// the first posting not before doc, and whether that posting is doc.
func seek(ps []Posting, from int, doc Doc) (int, bool) {
	step := 1
	hi := from
	for hi < len(ps) && ps[hi].Doc.Compare(doc) < 0 {
		from = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi+1, len(ps))
	k, found := slices.BinarySearchFunc(ps[from:hi], doc, func(p Posting, d Doc) int { return p.Doc.Compare(d) })
	return from + k, found
}

// String describes a codec, for errors.
func (c Codec) String() string {
	switch c {
	case Number:
		return "number"
	case Pair:
		return "pair"
	case Text:
		return "text"
	}
	return fmt.Sprintf("codec(%d)", int(c))
}
