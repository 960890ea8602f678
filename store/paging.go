package store

import (
	"encoding/base64"
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

	// start and end, when set, are where the page's examination of the list began and ended,
	// beyond its items: a page that stopped short of its size because its work is bounded (a
	// search's verification, see searchPage) ends where it stopped, so that the next page goes
	// on from there rather than examining the same members again, and an empty one still has a
	// cursor to go on from.
	start, end string
}

// StartCursor is where the page begins: the cursor of the first item, or "" for an empty page,
// unless the page says where its examination began (see start).
func (p *Page[T]) StartCursor() string {
	if p.start != "" {
		return p.start
	}
	if len(p.Cursors) == 0 {
		return ""
	}
	return p.Cursors[0]
}

// EndCursor is where the page ends: the cursor of the last item, or "" for an empty page, unless
// the page says where its examination ended (see end).
func (p *Page[T]) EndCursor() string {
	if p.end != "" {
		return p.end
	}
	if len(p.Cursors) == 0 {
		return ""
	}
	return p.Cursors[len(p.Cursors)-1]
}

// Without returns the page without the items drop names, each kept item with its cursor: the one
// way a filter (blocks, removals, read marks, a window's cutoff) takes items out of a page. Its
// other fields are the page's; one it leaves empty still says where the page began and ended
// (start, end), so that paging goes on past it — an empty page with a next page and no cursor
// to reach it would end the client's paging there.
//
// A page that loses nothing is returned as it is, and one that does is copied once, without
// growing its slices: every listing's page passes through it.
func (p *Page[T]) Without(drop func(T) bool) *Page[T] {
	var dropped []bool
	n := 0
	for i, it := range p.Items {
		if drop(it) {
			if dropped == nil {
				dropped = make([]bool, len(p.Items))
			}
			dropped[i] = true
			n++
		}
	}
	if n == 0 {
		return p
	}
	out := *p
	out.Items, out.Cursors = make([]T, 0, len(p.Items)-n), make([]string, 0, len(p.Items)-n)
	for i, it := range p.Items {
		if !dropped[i] {
			out.Items, out.Cursors = append(out.Items, it), append(out.Cursors, p.Cursors[i])
		}
	}
	if len(out.Items) == 0 {
		out.start, out.end = p.StartCursor(), p.EndCursor()
	}
	return &out
}

// cursor is a position in a sorted set: the score and member of an item seen. The list tag
// stops a cursor of one list from being used on another.
type cursor struct {
	list   string
	score  string
	member string
}

func (c cursor) encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte("v1|" + c.list + "|" + c.score + "|" + c.member))
}

// decodeCursor parses an opaque cursor of the list tag list. An empty string is no cursor: the end
// of the list on its side of the page.
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

// CheckFirst validates the size of a forward page.
func CheckFirst(first int) error { return checkSize("first", first) }

// CheckLast validates the size of a backward page.
func CheckLast(last int) error { return checkSize("last", last) }

// checkSize validates the page size n given as the argument arg.
func checkSize(arg string, n int) error {
	if n < 1 || n > MaxFirst {
		return invalidf("%s must be between 1 and %d (got %d)", arg, MaxFirst, n)
	}
	return nil
}

// Window is the part of a list a page asks for, in the terms of Relay's connection arguments: the
// First items after the cursor After, or the Last items before the cursor Before. A forward page
// sets First and leaves Last 0; a backward page sets Last and leaves First 0; setting both is
// KindInvalid. Either cursor may be given in either direction, so that After and Before together
// page through the items between them. An empty cursor is the end of the list on its side. Any
// cursor of a list works as either bound: a cursor is a position, not a direction.
type Window struct {
	First, Last   int
	After, Before string
	// NoTotal and NoCursors skip what the response does not show of a page without a cursor: the
	// size of the list (ZCARD) and the items' cursors (the scores of ZRANGE). A page read with
	// them has Total 0 and empty cursors.
	NoTotal, NoCursors bool
}

// span is a checked Window with its cursors decoded.
type span struct {
	n             int  // the page size
	backward      bool // the last n items before before, rather than the first n after after
	after, before cursor
	cut           windowCut // a windowed TOP's read-time filter; zero for other lists
}

