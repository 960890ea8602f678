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
	rest := *resp
	rest.Errors, rest.Data = nil, json.RawMessage("0") // encoded around the data below
	tail, err := marshal(&rest)
	if err != nil {
		return nil, err
	}
	// tail is {"data":0...}: the data is always there, the fields that follow it are optional.
	const head = `{"data":0`
	b := make([]byte, 0, len(resp.Data)+len(tail)+64)
	b = append(b, '{')
	if len(resp.Errors) > 0 {
		errs, err := marshal(resp.Errors)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, `"errors":`...), errs...), ',')
	}
	b = append(b, `"data":`...)
	if resp.Data == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, resp.Data...)
	}
	return append(b, tail[len(head):]...), nil
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
