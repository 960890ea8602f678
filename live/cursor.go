package live

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agora/agora/store"
)

// An event's cursor is its id in its channel's log, a Redis stream id: "<ms>-<seq>".

// cursorPattern is the form of an event's cursor.
var cursorPattern = regexp.MustCompile(`^[0-9]{1,19}-[0-9]{1,19}$`)

// CursorBefore reports whether the event cursor a comes before b. Malformed cursors come first.
func CursorBefore(a, b string) bool {
	am, as := splitCursor(a)
	bm, bs := splitCursor(b)
	return am < bm || am == bm && as < bs
}

func splitCursor(c string) (ms, seq uint64) {
	m, s, _ := strings.Cut(c, "-")
	ms, _ = strconv.ParseUint(m, 10, 64)
	seq, _ = strconv.ParseUint(s, 10, 64)
	return ms, seq
}

// CheckCursor reports whether after is a well-formed event cursor: an Error of KindInvalid when
// it is not.
func CheckCursor(after string) error {
	if !cursorPattern.MatchString(after) {
		if len(after) > 40 {
			after = after[:40] + "…"
		}
		return &store.Error{Kind: store.KindInvalid, Msg: fmt.Sprintf("after: %q is not an event cursor", after)}
	}
	return nil
}
