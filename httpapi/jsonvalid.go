package httpapi

import (
	"encoding/binary"

	"github.com/agora/agora/internal/jsontext"
)

// validJSON reports whether b is one JSON value with insignificant whitespace around it, exactly
// as json.Valid does (FuzzValidJSON holds the two to the same answer): strings may hold any byte
// but the control characters below 0x20, invalid UTF-8 included, and values nest at most 10,000
// deep. It checks a request's body before eachMember walks it, at a few instructions a byte where
// json.Valid's scanner, a state function a byte, took twenty (1.4% of the small page's
// instructions).
func validJSON(b []byte) bool {
	i, ok := jsonValue(b, skipSpace(b, 0), 0)
	return ok && skipSpace(b, i) == len(b)
}

// maxJSONDepth is encoding/json's bound on nesting: a deeper value is not valid.
const maxJSONDepth = 10000

// jsonValue returns the index just past the JSON value that starts at i in b, nested depth deep;
// ok is false when no valid value starts there.
func jsonValue(b []byte, i, depth int) (end int, ok bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return jsonStringEnd(b, i)
	case c == '{', c == '[':
		if depth == maxJSONDepth {
			return i, false
		}
		return jsonComposite(b, i, depth+1)
	case c == '-', c >= '0' && c <= '9':
		return jsonNumberEnd(b, i)
	case c == 't':
		return jsonLiteral(b, i, "true")
	case c == 'f':
		return jsonLiteral(b, i, "false")
	case c == 'n':
		return jsonLiteral(b, i, "null")
	}
	return i, false
}

// jsonComposite is jsonValue of an object or an array, starting at its bracket.
func jsonComposite(b []byte, i, depth int) (int, bool) {
	object := b[i] == '{'
	closing := byte(']')
	if object {
		closing = '}'
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closing {
		return i + 1, true
	}
	for {
		var ok bool
		if object {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			if i, ok = jsonStringEnd(b, i); !ok {
				return i, false
			}
			if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
				return i, false
			}
			i = skipSpace(b, i+1)
		}
		if i, ok = jsonValue(b, i, depth); !ok {
			return i, false
		}
		if i = skipSpace(b, i); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case closing:
			return i + 1, true
		default:
			return i, false
		}
	}
}

// jsonStringEnd is jsonValue of a string, starting at its quote. The bytes that need no look
// are passed over eight at a time (jsontext.Plain).
func jsonStringEnd(b []byte, i int) (int, bool) {
	for i++; ; i++ {
		for i+8 <= len(b) && jsontext.Plain(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			return i, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			if i++; i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return i, false
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
}

// jsonNumberEnd is jsonValue of a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumberEnd(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(i + 1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// jsonLiteral is jsonValue of true, false or null, spelled lit.
func jsonLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}
