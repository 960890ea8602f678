package httpapi

import (
	"encoding/json"
	"testing"
)

// TestOpMessages checks the envelopes assembled by byte concatenation against encoding/json.
func TestOpMessages(t *testing.T) {
	for _, tc := range []struct {
		id, typ string
		payload []byte
	}{
		{"1", "next", []byte(`{"data":{"a":1}}`)},
		{`quo"te\<&>`, "data", []byte(`{"data":null}`)},
		{"x", "error", []byte(`[{"message":"no"}]`)},
		{"é", "complete", nil},
	} {
		got := opMsg(tc.id, tc.typ, tc.payload)
		var m struct {
			ID      string          `json:"id"`
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		if m.ID != tc.id || m.Type != tc.typ || string(m.Payload) != string(tc.payload) {
			t.Errorf("opMsg(%q, %q, %s) = %s", tc.id, tc.typ, tc.payload, got)
		}
	}
}
