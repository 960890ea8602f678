package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// sfwTitles lists a page of posts as a viewer who hides NSFW posts (hide) or shows them reads it.
func sfwTitles(t *testing.T, s *store.Store, hide bool, sort store.PostSort, group string) ([]string, int) {
	t.Helper()
	l := s.NewLoader()
	l.HideNSFW(hide)
	p, err := l.Posts(context.Background(), sort, group, store.Window{First: 50}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range p.Items {
		out = append(out, it.Title)
	}
	slices.Sort(out)
	return out, p.Total
}

// postListParts lists the sets of the post lists of ivy's posts in group pics: the site's and
// the group's rankings (every sort and TOP window) and ivy's post list, each with its NSFW part.
func postListParts(prefix string) (first, nsfw []string) {
	for _, tag := range []string{"{r:all}", "{g:pics}"} {
		for _, set := range []string{"hot", "new", "top", "act", "con", "cmt"} {
			first, nsfw = append(first, prefix+tag+":"+set), append(nsfw, prefix+tag+":n:"+set)
		}
		for _, w := range store.TopWindows {
			first, nsfw = append(first, prefix+tag+":t"+w.Name), append(nsfw, prefix+tag+":n:t"+w.Name)
		}
	}
	return append(first, prefix+"{u:ivy}:posts"), append(nsfw, prefix+"{u:ivy}:n:posts")
}

// checkParts checks that every post list holds the posts that are not NSFW (ids) in its first
// part and the NSFW ones in its NSFW part, and nothing else.
func checkParts(t *testing.T, b storetest.Backend, prefix, when string, sfw, nsfw []string) {
	t.Helper()
	first, nparts := postListParts(prefix)
	for i := range first {
		for _, part := range []struct {
			key  string
			want []string
		}{{first[i], sfw}, {nparts[i], nsfw}} {
			got, err := b.Client.ZRange(context.Background(), part.key, 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(part.want))
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s holds %v, want %v", when, part.key, got, want)
			}
		}
	}
}

// TestLabelsPostListsInTwoParts: every post list keeps the posts that are not NSFW and the NSFW
// ones in two disjoint parts (no copy: each post once); a viewer who hides NSFW posts reads the
// first, one who shows them both, merged, with exact totals. Labelling a post moves it between
// the parts, and so does taking the label off. The parts are derived data: dropped, Rebuild
// writes them again.
func TestLabelsPostListsInTwoParts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := &fixture{t: t, s: b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: -1}), ctx: context.Background()}
		u := store.UserKey(f.user("ivy"))
		var want, ids, sfw, nsfw []string
		for i := range 6 {
			title := fmt.Sprintf("post %d", i)
			p, err := f.s.CreatePost(f.ctx, u, store.NewPost{Title: title, Groups: []string{"pics"}, NSFW: i%3 == 0})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.ID)
			key, _ := store.PostKey(p.ID)
			if i%3 != 0 {
				want, sfw = append(want, title), append(sfw, key)
			} else {
				nsfw = append(nsfw, key)
			}
		}
		check := func(when string, want []string, all int) {
			t.Helper()
			for _, sort := range []store.PostSort{store.SortHot, store.SortNew, store.SortTopDay, store.SortMostComments} {
				for _, g := range []string{"", "pics"} {
					got, total := sfwTitles(t, f.s, true, sort, g)
					if !slices.Equal(got, want) || total != len(want) {
						t.Errorf("%s: sort %d group %q hides NSFW: %v (total %d), want %v", when, sort, g, got, total, want)
					}
					if got, total := sfwTitles(t, f.s, false, sort, g); len(got) != all || total != all {
						t.Errorf("%s: sort %d group %q shows NSFW: %v (total %d), want all %d", when, sort, g, got, total, all)
					}
				}
			}
			for _, hide := range []bool{true, false} {
				l := f.s.NewLoader()
				l.HideNSFW(hide)
				n, err := l.UserPostCount(f.ctx, u)
				wantN := all
				if hide {
					wantN = len(want)
				}
				if err != nil || n != wantN {
					t.Errorf("%s: hide %v: ivy's post count %d (%v), want %d", when, hide, n, err, wantN)
				}
				if n, err := l.GroupPostCount(f.ctx, "pics"); err != nil || n != wantN {
					t.Errorf("%s: hide %v: the group's post count %d (%v), want %d", when, hide, n, err, wantN)
				}
			}
		}
		check("written", want, 6)
		checkParts(t, b, prefix, "written", sfw, nsfw)
		// The directory of groups keeps NSFW-free orders of its own ({groups}:s:*): not post lists.
		var copies []string
		for _, k := range allKeys(t, b, prefix+"*:s:*") {
			if !strings.HasPrefix(k, prefix+"{groups}:") {
				copies = append(copies, k)
			}
		}
		if len(copies) != 0 {
			t.Errorf("copies of layout 3 written: %v", copies)
		}

		// A label moves a post between the parts, and back.
		yes, no := true, false
		if _, err := f.s.SetPostLabels(f.ctx, u, ids[1], &yes, nil, nil); err != nil {
			t.Fatal(err)
		}
		checkParts(t, b, prefix, "labelled", slices.DeleteFunc(slices.Clone(sfw), func(id string) bool { return id == sfw[0] }),
			append(slices.Clone(nsfw), sfw[0]))
		check("labelled", want[1:], 6)
		if _, err := f.s.SetPostLabels(f.ctx, u, ids[1], &no, nil, nil); err != nil {
			t.Fatal(err)
		}
		checkParts(t, b, prefix, "unlabelled", sfw, nsfw)
		check("unlabelled", want, 6)

		// Derived: dropped, rebuilt.
		_, nparts := postListParts(prefix)
		for _, k := range nparts {
			if err := b.Client.Del(f.ctx, k).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.s.Rebuild(f.ctx); err != nil {
			t.Fatal(err)
		}
		checkParts(t, b, prefix, "rebuilt", sfw, nsfw)
		check("rebuilt", want, 6)
	})
}

