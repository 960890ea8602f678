package store_test

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// packedNames are the fields of layout 5 that layout 6 packs into a comment's field m.
var packedNames = []string{"parent", "author", "created", "closes", "depth", "ord", "aname"}

// readComments reads every comment of ids with a new loader, by name.
func (th *modThread) readComments() map[string]*store.Comment {
	th.f.t.Helper()
	l := th.f.s.NewLoader()
	out := map[string]*store.Comment{}
	for name, id := range th.ids {
		c, err := l.Comment(th.f.ctx, id)
		if err != nil {
			th.f.t.Fatalf("read %s: %v", name, err)
		}
		out[name] = c
	}
	return out
}

// sameComments fails unless got reads as want, comment by comment.
func sameComments(t *testing.T, when string, got, want map[string]*store.Comment) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if !reflect.DeepEqual(got[name], want[name]) {
			t.Errorf("%s: comment %s reads %+v, want %+v", when, name, got[name], want[name])
		}
	}
}

// shapes counts the comments of ids whose hash is packed (has m and none of packedNames) and of
// layout 5 (no m, created), and fails on any other.
func (th *modThread) shapes(when string) (packed, unpacked int) {
	th.f.t.Helper()
	for name, id := range th.ids {
		h, err := th.f.s.CommentHashForTest(th.f.ctx, id)
		if err != nil {
			th.f.t.Fatal(err)
		}
		old := false
		for _, n := range packedNames {
			old = old || h[n] != ""
		}
		switch {
		case h["m"] != "" && !old:
			packed++
		case h["m"] == "" && h["created"] != "":
			unpacked++
		default:
			th.f.t.Fatalf("%s: comment %s's hash is of neither shape: %v", when, name, h)
		}
	}
	return packed, unpacked
}

// newMigrationThread writes the thread the comment hashes' migrations start from: mia moderates
// group go, where ann posted a thread with replies three deep (a, a1, a1x), top-level comments (b,
// t with a reply t1, r) and one more top-level comment of ann's for each of more; then ann deletes
// t (a tombstone, for its reply) and mia removes r.
func newMigrationThread(t *testing.T, b storetest.Backend, prefix string, more ...string) (th *modThread, ann, bob string) {
	t.Helper()
	f := &modFixture{fixture: newFixture(t, b, store.Options{Prefix: prefix})}
	f.admin("root")
	f.user("mia")
	if err := f.s.SetModerator(f.ctx, "go", "mia"); err != nil {
		t.Fatal(err)
	}
	ann, bob = f.user("ann"), f.user("bob")
	th = &modThread{f: f, post: f.post(ann, "thread", "go"), ids: map[string]string{}}
	for _, c := range [][3]string{{"a", "", ann}, {"a1", "a", bob}, {"a1x", "a1", ann}, {"b", "", bob},
		{"t", "", ann}, {"t1", "t", bob}, {"r", "", bob}} {
		th.add(c[0], c[1], c[2])
	}
	for _, name := range more {
		th.add(name, "", ann)
	}
	if err := f.s.DeleteComment(f.ctx, uk(ann), th.ids["t"]); err != nil { // a tombstone: t has a reply
		t.Fatal(err)
	}
	if _, err := f.s.RemoveComment(f.ctx, "mia", th.ids["r"], "rude"); err != nil {
		t.Fatal(err)
	}
	return th, ann, bob
}

