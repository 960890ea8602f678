package store

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestBanScriptRepeat runs ban.lua twice with one nonce, as go-redis resending a call whose reply
// was lost does: the second run answers the first's record, whatever it asks.
func TestBanScriptRepeat(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	now := time.Now()
	s, err := New(ctx, rdb, Options{Now: func() time.Time { return now }, Admins: []string{"root"}})
	if err != nil {
		t.Fatal(err)
	}
	keys := s.banKeys("go")
	ms := now.UnixMilli()
	run := func(op, nonce, reason string) []any {
		t.Helper()
		v, err := s.run(ctx, "ban", keys, op, "ben", "root", "1", ms, nonce, ms-banKeep.Milliseconds(), ms+60_000, reason)
		if err != nil {
			t.Fatal(err)
		}
		arr, _ := v.([]any)
		return arr
	}
	first := run("ban", "n1", "spam")
	if again := run("ban", "n1", "other"); again[0] != first[0] || again[1] != first[1] {
		t.Fatalf("a repeat changed the record: %v, then %v", first, again)
	}
	lifted := run("unban", "n2", "")
	if again := run("unban", "n2", ""); again == nil || again[1] != lifted[1] {
		t.Fatalf("a repeated unban answered %v, want %v", again, lifted)
	}
	if again := run("unban", "n3", ""); again != nil {
		t.Fatalf("a second unban found a ban in force: %v", again)
	}
}
