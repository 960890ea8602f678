package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
)

// membersByMap is how request bodies were split before requestMembers: json.Unmarshal into a map
// of raw messages, then each string member unmarshaled. requestMembers must agree with it.
func membersByMap(body []byte) (m members, query, name string, queryOK, nameOK, ok bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return m, "", "", false, false, false
	}
	m = members{query: fields["query"], operationName: fields["operationName"], variables: fields["variables"], extensions: fields["extensions"]}
	queryOK = m.query != nil && json.Unmarshal(m.query, &query) == nil
	nameOK = m.operationName != nil && json.Unmarshal(m.operationName, &name) == nil
	return m, query, name, queryOK, nameOK, true
}

var memberBodies = []string{
	`{"query":"{ a }"}`,
	`{"query":"query($p:ID!){ post(id: $p) { id } }","variables":{"p":"post:1"},"operationName":null}`,
	` { "query" : "{ a }" , "variables" : { "n" : 1 } , "extensions" : {"persistedQuery":{"version":1,"sha256Hash":"ab"}} } `,
	"{\n\t\"query\":\r\n\"{ a }\"\n}\n",
	`{"variables":{"n":1},"query":"{ a }"}`,
	`{"variables":{"s":"} ] { [ \" \\"},"query":"{ a }"}`,
	`{"query":"a \"quoted\" \\ and \u00e9 and \n"}`,
	`{"\u0071uery":"{ escaped name }"}`,
	`{"query":"first","query":"last"}`,
	`{"Query":"case matters"}`,
	`{"query":"{ a }","other":[1,2,{"x":[true,false,null]}],"n":-1.5e3}`,
	`{"query":"{ a }","n":12}`,
	`{"n":true,"query":"{ a }"}`,
	`{"query":null}`,
	`{"query":12}`,
	`{"query":"{ a }","operationName":7}`,
	`{"query":"{ a }","operationName":"Q"}`,
	`{}`,
	`[]`,
	`null`,
	`"query"`,
	``,
	`{"query":"{ a }"`,
	`{"query":"{ a }"} {}`,
	"{\"query\":\"invalid \xff utf-8\"}",
	"{\"qu\xffery\":\"x\"}",
}

func TestRequestMembersAgreeWithUnmarshal(t *testing.T) {
	for _, body := range memberBodies {
		checkMembers(t, []byte(body))
	}
}

func FuzzRequestMembers(f *testing.F) {
	for _, body := range memberBodies {
		f.Add([]byte(body))
	}
	f.Fuzz(checkMembers)
}

func checkMembers(t *testing.T, body []byte) {
	want, wantQuery, wantName, wantQueryOK, wantNameOK, wantOK := membersByMap(body)
	got, ok := requestMembers(body)
	if ok != wantOK {
		t.Fatalf("%q: ok %v, want %v", body, ok, wantOK)
	}
	if !ok {
		return
	}
	for _, f := range []struct {
		name      string
		got, want []byte
	}{
		{"query", got.query, want.query}, {"operationName", got.operationName, want.operationName},
		{"variables", got.variables, want.variables}, {"extensions", got.extensions, want.extensions},
	} {
		if !bytes.Equal(f.got, f.want) || (f.got == nil) != (f.want == nil) {
			t.Fatalf("%q: %s = %q, want %q", body, f.name, f.got, f.want)
		}
	}
	if got.query != nil && !isNull(got.query) { // readParams takes null for absent
		q, ok := jsonString(got.query)
		if ok != wantQueryOK || q != wantQuery {
			t.Fatalf("%q: query %q (%v), want %q (%v)", body, q, ok, wantQuery, wantQueryOK)
		}
	}
	if got.operationName != nil && !isNull(got.operationName) {
		n, ok := jsonString(got.operationName)
		if ok != wantNameOK || n != wantName {
			t.Fatalf("%q: operationName %q (%v), want %q (%v)", body, n, ok, wantName, wantNameOK)
		}
	}
}

// objectByDecoder is decodeObject without its fast path.
func objectByDecoder(raw []byte) (map[string]any, bool) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false // more than one value
	}
	return m, true
}

var objectBodies = []string{
	`{"p":"post:1"}`,
	`{"p":"post:1","n":12,"f":-1.5e3,"b":true,"c":false,"z":null}`,
	` { "a" : "x" , "a" : "y" } `,
	`{"\u0070":"\u00e9\n\"q\""}`,
	`{}`,
	`{"nested":{"a":1}}`,
	`{"list":[1,2]}`,
	"{\"bad\":\"\xff\"}",
	`null`,
	`[]`,
	`"s"`,
	`{"a":1} {"b":2}`,
	`{}A`,
	`{"a":1`,
	`{"big":123456789012345678901234567890}`,
}

func TestFlatObjectAgreesWithDecoder(t *testing.T) {
	for _, raw := range objectBodies {
		checkFlat(t, []byte(raw))
	}
}

func FuzzFlatObject(f *testing.F) {
	for _, raw := range objectBodies {
		f.Add([]byte(raw))
	}
	f.Fuzz(checkFlat)
}

// checkFlat checks that flatObject, when it decodes raw, agrees with the decoder, and that it
// decodes every flat object the decoder does.
func checkFlat(t *testing.T, raw []byte) {
	want, wantOK := objectByDecoder(raw)
	got, ok := flatObject(raw)
	if ok && !wantOK {
		t.Fatalf("%q: flatObject decoded %v, the decoder refuses it", raw, got)
	}
	if !ok {
		if wantOK {
			for _, v := range want {
				switch v.(type) {
				case map[string]any, []any:
					return // not flat: the decoder's
				}
			}
			t.Fatalf("%q: flatObject refused a flat object the decoder reads as %v", raw, want)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: flatObject = %#v, the decoder %#v", raw, got, want)
	}
}
