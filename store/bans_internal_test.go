package store

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

// TestBanScriptRepeat runs ban.lua twice with one nonce, as go-redis resending a call whose reply
// was lost does: the second run answers the first's record, whatever it asks.
func TestBanScriptRepeat(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
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
		v, err := s.run(ctx, "ban", keys, op, "ben", "root", "1", ms, nonce, ms-banKeep.Milliseconds(), ms+60_000, reason, "go")
		if err != nil {
			t.Fatal(err)
		}
		arr, _ := v.([]any)
		return arr
	}
	// The reply: {changed, outbox, score, record}; {0, outbox} for an unban that finds no record.
	first := run("ban", "n1", "spam")
	if again := run("ban", "n1", "other"); again[0] != int64(0) || again[2] != first[2] || again[3] != first[3] {
		t.Fatalf("a repeat changed the record: %v, then %v", first, again)
	}
	lifted := run("unban", "n2", "")
	if again := run("unban", "n2", ""); len(again) != 4 || again[0] != int64(0) || again[3] != lifted[3] {
		t.Fatalf("a repeated unban answered %v, want %v", again, lifted)
	}
	if again := run("unban", "n3", ""); len(again) != 4 || again[0] != int64(0) || again[3] != lifted[3] {
		t.Fatalf("a second unban answered %v, want the ended ban unchanged %v", again, lifted)
	}
	if none, _ := s.run(ctx, "ban", s.banKeys("ops"), "unban", "ben", "root", "1", ms, "n4", ms-banKeep.Milliseconds(), 0, "", "ops"); len(none.([]any)) != 2 {
		t.Fatalf("an unban with no record answered %v, want {0, outbox}", none)
	}
	// One entry per action in the outbox, the repeats' none.
	if n := rdb.HLen(ctx, s.k.groupModOutbox("go")).Val(); n != 2 {
		t.Fatalf("the outbox holds %d entries after a ban and an unban, repeated, want 2", n)
	}
}
