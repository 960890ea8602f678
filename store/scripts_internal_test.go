package store

import (
	"context"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

// TestScriptsAreSafeToRunTwice sends each write script twice with the same arguments, as go-redis
// does when a reply is lost, and checks that the second run changes nothing.
func TestScriptsAreSafeToRunTwice(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	defer rdb.Close()
	s, err := New(ctx, rdb, Options{Prefix: "x:", WriteLimit: -1, Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	twice := func(name string, keys []string, args ...any) {
		t.Helper()
		for i := 0; i < 2; i++ {
			if _, err := s.run(ctx, name, keys, args...); err != nil {
				t.Fatalf("%s run %d: %v", name, i+1, err)
			}
		}
	}
	post, votes, texts := s.k.post("1"), s.k.postVotes("1"), s.k.postTexts("1")
	twice("signup", []string{s.k.user("ann")}, "Ann", "$argon2id$fake", 1)
	twice("create_post", []string{post, texts}, "t", "", "", "ann", 1000, 1e15, "go", "nonce1", "Ann")
	if h := rdb.HGetAll(ctx, post).Val(); h["aname"] != "Ann" {
		t.Fatalf("a new post keeps no author name: %v", h)
	}
	rdb.HDel(ctx, post, "aname")                        // as written before names were kept
	twice("name_authors", []string{post}, "bob", "Bob") // not bob's: left alone
	if h := rdb.HGetAll(ctx, post).Val(); h["aname"] != "" {
		t.Fatalf("name_authors named another's post: %v", h)
	}
	twice("name_authors", []string{post}, "ann", "Ann")
	if h := rdb.HGetAll(ctx, post).Val(); h["aname"] != "Ann" {
		t.Fatalf("after name_authors sent twice: %v", h)
	}
	twice("vote_post", []string{post, votes, texts}, "bob", 1, 2000)
	if h := rdb.HGetAll(ctx, post).Val(); h["up"] != "1" || h["ver"] != "2" {
		t.Fatalf("after a vote sent twice: %v", h)
	}
	twice("set_groups", []string{post, texts}, "ann", 10, 1, "redis", "go")
	if h := rdb.HGetAll(ctx, post).Val(); h["groups"] != "redis" || h["ver"] != "3" {
		t.Fatalf("after set_groups sent twice: %v", h)
	}
	r := s.k.ranking("")
	twice("index", []string{r.ver, r.hot}, "1", 3, "add", 5)
	twice("index", []string{r.ver, r.hot}, "1", 2, "add", 99) // an older version is ignored
	if sc := rdb.ZScore(ctx, r.hot, "1").Val(); sc != 5 {
		t.Fatalf("ranking score %v after a stale write", sc)
	}
	twice("ratelimit", []string{s.k.userRate("ann")}, 1000, 60000, 5, "w1")
	if n := rdb.ZCard(ctx, s.k.userRate("ann")).Val(); n != 1 {
		t.Fatalf("rate log holds %d writes after one write sent twice", n)
	}
	twice("delete_post", []string{post, votes, texts}, "ann", 60)
	if h := rdb.HGetAll(ctx, post).Val(); h["deleted"] != "1" || h["ver"] != "4" {
		t.Fatalf("after delete sent twice: %v", h)
	}
}
