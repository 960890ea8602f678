package store_test

import (
	"context"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestRebuildDerivesTheLiveBitmap: the live bitmap of a thread (read state) is derived data:
// dropped, or with stray bits, Rebuild writes it again byte for byte as the writes left it —
// comments live, deleted with and without replies, removed and restored — and a thread left with
// no live comment has none; the unread counts are what they were.
func TestRebuildDerivesTheLiveBitmap(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
		signUp(t, s, "ann", "bob", "mod")
		if _, err := s.CreateGroup(ctx, "mod", "threads", nil); err != nil {
			t.Fatal(err)
		}
		p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "a thread", Groups: []string{"threads"}})
		if err != nil {
			t.Fatal(err)
		}
		empty, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "emptied"})
		if err != nil {
			t.Fatal(err)
		}
		comment := func(postID, parent string) string {
			t.Helper()
			c, err := s.CreateComment(ctx, "bob", store.NewComment{PostID: postID, ParentID: parent, Body: "hi"})
			if err != nil {
				t.Fatal(err)
			}
			return c.ID
		}
		if err := s.MarkPostRead(ctx, "ann", p.ID); err != nil { // before any comment
			t.Fatal(err)
		}
		var ids []string
		for range 12 {
			ids = append(ids, comment(p.ID, ""))
		}
		reply := comment(p.ID, ids[3])
		for _, i := range []int{1, 3, 11} { // 3 has a live reply: it stays as a tombstone
			if err := s.DeleteComment(ctx, "bob", ids[i]); err != nil {
				t.Fatal(err)
			}
		}
		for _, i := range []int{5, 7} {
			if _, err := s.RemoveComment(ctx, "mod", ids[i], "spam"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.RestoreComment(ctx, "mod", ids[7]); err != nil {
			t.Fatal(err)
		}
		_ = reply
		gone := comment(empty.ID, "")
		if err := s.DeleteComment(ctx, "bob", gone); err != nil {
			t.Fatal(err)
		}

		pid, _ := store.PostKey(p.ID)
		eid, _ := store.PostKey(empty.ID)
		live, emptyLive := prefix+"{p:"+pid+"}:c:live", prefix+"{p:"+eid+"}:c:live"
		want, err := b.Client.Get(ctx, live).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := b.Client.Exists(ctx, emptyLive).Result(); n != 0 {
			t.Fatalf("a thread with no live comment has a bitmap before the rebuild")
		}
		unread := func() int {
			t.Helper()
			l := s.NewLoader()
			post, err := l.Post(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			n, _, err := l.ReadState(ctx, "ann", post)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := unread(); n != 9 { // 13 written, 3 deleted, 1 removed
			t.Fatalf("unread %d before the rebuild, want 9", n)
		}

		for _, tc := range []struct {
			name   string
			break_ func()
		}{
			{"dropped", func() {
				if err := b.Client.Del(ctx, live).Err(); err != nil {
					t.Fatal(err)
				}
			}},
			{"stray bits", func() {
				b.Client.SetBit(ctx, live, 2, 1) // a deleted comment's, dropped with its hash
				b.Client.SetBit(ctx, live, 6, 1) // a removed one's
				b.Client.SetBit(ctx, live, 4, 0) // a live one's cleared
				b.Client.SetBit(ctx, emptyLive, 1, 1)
			}},
		} {
			tc.break_()
			if got, _ := b.Client.Get(ctx, live).Result(); got == want {
				t.Fatalf("%s: the bitmap is unchanged; the test breaks nothing", tc.name)
			}
			st, err := s.Rebuild(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Live != 11 { // every comment still held: 13 written, 2 dropped
				t.Errorf("%s: Rebuild gave %d comments their bit, want 11", tc.name, st.Live)
			}
			if got, err := b.Client.Get(ctx, live).Result(); err != nil || got != want {
				t.Errorf("%s: the rebuilt bitmap is %q (%v), want %q", tc.name, got, err, want)
			}
			if n, _ := b.Client.Exists(ctx, emptyLive).Result(); n != 0 {
				t.Errorf("%s: a thread with no live comment has a bitmap after the rebuild", tc.name)
			}
			if n := unread(); n != 9 {
				t.Errorf("%s: unread %d after the rebuild, want 9", tc.name, n)
			}
		}
	})
}
