package store

import (
	"errors"
	"fmt"
)

// Checked decoders of script replies. A Lua script's reply reaches Go as int64 (a Lua number or
// true), string, []any (a table) or nil (false or nil). Where a write reads a reply's parts, it
// decodes them with these, so that a reply of another shape (a script and its caller out of
// step) is an error naming the script, not a panic on an index out of range or a silent zero.

// ErrBadReply is wrapped by the error of a script reply that is not of the shape its caller
// expects; errors.Is finds it.
var ErrBadReply = errors.New("unexpected script reply")

// ReplyError is a script reply of an unexpected shape: Script names the script, Want the shape
// its caller expects.
type ReplyError struct {
	Script string
	Want   string
	Got    any
}

func (e *ReplyError) Error() string {
	got := fmt.Sprintf("%T", e.Got)
	if a, ok := e.Got.([]any); ok {
		got = fmt.Sprintf("an array of %d", len(a))
	}
	return fmt.Sprintf("script %s: %v: want %s, got %s", e.Script, ErrBadReply, e.Want, got)
}

// Unwrap makes errors.Is(err, ErrBadReply) hold.
func (e *ReplyError) Unwrap() error { return ErrBadReply }

// replyArray returns v, the reply of script, as an array of at least min elements.
func replyArray(script string, v any, min int) ([]any, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) < min {
		return nil, &ReplyError{Script: script, Want: fmt.Sprintf("an array of at least %d", min), Got: v}
	}
	return arr, nil
}

// replyInt returns v, a reply of script or an element of one, as an integer.
func replyInt(script string, v any) (int64, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, &ReplyError{Script: script, Want: "an integer", Got: v}
	}
	return n, nil
}

// replyString returns v, a reply of script or an element of one, as a string.
func replyString(script string, v any) (string, error) {
	str, ok := v.(string)
	if !ok {
		return "", &ReplyError{Script: script, Want: "a string", Got: v}
	}
	return str, nil
}

// replyHash returns v, a reply of script or an element of one that is a flat HGETALL (fields and
// values alternate), as a map.
func replyHash(script string, v any) (map[string]string, error) {
	arr, ok := v.([]any)
	if !ok || len(arr)%2 != 0 {
		return nil, &ReplyError{Script: script, Want: "a hash (fields and values alternating)", Got: v}
	}
	return hashFromReply(arr), nil
}
