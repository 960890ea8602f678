package search

import (
	"container/heap"
	"slices"
)

// Before reports whether hit a ranks before hit b: a higher score first, then the later document
// (the newer post or comment; for names, the later name).
func Before(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Doc.Compare(b.Doc) > 0
}

// Best returns, in rank order, the k hits that rank first among those after after and before
// before (each nil for no bound); backward takes the k that rank last instead (the hits just
// before before), still in rank order. more reports whether more hits lie in the bounds on the
// side the page grows towards. It costs O(len(hits) log k).
func Best(hits []Hit, after, before *Hit, k int, backward bool) (page []Hit, more bool) {
	h := &topK{backward: backward}
	n := 0
	for _, x := range hits {
		if after != nil && !Before(*after, x) {
			continue
		}
		if before != nil && !Before(x, *before) {
			continue
		}
		n++
		if h.Len() < k {
			heap.Push(h, x)
		} else if h.better(x, h.hits[0]) {
			h.hits[0] = x
			heap.Fix(h, 0)
		}
	}
	page = h.hits
	slices.SortFunc(page, func(a, b Hit) int {
		if Before(a, b) {
			return -1
		}
		if Before(b, a) {
			return 1
		}
		return 0
	})
	return page, n > len(page)
}

// topK is a heap of the k best hits seen, the worst on top so that it is the one replaced.
type topK struct {
	hits     []Hit
	backward bool // best means ranking last
}

// better reports whether a belongs in the page more than b.
func (h *topK) better(a, b Hit) bool {
	if h.backward {
		return Before(b, a)
	}
	return Before(a, b)
}

func (h *topK) Len() int           { return len(h.hits) }
func (h *topK) Less(i, j int) bool { return h.better(h.hits[j], h.hits[i]) }
func (h *topK) Swap(i, j int)      { h.hits[i], h.hits[j] = h.hits[j], h.hits[i] }
func (h *topK) Push(x any)         { h.hits = append(h.hits, x.(Hit)) }
func (h *topK) Pop() any {
	x := h.hits[len(h.hits)-1]
	h.hits = h.hits[:len(h.hits)-1]
	return x
}
