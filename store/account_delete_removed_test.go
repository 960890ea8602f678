package store_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestDeleteAccountErasesRemoved deletes with erase an account that has a live post, a post a
// moderator removed, a live comment and removed comments (on its own post and on another's),
// cut off before the steps that walk the removed content and then resumed, and checks that every
// one of them reads as erased to an admin, who can read removed content, and stays out of search
// even once a moderator restores it.
func TestDeleteAccountErasesRemoved(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{Prefix: storetest.Prefix(), Now: tickingClock(), WriteLimit: -1})
		ctx := f.ctx
		root, ann, bob := f.admin("root"), f.user("ann"), f.user("bob")
		live := f.postBody(ann, "curlew live", "plover live", "go")
		gone := f.postBody(ann, "curlew removed", "plover removed", "go")
		theirs := f.post(bob, "bob's", "go")
		comment := func(uid, pid, body string) *store.Comment {
			t.Helper()
			c, err := f.s.CreateComment(ctx, uk(uid), store.NewComment{PostID: pid, Body: body})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		liveC := comment(ann, theirs.ID, "curlew live comment")
		goneOwn := comment(ann, live.ID, "curlew removed on her own post")
		goneTheirs := comment(ann, theirs.ID, "curlew removed on bob's post")
		if _, err := f.s.RemovePost(ctx, uk(root), gone.ID, "spam"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []*store.Comment{goneOwn, goneTheirs} {
			if _, err := f.s.RemoveComment(ctx, uk(root), c.ID, "rude"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}

		if err := f.s.DeleteAccount(ctx, uk(ann), "password1", true); err != nil {
			t.Fatal(err)
		}
		// Cut off before the new steps: the steps before them ran (as their jobs would), the
		// removed post still reads as written.
		for _, step := range []string{"posts", "nsfw-posts", "comments"} {
			if _, err := f.s.EraseStep(ctx, uk(ann), step, true); err != nil {
				t.Fatal(err)
			}
		}
		if p, err := f.s.NewLoader().Post(ctx, gone.ID); err != nil || p == nil || p.Title != "curlew removed" {
			t.Fatalf("before the removed-posts step the removed post reads %+v, %v", p, err)
		}
		// Resumed: the chain's queued first job runs it all (again), the new steps among it.
		if _, err := f.s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}

		check := func(when string) {
			t.Helper()
			l := f.s.NewLoader()
			for _, id := range []string{live.ID, gone.ID} {
				p, err := l.Post(ctx, id)
				if err != nil || p == nil {
					t.Fatalf("%s: post %s: %v, %v; want a tombstone", when, id, p, err)
				}
				if p.Title != "[deleted]" || p.Body != "" || p.URL != nil || !p.Erased {
					t.Errorf("%s: post %s reads %q %q %v erased %v; want erased", when, id, p.Title, p.Body, p.URL, p.Erased)
				}
				if u := l.NamedAuthor(p); u != nil {
					t.Errorf("%s: post %s still names its author %q", when, id, u.Name)
				}
			}
			for _, c := range []*store.Comment{liveC, goneOwn, goneTheirs} {
				got, err := l.Comment(ctx, c.ID)
				if err != nil {
					t.Fatalf("%s: comment %s: %v", when, c.ID, err)
				}
				if got == nil {
					continue // gone for good
				}
				if got.Text != "" {
					t.Errorf("%s: comment %s still reads %q", when, c.ID, got.Text)
				}
				if u := l.NamedAuthor(got); u != nil {
					t.Errorf("%s: comment %s still names its author %q", when, c.ID, u.Name)
				}
			}
			if found := f.search(root, store.PostSearch{Query: "curlew"}, 20); len(found) != 0 {
				t.Errorf("%s: search finds posts %q", when, found)
			}
			if found := f.search(root, store.PostSearch{Query: "plover"}, 20); len(found) != 0 {
				t.Errorf("%s: search finds posts %q by their bodies", when, found)
			}
			cs, err := l.SearchComments(ctx, store.CommentSearch{Query: "curlew"}, store.Window{First: 20})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs.Items {
				t.Errorf("%s: search finds comment %s %q", when, c.ID, c.Text)
			}
		}
		check("after the deletion")

		// A moderator reversing the removals brings back no text, and nothing to search.
		if _, err := f.s.RestorePost(ctx, uk(root), gone.ID); err != nil && !store.IsKind(err, store.KindNotFound) {
			t.Fatal(err)
		}
		for _, c := range []*store.Comment{goneOwn, goneTheirs} {
			if _, err := f.s.RestoreComment(ctx, uk(root), c.ID); err != nil && !store.IsKind(err, store.KindNotFound) {
				t.Fatal(err)
			}
		}
		if _, err := f.s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		check("after a restore")

		// Nothing of the account is left to export.
		var buf bytes.Buffer
		err := f.s.Export(ctx, uk(ann), "", &buf)
		if !store.IsKind(err, store.KindNotFound) || buf.Len() != 0 {
			t.Errorf("export of the deleted account: %v, %d bytes written; want NOT_FOUND and nothing", err, buf.Len())
		}
	})
}

