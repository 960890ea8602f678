package store_test

import (
	"context"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestDeleteAccountErase deletes an account with erase, cut off after one batch of its chain and
// then started again, and checks that its sessions, name, listings, feeds, search and
// leaderboard are exact afterwards.
func TestDeleteAccountErase(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock(), WriteLimit: -1})
		sess, err := s.SignUp(ctx, "Ann", "password1")
		if err != nil {
			t.Fatal(err)
		}
		signUp(t, s, "bob")
		if _, err := s.Follow(ctx, "bob", "ann"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.JoinGroup(ctx, "ann", "gophers"); err != nil && !store.IsKind(err, store.KindNotFound) {
			t.Fatal(err)
		}
		var posts []*store.Post
		for _, title := range []string{"curlew one", "curlew two", "curlew three"} {
			p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: title, Body: "plover"})
			if err != nil {
				t.Fatal(err)
			}
			posts = append(posts, p)
		}
		if _, err := s.VotePost(ctx, "bob", posts[0].ID, 1); err != nil {
			t.Fatal(err)
		}
		bobs, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "bob's"})
		if err != nil {
			t.Fatal(err)
		}
		top, err := s.CreateComment(ctx, "ann", store.NewComment{PostID: bobs.ID, Body: "curlew comment"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateComment(ctx, "bob", store.NewComment{PostID: bobs.ID, ParentID: top.ID, Body: "a reply"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}

		if err := s.DeleteAccount(ctx, "ann", "wrong-password", true); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("wrong password: %v, want FORBIDDEN", err)
		}
		if err := s.DeleteAccount(ctx, "ann", "password1", true); err != nil {
			t.Fatal(err)
		}
		// Cut off: one batch of the first step runs, then the process dies and the deletion is
		// asked again (an admin's repeat), which runs the chain from the start.
		if _, err := s.EraseStep(ctx, "ann", "posts", true); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteUser(ctx, "ann", "ann", true); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("delete by a non-admin: %v, want FORBIDDEN", err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}

		if ok, err := s.SessionActive(ctx, sess.Token); err != nil || ok {
			t.Fatalf("session still active: %v %v", ok, err)
		}
		if _, err := s.SignUp(ctx, "ANN", "password2"); !store.IsKind(err, store.KindConflict) {
			t.Fatalf("sign-up with a deleted name: %v, want CONFLICT", err)
		}
		if _, err := s.LogIn(ctx, "ann", "password1"); !store.IsKind(err, store.KindUnauthenticated) {
			t.Fatalf("log-in of a deleted account: %v", err)
		}
		l := s.NewLoader()
		if u, err := l.UserByName(ctx, "ann"); err != nil || u != nil {
			t.Fatalf("user(ann) = %v, %v; want nil", u, err)
		}
		if ok, err := l.DeletedAccount(ctx, "ann"); err != nil || !ok {
			t.Fatalf("DeletedAccount = %v, %v", ok, err)
		}
		for _, p := range posts {
			got, err := l.Post(ctx, p.ID)
			if err != nil || got == nil {
				t.Fatalf("erased post %s: %v %v; want a tombstone", p.ID, got, err)
			}
			if got.Title != "[deleted]" || got.Body != "" || got.URL != nil {
				t.Fatalf("erased post %s reads %q %q %v", p.ID, got.Title, got.Body, got.URL)
			}
		}
		all, err := l.Posts(ctx, store.SortNew, "", store.Window{First: 20}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(all.Items) != 1 || all.Items[0].ID != bobs.ID || all.Total != 1 {
			t.Fatalf("front page holds %d posts (total %d), want bob's only", len(all.Items), all.Total)
		}
		feed, err := l.Feed(ctx, "bob", store.Window{First: 20}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(feed.Items) != 0 {
			t.Fatalf("bob's feed holds %d posts of a deleted account", len(feed.Items))
		}
		found, err := l.SearchPosts(ctx, store.PostSearch{Query: "curlew"}, store.Window{First: 20}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(found.Items) != 0 {
			t.Fatalf("search finds %d erased posts", len(found.Items))
		}
		// A tombstone's "[deleted]" is no word to find it by, and rebuild keeps it out of the
		// rankings.
		if tomb, err := l.SearchPosts(ctx, store.PostSearch{Query: "deleted "}, store.Window{First: 20}, nil); err != nil || len(tomb.Items) != 0 {
			t.Fatalf("search for the tombstones' title: %d, %v", len(tomb.Items), err)
		}
		if _, err := s.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		if again, err := s.NewLoader().Posts(ctx, store.SortNew, "", store.Window{First: 20}, nil); err != nil || again.Total != 1 {
			t.Fatalf("after rebuild the front page totals %d, %v; want bob's only", again.Total, err)
		}
		comments, err := l.SearchComments(ctx, store.CommentSearch{Query: "curlew"}, store.Window{First: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(comments.Items) != 0 {
			t.Fatalf("search finds %d erased comments", len(comments.Items))
		}
		thread, err := l.Post(ctx, bobs.ID)
		if err != nil {
			t.Fatal(err)
		}
		if thread.CommentCount != 1 {
			t.Fatalf("bob's post counts %d comments, want 1 (the reply; ann's is a tombstone)", thread.CommentCount)
		}
		board, err := l.Leaderboard(ctx, store.Window{First: 20}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range board.Items {
			if r.User == nil || r.User.Name == "Ann" {
				t.Fatalf("the leaderboard still ranks a deleted account: %+v", r)
			}
		}
		if board.Total != 1 {
			t.Fatalf("leaderboard total %d, want 1", board.Total)
		}
		bob, err := l.UserByName(ctx, "bob")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := l.FollowingCount(ctx, bob); err != nil || n != 0 {
			t.Fatalf("bob follows %d, %v; want 0", n, err)
		}
	})
}

// TestDeleteAccountKeep deletes an account without erase and checks that its posts and comments
// stay in listings, counts and search without an author, that its name finds nothing and stays
// reserved, and that the leaderboard, autocomplete and user search drop it.
func TestDeleteAccountKeep(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock(), WriteLimit: -1})
		if _, err := s.SignUp(ctx, "Ann", "password1"); err != nil {
			t.Fatal(err)
		}
		signUp(t, s, "bob", "annabel")
		post, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "curlew kept", Body: "plover"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.VotePost(ctx, "bob", post.ID, 1); err != nil {
			t.Fatal(err)
		}
		bobs, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "bob's"})
		if err != nil {
			t.Fatal(err)
		}
		comment, err := s.CreateComment(ctx, "ann", store.NewComment{PostID: bobs.ID, Body: "curlew comment"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}

		l := s.NewLoader()
		got, err := l.Post(ctx, post.ID)
		if err != nil || got == nil {
			t.Fatalf("kept post: %v %v", got, err)
		}
		if got.Title != "curlew kept" || got.Body != "plover" || got.Erased {
			t.Fatalf("kept post reads %q %q erased=%v", got.Title, got.Body, got.Erased)
		}
		if u := l.NamedAuthor(got); u != nil {
			t.Fatalf("kept post still names its author: %+v", u)
		}
		if u, err := l.User(ctx, got.Author); err != nil || u != nil {
			t.Fatalf("kept post's author reads %+v, %v; want none", u, err)
		}
		all, err := l.Posts(ctx, store.SortNew, "", store.Window{First: 20}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(all.Items) != 2 || all.Total != 2 {
			t.Fatalf("front page holds %d posts (total %d), want 2", len(all.Items), all.Total)
		}
		thread, err := l.Post(ctx, bobs.ID)
		if err != nil {
			t.Fatal(err)
		}
		if thread.CommentCount != 1 {
			t.Fatalf("bob's post counts %d comments, want 1", thread.CommentCount)
		}
		c, err := l.Comment(ctx, comment.ID)
		if err != nil || c == nil || c.Text != "curlew comment" {
			t.Fatalf("kept comment: %+v, %v", c, err)
		}
		if u := l.NamedAuthor(c); u != nil {
			t.Fatalf("kept comment still names its author: %+v", u)
		}
		found, err := l.SearchPosts(ctx, store.PostSearch{Query: "curlew"}, store.Window{First: 20}, nil)
		if err != nil || len(found.Items) != 1 {
			t.Fatalf("search finds %d kept posts, %v; want 1", len(found.Items), err)
		}
		comments, err := l.SearchComments(ctx, store.CommentSearch{Query: "curlew"}, store.Window{First: 20})
		if err != nil || len(comments.Items) != 1 {
			t.Fatalf("search finds %d kept comments, %v; want 1", len(comments.Items), err)
		}
		for _, name := range []string{"ann", "Ann"} {
			by, err := l.SearchPosts(ctx, store.PostSearch{Query: "curlew", Author: name}, store.Window{First: 20}, nil)
			if err != nil || len(by.Items) != 0 {
				t.Fatalf("searchPosts(author: %q) finds %d, %v; want none", name, len(by.Items), err)
			}
			cby, err := l.SearchComments(ctx, store.CommentSearch{Query: "curlew", Author: name}, store.Window{First: 20})
			if err != nil || len(cby.Items) != 0 {
				t.Fatalf("searchComments(author: %q) finds %d, %v; want none", name, len(cby.Items), err)
			}
		}
		if _, err := s.SignUp(ctx, "ann", "password2"); !store.IsKind(err, store.KindConflict) {
			t.Fatalf("sign-up with a deleted name: %v, want CONFLICT", err)
		}
		board, err := l.Leaderboard(ctx, store.Window{First: 20}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range board.Items {
			if r.User == nil || r.User.Name == "Ann" {
				t.Fatalf("the leaderboard still ranks a deleted account: %+v", r)
			}
		}
		suggested, err := l.SuggestUsers(ctx, "an", 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(suggested) != 1 || suggested[0].Name != "annabel" {
			t.Fatalf("autocomplete %q offers %v, want annabel only", "an", userNames(suggested))
		}
		users, err := l.SearchUsers(ctx, "ann", store.Window{First: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range users.Items {
			if u.Name == "Ann" {
				t.Fatalf("user search finds a deleted account: %v", userNames(users.Items))
			}
		}
		// A rebuild derives no name for a kept item of a deleted account.
		if _, err := s.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		l = s.NewLoader()
		if again, err := l.Post(ctx, post.ID); err != nil || l.NamedAuthor(again) != nil {
			t.Fatalf("after rebuild the kept post names %+v, %v", l.NamedAuthor(again), err)
		}
		if again, err := l.Posts(ctx, store.SortNew, "", store.Window{First: 20}, nil); err != nil || again.Total != 2 {
			t.Fatalf("after rebuild the front page totals %d, %v; want 2", again.Total, err)
		}
	})
}

// TestDeleteAccountNoNotifications checks that a deleted account gets no notifications from
// what others do after: replies to its kept post and comment, and mentions of its name. Nobody
// can read them, and its inbox was dropped with the account.
func TestDeleteAccountNoNotifications(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
		signUp(t, s, "ann", "bob")
		post, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "kept"})
		if err != nil {
			t.Fatal(err)
		}
		comment, err := s.CreateComment(ctx, "ann", store.NewComment{PostID: post.ID, Body: "kept too"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range []store.NewComment{
			{PostID: post.ID, Body: "a reply to the post"},
			{PostID: post.ID, ParentID: comment.ID, Body: "a reply to the comment"},
			{PostID: post.ID, Body: "hello @ann"},
		} {
			if _, err := s.CreateComment(ctx, "bob", c); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "mention", Body: "hi @ann"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		keys, err := b.Client.Keys(ctx, prefix+"{n:ann}*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 0 {
			t.Fatalf("a deleted account was notified: %v", keys)
		}
	})
}

// TestDeleteAccountErasesItsThread erases an account with a comment on its own post, in one step
// or after a deletion that kept the content: the post is a tombstone, the comment is gone, and
// erasing the comment (after the post) does not put the erased post back into the rankings.
func TestDeleteAccountErasesItsThread(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delete func(ctx context.Context, s *store.Store) error
	}{
		{"erase at once", func(ctx context.Context, s *store.Store) error {
			return s.DeleteAccount(ctx, "ann", "password1", true)
		}},
		{"keep, then an admin erases", func(ctx context.Context, s *store.Store) error {
			if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
				return err
			}
			if _, err := s.Jobs().RunDue(ctx); err != nil {
				return err
			}
			return s.DeleteUser(ctx, "root", "ann", true)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				s := b.NewStore(t, store.Options{Now: tickingClock(), WriteLimit: -1})
				signUp(t, s, "ann", "root")
				if err := s.GrantAdmin(ctx, "root"); err != nil {
					t.Fatal(err)
				}
				post, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "curlew"})
				if err != nil {
					t.Fatal(err)
				}
				comment, err := s.CreateComment(ctx, "ann", store.NewComment{PostID: post.ID, Body: "curlew comment"})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Jobs().RunDue(ctx); err != nil {
					t.Fatal(err)
				}
				if err := tc.delete(ctx, s); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Jobs().RunDue(ctx); err != nil {
					t.Fatal(err)
				}
				l := s.NewLoader()
				got, err := l.Post(ctx, post.ID)
				if err != nil || got == nil || got.Title != "[deleted]" {
					t.Fatalf("post after the erase: %+v, %v; want a tombstone", got, err)
				}
				if c, err := l.Comment(ctx, comment.ID); err != nil || c != nil && c.Text != "" {
					t.Fatalf("comment after the erase: %+v, %v; want it gone", c, err)
				}
				all, err := l.Posts(ctx, store.SortNew, "", store.Window{First: 20}, nil)
				if err != nil || all.Total != 0 {
					t.Fatalf("front page totals %d, %v; want 0", all.Total, err)
				}
			})
		})
	}
}

