package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

func newEssentialsStore(t *testing.T) (*Store, *rdb.Client) {
	t.Helper()
	m := miniredis.RunT(t)
	client := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	s, err := New(context.Background(), client, Options{Prefix: "x:", WriteLimit: -1, Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return s, client
}

// TestEssentialScriptsAreSafeToRunTwice sends each script of editing, saving and the profile
// twice, as a retried request would, and checks that the second run changes nothing.
func TestEssentialScriptsAreSafeToRunTwice(t *testing.T) {
	ctx := context.Background()
	s, client := newEssentialsStore(t)
	twice := func(name string, keys []string, args ...any) {
		t.Helper()
		for i := range 2 {
			if _, err := s.run(ctx, name, keys, args...); err != nil {
				t.Fatalf("%s run %d: %v", name, i+1, err)
			}
		}
	}
	post, texts := s.k.post("1"), s.k.postTexts("1")
	twice("create_post", []string{post, texts}, "t", "b", "", "ann", 1000, 1e15, "", "nonce1", "Ann")
	twice("edit_post", []string{post, texts}, "ann", 5000, "1", "t2", "0", "", "1", "https://e.com/")
	if h := client.HGetAll(ctx, post).Val(); h["title"] != "t2" || h["body"] != "" || h["url"] != "https://e.com/" ||
		h["edited"] != "5000" || h["ver"] != "2" || client.HGet(ctx, texts, postTextBody).Val() != "b" {
		t.Fatalf("after an edit sent twice: %v", h)
	}
	saved := s.k.saved("ann")
	twice("save_post", []string{saved, s.k.user("ann")}, "1", 7000, 10)
	twice("save_post", []string{saved, s.k.user("ann")}, "1", 8000, 10) // saving again keeps the first time
	if sc := client.ZScore(ctx, saved, "1").Val(); sc != 7000 {
		t.Fatalf("saved at %v, want 7000", sc)
	}
	twice("unsave_posts", []string{saved}, "1", "2")
	if n := client.ZCard(ctx, saved).Val(); n != 0 {
		t.Fatalf("%d saved after unsaving", n)
	}
	twice("signup", []string{s.k.user("ann")}, "Ann", "$argon2id$fake", 1)
	twice("update_profile", []string{s.k.user("ann")}, "1", "bio", "1", "https://e.com/a.png", "0", "", s.k.chanSessions("ann"), "0", "name", "bio")
	twice("update_profile", []string{s.k.user("ann")}, "1", "", "0", "", "0", "", s.k.chanSessions("ann"), "0", "name")
	if h := client.HGetAll(ctx, s.k.user("ann")).Val(); h["bio"] != "" || h["avatar"] != "https://e.com/a.png" || h["name"] != "Ann" {
		t.Fatalf("after profile updates sent twice: %v", h)
	}
	if _, err := s.run(ctx, "update_profile", []string{s.k.user("nobody")}, "1", "x", "0", "", "0", "", s.k.chanSessions("nobody"), "0", "name"); !IsKind(err, KindNotFound) {
		t.Fatalf("update_profile of no user: %v", err)
	}
}

// TestSavedPostsLimit fills a user's saved posts to MaxSavedPosts: one more is LIMIT_REACHED,
// until a saved post is deleted, which then stops counting.
func TestSavedPostsLimit(t *testing.T) {
	ctx := context.Background()
	s, client := newEssentialsStore(t)
	ann := UserKey("ann")
	p, err := s.CreatePost(ctx, "ben", NewPost{Title: "one more"})
	if err != nil {
		t.Fatal(err)
	}
	pipe := client.Pipeline()
	for i := range MaxSavedPosts {
		pid := fmt.Sprint(100000 + i)
		pipe.HSet(ctx, s.k.post(pid), "title", "t", "author", "ben", "created", 1)
		pipe.ZAdd(ctx, s.k.saved("ann"), rdb.Z{Score: float64(i), Member: pid})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SavePost(ctx, ann, p.ID); !IsKind(err, KindLimitReached) {
		t.Fatalf("save beyond the limit: %v", err)
	}
	// Saving one already saved is still fine at the limit.
	if _, err := s.SavePost(ctx, ann, postID("100007")); err != nil {
		t.Fatalf("save again at the limit: %v", err)
	}
	client.HSet(ctx, s.k.post("100003"), "deleted", "1")
	client.Del(ctx, s.k.post("100004"))
	if _, err := s.SavePost(ctx, ann, p.ID); err != nil {
		t.Fatalf("save after deletions: %v", err)
	}
	if n := client.ZCard(ctx, s.k.saved("ann")).Val(); n != MaxSavedPosts-1 {
		t.Fatalf("%d saved, want %d: the two deleted posts out, the new one in", n, MaxSavedPosts-1)
	}
	if client.ZScore(ctx, s.k.saved("ann"), "100003").Err() != rdb.Nil {
		t.Fatal("the deleted post is still saved")
	}
}

// TestRemovedPostsToOthers checks editing and saving a post a moderator removed: its author
// still edits and saves it; to anyone else it is not found; it leaves every saved list, its
// author's included, as it leaves every listing.
func TestRemovedPostsToOthers(t *testing.T) {
	ctx := context.Background()
	s, client := newEssentialsStore(t)
	p, err := s.CreatePost(ctx, "ann", NewPost{Title: "soon removed"})
	if err != nil {
		t.Fatal(err)
	}
	title := "edited"
	for _, u := range []UserKey{"ann", "ben"} {
		if _, err := s.SavePost(ctx, u, p.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.EditPost(ctx, "ben", p.ID, PostEdit{Title: &title}); !IsKind(err, KindForbidden) {
		t.Fatalf("edit by another user: %v", err)
	}
	client.HSet(ctx, s.k.post(p.Key()), "removed", "1")
	if _, err := s.EditPost(ctx, "ben", p.ID, PostEdit{Title: &title}); !IsKind(err, KindNotFound) {
		t.Fatalf("edit of a removed post by another user: %v", err)
	}
	if got, err := s.EditPost(ctx, "ann", p.ID, PostEdit{Title: &title}); err != nil || got.Title != title || got.EditedAt == nil {
		t.Fatalf("edit of a removed post by its author: %+v, %v", got, err)
	}
	if _, err := s.SavePost(ctx, "cat", p.ID); !IsKind(err, KindNotFound) {
		t.Fatalf("save of a removed post by another user: %v", err)
	}
	for _, tc := range []struct {
		user UserKey
		n    int
	}{{"ann", 0}, {"ben", 0}} {
		page, err := s.NewLoader().SavedPosts(ctx, tc.user, Window{First: 10}, nil)
		if err != nil || len(page.Items) != tc.n {
			t.Fatalf("%s's saved posts: %+v, %v; want %d", tc.user, page, err, tc.n)
		}
	}
}