// windowCut leaves out of a windowed TOP's page the posts past its window (see page.lua): those
// published before cutoff (Unix ms) that its set still holds.
type windowCut struct {
	times  string // the rankings' publish-time set
	marks  string // their trim marks hash
	set    string // the window's set: its field in marks
	cutoff int64
	group  string // the group of the rankings, "" for the site's: the trim job's argument
}

// within reports whether a post published at published (Unix ms) that the window's set holds is
// in the window: published at or after the cutoff. Every post is within the zero cut.
func (c windowCut) within(published int64) bool { return c.set == "" || published >= c.cutoff }

// decode checks w and decodes its cursors as cursors of the list tagged list.
func (w Window) decode(list string) (span, error) {
	sp := span{n: w.First}
	switch {
	case w.First != 0 && w.Last != 0:
		return span{}, invalidf("first and last cannot be used together: " +
			"page forwards with first and after, or backwards with last and before")
	case w.Last != 0:
		if err := CheckLast(w.Last); err != nil {
			return span{}, err
		}
		sp.n, sp.backward = w.Last, true
	default:
		if err := CheckFirst(w.First); err != nil {
			return span{}, err
		}
	}
	var err error
	if sp.after, err = decodeCursor(w.After, list); err != nil {
		return span{}, err
	}
	if sp.before, err = decodeCursor(w.Before, list); err != nil {
		return span{}, err
	}
	return sp, nil
}

// open reports whether the span has no cursor: it is the start or the end of the list.
func (sp span) open() bool { return sp.after.score == "" && sp.before.score == "" }

// key names the span in cache keys.
func (sp span) key() string { return string(sp.appendKey(nil)) }

// appendKey appends key to b.
func (sp span) appendKey(b []byte) []byte {
	b = strconv.AppendBool(append(strconv.AppendInt(b, int64(sp.n), 10), 0), sp.backward)
	for _, s := range [...]string{sp.after.score, sp.after.member, sp.before.score, sp.before.member} {
		b = append(append(b, 0), s...)
	}
	return strconv.AppendInt(append(b, 0), sp.cut.cutoff, 10)
}

// rawPage is a page of a sorted set as read: its members in list order, with their scores when
// read, where it starts in the list and whether members precede and follow it.
type rawPage struct {
	members []string
	scores  []string
	total   int // the size of the list; 0 when not read
	start   int // the position of the first member; for a last page, known only with total
	hasNext bool
	hasPrev bool
	// backlog is how many posts past its window a windowed TOP's read filtered (see page.lua),
	// both parts' for a merged page; 0 for other lists.
	backlog int
}

// parsePage reads the page script's reply. Its scores are written as a plain ZRANGE's are (see
// pageOf): Redis before 7.2 replies with 17 significant digits ("0.10000000000000001") where Go's
// shortest form is "0.1", and a cursor must not depend on which read made it.
func parsePage(v any, cut bool) (rawPage, error) {
	head := 2
	if cut {
		head = 3
	}
	arr, err := replyArray("page", v, head)
	if err != nil {
		return rawPage{}, err
	}
	total, err := replyInt("page", arr[0])
	if err != nil {
		return rawPage{}, err
	}
	start, err := replyInt("page", arr[1])
	if err != nil {
		return rawPage{}, err
	}
	rp := rawPage{total: int(total), start: int(start)}
	if cut {
		backlog, err := replyInt("page", arr[2])
		if err != nil {
			return rawPage{}, err
		}
		rp.backlog = int(backlog)
	}
	if rp.members, rp.scores, err = replyPairs("page", arr[head:]); err != nil {
		return rawPage{}, err
	}
	for i, sc := range rp.scores {
		if f, err := strconv.ParseFloat(sc, 64); err == nil {
			rp.scores[i] = formatScore(f)
		}
	}
	rp.hasPrev = rp.start > 0
	rp.hasNext = rp.start+len(rp.members) < rp.total
	return rp, nil
}

// trim keeps the n items of an open page read with one more: the first n of a first page, the
// last n of a last page, noting whether more follow or precede.
func (rp *rawPage) trim(n int, backward bool) {
	if len(rp.members) <= n {
		return
	}
	cut := func(s []string) []string {
		if len(s) <= n {
			return s
		}
		if backward {
			return s[len(s)-n:]
		}
		return s[:n]
	}
	rp.members, rp.scores = cut(rp.members), cut(rp.scores)
	if backward {
		rp.hasPrev = true
	} else {
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
