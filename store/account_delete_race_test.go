package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestErasedAccountKeepsNothingWrittenAcrossItsDeletion: a post or comment whose checks passed
// just before its author's account was deleted with eraseContent, and whose own writes landed
// after the deletion's chain had been through the author's lists, is erased as the chain erases
// the others: it reads as a tombstone, leaves the listings and search, and the write answers
// UNAUTHENTICATED, as every write of an account deleted meanwhile does.
func TestErasedAccountKeepsNothingWrittenAcrossItsDeletion(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Prefix: storetest.Prefix(), WriteLimit: 1000, NewAccount: store.NewAccountLimits{Age: -1}})
		signUp(t, s, "ann", "bob", "cat")
		bobs, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "bob's", Body: "a post"})
		if err != nil {
			t.Fatal(err)
		}
		// The deletion, and its whole chain, between the write's checks and its own writes.
		deleteAt := func(who string) func(string) { return deleteOnChecked(t, s, who, true) }
		s.OnChecked(deleteAt("ann"))
		p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "curlew", Body: "written across the deletion"})
		if !store.IsKind(err, store.KindUnauthenticated) {
			t.Errorf("a post written across its author's deletion: %v, %v; want UNAUTHENTICATED", p, err)
		}
		s.OnChecked(deleteAt("cat"))
		c, err := s.CreateComment(ctx, "cat", store.NewComment{PostID: bobs.ID, Body: "plover across the deletion"})
		if !store.IsKind(err, store.KindUnauthenticated) {
			t.Errorf("a comment written across its author's deletion: %v, %v; want UNAUTHENTICATED", c, err)
		}
		s.OnChecked(nil)
		settle(t, s)

		checkErasedWrites(t, s, bobs.ID)
	})
}

// TestVoteAcrossItsVotersDeletionLeavesNoName: a vote whose checks passed just before its voter's
// account was deleted, and which landed after the deletion's chain had walked the voter's vote
// log, kept the deleted account's name on the post or comment for good (the chain takes the name
// off the votes a deleted account cast, which stay counted). The vote now reads its voter's
// deletion after it lands, takes the name off as the chain does, and answers UNAUTHENTICATED.
func TestVoteAcrossItsVotersDeletionLeavesNoName(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Prefix: storetest.Prefix(), WriteLimit: 1000, NewAccount: store.NewAccountLimits{Age: -1}})
		signUp(t, s, "ann", "bob", "cat", "dan")
		p, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "bob's", Body: "a post"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.CreateComment(ctx, "bob", store.NewComment{PostID: p.ID, Body: "a comment"})
		if err != nil {
			t.Fatal(err)
		}
		// A comment whose author is gone takes the other path (no karma to record).
		gone, err := s.CreateComment(ctx, "dan", store.NewComment{PostID: p.ID, Body: "dan's"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAccount(ctx, "dan", "password1", false); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		// The deletion, and its whole chain, between the write's checks and its own writes.
		deleteAt := func(who string) func(string) { return deleteOnChecked(t, s, who, false) }
		pid, _ := store.PostKey(p.ID)
		changes := s.Channels().PostChanged(pid)
		before, err := s.LogHead(ctx, changes)
		if err != nil {
			t.Fatal(err)
		}
		s.OnChecked(deleteAt("ann"))
		if _, err := s.VotePost(ctx, "ann", p.ID, 1); !store.IsKind(err, store.KindUnauthenticated) {
			t.Errorf("a post vote across its voter's deletion: %v, want UNAUTHENTICATED", err)
		}
		// The vote stays counted, so the post's subscribers hear of it.
		if after, err := s.LogHead(ctx, changes); err != nil || after == before {
			t.Errorf("no postChanged event after a vote counted across its voter's deletion (head %s, %v)", after, err)
		}
		s.OnChecked(deleteAt("cat"))
		if _, err := s.VoteComment(ctx, "cat", c.ID, 1); !store.IsKind(err, store.KindUnauthenticated) {
			t.Errorf("a comment vote across its voter's deletion: %v, want UNAUTHENTICATED", err)
		}
		signUp(t, s, "eve")
		s.OnChecked(deleteAt("eve"))
		if _, err := s.VoteComment(ctx, "eve", gone.ID, -1); !store.IsKind(err, store.KindUnauthenticated) {
			t.Errorf("a vote on a deleted author's comment across its voter's deletion: %v, want UNAUTHENTICATED", err)
		}
		s.OnChecked(nil)
		settle(t, s)

		l := s.NewLoader()
		post, err := l.Post(ctx, p.ID)
		if err != nil || post == nil || post.Upvotes != 1 {
			t.Fatalf("the post: %+v, %v; want its vote counted", post, err)
		}
		if v, err := l.PostVote(ctx, post, "ann"); err != nil || v != 0 {
			t.Errorf("the post holds the deleted voter's vote %d, %v; want the name off it", v, err)
		}
		for _, tc := range []struct {
			id, voter string
			up, down  int
		}{{c.ID, "cat", 1, 0}, {gone.ID, "eve", 0, 1}} {
			cm, err := l.Comment(ctx, tc.id)
			if err != nil || cm == nil || cm.Upvotes != tc.up || cm.Downvotes != tc.down {
				t.Fatalf("comment %s: %+v, %v; want its vote counted", tc.id, cm, err)
			}
			if v, err := l.CommentVote(ctx, cm, store.UserKey(tc.voter)); err != nil || v != 0 {
				t.Errorf("comment %s holds the deleted voter's vote %d, %v; want the name off it", tc.id, v, err)
			}
		}
	})
}

