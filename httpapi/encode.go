package httpapi

import (
	"bytes"
	"encoding/json"

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
	rest := *resp
	rest.Errors, rest.Data = nil, json.RawMessage("0") // encoded around the data below
	after, err := marshal(&rest)
	if err != nil {
		return nil, nil, nil, err
	}
	// after is {"data":0...}: the data is always there, the fields that follow it are optional.
	const before = `{"data":0`
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
	return head, data, after[len(before):], nil
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
