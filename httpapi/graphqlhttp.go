package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// GraphQL over HTTP (https://graphql.github.io/graphql-over-http/): the media type of a response
// and its status code are decided here, in two steps.
//
//   - negotiate, in front of the middlewares of /query but cors, picks the response's media type
//     from the Accept header and sets it as the Content-Type, so that every answer — the errors
//     writeError sends outside the executor (401, 413…) as much as the transport's — comes in the
//     type the client asked for. A GET or POST that accepts neither type is refused with 406.
//   - httpTransport serves GET and POST: a request that is not a well-formed GraphQL-over-HTTP
//     request (a body that is not a JSON object, a missing or non-string query, variables or
//     extensions that are not objects) is answered 400. A request error — the document does not
//     parse or validate, the operation cannot be determined, the variables cannot be coerced, a
//     limit of limits.go — is answered without a data entry, with status 400 in
//     application/graphql-response+json and 200 in application/json. An executed operation is
//     answered 200 with its data, even when field errors made it null.

// Media types of GraphQL responses.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// negotiate sets the Content-Type of a GraphQL-over-HTTP response to the media type the client
// accepts (see responseMediaType) and refuses a GET or POST that accepts none of agora's with 406.
// WebSocket upgrades, server-sent events and preflights carry their own media types and pass
// through untouched.
func negotiate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if vs := r.Header["Accept"]; len(vs) > 1 {
			// One value, so that what comes next (the response cache's key, the choice of
			// server-sent events) sees all of it.
			r.Header.Set("Accept", strings.Join(vs, ", "))
		}
		if r.Method == http.MethodOptions || header(r, "Upgrade") != "" || wantsEventStream(r) {
			next.ServeHTTP(w, r)
			return
		}
		mt, ok := responseMediaType(header(r, "Accept"))
		w.Header().Add("Vary", "Accept")
		w.Header().Set("Content-Type", mt)
		if !ok && (r.Method == http.MethodGet || r.Method == http.MethodPost) {
			writeError(w, http.StatusNotAcceptable, "accept "+mediaGraphQLResponse+" or "+mediaJSON, CodeBadUserInput)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// wantsEventStream reports whether a request asks for server-sent events, as sseTransport and
// liveRequests decide it.
func wantsEventStream(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.Contains(header(r, "Accept"), "text/event-stream")
}

// responseMediaType picks the response media type for an Accept header: of application/json and
// application/graphql-response+json, the one with the highest quality, where a type named
// outright wins over one matched by a wildcard and, between two named outright, the one listed
// first wins. No Accept header, */* or application/* alone select application/json, as the
// GraphQL-over-HTTP spec asks of servers that legacy clients call. ok is false when the header
// accepts neither type; the type is then application/json.
func responseMediaType(accept string) (mt string, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return mediaJSON, true
	}
	type match struct {
		q        float64
		explicit bool // named outright, not through a wildcard
		pos      int  // position in the header of the range that named it
		set      bool
	}
	var best [2]match // by index in types
	types := [2]string{mediaJSON, mediaGraphQLResponse}
	for pos, part := range strings.Split(accept, ",") {
		rng, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if s, has := params["q"]; has {
			if q, err = strconv.ParseFloat(s, 64); err != nil || q < 0 || q > 1 {
				continue
			}
		}
		for i, t := range types {
			explicit := rng == t
			if !explicit && rng != "*/*" && rng != "application/*" {
				continue
			}
			// The most specific range decides a type's quality (RFC 9110, 12.5.1): a type named
			// outright with q=0 is refused even when */* accepts everything.
			m := &best[i]
			switch {
			case !m.set, explicit && !m.explicit:
				*m = match{q: q, explicit: explicit, pos: pos, set: true}
			case explicit == m.explicit && q > m.q:
				m.q = q
			}
		}
	}
	pick := -1
	for i, m := range best {
		if !m.set || m.q <= 0 {
			continue
		}
		if pick < 0 {
			pick = i
			continue
		}
		p := best[pick]
		if m.q > p.q || m.q == p.q && (m.explicit && !p.explicit || m.explicit && p.explicit && m.pos < p.pos) {
			pick = i
		}
	}
	if pick < 0 {
		return mediaJSON, false
	}
	return types[pick], true
}

// httpTransport is the gqlgen transport of GraphQL over HTTP GET and POST (with an
// application/json body); see the comment at the top of this file for its status codes.
type httpTransport struct {
	log *slog.Logger
}

var _ graphql.Transport = httpTransport{}

// Supports reports whether r is a GET or an application/json POST that is not an upgrade.
func (httpTransport) Supports(r *http.Request) bool {
	if header(r, "Upgrade") != "" {
		return false
	}
	switch r.Method {
	case http.MethodGet:
		return true
	case http.MethodPost:
		return isJSON(header(r, "Content-Type"))
	}
	return false
}

