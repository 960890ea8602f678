package store_test

import (
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestCommentVoteBuckets: the votes on a thread's comments share buckets of eight comment numbers
// (1–7, 8–15, 16–23), listpack-encoded at a few tens of bytes a vote; a comment removed for good
// takes its votes out of its bucket and leaves the others' (also when it goes as a childless
// tombstone with its last reply), a tombstone keeps its votes, and a deleted post's buckets go
// with its thread. Encodings and sizes on real Redis only.
func TestCommentVoteBuckets(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix, WriteLimit: -1})
		ctx := f.ctx
		for _, name := range []string{"ann", "bob", "cat"} {
			f.user(name)
		}
		vt := newVoteThread(t, f, 20)
		for i := range vt.comments {
			vt.vote("bob", i, 1)
			vt.vote("cat", i, -1)
		}
		vt.check("voted", "bob", "cat")
		pid, _ := store.PostKey(vt.post.ID)
		buckets := []string{prefix + "{p:" + pid + "}:c:v0", prefix + "{p:" + pid + "}:c:v1", prefix + "{p:" + pid + "}:c:v2"}
		fields := func() map[string]bool {
			t.Helper()
			out := map[string]bool{}
			for _, key := range buckets {
				h, err := b.Client.HGetAll(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				for field := range h {
					out[field] = true
				}
			}
			return out
		}
		if got := fields(); len(got) != 40 || !got["1:bob"] || !got["20:cat"] {
			t.Fatalf("the buckets hold %d votes (%v), want 40", len(got), got)
		}
		if b.Name != "miniredis" {
			var bytes int64
			for _, key := range buckets {
				enc, err := b.Client.ObjectEncoding(ctx, key).Result()
				if err != nil || enc != "listpack" {
					t.Errorf("%s encoded %q (%v), want listpack", key, enc, err)
				}
				n, err := b.Client.MemoryUsage(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				bytes += n
			}
			// A hash per comment (layout 5) took ~50 bytes a vote at two votes a comment.
			t.Logf("40 votes on 20 comments: %d bytes, %d a vote", bytes, bytes/40)
			if bytes/40 > 30 {
				t.Errorf("40 votes on 20 comments take %d bytes, %d a vote; want at most 30 a vote", bytes, bytes/40)
			}
		}

		// Comment 3 goes for good: its votes leave bucket 0, the others' stay.
		if err := f.s.DeleteComment(ctx, "ann", vt.comments[2].ID); err != nil {
			t.Fatal(err)
		}
		// Comment 5 becomes a tombstone, which keeps its votes, then goes with its last reply.
		reply, err := f.s.CreateComment(ctx, "bob", store.NewComment{PostID: vt.post.ID, ParentID: vt.comments[4].ID, Body: "a reply"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.VoteComment(ctx, "cat", reply.ID, 1); err != nil {
			t.Fatal(err)
		}
		if err := f.s.DeleteComment(ctx, "ann", vt.comments[4].ID); err != nil {
			t.Fatal(err)
		}
		if got := fields(); !got["5:bob"] || !got["5:cat"] || !got["21:cat"] {
			t.Errorf("the tombstone's or its reply's votes are gone: %v", got)
		}
		if err := f.s.DeleteComment(ctx, "bob", reply.ID); err != nil {
			t.Fatal(err)
		}
		got := fields()
		for field := range got {
			if num, _, _ := strings.Cut(field, ":"); num == "3" || num == "5" || num == "21" {
				t.Errorf("a vote on a comment removed for good is left: %s", field)
			}
		}
		if len(got) != 36 {
			t.Errorf("the buckets hold %d votes, want the other comments' 36: %v", len(got), got)
		}
		vt.comments = append(vt.comments[:2:2], append(vt.comments[3:4:4], vt.comments[5:]...)...)
		vt.check("after the deletions", "bob", "cat")

		if err := f.s.DeletePost(ctx, "ann", vt.post.ID); err != nil {
			t.Fatal(err)
		}
		if n, err := b.Client.Exists(ctx, buckets...).Result(); err != nil || n != 0 {
			t.Errorf("%d buckets left after the post was deleted (%v)", n, err)
		}
	})
}
