package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// layout6Hashes counts the comments of ids whose hash is of layout 6 — decimal times in m, or a
// count (up, down, replies) of "0" — and fails on a hash without its version (no comment).
func (th *modThread) layout6Hashes(when string) int {
	th.f.t.Helper()
	n := 0
	for name, id := range th.ids {
		h, err := th.f.s.CommentHashForTest(th.f.ctx, id)
		if err != nil {
			th.f.t.Fatal(err)
		}
		if h["ver"] == "" {
			th.f.t.Fatalf("%s: comment %s has no hash: %v", when, name, h)
		}
		if !strings.Contains(h["m"], "~") || h["up"] == "0" || h["down"] == "0" || h["replies"] == "0" {
			n++
		}
	}
	return n
}

// TestMigrateCommentHashesToLayout7 writes a thread (replies, votes and a vote taken back, a tombstone, a
// removed comment), then writes its comments' hashes as layout 6 kept them (decimal times, counts
// of 0), and migrates: reads are the same before the step (a 0 reads as a missing count), writes beside it are right
// (a reply to a comment whose replies is "0" or missing, a vote, the deletion of a comment that
// has no replies, a removal and its restore), the step leaves no hash of layout 6 and changes nothing
// the second time, and reads stay the same after it and after Migrate. A comment written now is of
// layout 7 from the start.
func TestMigrateCommentHashesToLayout7(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		th, ann, bob := newMigrationThread(t, b, prefix, "v", "w")
		f, ctx := th.f, th.f.ctx
		if n := th.layout6Hashes("layout 7"); n != 0 {
			t.Fatalf("layout 7 writes %d hashes of layout 6, want none", n)
		}
		if _, err := f.s.VoteComment(ctx, uk(bob), th.ids["a"], 1); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.VoteComment(ctx, uk(bob), th.ids["w"], -1); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.VoteComment(ctx, uk(bob), th.ids["w"], 0); err != nil { // down back to "0"
			t.Fatal(err)
		}
		th.check()
		want := th.readComments()

		if err := f.s.Layout6CommentsForTest(ctx, th.post.Key()); err != nil {
			t.Fatal(err)
		}
		if err := b.Client.HSet(ctx, prefix+"{meta}:layout", "version", 6).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.CheckLayout(ctx); err != nil {
			t.Fatal(err)
		}
		if n := th.layout6Hashes("layout 6"); n != len(th.ids) {
			t.Fatalf("layout 6: %d hashes of layout 6, want %d", n, len(th.ids))
		}
		sameComments(t, "before the migration", th.readComments(), want)
		th.check()

		// Writes beside the migration, on hashes with counts of 0.
		th.add("b1", "b", ann) // replies "0" → 1
		if c, err := f.s.NewLoader().Comment(ctx, th.ids["b"]); err != nil || c.ReplyCount != 1 {
			t.Fatalf("b after its first reply: %+v, %v; want 1 reply", c, err)
		}
		if c, err := f.s.VoteComment(ctx, uk(ann), th.ids["a1"], -1); err != nil || c.Downvotes != 1 || c.Upvotes != 0 {
			t.Fatalf("a vote on a comment with counts of 0 gives %+v, %v", c, err)
		}
		if err := f.s.DeleteComment(ctx, uk(ann), th.ids["v"]); err != nil { // replies "0": removed for good
			t.Fatal(err)
		}
		delete(th.ids, "v")
		if _, err := f.s.RemoveComment(ctx, "mia", th.ids["a1x"], "rude"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RestoreComment(ctx, "mia", th.ids["a1x"]); err != nil {
			t.Fatal(err)
		}
		th.check()
		want = th.readComments()

		for run, wantN := range []int{len(th.ids) - 1, 0} { // b1 was written without counts
			n, err := f.s.CompactCommentsForTest(ctx)
			if err != nil || n != wantN {
				t.Fatalf("run %d changed %d hashes (%v), want %d", run, n, err, wantN)
			}
			if n := th.layout6Hashes("after the step"); n != 0 {
				t.Fatalf("run %d: %d hashes of layout 6 left", run, n)
			}
			sameComments(t, "after the step", th.readComments(), want)
			th.check()
		}
		ran, err := f.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != store.Layout-6 || ran[0].From != 6 {
			t.Fatalf("ran %+v, %v; want the migration from layout 6", ran, err)
		}
		sameComments(t, "after Migrate", th.readComments(), want)
		th.add("late", "b1", bob)
		th.check()
	})
}
