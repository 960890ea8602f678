package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
)

// TestRedisTimeoutFlag: -redis-timeout and REDIS_TIMEOUT set the deadline of every Redis call,
// 3s by default; a bound that is not positive, or one the wait for replicas does not fit in, stops
// the start.
func TestRedisTimeoutFlag(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		env     map[string]string
		want    time.Duration
		wantErr string
	}{
		{name: "default", want: store.DefaultRedisTimeout},
		{name: "environment", env: map[string]string{"REDIS_TIMEOUT": "750ms"}, want: 750 * time.Millisecond},
		{name: "flag wins", args: []string{"-redis-timeout", "10s"}, env: map[string]string{"REDIS_TIMEOUT": "750ms"}, want: 10 * time.Second},
		{name: "not a duration", env: map[string]string{"REDIS_TIMEOUT": "soon"}, wantErr: "REDIS_TIMEOUT"},
		{name: "zero", args: []string{"-redis-timeout", "0s"}, wantErr: "-redis-timeout: want a positive duration"},
		{name: "replicas wait as long as the timeout", args: []string{"-redis-wait-replicas", "1", "-redis-wait-timeout", "3s"},
			wantErr: "-redis-wait-timeout (3s) must be shorter than -redis-timeout (3s)"},
		{name: "replicas wait within the timeout", args: []string{"-redis-wait-replicas", "1", "-redis-wait-timeout", "3s", "-redis-timeout", "5s"},
			want: 5 * time.Second},
		{name: "no replicas to wait for", args: []string{"-redis-wait-timeout", "3s"}, want: store.DefaultRedisTimeout},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, _, err := parseFlags(c.args, env(c.env), io.Discard)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.redisTimeout != c.want {
				t.Fatalf("redis timeout %s, want %s", cfg.redisTimeout, c.want)
			}
		})
	}
	var out bytes.Buffer
	_, _, _ = parseFlags([]string{"-h"}, env(nil), &out)
	for _, want := range []string{"-redis-timeout", "REDIS_TIMEOUT", "UNAVAILABLE"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-h does not mention %q", want)
		}
	}
}
