package store

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// replyArrayLen returns v, the reply of script or an element of one, as an array whose length
// is one of lens.
func replyArrayLen(script string, v any, lens ...int) ([]any, error) {
	if arr, ok := v.([]any); ok {
		for _, n := range lens {
			if len(arr) == n {
				return arr, nil
			}
		}
	}
	want := make([]string, len(lens))
	for i, n := range lens {
		want[i] = strconv.Itoa(n)
	}
	return nil, &ReplyError{Script: script, Want: "an array of " + strings.Join(want, " or "), Got: v}
}

// replyWord returns v, a reply of script or an element of one, as a status word that is one of
// words.
func replyWord(script string, v any, words ...string) (string, error) {
	if str, ok := v.(string); ok {
		for _, w := range words {
			if str == w {
				return str, nil
			}
		}
	}
	return "", &ReplyError{Script: script, Want: "one of " + strings.Join(words, ", "), Got: v}
}

// replyOptString returns v, a reply of script or an element of one, as a string; nil (a Lua
// false or nil, as HGET and HMGET give for a missing field) is "".
func replyOptString(script string, v any) (string, error) {
	switch str := v.(type) {
	case string:
		return str, nil
	case nil:
		return "", nil
	}
	return "", &ReplyError{Script: script, Want: "a string or nil", Got: v}
}

// replyStrings returns v, a reply of script or an element of one, as an array of n strings (any
// number when n < 0), nil elements read as "" (as HMGET's missing fields).
func replyStrings(script string, v any, n int) ([]string, error) {
	arr, ok := v.([]any)
	if !ok || (n >= 0 && len(arr) != n) {
		want := "an array of strings"
		if n >= 0 {
			want = fmt.Sprintf("an array of %d strings", n)
		}
		return nil, &ReplyError{Script: script, Want: want, Got: v}
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		str, err := replyOptString(script, e)
		if err != nil {
			return nil, err
		}
		out[i] = str
	}
	return out, nil
}

// replyPairs returns arr, elements of a reply of script where members and their scores
// alternate as strings (a ZRANGE WITHSCORES), as the members and the scores.
func replyPairs(script string, arr []any) (members, scores []string, err error) {
	if len(arr)%2 != 0 {
		return nil, nil, &ReplyError{Script: script, Want: "members and scores alternating", Got: arr}
	}
	members, scores = make([]string, 0, len(arr)/2), make([]string, 0, len(arr)/2)
	for i := 0; i < len(arr); i += 2 {
		m, err := replyString(script, arr[i])
		if err != nil {
			return nil, nil, err
		}
		sc, err := replyString(script, arr[i+1])
		if err != nil {
			return nil, nil, err
		}
		members, scores = append(members, m), append(scores, sc)
	}
	return members, scores, nil
}

// replyHash returns v, a reply of script or an element of one that is a flat HGETALL (fields and
// values alternate), as a map. Fields are strings; a value is a string or an integer (written
// in decimal).
func replyHash(script string, v any) (map[string]string, error) {
	arr, ok := v.([]any)
	if !ok || len(arr)%2 != 0 {
		return nil, &ReplyError{Script: script, Want: "a hash (fields and values alternating)", Got: v}
	}
	m := make(map[string]string, len(arr)/2)
	for i := 0; i < len(arr); i += 2 {
		k, err := replyString(script, arr[i])
		if err != nil {
			return nil, err
		}
		switch val := arr[i+1].(type) {
		case string:
			m[k] = val
		case int64:
			m[k] = strconv.FormatInt(val, 10)
		default:
			return nil, &ReplyError{Script: script, Want: "a hash value (a string or an integer)", Got: val}
		}
	}
	return m, nil
}