// header returns the first value of the request header name, as r.Header.Get does, for a name
// written in its canonical form ("Content-Type", "Upgrade"; see TestHeaderNamesCanonical):
// net/http keeps the names of the headers it reads canonical, and the middlewares and
// transports of /query look up some twenty a request, each of which Get canonicalized again.
func header(r *http.Request, name string) string {
	if v := r.Header[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// isJSON reports whether a Content-Type header names application/json, parameters aside, as
// mime.ParseMediaType reads it. The header nearly every client sends, exactly
// "application/json", is recognised without parsing it: three checks of it a request (the
// middlewares' and the transports') each made a map of its parameters and a lowered copy.
func isJSON(contentType string) bool {
	if contentType == mediaJSON {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == mediaJSON
}

// Do serves one request.
func (t httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	mt, _ := responseMediaType(header(r, "Accept"))
	w.Header().Set("Content-Type", mt)
	start := graphql.Now()
	params, err := readParams(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), CodeBadUserInput)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	ctx := r.Context()
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		errs = capRequestErrors(errs)
		status := http.StatusOK
		if mt == mediaGraphQLResponse {
			status = http.StatusBadRequest
		}
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
		t.write(ctx, w, status, requestErrorResponse{Errors: resp.Errors, Extensions: resp.Extensions})
		return
	}
	if r.Method == http.MethodGet && opCtx.Operation.Operation != ast.Query {
		// onlyQueriesOverGET refuses these first; this keeps the rule whatever runs in front.
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, string(opCtx.Operation.Operation)+"s are only accepted over POST", CodeMethodNotAllowed)
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	resp := responses(ctx)
	if resp == nil {
		return // the client went away
	}
	t.write(ctx, w, http.StatusOK, resp)
}

// requestErrorResponse is the response to a request error: no data entry, as the GraphQL spec
// has it for errors raised before execution starts.
type requestErrorResponse struct {
	Errors     gqlerror.List  `json:"errors"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// write sends a response body with status.
func (t httpTransport) write(ctx context.Context, w http.ResponseWriter, status int, body any) {
	var parts [3][]byte // written one after the other: a response's data is not copied
	var err error
	if resp, ok := body.(*graphql.Response); ok {
		parts[0], parts[1], parts[2], err = responseParts(resp)
	} else {
		parts[0], err = json.Marshal(body)
	}
	if err != nil {
		t.log.ErrorContext(ctx, "encode a GraphQL response", "err", err)
		writeError(w, http.StatusInternalServerError, "internal server error", CodeInternal)
		return
	}
	// With its length known, the response goes out as it is, not in chunks: past 2 KB, net/http
	// would otherwise frame it in chunks, which cost more than writing the length.
	w.Header().Set("Content-Length", strconv.Itoa(len(parts[0])+len(parts[1])+len(parts[2])))
	w.WriteHeader(status)
	for _, p := range parts {
		if len(p) > 0 {
			if _, err := w.Write(p); err != nil {
				return // the client went away
			}
		}
	}
}

// readParams reads the parameters of a GraphQL-over-HTTP request: a GET's from its query string,
// a POST's from its JSON body. It fails when they do not make a well-formed request.
func readParams(r *http.Request) (*graphql.RawParams, error) {
	raw, err := readRaw(r)
	if err != nil {
		return nil, err
	}
	p := &graphql.RawParams{Query: raw.query, OperationName: raw.operationName}
	if err := decodeObject("variables", raw.variables, &p.Variables); err != nil {
		return nil, err
	}
	if err := decodeObject("extensions", raw.extensions, &p.Extensions); err != nil {
		return nil, err
	}
	return p, nil
}

// rawRequest is a request's parameters as sent: the query and operation name read, the variables
// and extensions still JSON.
type rawRequest struct {
	query, operationName  string
	variables, extensions []byte
}

// readRaw reads a request's parameters as sent. It is the one reading of them: the transport
// decodes what it returns (readParams), and the response cache keys on it, so that a request is
// kept under the parameters it ran with.
func readRaw(r *http.Request) (rawRequest, error) {
	if r.Method == http.MethodGet {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return rawRequest{}, fmt.Errorf("the query string is malformed: %w", err)
		}
		if !q.Has("query") {
			return rawRequest{}, errors.New(`the "query" parameter is missing`)
		}
		return rawRequest{query: q.Get("query"), operationName: q.Get("operationName"),
			variables: []byte(q.Get("variables")), extensions: []byte(q.Get("extensions"))}, nil
	}
	body, err := requestBody(r) // without consuming it: the cache reads it before the transport
	if err != nil {
		return rawRequest{}, fmt.Errorf("could not read the request body: %w", err)
	}
	m, ok := requestMembers(body)
	if !ok {
		return rawRequest{}, errors.New("the request body is not a JSON object")
	}
	if m.query == nil || isNull(m.query) {
		return rawRequest{}, errors.New(`the "query" parameter is missing`)
	}
	raw := rawRequest{variables: m.variables, extensions: m.extensions}
	if raw.query, ok = jsonString(m.query); !ok {
		return rawRequest{}, errors.New(`the "query" parameter must be a string`)
	}
	if m.operationName != nil && !isNull(m.operationName) {
		if raw.operationName, ok = jsonString(m.operationName); !ok {
			return rawRequest{}, errors.New(`the "operationName" parameter must be a string or null`)
		}
	}
	return raw, nil
}

// decodeObject decodes the JSON object parameter name into m, keeping numbers as json.Number as
// gqlgen expects; absent (empty) and null leave m nil.
func decodeObject(name string, raw []byte, m *map[string]any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if flat, ok := flatObject(raw); ok {
		*m = flat
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(m); err != nil {
		return fmt.Errorf("the %q parameter must be a JSON object or null", name)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("the %q parameter must be a JSON object or null (one JSON value)", name)
	}
	return nil
}

// members are the raw values of the members of a request body that GraphQL over HTTP defines;
// nil when absent.
type members struct {
	query, operationName, variables, extensions []byte
}

// requestMembers splits a request body that is one JSON object into the raw values of its
// members, the last one winning when a name repeats, as json.Unmarshal into a map would. It
// checks the body once (json.Valid) and then only walks it, instead of decoding it into a map of
// raw messages: the body is read on every request, and that decoding (three passes over it) was
// 5% of the server's CPU on the small page of ../shared/bench/compare.sh.
func requestMembers(body []byte) (m members, ok bool) {
	ok = eachMember(body, func(name, v []byte) bool {
		switch string(name) { // compared, not copied

		case "query":
			m.query = v
		case "operationName":
			m.operationName = v
		case "variables":
			m.variables = v
		case "extensions":
			m.extensions = v
		}
		return true
	})
	return m, ok
}

// eachMember calls member with the name, unescaped, and the raw value of each member of raw, one
// JSON object, in order; it returns false when raw is not one, or when member does. A name
// without escapes in valid UTF-8 is passed as the bytes of raw, not copied into a string.
func eachMember(raw []byte, member func(name, value []byte) bool) bool {
	if !validJSON(raw) {
		return false
	}
	i := skipSpace(raw, 0)
	if raw[i] != '{' {
		return false
	}
	for i = skipSpace(raw, i+1); raw[i] != '}'; {
		end := skipValue(raw, i)
		name := raw[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 || !utf8.Valid(name) {
			s, ok := jsonString(raw[i:end])
			if !ok {
				return false
			}
			name = []byte(s)
		}
		i = skipSpace(raw, skipSpace(raw, end)+1) // past the colon
		end = skipValue(raw, i)
		if !member(name, raw[i:end:end]) {
			return false
		}
		if i = skipSpace(raw, end); raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return true
}

// flatObject decodes raw as decodeObject does — numbers as json.Number — when it is one JSON
// object whose members are strings, numbers, booleans or null, as the variables of most requests
// are, without a json.Decoder (2% of the server's CPU on the small page, most of it making the
// decoder); ok is false for anything else.
func flatObject(raw []byte) (m map[string]any, ok bool) {
	m = map[string]any{}
	ok = eachMember(raw, func(n, v []byte) bool {
		name := string(n)
		switch c := v[0]; {
		case c == '"':
			s, ok := jsonString(v)
			m[name] = s
			return ok
		case c == 't', c == 'f':
			m[name] = c == 't'
		case c == 'n':
			m[name] = nil
		case c == '-', c >= '0' && c <= '9':
			m[name] = json.Number(v)
		default:
			return false // an object or an array
		}
		return true
	})
	return m, ok
}

// skipSpace returns the index of the first byte at or after i of valid JSON b that is not
// insignificant whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the value that starts at i in valid JSON b.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[i])) {
		i++ // a number, true, false or null
	}
	return i
}

// skipString returns the index just past the string that starts at i in valid JSON b.
func skipString(b []byte, i int) int {
	end, _ := jsonStringEnd(b, i) // eight bytes at a time
	return end
}

// jsonString decodes raw, a valid JSON value, as a string; ok is false when it is not one. A
// string without escapes in valid UTF-8 is its bytes between the quotes; any other goes through
// json.Unmarshal, which unescapes it and replaces invalid UTF-8 as it always has.
func jsonString(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if in := raw[1 : len(raw)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in), true
	}
	return s, json.Unmarshal(raw, &s) == nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
