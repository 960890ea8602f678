package main

import (
	"io"
	"testing"
	"time"

	"github.com/agora/agora/store"
)

// TestMessageFlags checks -request-cooldown and -message-limit: their defaults, their
// environment variables, and flags winning over them.
func TestMessageFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		env      map[string]string
		cooldown time.Duration
		limit    int
	}{
		{nil, nil, store.DefaultRequestCooldown, store.DefaultMessagesPerMinute},
		{nil, map[string]string{"AGORA_REQUEST_COOLDOWN": "48h", "AGORA_MESSAGE_LIMIT": "5"}, 48 * time.Hour, 5},
		{[]string{"-request-cooldown", "1h", "-message-limit", "7"}, map[string]string{"AGORA_REQUEST_COOLDOWN": "48h"}, time.Hour, 7},
	} {
		cfg, _, err := parseFlags(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err != nil {
			t.Fatalf("%v %v: %v", tc.args, tc.env, err)
		}
		if cfg.messages.RequestCooldown != tc.cooldown || cfg.messages.PerWindow != tc.limit {
			t.Errorf("%v %v: cooldown %s, limit %d; want %s, %d", tc.args, tc.env, cfg.messages.RequestCooldown, cfg.messages.PerWindow, tc.cooldown, tc.limit)
		}
	}
	if _, _, err := parseFlags(nil, func(k string) string { return map[string]string{"AGORA_REQUEST_COOLDOWN": "a month"}[k] }, io.Discard); err == nil {
		t.Error("AGORA_REQUEST_COOLDOWN that does not parse was accepted")
	}
}
