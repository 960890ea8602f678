package store

import (
	"context"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

// TestModerationScriptsAreSafeToRunTwice sends each moderation script twice with the same
// arguments, as go-redis does when a reply is lost: the second run changes nothing and records
// nothing more in the outbox.
func TestModerationScriptsAreSafeToRunTwice(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	defer rdb.Close()
	s, err := New(ctx, rdb, Options{Prefix: "x:", WriteLimit: -1, Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	twice := func(name string, keys []string, args ...any) []any {
		t.Helper()
		var arr []any
		for i := range 2 {
			v, err := s.run(ctx, name, keys, args...)
			if err != nil {
				t.Fatalf("%s run %d: %v", name, i+1, err)
			}
			arr, _ = v.([]any)
			if i == 1 && len(arr) > 0 && arr[0] != int64(0) {
				t.Fatalf("%s: the second run changed something: %v", name, arr)
			}
		}
		return arr
	}
	post, outbox := s.k.post("1"), s.k.postModOutbox("1")
	if _, err := s.run(ctx, "create_post", []string{post, s.k.postTexts("1")}, "t", "", "", "ann", 1000, 1e15, "go", "n", "Ann"); err != nil {
		t.Fatal(err)
	}
	twice("moderate_post", []string{post, outbox, s.k.postTexts("1")}, "REMOVE_POST", "mia", "go", "1", "spam", 2000, "1")
	twice("moderate_post", []string{post, outbox, s.k.postTexts("1")}, "LOCK_POST", "root", "*", "0", "", 3000, "1")
	if h := rdb.HGetAll(ctx, post).Val(); h["removed"] != "1" || h["locked"] != "1" || h["ver"] != "3" {
		t.Fatalf("post after removal and lock sent twice: %v", h)
	}
	if n := rdb.HLen(ctx, outbox).Val(); n != 2 {
		t.Fatalf("outbox holds %d actions, want 2", n)
	}
	pins := s.k.groupPins("go")
	twice("pin_post", []string{pins, s.k.groupMods("go"), s.k.groupModOutbox("go")}, "1", "1", "root", "1", MaxPins, 4000, "0", "", "go")
	if n := rdb.HLen(ctx, s.k.groupModOutbox("go")).Val(); n != 1 || rdb.ZCard(ctx, pins).Val() != 1 {
		t.Fatalf("pins %v, outbox %d after a pin sent twice", rdb.ZRange(ctx, pins, 0, -1).Val(), n)
	}
	info := s.k.groupInfo("go")
	rdb.HSet(ctx, info, "ver", 1)
	twice("group_change", s.groupChangeKeys("go"), "root", "1", groupAddMod, "ben", 5000, MaxGroupModerators, "go")
	twice("group_change", s.groupChangeKeys("go"), "root", "1", groupEditPage, `{"description":"all things go","title":"Go"}`, 6000, MaxGroupModerators, "go")
	if n := rdb.HLen(ctx, s.k.groupModOutbox("go")).Val(); n != 3 || rdb.HGet(ctx, info, "ver").Val() != "3" {
		t.Fatalf("info %v, outbox %d after two group changes sent twice", rdb.HGetAll(ctx, info).Val(), n)
	}
	if err := rdb.HSet(ctx, s.k.reportEntries(), "7", `{"post":"post:1","reporter":"bob","reason":"spam","at":"1","groups":"go","resolved":false,"ver":"1"}`).Err(); err != nil {
		t.Fatal(err)
	}
	twice("report_resolve", s.resolveKeys([]string{"go"}), "7", "root", 7000, "go")
	if n := rdb.HLen(ctx, s.k.reportModOutbox()).Val(); n != 1 {
		t.Fatalf("the outbox of {reports} holds %d entries after a resolve sent twice, want 1", n)
	}
	twice("unpin", []string{pins}, "1")
	if rdb.ZCard(ctx, pins).Val() != 0 {
		t.Fatal("unpin sent twice left the pin")
	}
}
