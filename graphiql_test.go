package main

import (
	"io"
	"testing"
)

// TestGraphiQLFlag checks -graphiql and AGORA_GRAPHIQL: on by default, off answers GET / with
// 404, and the flag wins over the variable.
func TestGraphiQLFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want bool
	}{
		{nil, "", true},
		{[]string{"-graphiql=false"}, "", false},
		{nil, "false", false},
		{nil, "0", false},
		{[]string{"-graphiql"}, "false", true},
		{[]string{"-graphiql=false"}, "true", false},
	} {
		cfg, _, err := parseFlags(tc.args, func(k string) string { return map[string]string{"AGORA_GRAPHIQL": tc.env}[k] }, io.Discard)
		if err != nil {
			t.Fatalf("%v AGORA_GRAPHIQL=%q: %v", tc.args, tc.env, err)
		}
		if cfg.graphiql != tc.want {
			t.Errorf("%v AGORA_GRAPHIQL=%q: graphiql %v, want %v", tc.args, tc.env, cfg.graphiql, tc.want)
		}
	}
	if _, _, err := parseFlags(nil, func(k string) string { return map[string]string{"AGORA_GRAPHIQL": "maybe"}[k] }, io.Discard); err == nil {
		t.Error("AGORA_GRAPHIQL=maybe: no error")
	}

	s := start(t, map[string]string{"AGORA_GRAPHIQL": "false"})
	if code, body := get(t, s.url+"/"); code != 404 {
		t.Errorf("AGORA_GRAPHIQL=false: GET / = %d %s, want 404", code, body)
	}
	if code, body := get(t, s.url+"/healthz"); code != 200 {
		t.Errorf("AGORA_GRAPHIQL=false: GET /healthz = %d %s", code, body)
	}
}