// TestMigrateNSFWParts writes posts, turns the keyspace into what layout 3 kept — every post
// in the first part of each list, and NSFW-free copies beside them — and migrates: the NSFW
// posts move into the NSFW parts, the copies go, reads are right before (the migration runs
// beside traffic) and after, and a second run of its step changes nothing.
func TestMigrateNSFWParts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := &fixture{t: t, s: b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: -1}), ctx: context.Background()}
		ctx := f.ctx
		u := store.UserKey(f.user("ivy"))
		var want, sfw, nsfw []string
		for i := range 6 {
			title := fmt.Sprintf("post %d", i)
			p, err := f.s.CreatePost(ctx, u, store.NewPost{Title: title, Groups: []string{"pics"}, NSFW: i%3 == 0})
			if err != nil {
				t.Fatal(err)
			}
			key, _ := store.PostKey(p.ID)
			if i%3 != 0 {
				want, sfw = append(want, title), append(sfw, key)
			} else {
				nsfw = append(nsfw, key)
			}
		}
		// Layout 3: each list whole under its key, its NSFW-free copy under "<tag>:s:" (a user's
		// under ":posts:s"), with its own version hash.
		first, nparts := postListParts(prefix)
		var copies []string
		for i, key := range first {
			cp := strings.Replace(key, "}:", "}:s:", 1)
			if strings.HasSuffix(key, "}:posts") {
				cp = key + ":s"
			}
			copies = append(copies, cp)
			if n, err := b.Client.ZUnionStore(ctx, cp, &rdb.ZStore{Keys: []string{key}}).Result(); err != nil || n != int64(len(sfw)) {
				t.Fatalf("copy %s: %d, %v", key, n, err)
			}
			if err := b.Client.ZUnionStore(ctx, key, &rdb.ZStore{Keys: []string{key, nparts[i]}}).Err(); err != nil {
				t.Fatal(err)
			}
			if err := b.Client.Del(ctx, nparts[i]).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for _, ver := range []string{prefix + "{r:all}:ver", prefix + "{g:pics}:ver", prefix + "{u:ivy}:posts:ver"} {
			cp := strings.Replace(ver, "}:", "}:s:", 1)
			if strings.HasSuffix(ver, ":posts:ver") {
				cp = prefix + "{u:ivy}:posts:s:ver"
			}
			copies = append(copies, cp)
			vals, err := b.Client.HGetAll(ctx, ver).Result()
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Client.HSet(ctx, cp, vals).Err(); err != nil {
				t.Fatal(err)
			}
		}
		checkParts(t, b, prefix, "layout 3", append(slices.Clone(sfw), nsfw...), nil)
		if err := b.Client.HSet(ctx, prefix+"{meta}:layout", "version", 3).Err(); err != nil {
			t.Fatal(err)
		}
		// Before the migration a viewer who hides NSFW posts reads the first parts, which still
		// hold them: the read-time guard leaves them out (the totals count them until it runs).
		for _, sort := range []store.PostSort{store.SortNew, store.SortTopDay} {
			if got, _ := sfwTitles(t, f.s, true, sort, "pics"); !slices.Equal(got, want) {
				t.Errorf("before: sort %d hides NSFW: %v, want %v", sort, got, want)
			}
			if got, total := sfwTitles(t, f.s, false, sort, ""); len(got) != 6 || total != 6 {
				t.Errorf("before: sort %d shows NSFW: %v (total %d), want all 6", sort, got, total)
			}
		}

		ran, err := f.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != store.Layout-3 || ran[0].From != 3 {
			t.Fatalf("ran %+v, %v; want the migrations from layout 3 on", ran, err)
		}
		checkParts(t, b, prefix, "migrated", sfw, nsfw)
		for _, cp := range copies {
			if n, err := b.Client.Exists(ctx, cp).Result(); err != nil || n != 0 {
				t.Errorf("the copy %s is still there (%v)", cp, err)
			}
		}
		for _, sort := range []store.PostSort{store.SortHot, store.SortNew, store.SortTopDay} {
			for _, g := range []string{"", "pics"} {
				if got, total := sfwTitles(t, f.s, true, sort, g); !slices.Equal(got, want) || total != len(want) {
					t.Errorf("migrated: sort %d group %q hides NSFW: %v (total %d), want %v", sort, g, got, total, want)
				}
				if got, total := sfwTitles(t, f.s, false, sort, g); len(got) != 6 || total != 6 {
					t.Errorf("migrated: sort %d group %q shows NSFW: %v (total %d), want all 6", sort, g, got, total)
				}
			}
		}
		// The step again (a migration cut off and resumed): the same state.
		moved, dropped, err := f.s.MigrateNSFWPartsForTest(ctx)
		if err != nil || moved != len(nsfw) || dropped != 0 {
			t.Fatalf("second run: re-indexed %d, dropped %d, %v; want %d and 0", moved, dropped, err, len(nsfw))
		}
		checkParts(t, b, prefix, "second run", sfw, nsfw)
	})
}

