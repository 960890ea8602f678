package store

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxFirst is the largest page a client may ask for.
const MaxFirst = 100

// Page is one page of a list, in order, with a cursor per item.
type Page[T any] struct {
	Items   []T
	Cursors []string
	Total   int  // members of the whole list
	HasNext bool // more items follow the last one
	HasPrev bool // items precede the first one
}

// StartCursor is the cursor of the first item, or "" for an empty page.
func (p *Page[T]) StartCursor() string {
	if len(p.Cursors) == 0 {
		return ""
	}
	return p.Cursors[0]
}

// EndCursor is the cursor of the last item, or "" for an empty page.
func (p *Page[T]) EndCursor() string {
	if len(p.Cursors) == 0 {
		return ""
	}
	return p.Cursors[len(p.Cursors)-1]
}

// cursor is a position in a sorted set: the score and member of the last item seen. The list tag
// stops a cursor of one list from being used on another.
type cursor struct {
	list   string
	score  string
	member string
}

func (c cursor) encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte("v1|" + c.list + "|" + c.score + "|" + c.member))
}

// decodeCursor parses an opaque cursor of the list tag list. An empty string is the start.
func decodeCursor(s, list string) (cursor, error) {
	if s == "" {
		return cursor{list: list}, nil
	}
	bad := invalidf("malformed cursor")
	if len(s) > 400 {
		return cursor{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, bad
	}
	parts := strings.SplitN(string(raw), "|", 4)
	if len(parts) != 4 || parts[0] != "v1" || parts[3] == "" {
		return cursor{}, bad
	}
	if parts[1] != list {
		return cursor{}, invalidf("the cursor belongs to another list")
	}
	if f, err := strconv.ParseFloat(parts[2], 64); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return cursor{}, bad
	}
	return cursor{list: list, score: parts[2], member: parts[3]}, nil
}

// CheckFirst validates a page size.
func CheckFirst(first int) error {
	if first < 1 || first > MaxFirst {
		return invalidf("first must be between 1 and %d (got %d)", MaxFirst, first)
	}
	return nil
}

// rawPage is the reply of the page script.
type rawPage struct {
	members []string
	scores  []string
	total   int
	start   int
	hasNext bool
}

// parsePage reads the page script's reply, keeping at most first items.
func parsePage(v any, first int) (rawPage, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) < 2 {
		return rawPage{}, fmt.Errorf("page: unexpected reply %T", v)
	}
	total, _ := arr[0].(int64)
	start, _ := arr[1].(int64)
	rp := rawPage{total: int(total), start: int(start)}
	for i := 2; i+1 < len(arr); i += 2 {
		m, _ := arr[i].(string)
		sc, _ := arr[i+1].(string)
		rp.members = append(rp.members, m)
		rp.scores = append(rp.scores, sc)
	}
	rp.trim(first)
	return rp, nil
}

// trim keeps the first items of a page read with one more, noting whether more follow.
func (rp *rawPage) trim(first int) {
	if len(rp.members) > first {
		rp.members = rp.members[:first]
		if len(rp.scores) > first {
			rp.scores = rp.scores[:first]
		}
		rp.hasNext = true
	}
}

// cursors makes the cursors of a raw page's members.
func (rp rawPage) cursors(list string) []string {
	out := make([]string, len(rp.members))
	if len(rp.scores) < len(rp.members) {
		return out // read without scores: the response shows no cursor
	}
	for i := range rp.members {
		out[i] = cursor{list: list, score: rp.scores[i], member: rp.members[i]}.encode()
	}
	return out
}
