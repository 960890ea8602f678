package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestCommentHashesStayListpack: a comment's body is kept apart from its hash, so that the hash
// of a comment with a long body holds only short values and keeps Redis's compact encoding (a
// hashtable costs ~650 bytes more per comment). Real Redis only: miniredis has no encodings.
func TestCommentHashesStayListpack(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		if b.Name == "miniredis" {
			t.Skip("miniredis does not report encodings")
		}
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix, WriteLimit: -1})
		ann := f.user("ann")
		p := f.post(ann, "long comments")
		long := strings.Repeat("a body longer than sixty-four bytes ", 6)
		c, err := f.s.CreateComment(f.ctx, uk(ann), store.NewComment{PostID: p.ID, Body: long})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.EditComment(f.ctx, uk(ann), c.ID, long+" edited"); err != nil {
			t.Fatal(err)
		}
		pid, num, _ := store.CommentKey(c.ID)
		enc, err := b.Client.ObjectEncoding(f.ctx, f.s.ThreadKeyForTest(pid, num, "")).Result()
		if err != nil || enc != "listpack" {
			t.Fatalf("the comment's hash is encoded %q (%v), want listpack", enc, err)
		}
		got, err := f.s.NewLoader().Comment(f.ctx, c.ID)
		if err != nil || got == nil || got.Text != long+" edited" {
			t.Fatalf("read back %+v, %v", got, err)
		}
	})
}

// TestMigrateCommentBodies writes comments, puts their bodies back into their hashes as layout 2
// kept them, and migrates: reads are right before (the migration runs beside traffic), during
// (an edit and a deletion between two runs) and after it, the bodies leave the hashes, and a
// second run moves nothing.
func TestMigrateCommentBodies(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix, WriteLimit: -1})
		ctx := f.ctx
		ann, bob := f.user("ann"), f.user("bob")
		p := f.post(ann, "a thread from layout 2")
		bodies := map[string]string{}
		var ids []string
		add := func(uid, parent, body string) string {
			t.Helper()
			in := store.NewComment{PostID: p.ID, Body: body}
			if parent != "" {
				in.ParentID = parent
			}
			c, err := f.s.CreateComment(ctx, uk(uid), in)
			if err != nil {
				t.Fatal(err)
			}
			bodies[c.ID], ids = body, append(ids, c.ID)
			return c.ID
		}
		top := add("ann", "", strings.Repeat("the first comment, long enough to matter. ", 5))
		reply := add(bob, top, "a short reply")
		edited := add(bob, "", "to be edited")
		gone := add(ann, "", "to be deleted")
		_ = reply

		// Layout 2: every body in its comment's hash, no thread bodies, 12-digit numbers in the
		// thread's ids and the comments' keys.
		pid, _, _ := store.CommentKey(top)
		if _, err := f.s.PadThreadKeysForTest(ctx, pid); err != nil {
			t.Fatal(err)
		}
		bk, idsKey := prefix+"{p:"+pid+"}:c:body", prefix+"{p:"+pid+"}:c:ids"
		if err := b.Client.Del(ctx, idsKey).Err(); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			_, num, _ := store.CommentKey(id)
			key := f.s.PaddedThreadKeyForTest(pid, num, "")
			body, err := b.Client.HGet(ctx, bk, num).Result()
			if err != nil {
				t.Fatalf("comment %s has no entry in the thread's bodies: %v", id, err)
			}
			if err := b.Client.HSet(ctx, key, "body", body).Err(); err != nil {
				t.Fatal(err)
			}
			if err := b.Client.SAdd(ctx, idsKey, num).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Client.Del(ctx, bk).Err(); err != nil {
			t.Fatal(err)
		}
		// A layout before 3 makes reads ask comment hashes for their bodies too.
		startAtLayout(t, f, b, prefix, 2)
		check := func(when string) {
			t.Helper()
			l := f.s.NewLoader()
			for id, want := range bodies {
				c, err := l.Comment(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case want == "" && c != nil:
					t.Errorf("%s: deleted comment %s reads %+v", when, id, c)
				case want != "" && (c == nil || c.Text != want):
					t.Errorf("%s: comment %s reads %+v, want body %q", when, id, c, want)
				}
			}
		}
		check("before the migration")

		// Traffic while the keyspace is half migrated: an edit and a deletion of layout-2 comments.
		if _, err := f.s.EditComment(ctx, uk(bob), edited, "edited in passing"); err != nil {
			t.Fatal(err)
		}
		bodies[edited] = "edited in passing"
		if err := f.s.DeleteComment(ctx, uk(ann), gone); err != nil {
			t.Fatal(err)
		}
		bodies[gone] = ""
		check("during the migration")

		ran, err := f.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != store.Layout-2 || ran[0].From != 2 {
			t.Fatalf("ran %+v, %v; want the migrations from layout 2", ran, err)
		}
		check("after the migration")
		for id := range bodies {
			_, num, _ := store.CommentKey(id)
			if n, err := b.Client.HExists(ctx, f.s.ThreadKeyForTest(pid, num, ""), "body").Result(); err != nil || n {
				t.Errorf("comment %s still has a body in its hash after the migration (%v)", id, err)
			}
		}
		if n, err := b.Client.HLen(ctx, bk).Result(); err != nil || n != 3 {
			t.Errorf("the thread's bodies hold %d entries (%v), want the 3 live comments'", n, err)
		}
		if b.Name != "miniredis" {
			_, num, _ := store.CommentKey(top)
			if enc, err := b.Client.ObjectEncoding(ctx, f.s.ThreadKeyForTest(pid, num, "")).Result(); err != nil || enc != "listpack" {
				t.Errorf("a migrated comment's hash is encoded %q (%v), want listpack", enc, err)
			}
		}
		members, err := b.Client.SMembers(ctx, idsKey).Result()
		if err != nil || len(members) != 3 {
			t.Errorf("the thread's ids hold %q (%v), want the 3 live comments", members, err)
		}
		for _, m := range members {
			if strings.HasPrefix(m, "0") {
				t.Errorf("the thread's ids hold %q: want numbers as in ids", m)
			}
		}
		if b.Name != "miniredis" {
			if enc, err := b.Client.ObjectEncoding(ctx, idsKey).Result(); err != nil || enc != "intset" {
				t.Errorf("the thread's ids are encoded %q (%v), want intset", enc, err)
			}
		}
		if ran, err := f.s.Migrate(context.Background(), 10*time.Millisecond); err != nil || len(ran) != 0 {
			t.Fatalf("second run: ran %d, %v; want nothing", len(ran), err)
		}
		check("after a second run")
	})
}