// allKeys returns the keys matching pattern, on every master of a cluster.
func allKeys(t *testing.T, b storetest.Backend, pattern string) []string {
	t.Helper()
	ctx := context.Background()
	cc, ok := b.Client.(*rdb.ClusterClient)
	if !ok {
		ks, err := b.Client.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	var mu sync.Mutex
	var out []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, c *rdb.Client) error {
		ks, err := c.Keys(ctx, pattern).Result()
		mu.Lock()
		out = append(out, ks...)
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLabelsExportAndDeleteReadBothParts: an account's export lists its posts from both parts of
// its post list, oldest first, and its deletion with erase makes every one of them a tombstone,
// NSFW ones too, leaving both parts empty.
func TestLabelsExportAndDeleteReadBothParts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
		sess, err := s.SignUp(ctx, "ivy", "password1")
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := range 5 {
			p, err := s.CreatePost(ctx, "ivy", store.NewPost{Title: fmt.Sprintf("post %d", i), NSFW: i%2 == 1})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, p.ID)
		}
		var buf strings.Builder
		if err := s.Export(ctx, "ivy", sess.Token, &buf); err != nil {
			t.Fatal(err)
		}
		var d exportDoc
		if err := json.Unmarshal([]byte(buf.String()), &d); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range d.Posts {
			got = append(got, p.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("the export lists posts %v, want %v (oldest first, both parts)", got, want)
		}
		if err := s.DeleteAccount(ctx, "ivy", "password1", true); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		l := s.NewLoader()
		for _, id := range want {
			if p, err := l.Post(ctx, id); err != nil || p == nil || p.Title != "[deleted]" {
				t.Errorf("post %s after the deletion: %+v, %v; want a tombstone", id, p, err)
			}
		}
		if all, err := l.Posts(ctx, store.SortNew, "", store.Window{First: 20}, nil); err != nil || len(all.Items) != 0 || all.Total != 0 {
			t.Errorf("the front page after the deletion: %v, %v; want empty", all, err)
		}
		for _, key := range []string{prefix + "{u:ivy}:posts", prefix + "{u:ivy}:n:posts"} {
			if n, err := b.Client.ZCard(ctx, key).Result(); err != nil || n != 0 {
				t.Errorf("%s holds %d posts (%v) after the deletion", key, n, err)
			}
		}
	})
}

