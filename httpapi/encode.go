package httpapi

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
)

// encodeResponse encodes a GraphQL response as JSON, copying its data as it is: the executors
// write data as compact JSON, which json.Marshal would scan and compact once more (an eighth of
// the CPU of a 245 KB thread page). It leaves <, > and & as they are: JSON needs no HTML
// escaping. The transports of this package encode responses here.
func encodeResponse(resp *graphql.Response) ([]byte, error) {
	head, data, tail, err := responseParts(resp)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(head)+len(data)+len(tail))
	return append(append(append(b, head...), data...), tail...), nil
}

// responseParts is encodeResponse in three parts, whose concatenation is the response: what
// comes before the data, the data itself (not copied), and what follows it. A transport that
// writes to a stream writes them one after the other, with no copy of the data.
func responseParts(resp *graphql.Response) (head, data, tail []byte, err error) {
	tail, ok := plainTail(resp)
	if !ok {
		rest := *resp
		rest.Errors, rest.Data = nil, json.RawMessage("0") // encoded around the data below
		after, err := marshal(&rest)
		if err != nil {
			return nil, nil, nil, err
		}
		// after is {"data":0...}: the data is always there, the fields that follow it are optional.
		const before = `{"data":0`
		tail = after[len(before):]
	}
	head = []byte{'{'}
	if len(resp.Errors) > 0 {
		errs, err := marshal(resp.Errors)
		if err != nil {
			return nil, nil, nil, err
		}
		head = append(append(append(head, `"errors":`...), errs...), ',')
	}
	head = append(head, `"data":`...)
	data = resp.Data
	if data == nil {
		data = []byte("null")
	}
	return head, data, tail, nil
}

// plainTail returns what follows the data of a response that has nothing after it but
// extensions of the kinds agora sets — its cost ({"requested":n,"limit":n}), a cursor — written
// directly in the bytes json.Marshal would give, instead of through reflection on every
// response. ok is false for any other response, which marshal encodes.
func plainTail(resp *graphql.Response) (tail []byte, ok bool) {
	if resp.Label != "" || resp.Path != nil || resp.HasNext != nil {
		return nil, false
	}
	if len(resp.Extensions) == 0 {
		return []byte{'}'}, true
	}
	b := append(make([]byte, 0, 64), `,"extensions":`...)
	if b, ok = appendPlainObject(b, resp.Extensions); !ok {
		return nil, false
	}
	return append(b, '}'), true
}

// appendPlainObject appends m as json.Marshal encodes it — keys in order — when its values are
// strings, ints and maps of them, and its strings plain; ok is false otherwise.
func appendPlainObject[V any](b []byte, m map[string]V) (_ []byte, ok bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendPlainString(b, k); !ok {
			return nil, false
		}
		b = append(b, ':')
		switch v := any(m[k]).(type) {
		case string:
			b, ok = appendPlainString(b, v)
		case int:
			b, ok = strconv.AppendInt(b, int64(v), 10), true
		case map[string]int:
			b, ok = appendPlainObject(b, v)
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
	}
	return append(b, '}'), true
}

// appendPlainString appends s quoted when it is plain — printable ASCII without a quote or a
// backslash, which JSON writes as it is; ok is false otherwise.
func appendPlainString(b []byte, s string) (_ []byte, ok bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return nil, false
		}
	}
	return append(append(append(b, '"'), s...), '"'), true
}

// marshal is json.Marshal without HTML escaping.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