// TestDeleteAccountKeepDisownsRemoved deletes without erase an account with a removed post and a
// removed comment: they keep their text, as its listed content does, but name nobody.
func TestDeleteAccountKeepDisownsRemoved(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{Prefix: storetest.Prefix(), Now: tickingClock(), WriteLimit: -1})
		ctx := f.ctx
		root, ann, bob := f.admin("root"), f.user("ann"), f.user("bob")
		gone := f.postBody(ann, "curlew removed", "plover", "go")
		theirs := f.post(bob, "bob's", "go")
		c, err := f.s.CreateComment(ctx, uk(ann), store.NewComment{PostID: theirs.ID, Body: "curlew comment"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RemovePost(ctx, uk(root), gone.ID, "spam"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RemoveComment(ctx, uk(root), c.ID, "rude"); err != nil {
			t.Fatal(err)
		}
		if err := f.s.DeleteAccount(ctx, uk(ann), "password1", false); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		l := f.s.NewLoader()
		p, err := l.Post(ctx, gone.ID)
		if err != nil || p == nil || p.Title != "curlew removed" || p.Erased {
			t.Fatalf("kept removed post: %+v, %v; want it whole", p, err)
		}
		if u := l.NamedAuthor(p); u != nil {
			t.Errorf("kept removed post still names %q", u.Name)
		}
		got, err := l.Comment(ctx, c.ID)
		if err != nil || got == nil || got.Text != "curlew comment" {
			t.Fatalf("kept removed comment: %+v, %v; want it whole", got, err)
		}
		if u := l.NamedAuthor(got); u != nil {
			t.Errorf("kept removed comment still names %q", u.Name)
		}
	})
}

// TestDeleteAccountErasesManyRemoved erases removed posts found in a guard that one HSCAN call
// does not answer whole on Redis (a hashtable: padded past hash-max-listpack-entries), so that
// the removed-posts step runs as several jobs, each resuming at the cursor the one before left.
func TestDeleteAccountErasesManyRemoved(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
		ctx := f.ctx
		root, ann := f.admin("root"), f.user("ann")
		ids := make([]string, 60)
		for i := range ids {
			p := f.postBody(ann, "curlew", "plover", "go")
			if _, err := f.s.RemovePost(ctx, uk(root), p.ID, "spam"); err != nil {
				t.Fatal(err)
			}
			ids[i] = p.ID
		}
		// A long-lived account's guard: entries of posts long gone (ids from 1e9 up).
		pad := make([]any, 0, 8*store.ExportPage)
		for i := range 4 * store.ExportPage {
			pad = append(pad, strconv.Itoa(1e9+i), "1")
		}
		if err := b.Client.HSet(ctx, prefix+"{u:"+ann+"}:posts:ver", pad...).Err(); err != nil {
			t.Fatal(err)
		}
		if err := f.s.DeleteAccount(ctx, uk(ann), "password1", true); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		l := f.s.NewLoader()
		left := 0
		for _, id := range ids {
			if p, err := l.Post(ctx, id); err != nil || p == nil || p.Title != "[deleted]" || p.Body != "" {
				left++
			}
		}
		if left != 0 {
			t.Fatalf("%d of %d removed posts are not erased", left, len(ids))
		}
	})
}