// TestNSFWPostWithholdsItsThread: the thread of an NSFW post is withheld with the post from a
// viewer who does not show NSFW posts — its comment pages are empty, a comment read by id comes
// without its body and lists no replies, and the commenter's list leaves it out — and shown whole
// to a viewer who shows them; a post that is not NSFW shows its thread to both.
func TestNSFWPostWithholdsItsThread(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := &fixture{t: t, s: b.NewStore(t, store.Options{WriteLimit: -1}), ctx: context.Background()}
		ivy, ben := store.UserKey(f.user("ivy")), store.UserKey(f.user("ben"))
		var comments, replies []*store.Comment
		var posts []*store.Post
		for i, nsfw := range []bool{false, true} {
			p, err := f.s.CreatePost(f.ctx, ivy, store.NewPost{Title: fmt.Sprintf("post %d", i), NSFW: nsfw})
			if err != nil {
				t.Fatal(err)
			}
			c, err := f.s.CreateComment(f.ctx, ben, store.NewComment{PostID: p.ID, Body: fmt.Sprintf("comment %d", i)})
			if err != nil {
				t.Fatal(err)
			}
			r, err := f.s.CreateComment(f.ctx, ivy, store.NewComment{PostID: p.ID, ParentID: c.ID, Body: fmt.Sprintf("reply %d", i)})
			if err != nil {
				t.Fatal(err)
			}
			posts, comments, replies = append(posts, p), append(comments, c), append(replies, r)
		}
		for _, hide := range []bool{true, false} {
			for i, nsfw := range []bool{false, true} {
				withheld := hide && nsfw
				what := fmt.Sprintf("hide %v, post %d (nsfw %v)", hide, i, nsfw)
				l := f.s.NewLoader()
				l.HideNSFW(hide)
				p, err := l.Post(f.ctx, posts[i].ID)
				if err != nil || p == nil {
					t.Fatalf("%s: post: %v, %v", what, p, err)
				}
				page, err := l.PostComments(f.ctx, p, store.CommentsNew, store.Window{First: 10}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := len(page.Items); (got == 0) != withheld {
					t.Errorf("%s: the post's comments: %d, want withheld %v", what, got, withheld)
				}
				c, err := l.Comment(f.ctx, comments[i].ID)
				if err != nil || c == nil {
					t.Fatalf("%s: comment by id: %v, %v", what, c, err)
				}
				if (c.Body() == nil) != withheld {
					t.Errorf("%s: the comment's body %v, want withheld %v", what, c.Body(), withheld)
				}
				rs, err := l.Replies(f.ctx, c, store.CommentsNew, store.Window{First: 10}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := len(rs.Items); (got == 0) != withheld {
					t.Errorf("%s: the comment's replies: %d, want withheld %v", what, got, withheld)
				}
				for _, who := range []struct {
					user store.UserKey
					id   string
				}{{ben, comments[i].ID}, {ivy, replies[i].ID}} {
					list, err := l.UserComments(f.ctx, who.user, store.CommentsNew, store.Window{First: 10})
					if err != nil {
						t.Fatal(err)
					}
					listed := slices.ContainsFunc(list.Items, func(c *store.Comment) bool { return c.ID == who.id })
					if listed == withheld {
						t.Errorf("%s: %s's comments list %s: %v, want withheld %v", what, who.user, who.id, listed, withheld)
					}
				}
				// A loader that hides nothing (the store's own reads) reads the comment whole.
				if !withheld {
					continue
				}
				l2 := f.s.NewLoader()
				if c, err := l2.Comment(f.ctx, comments[i].ID); err != nil || c == nil || c.Body() == nil {
					t.Errorf("%s: the store's own read of the comment: %v, %v", what, c, err)
				}
			}
		}
	})
}