// TestVoteAcrossItsVotersDeletionOnAnErasedPost: a vote on an erased post (a tombstone, which
// takes votes) across its voter's deletion takes the name off itself too — the post's ranking
// path, which the read of the deletion rode, sent no reads for a post out of the rankings, and
// the vote kept the name — and the author's karma follows the post's net votes whichever way
// the vote is answered: a vote answered UNAUTHENTICATED once left it behind, its repair note
// settled.
func TestVoteAcrossItsVotersDeletionOnAnErasedPost(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Prefix: storetest.Prefix(), WriteLimit: 1000, NewAccount: store.NewAccountLimits{Age: -1}})
		signUp(t, s, "ann", "bob", "cat", "dan")
		live, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "bob's", Body: "a post"})
		if err != nil {
			t.Fatal(err)
		}
		erased, err := s.CreatePost(ctx, "dan", store.NewPost{Title: "dan's", Body: "a post"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAccount(ctx, "dan", "password1", true); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		// The deletion, and its whole chain, between the write's checks and its own writes.
		deleteAt := func(who string) func(string) { return deleteOnChecked(t, s, who, false) }
		s.OnChecked(deleteAt("ann"))
		if _, err := s.VotePost(ctx, "ann", erased.ID, 1); !store.IsKind(err, store.KindUnauthenticated) {
			t.Errorf("a vote on an erased post across its voter's deletion: %v, want UNAUTHENTICATED", err)
		}
		s.OnChecked(deleteAt("cat"))
		if _, err := s.VotePost(ctx, "cat", live.ID, 1); !store.IsKind(err, store.KindUnauthenticated) {
			t.Errorf("a post vote across its voter's deletion: %v, want UNAUTHENTICATED", err)
		}
		s.OnChecked(nil)
		settle(t, s)

		l := s.NewLoader()
		p, err := l.Post(ctx, erased.ID)
		if err != nil || p == nil || p.Upvotes != 1 {
			t.Fatalf("the erased post: %+v, %v; want its vote counted", p, err)
		}
		if v, err := l.PostVote(ctx, p, "ann"); err != nil || v != 0 {
			t.Errorf("the erased post holds the deleted voter's vote %d, %v; want the name off it", v, err)
		}
		bob, err := l.User(ctx, "bob")
		if err != nil || bob == nil {
			t.Fatalf("bob: %+v, %v", bob, err)
		}
		if k, err := l.Karma(ctx, bob); err != nil || k != 1 {
			t.Errorf("bob's karma: %d, %v; want 1, the vote counted on his post", k, err)
		}
	})
}

