package store

import (
	"context"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

// TestDirectoryWritesAreGuarded lands the directory writes of two reads of a group's member count
// in the wrong order, as two concurrent joins may, and each twice: the later read's count stays.
func TestDirectoryWritesAreGuarded(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	defer rdb.Close()
	s, err := New(ctx, rdb, Options{Prefix: "x:", WriteLimit: -1, Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateGroup(ctx, "ann", "go", nil); err != nil {
		t.Fatal(err)
	}
	before, err := s.directoryCalls(ctx, []string{"go"}, nil) // no member yet
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.JoinGroup(ctx, "ann", "go"); err != nil {
		t.Fatal(err)
	}
	after, err := s.directoryCalls(ctx, []string{"go"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, calls := range [][]scriptCall{after, before, after, before} {
		if err := s.runMany(ctx, calls); err != nil {
			t.Fatal(err)
		}
		if score := rdb.ZScore(ctx, s.k.groupDir().pop, "go").Val(); score != -1 {
			t.Fatalf("POPULAR score of go = %v after write %d, want -1 (one member)", score, i+1)
		}
	}
}