// TestMigrateCompactPasswords: a user's password hash as layout 2 stored it (a PHC string, longer
// than a listpack value) still logs in, and the migration writes it compactly and the user's hash
// anew, a listpack again, without changing what logs in.
func TestMigrateCompactPasswords(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix, WriteLimit: -1})
		ctx := f.ctx
		f.user("carol")
		key := prefix + "{u:carol}"
		compact, err := b.Client.HGet(ctx, key, "pass").Result()
		if err != nil || len(compact) > 64 {
			t.Fatalf("a new password hash is %d bytes (%v), want at most 64", len(compact), err)
		}
		if b.Name != "miniredis" {
			if enc, err := b.Client.ObjectEncoding(ctx, key).Result(); err != nil || enc != "listpack" {
				t.Fatalf("a new user's hash is encoded %q (%v), want listpack", enc, err)
			}
		}
		// Layout 2: the same hash as a PHC string.
		phc := store.PHCForTest(compact)
		if err := b.Client.HSet(ctx, key, "pass", phc).Err(); err != nil {
			t.Fatal(err)
		}
		if err := b.Client.HSet(ctx, prefix+"{meta}:layout", "version", 2).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.LogIn(ctx, "carol", "password1"); err != nil {
			t.Fatalf("log in with a layout-2 hash: %v", err)
		}
		if _, err := f.s.Migrate(ctx, 10*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if got, err := b.Client.HGet(ctx, key, "pass").Result(); err != nil || got != compact {
			t.Fatalf("after the migration the hash is %q (%v), want the compact form", got, err)
		}
		if b.Name != "miniredis" {
			if enc, err := b.Client.ObjectEncoding(ctx, key).Result(); err != nil || enc != "listpack" {
				t.Errorf("a migrated user's hash is encoded %q (%v), want listpack", enc, err)
			}
		}
		if _, err := f.s.LogIn(ctx, "carol", "password1"); err != nil {
			t.Fatalf("log in after the migration: %v", err)
		}
		if _, err := f.s.LogIn(ctx, "carol", "password2"); err == nil {
			t.Fatal("a wrong password logs in after the migration")
		}
	})
}