// TestMigrateCommentHashes writes a thread (replies, votes, an edit, a tombstone, a removed
// comment), writes its comments' hashes as layout 5 kept them, and migrates: reads are the same
// before the migration (it runs beside traffic), and writes on hashes of layout 5 (a reply, a
// vote, an edit, a deletion, a removal and its restore) are right; the step packs each hash of
// layout 5 once (a second run packs none), and reads stay the same after it and after Migrate,
// which leaves the reads asking for the packed field alone.
func TestMigrateCommentHashes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		th, ann, bob := newMigrationThread(t, b, prefix, "v")
		f, ctx := th.f, th.f.ctx
		if _, err := f.s.VoteComment(ctx, uk(bob), th.ids["a"], 1); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.EditComment(ctx, uk(bob), th.ids["a1"], "a1, edited"); err != nil {
			t.Fatal(err)
		}
		th.check()
		want := th.readComments()
		if p, u := th.shapes("layout 6"); p != len(th.ids) || u != 0 {
			t.Fatalf("layout 6 writes %d packed hashes, %d of layout 5; want %d, 0", p, u, len(th.ids))
		}

		if err := f.s.UnpackThreadForTest(ctx, th.post.Key()); err != nil {
			t.Fatal(err)
		}
		if err := b.Client.HSet(ctx, prefix+"{meta}:layout", "version", 5).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.CheckLayout(ctx); err != nil {
			t.Fatal(err)
		}
		if p, u := th.shapes("layout 5"); p != 0 || u != len(th.ids) {
			t.Fatalf("layout 5: %d packed hashes, %d of layout 5; want 0, %d", p, u, len(th.ids))
		}
		sameComments(t, "before the migration", th.readComments(), want)
		th.check()

		// Writes on hashes of layout 5, beside the migration.
		th.add("a1xr", "a1x", bob)
		if c, err := f.s.NewLoader().Comment(ctx, th.ids["a1xr"]); err != nil || c.Depth != 3 || c.ParentID != th.ids["a1x"] {
			t.Fatalf("a reply to a comment of layout 5 reads %+v, %v; want depth 3 under a1x", c, err)
		}
		if c, err := f.s.VoteComment(ctx, uk(ann), th.ids["a1"], -1); err != nil || c.Downvotes != 1 || c.Author != uk(bob) {
			t.Fatalf("a vote on a comment of layout 5 gives %+v, %v", c, err)
		}
		if _, err := f.s.VoteComment(ctx, uk(ann), th.ids["a"], 1); err == nil {
			t.Fatal("ann voted on her own comment of layout 5")
		}
		if c, err := f.s.EditComment(ctx, uk(bob), th.ids["b"], "b, edited"); err != nil || c.EditedAt == nil || c.Author != uk(bob) {
			t.Fatalf("an edit of a comment of layout 5 gives %+v, %v", c, err)
		}
		if _, err := f.s.EditComment(ctx, uk(ann), th.ids["b"], "not mine"); err == nil {
			t.Fatal("ann edited bob's comment of layout 5")
		}
		if err := f.s.DeleteComment(ctx, uk(ann), th.ids["v"]); err != nil {
			t.Fatal(err)
		}
		delete(th.ids, "v") // removed for good: its marker is no comment
		if _, err := f.s.RemoveComment(ctx, "mia", th.ids["a1x"], "rude"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RestoreComment(ctx, "mia", th.ids["a1x"]); err != nil {
			t.Fatal(err)
		}
		th.check()
		want = th.readComments()
		if p, u := th.shapes("beside the migration"); p != 1 || u != len(th.ids)-1 {
			t.Fatalf("beside the migration: %d packed hashes, %d of layout 5; want 1 (the new reply), %d", p, u, len(th.ids)-1)
		}

		for run, wantN := range []int{len(th.ids) - 1, 0} {
			n, err := f.s.PackCommentsForTest(ctx)
			if err != nil || n != wantN {
				t.Fatalf("run %d packed %d hashes (%v), want %d", run, n, err, wantN)
			}
			if p, u := th.shapes("after the step"); p != len(th.ids) || u != 0 {
				t.Fatalf("run %d: %d packed hashes, %d of layout 5; want %d, 0", run, p, u, len(th.ids))
			}
			sameComments(t, "after the step", th.readComments(), want)
			th.check()
		}
		ran, err := f.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != store.Layout-5 || ran[0].From != 5 {
			t.Fatalf("ran %+v, %v; want the migration from layout 5", ran, err)
		}
		sameComments(t, "after Migrate", th.readComments(), want)
		th.add("late", "a1xr", ann)
		th.check()
	})
}

// TestPackedCommentStaysListpack: a comment by a user with the longest name, replying deep in a
// thread, keeps a listpack-encoded hash: no packed field reaches hash-max-listpack-value (64
// bytes), since the names stay out of m. Real Redis only: miniredis has no encodings.
func TestPackedCommentStaysListpack(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		if b.Name == "miniredis" {
			t.Skip("miniredis does not report encodings")
		}
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix, WriteLimit: -1})
		long := f.user("Abcdefghijklmnopqrstuvwxyz_12345")
		p := f.post(long, "long names")
		var c *store.Comment
		for range 12 {
			in := store.NewComment{PostID: p.ID, Body: "reply"}
			if c != nil {
				in.ParentID = c.ID
			}
			var err error
			if c, err = f.s.CreateComment(f.ctx, uk(long), in); err != nil {
				t.Fatal(err)
			}
		}
		key := f.s.ThreadKeyForTest(p.Key(), commentNum(c.ID), "")
		if enc, err := b.Client.ObjectEncoding(f.ctx, key).Result(); err != nil || enc != "listpack" {
			h, _ := b.Client.HGetAll(f.ctx, key).Result()
			t.Fatalf("the comment's hash %v is encoded %q (%v), want listpack", h, enc, err)
		}
	})
}

// TestPackTombstoneDropsName packs a tombstone of layout 5, whose deletion kept its author's name
// (aname): packed, it keeps its author but not the name, as a tombstone of layout 6 does. An
// account deleted later never reaches it (a tombstone is out of its author's list), so the
// migration is the one step that can take the name off.
func TestPackTombstoneDropsName(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
		c := commentWithReply(t, s)
		if err := s.DeleteComment(ctx, "ann", c.ID); err != nil {
			t.Fatal(err)
		}
		pid, num, err := store.CommentKey(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.UnpackThreadForTest(ctx, pid); err != nil {
			t.Fatal(err)
		}
		key := s.ThreadKeyForTest(pid, num, "")
		if err := b.Client.HSet(ctx, key, "aname", "Ann").Err(); err != nil { // as layout 5's deletion left it
			t.Fatal(err)
		}
		if _, err := s.PackCommentsForTest(ctx); err != nil {
			t.Fatal(err)
		}
		h, err := b.Client.HGetAll(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if h["m"] == "" || h["deleted"] != "1" || h["a"] != "ann" {
			t.Fatalf("packed tombstone %v: want m, deleted and the author in a", h)
		}
		for f, v := range h {
			if v == "Ann" {
				t.Errorf("the packed tombstone keeps the author's name in field %s: %v", f, h)
			}
		}
		if got, err := s.NewLoader().Comment(ctx, c.ID); err != nil || got == nil || !got.Deleted {
			t.Fatalf("tombstone read: %+v, %v", got, err)
		}
	})
}
