package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// readState returns uid's unread count of the post and whether they marked it read.
func readState(t *testing.T, s *store.Store, uid, postID string) (int, bool) {
	t.Helper()
	ctx := context.Background()
	l := s.NewLoader()
	p, err := l.Post(ctx, postID)
	if err != nil || p == nil {
		t.Fatalf("post %s: %v, %v", postID, p, err)
	}
	n, read, err := l.ReadState(ctx, uk(uid), p)
	if err != nil {
		t.Fatal(err)
	}
	return n, read
}

// TestUnreadCommentCountExact: 50 writers comment, delete and are moderated concurrently, every
// script sent twice; the reader's unread count is exactly the comments written after their
// mark that are still there, whatever happened to those written before it.
func TestUnreadCommentCountExact(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		const writers = 50
		names := []string{"rita", "root"}
		for i := range writers {
			names = append(names, fmt.Sprintf("w%02d", i))
		}
		w := newInboxWorld(t, b, store.Options{}, names...)
		s := w.s
		if err := s.GrantAdmin(ctx, "root"); err != nil {
			t.Fatal(err)
		}
		if n, read := readState(t, s, "rita", w.post.ID); n != 0 || read {
			t.Fatalf("no comments, never read: %d, %v", n, read)
		}
		// Before the mark: one comment per writer, and a reply to the first that makes it stay
		// as a tombstone when deleted.
		before := make([]*store.Comment, writers)
		for i := range writers {
			before[i] = w.comment(names[2+i], nil, "before")
		}
		if n, read := readState(t, s, "rita", w.post.ID); n != writers || read {
			t.Fatalf("never read: %d unread, read %v; want all %d", n, read, writers)
		}
		if err := s.MarkPostRead(ctx, "rita", w.post.ID); err != nil {
			t.Fatal(err)
		}
		if n, read := readState(t, s, "rita", w.post.ID); n != 0 || !read {
			t.Fatalf("just read: %d unread, read %v", n, read)
		}
		twice := runTwice(b)
		var wg sync.WaitGroup
		errs := make(chan error, writers*8)
		removed := make(chan *store.Comment, writers)
		for i := range writers {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				uid := uk(names[2+i])
				var mine []*store.Comment
				for j := range 3 {
					c, err := s.CreateComment(ctx, uid, store.NewComment{PostID: w.post.ID, Body: fmt.Sprintf("after %d", j)})
					if err != nil {
						errs <- err
						return
					}
					mine = append(mine, c)
				}
				// A reply to the first: deleting the first leaves a tombstone, which counts no more.
				if _, err := s.CreateComment(ctx, uid, store.NewComment{PostID: w.post.ID, ParentID: mine[0].ID, Body: "reply"}); err != nil {
					errs <- err
				}
				for _, c := range []*store.Comment{mine[0], mine[1], before[i]} {
					if err := s.DeleteComment(ctx, uid, c.ID); err != nil {
						errs <- err
					}
				}
				removed <- mine[2]
			}(i)
		}
		wg.Wait()
		close(removed)
		// A moderator removes half of the third comments, and restores one of those.
		var gone []*store.Comment
		i := 0
		for c := range removed {
			if i%2 == 0 {
				if _, err := s.RemoveComment(ctx, "root", c.ID, "spam"); err != nil {
					t.Fatal(err)
				}
				gone = append(gone, c)
			}
			i++
		}
		if _, err := s.RestoreComment(ctx, "root", gone[0].ID); err != nil {
			t.Fatal(err)
		}
		twice.Store(false)
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		// Per writer: 4 written after the mark, 2 deleted; 25 of the 50 thirds removed, 1 back.
		want := writers*2 - (len(gone) - 1)
		if n, read := readState(t, s, "rita", w.post.ID); n != want || !read {
			t.Errorf("after the writers: %d unread, read %v; want %d", n, read, want)
		}
		p, err := s.NewLoader().Post(ctx, w.post.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.CommentCount != want { // the "before" comments are all deleted
			t.Errorf("commentCount %d, want %d", p.CommentCount, want)
		}
		// Marking again reads everything; a later comment is the one unread, until deleted.
		for range 2 {
			if err := s.MarkPostRead(ctx, "rita", w.post.ID); err != nil {
				t.Fatal(err)
			}
		}
		if n, _ := readState(t, s, "rita", w.post.ID); n != 0 {
			t.Errorf("read again: %d unread", n)
		}
		c := w.comment("w00", nil, "late")
		if n, _ := readState(t, s, "rita", w.post.ID); n != 1 {
			t.Errorf("one more: %d unread", n)
		}
		if err := s.DeleteComment(ctx, "w00", c.ID); err != nil {
			t.Fatal(err)
		}
		if n, _ := readState(t, s, "rita", w.post.ID); n != 0 {
			t.Errorf("the late one deleted: %d unread", n)
		}
		if n, read := readState(t, s, "", w.post.ID); n != 0 || read {
			t.Errorf("anonymous: %d, %v", n, read)
		}
		if err := s.MarkPostRead(ctx, "rita", "post:999999"); !store.IsKind(err, store.KindNotFound) {
			t.Errorf("mark a missing post: %v, want not found", err)
		}
	})
}