// TestDeleteAccountRebuildUsers runs RebuildUsers after a deletion: it must not put the deleted
// account back into the name registry, the user search index or the leaderboard.
func TestDeleteAccountRebuildUsers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
		signUp(t, s, "ann", "bob")
		if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RebuildUsers(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		l := s.NewLoader()
		board, err := l.Leaderboard(ctx, store.Window{First: 20}, nil)
		if err != nil || board.Total != 1 {
			t.Fatalf("leaderboard total %d, %v; want 1 (bob)", board.Total, err)
		}
		// The registry is read directly: autocomplete hides users that do not exist at read
		// time, but an entry left for a deleted one takes the place of a live one in a page.
		names, err := b.Client.ZRange(ctx, prefix+"{users}", 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if n == "ann" {
				t.Fatalf("the name registry holds a deleted account: %v", names)
			}
		}
	})
}

// TestDeleteAccountLateVotes votes on a deleted account's kept post and comment: their karma went
// with the account, and no vote may write it again.
func TestDeleteAccountLateVotes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
		signUp(t, s, "ann", "bob")
		post, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "kept"})
		if err != nil {
			t.Fatal(err)
		}
		comment, err := s.CreateComment(ctx, "ann", store.NewComment{PostID: post.ID, Body: "kept too"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.VotePost(ctx, "bob", post.ID, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.VoteComment(ctx, "bob", comment.ID, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		keys, err := b.Client.Keys(ctx, prefix+"{u:ann}:karma*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 0 {
			t.Fatalf("votes wrote a deleted account's karma: %v", keys)
		}
		board, err := s.NewLoader().Leaderboard(ctx, store.Window{First: 20}, nil)
		if err != nil || board.Total != 1 {
			t.Fatalf("leaderboard total %d, %v; want 1 (bob)", board.Total, err)
		}
	})
}

// TestTombstonesKeepNoName: a comment deleted with replies under it stays in the tree as a
// tombstone that keeps its author (a repeated delete answers as the first) but not the author's
// name — deleted by its author, or erased with the account — as a disowned comment keeps none.
func TestTombstonesKeepNoName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delete func(ctx context.Context, s *store.Store, id string) error
	}{
		{"deleted by its author", func(ctx context.Context, s *store.Store, id string) error {
			return s.DeleteComment(ctx, "ann", id)
		}},
		{"erased with the account", func(ctx context.Context, s *store.Store, _ string) error {
			return s.DeleteAccount(ctx, "ann", "password1", true)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				prefix := storetest.Prefix()
				s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
				c := commentWithReply(t, s)
				if err := tc.delete(ctx, s, c.ID); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Jobs().RunDue(ctx); err != nil {
					t.Fatal(err)
				}
				pid, num, err := store.CommentKey(c.ID)
				if err != nil {
					t.Fatal(err)
				}
				h, err := b.Client.HGetAll(ctx, s.ThreadKeyForTest(pid, num, "")).Result()
				if err != nil {
					t.Fatal(err)
				}
				if h["deleted"] != "1" {
					t.Fatalf("comment hash %v: want a tombstone", h)
				}
				for f, v := range h {
					if v == "Ann" {
						t.Errorf("the tombstone keeps the author's name in field %s: %v", f, h)
					}
				}
				got, err := s.NewLoader().Comment(ctx, c.ID)
				if err != nil || got == nil || !got.Deleted {
					t.Fatalf("tombstone read: %+v, %v", got, err)
				}
			})
		})
	}
}

// commentWithReply signs up Ann and bob and returns Ann's comment on a post of bob's, which bob
// has replied to: deleted, it stays in the tree as a tombstone.
func commentWithReply(t *testing.T, s *store.Store) *store.Comment {
	t.Helper()
	ctx := context.Background()
	signUp(t, s, "Ann", "bob")
	post, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "curlew"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateComment(ctx, "ann", store.NewComment{PostID: post.ID, Body: "by ann"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateComment(ctx, "bob", store.NewComment{PostID: post.ID, ParentID: c.ID, Body: "a reply"}); err != nil {
		t.Fatal(err)
	}
	return c
}