// deleteOnChecked returns a function for Store.OnChecked that deletes who's account (erasing its
// content when erase is set) and runs its whole chain, once, right after the checks of the first
// write of who's: a deletion landing between a write's checks and its own writes.
func deleteOnChecked(t *testing.T, s *store.Store, who string, erase bool) func(uid string) {
	fired := false
	return func(uid string) {
		if uid != who || fired {
			return
		}
		fired = true
		if err := s.DeleteAccount(context.Background(), store.UserKey(who), "password1", erase); err != nil {
			t.Errorf("delete %s: %v", who, err)
		}
		settle(t, s)
	}
}

// checkErasedWrites checks that the erased accounts' post ("curlew") and comment ("plover", on
// bob's post) are gone: the front page lists bob's post alone, search finds neither, and bob's
// post counts no comment.
func checkErasedWrites(t *testing.T, s *store.Store, bobs string) {
	t.Helper()
	ctx := context.Background()
	l := s.NewLoader()
	all, err := l.Posts(ctx, store.SortNew, "", store.Window{First: 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 1 || all.Items[0].ID != bobs || all.Total != 1 {
		t.Errorf("front page holds %d posts (total %d), want bob's only", len(all.Items), all.Total)
	}
	if found, err := l.SearchPosts(ctx, store.PostSearch{Query: "curlew"}, store.Window{First: 20}, nil); err != nil || len(found.Items) != 0 {
		t.Errorf("search finds %d posts of an erased account, %v", len(found.Items), err)
	}
	if found, err := l.SearchComments(ctx, store.CommentSearch{Query: "plover"}, store.Window{First: 20}); err != nil || len(found.Items) != 0 {
		t.Errorf("search finds %d comments of an erased account, %v", len(found.Items), err)
	}
	thread, err := l.Post(ctx, bobs)
	if err != nil || thread == nil {
		t.Fatalf("bob's post: %v, %v", thread, err)
	}
	if thread.CommentCount != 0 {
		t.Errorf("bob's post counts %d comments, want 0: the erased account's is deleted", thread.CommentCount)
	}
}

// TestScheduledPostAcrossItsAuthorsDeletionIsErased: a scheduled post whose publication job
// passed its checks (the author's bans and deletion, draftRefused) and took the draft just before
// its author's account was deleted with eraseContent, and which was listed after the deletion's
// chain had been through the author's posts, stayed published, under the author's name, in every
// listing. The job now reads the deletion where the post is listed in its author's lists, as
// createPost does, and erases it as the chain does.
func TestScheduledPostAcrossItsAuthorsDeletionIsErased(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clk := storetest.NewClock()
		opts := store.Options{Prefix: prefix, Now: clk.Now, WriteLimit: 1000, NewAccount: store.NewAccountLimits{Age: -1}}
		hook := &beforeScript{}
		s := b.Hooked(t, hook.hook()).NewStore(t, opts)
		other := b.NewStore(t, opts) // the deletion's client, which the hook leaves alone
		signUp(t, s, "ann", "bob")
		bobs, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "bob's", Body: "a post"})
		if err != nil {
			t.Fatal(err)
		}
		later, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "curlew", Body: "scheduled across the deletion", PublishAt: clk.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := store.PostKey(later.ID)
		fired := false
		hook.arm(argIs(prefix+"{p:"+pid+"}"), func() { // the post's creation, after the job's checks
			fired = true
			if err := other.DeleteAccount(ctx, "ann", "password1", true); err != nil {
				t.Errorf("delete ann: %v", err)
			}
			settle(t, other) // the deletion's whole chain
		})
		clk.Add(time.Hour + time.Second)
		settle(t, s)
		if !fired {
			t.Fatal("the publication did not go through the hook")
		}
		checkErasedWrites(t, s, bobs.ID)
	})
}