// TestReadMarksStayBounded: the marks keep the newest posts', and at their fullest stay one
// listpack-encoded hash under 2 KB (on Redis; miniredis cannot say).
func TestReadMarksStayBounded(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock()})
		signUp(t, s, "ann", "rita")
		var posts []*store.Post
		for i := range store.ReadMarkCap + store.ReadMarkSlack + 1 {
			p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: fmt.Sprintf("p%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			posts = append(posts, p)
			if err := s.MarkPostRead(ctx, "rita", p.ID); err != nil {
				t.Fatal(err)
			}
		}
		kept := 0
		for i, p := range posts {
			_, read := readState(t, s, "rita", p.ID)
			if read {
				kept++
			}
			if oldest := i < len(posts)-store.ReadMarkCap; read == oldest {
				t.Errorf("post %d of %d: read %v", i, len(posts), read)
			}
		}
		if kept != store.ReadMarkCap {
			t.Errorf("%d marks kept, want %d", kept, store.ReadMarkCap)
		}
		if b.Name == "miniredis" {
			return // no OBJECT ENCODING, no MEMORY USAGE
		}
		// At its fullest (ReadMarkCap + ReadMarkSlack marks) the hash is still listpack-encoded.
		for i := range store.ReadMarkSlack {
			p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: fmt.Sprintf("q%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.MarkPostRead(ctx, "rita", p.ID); err != nil {
				t.Fatal(err)
			}
		}
		key := s.Options().Prefix + "{rd:rita}:marks"
		enc, err := b.Client.ObjectEncoding(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		n, err := b.Client.HLen(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		mem, err := b.Client.MemoryUsage(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d marks: %s, %d bytes", n, enc, mem)
		if enc != "listpack" || n != store.ReadMarkCap+store.ReadMarkSlack || mem > 2048 {
			t.Errorf("%d marks: %s, %d bytes; want %d marks, listpack, at most 2 KB", n, enc, mem, store.ReadMarkCap+store.ReadMarkSlack)
		}
	})
}

// TestHideReadPagingStable: paging with hideRead, forwards and backwards, while comments arrive
// on read and unread posts, lists every unread post once, in order, and none that was read; every
// page is full but the last, however many read posts lie between the unread ones.
func TestHideReadPagingStable(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Now: tickingClock()})
		signUp(t, s, "ann", "rita", "bob")
		unread := map[string]bool{}
		var all []*store.Post
		for i := range 60 {
			p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: fmt.Sprintf("p%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, p)
			// Runs of read posts longer than a page: 15 unread of 60.
			if i%10 == 0 || i > 50 {
				unread[p.ID] = true
			} else if err := s.MarkPostRead(ctx, "rita", p.ID); err != nil {
				t.Fatal(err)
			}
		}
		comment := func(n int) {
			for _, q := range []*store.Post{all[n%60], all[(n*7+1)%60]} {
				if _, err := s.CreateComment(ctx, "bob", store.NewComment{PostID: q.ID, Body: "new"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, sort := range []store.PostSort{store.SortNew, store.SortHot} {
			// What the pages should list: the whole list in its order, without the read posts.
			var want []string
			whole, err := s.NewLoader().Posts(ctx, sort, "", store.Window{First: 100}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range whole.Items {
				if unread[it.ID] {
					want = append(want, it.ID)
				}
			}
			if len(want) != len(unread) {
				t.Fatalf("%d unread posts listed, want %d", len(want), len(unread))
			}
			for _, backward := range []bool{false, true} {
				var got []string
				cursor := ""
				for page := 0; ; page++ {
					if page > 20 {
						t.Fatal("the pages do not end")
					}
					w := store.Window{First: 3, After: cursor, NoCursors: true, NoTotal: true}
					if backward {
						w = store.Window{Last: 3, Before: cursor, NoCursors: true, NoTotal: true}
					}
					l := s.NewLoader()
					p, err := l.PageWithoutRead(ctx, "rita", w, func(w store.Window) (*store.Page[*store.Post], error) {
						return l.Posts(ctx, sort, "", w, nil)
					})
					if err != nil {
						t.Fatal(err)
					}
					var ids []string
					for _, it := range p.Items {
						ids = append(ids, it.ID)
					}
					more := p.HasNext
					if backward {
						got, more, cursor = append(ids, got...), p.HasPrev, p.StartCursor()
					} else {
						got, cursor = append(got, ids...), p.EndCursor()
					}
					comment(page)
					if !more {
						break
					}
					if len(ids) != 3 {
						t.Errorf("sort %d backward %v: page %d holds %d posts, and more follow", sort, backward, page, len(ids))
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("sort %d backward %v with hideRead: %v, want %v", sort, backward, got, want)
				}
			}
		}
	})
}
