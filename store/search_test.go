package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// search runs a post search and returns the titles of every result, paging n at a time. Every
// page's totalCount must be the number of results that paging reaches.
func (f *fixture) search(viewer string, in store.PostSearch, n int) []string {
	f.t.Helper()
	return f.searchAs(viewer, false, in, n)
}

// searchAs is search by a viewer who hides NSFW posts or not.
func (f *fixture) searchAs(viewer string, hideNSFW bool, in store.PostSearch, n int) []string {
	f.t.Helper()
	var out []string
	var totals []int
	after := ""
	for {
		l := f.s.NewLoader()
		l.HideNSFW(hideNSFW)
		if viewer != "" {
			sess, err := f.s.LogIn(f.ctx, viewer, "password1")
			if err != nil {
				f.t.Fatal(err)
			}
			v, err := f.s.AuthenticateViewer(f.ctx, sess.Token)
			if err != nil {
				f.t.Fatal(err)
			}
			l.SetBlocks(v.Blocks)
		}
		p, err := l.SearchPosts(f.ctx, in, store.Window{First: n, After: after}, nil)
		if err != nil {
			f.t.Fatalf("search %+v: %v", in, err)
		}
		for _, it := range p.Items {
			out = append(out, it.Title)
		}
		totals = append(totals, p.Total)
		if !p.HasNext {
			for _, total := range totals {
				if total != len(out) {
					f.t.Errorf("search %+v by %q: totalCount %v, but paging finds %d", in, viewer, totals, len(out))
					break
				}
			}
			return out
		}
		after = p.EndCursor()
	}
}

func (f *fixture) postBody(uid, title, body string, groups ...string) *store.Post {
	f.t.Helper()
	p, err := f.s.CreatePost(f.ctx, uk(uid), store.NewPost{Title: title, Body: body, Groups: groups})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func TestSearchPostsRelevanceAndSyntax(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice, bob := f.user("alice"), f.user("bob")
		f.postBody(alice, "Sorted sets in Redis", "Leaderboards keep scores in a sorted set.", "redis")
		f.postBody(bob, "Caching strategies", "We tried Redis once, then went back to memcached for the sessions, "+strings.Repeat("and many other words ", 20), "ops")
		f.postBody(alice, "Café crème", "A note on coffee: the crème is the foam.")
		f.postBody(bob, "Redis 的数据结构", "有序集合可以做排行榜。", "redis")
		f.postBody(alice, "Ｆｕｌｌｗｉｄｔｈ title", "width folding")
		for _, tc := range []struct {
			name string
			in   store.PostSearch
			want []string
		}{
			{"title above body", store.PostSearch{Query: "redis "}, []string{"Sorted sets in Redis", "Redis 的数据结构", "Caching strategies"}},
			{"every term", store.PostSearch{Query: "redis sorted "}, []string{"Sorted sets in Redis"}},
			{"prefix of the last word", store.PostSearch{Query: "leaderb"}, []string{"Sorted sets in Redis"}},
			{"phrase", store.PostSearch{Query: `"sorted set"`}, []string{"Sorted sets in Redis"}},
			{"phrase in order only", store.PostSearch{Query: `"set sorted"`}, nil},
			{"accents", store.PostSearch{Query: "cafe creme "}, []string{"Café crème"}},
			{"width", store.PostSearch{Query: "fullwidth"}, []string{"Ｆｕｌｌｗｉｄｔｈ title"}},
			{"chinese", store.PostSearch{Query: "数据结构"}, []string{"Redis 的数据结构"}},
			{"chinese in the body", store.PostSearch{Query: "排行榜"}, []string{"Redis 的数据结构"}},
			{"chinese out of order", store.PostSearch{Query: "构结数据"}, nil},
			{"group", store.PostSearch{Query: "redis", Group: "ops"}, []string{"Caching strategies"}},
			{"author", store.PostSearch{Query: "redis", Author: "ALICE"}, []string{"Sorted sets in Redis"}},
			{"new", store.PostSearch{Query: "redis", Sort: store.SearchNew}, []string{"Redis 的数据结构", "Caching strategies", "Sorted sets in Redis"}},
			{"nothing", store.PostSearch{Query: "postgres"}, nil},
		} {
			for _, n := range []int{1, 20} {
				if got := f.search("", tc.in, n); !slices.Equal(got, tc.want) {
					t.Errorf("%s (pages of %d): %q, want %q", tc.name, n, got, tc.want)
				}
			}
		}
		for _, bad := range []string{"", "  ", "one two three four five six seven eight nine", strings.Repeat("x", 201)} {
			if _, err := f.s.NewLoader().SearchPosts(f.ctx, store.PostSearch{Query: bad}, store.Window{First: 5}, nil); !store.IsKind(err, store.KindInvalid) {
				t.Errorf("query %q: %v, want KindInvalid", bad, err)
			}
		}
	})
}

func TestSearchPostsIsExact(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice, bob, carol := f.user("alice"), f.user("bob"), f.user("carol")
		f.admin("admin")
		edited := f.postBody(alice, "Kestrel notes", "about falcons")
		deleted := f.postBody(alice, "Kestrel deleted", "falcons")
		removed := f.postBody(bob, "Kestrel removed", "falcons", "birds")
		f.postBody(carol, "Kestrel by carol", "falcons")
		want := func(viewer, q string, titles ...string) {
			t.Helper()
			got := f.search(viewer, store.PostSearch{Query: q, Sort: store.SearchNew}, 10)
			if !slices.Equal(got, titles) {
				t.Errorf("%s searching %q: %q, want %q", viewer, q, got, titles)
			}
		}
		want("", "kestrel", "Kestrel by carol", "Kestrel removed", "Kestrel deleted", "Kestrel notes")

		// An edit is searchable as soon as it is acknowledged, and its old words no longer find it.
		title := "Osprey notes"
		if _, err := f.s.EditPost(f.ctx, uk(alice), edited.ID, store.PostEdit{Title: &title}); err != nil {
			t.Fatal(err)
		}
		want("", "osprey", "Osprey notes")
		want("", "kestrel", "Kestrel by carol", "Kestrel removed", "Kestrel deleted")

		if err := f.s.DeletePost(f.ctx, uk(alice), deleted.ID); err != nil {
			t.Fatal(err)
		}
		want("", "kestrel", "Kestrel by carol", "Kestrel removed")

		if _, err := f.s.RemovePost(f.ctx, uk("admin"), removed.ID, "spam"); err != nil {
			t.Fatal(err)
		}
		want("", "kestrel", "Kestrel by carol")

		if _, err := f.s.Block(f.ctx, uk(alice), uk(carol)); err != nil {
			t.Fatal(err)
		}
		want(alice, "kestrel")
		want(bob, "kestrel", "Kestrel by carol")
	})
}

// totalCount counts exactly what the viewer could page through: not the NSFW posts a viewer hides,
// nor posts older than since, out of the group asked for, or whose edit took away a word or a
// phrase (search checks totals on every page: see fixture.search).
func TestSearchTotalCountIsExact(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clock := storetest.NewClock()
		f := newFixture(t, b, store.Options{WriteLimit: -1, Now: clock.Now})
		alice, bob := f.user("alice"), f.user("bob")
		if _, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: "Grebe display", Body: "a red grebe", NSFW: true}); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Minute)
		since := clock.Now()
		moved := f.postBody(alice, "Grebe nest", "a great crested grebe", "birds")
		phrase := f.postBody(bob, "Grebe dive", "a crested great grebe")
		want := func(hide bool, in store.PostSearch, titles ...string) {
			t.Helper()
			in.Sort = store.SearchNew
			if got := f.searchAs("", hide, in, 1); !slices.Equal(got, titles) {
				t.Errorf("%+v (hiding NSFW: %v): %q, want %q", in, hide, got, titles)
			}
		}
		want(false, store.PostSearch{Query: "grebe"}, "Grebe dive", "Grebe nest", "Grebe display")
		want(true, store.PostSearch{Query: "grebe"}, "Grebe dive", "Grebe nest")
		want(false, store.PostSearch{Query: "grebe", Since: &since}, "Grebe dive", "Grebe nest")
		want(false, store.PostSearch{Query: `"great crested"`}, "Grebe nest")
		want(false, store.PostSearch{Query: "grebe", Group: "birds"}, "Grebe nest")

		// The post leaves its group and loses a phrase; another gains it by an edit.
		if _, err := f.s.SetPostGroups(f.ctx, uk(alice), moved.ID, nil, []string{"birds"}); err != nil {
			t.Fatal(err)
		}
		body := "a little grebe"
		if _, err := f.s.EditPost(f.ctx, uk(alice), moved.ID, store.PostEdit{Body: &body}); err != nil {
			t.Fatal(err)
		}
		body = "a great crested grebe, after all"
		if _, err := f.s.EditPost(f.ctx, uk(bob), phrase.ID, store.PostEdit{Body: &body}); err != nil {
			t.Fatal(err)
		}
		want(false, store.PostSearch{Query: "grebe", Group: "birds"})
		want(false, store.PostSearch{Query: `"great crested"`}, "Grebe dive")
		want(false, store.PostSearch{Query: "crested"}, "Grebe dive")
		want(false, store.PostSearch{Query: "gre"}, "Grebe dive", "Grebe nest", "Grebe display")
		want(true, store.PostSearch{Query: "red"}) // only in the NSFW post
	})
}

func TestSearchScheduledPostAppearsWhenPublished(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clock := storetest.NewClock()
		f := newFixture(t, b, store.Options{WriteLimit: -1, Now: clock.Now})
		alice := f.user("alice")
		at := clock.Now().Add(2 * time.Minute)
		if _, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: "Heron sighting", PublishAt: at}); err != nil {
			t.Fatal(err)
		}
		if got := f.search(alice, store.PostSearch{Query: "heron"}, 10); len(got) != 0 {
			t.Fatalf("an unpublished post was found: %q", got)
		}
		clock.Add(2*time.Minute + time.Second)
		settle(t, f.s)
		if got := f.search("", store.PostSearch{Query: "heron"}, 10); !slices.Equal(got, []string{"Heron sighting"}) {
			t.Fatalf("after publishing: %q", got)
		}
	})
}

func TestSearchPagingBothWaysAndCursors(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		for i := range 12 {
			f.postBody(alice, "Plover "+strings.Repeat("plover ", i%4), strings.Repeat("word ", i))
		}
		in := store.PostSearch{Query: "plover"}
		forward := f.search("", in, 5)
		if len(forward) != 12 {
			t.Fatalf("forward: %d results", len(forward))
		}
		// Backwards from the end, three at a time, gives the same order.
		var back []string
		before := ""
		for {
			p, err := f.s.NewLoader().SearchPosts(f.ctx, in, store.Window{Last: 3, Before: before}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var titles []string
			for _, it := range p.Items {
				titles = append(titles, it.Title)
			}
			back = append(titles, back...)
			if !p.HasPrev {
				break
			}
			before = p.StartCursor()
		}
		if !slices.Equal(back, forward) {
			t.Fatalf("backward %q\nforward %q", back, forward)
		}
		p, err := f.s.NewLoader().SearchPosts(f.ctx, in, store.Window{First: 2}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 12 {
			t.Fatalf("total %d, want 12", p.Total)
		}
		// A cursor of one search is refused by another.
		other := store.PostSearch{Query: "plover", Sort: store.SearchNew}
		if _, err := f.s.NewLoader().SearchPosts(f.ctx, other, store.Window{First: 2, After: p.EndCursor()}, nil); !store.IsKind(err, store.KindInvalid) {
			t.Fatalf("a cursor of another search: %v", err)
		}
	})
}

func TestSearchTopByVotes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice, bob, carol := f.user("alice"), f.user("bob"), f.user("carol")
		one := f.postBody(alice, "Grebe one", "")
		two := f.postBody(alice, "Grebe two", "")
		f.postBody(alice, "Grebe three", "")
		f.vote(bob, two.ID, 1)
		f.vote(carol, two.ID, 1)
		f.vote(bob, one.ID, 1)
		got := f.search("", store.PostSearch{Query: "grebe", Sort: store.SearchTop}, 2)
		if want := []string{"Grebe two", "Grebe one", "Grebe three"}; !slices.Equal(got, want) {
			t.Fatalf("top: %q, want %q", got, want)
		}
	})
}

// A windowed TOP is sort TOP with since: a post published a millisecond before since is out of
// it, one published at since is in, in pages and totalCount alike, for posts and comments.
func TestSearchTopSinceToTheMillisecond(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clock := storetest.NewClock()
		f := newFixture(t, b, store.Options{WriteLimit: -1, Now: clock.Now})
		alice, bob := f.user("alice"), f.user("bob")
		old := f.postBody(alice, "Grebe before", "")
		clock.Add(time.Millisecond)
		since := clock.Now()
		in := f.postBody(alice, "Grebe at", "")
		clock.Add(time.Millisecond)
		f.postBody(alice, "Grebe after", "")
		f.vote(bob, old.ID, 1)
		f.vote(bob, in.ID, 1)
		got := f.search("", store.PostSearch{Query: "grebe", Sort: store.SearchTop, Since: &since}, 1)
		if want := []string{"Grebe at", "Grebe after"}; !slices.Equal(got, want) {
			t.Fatalf("top since %v: %q, want %q", since, got, want)
		}
		before := since.Add(-time.Millisecond)
		got = f.search("", store.PostSearch{Query: "grebe", Sort: store.SearchTop, Since: &before}, 1)
		if want := []string{"Grebe at", "Grebe before", "Grebe after"}; !slices.Equal(got, want) { // ties: the newer first
			t.Fatalf("top since %v: %q, want %q", before, got, want)
		}
		var texts []string
		for _, at := range []time.Time{clock.Now(), clock.Now().Add(time.Millisecond)} {
			clock.Set(at)
			c, err := f.s.CreateComment(f.ctx, uk(bob), store.NewComment{PostID: old.ID, Body: fmt.Sprint("grebe comment ", len(texts))})
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, c.Text)
		}
		cut := clock.Now()
		p, err := f.s.NewLoader().SearchComments(f.ctx, store.CommentSearch{Query: "grebe", Sort: store.SearchTop, Since: &cut}, store.Window{First: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 1 || p.Items[0].Text != texts[1] || p.Total != 1 {
			t.Fatalf("comments since %v: %d items, total %d, want %q alone", cut, len(p.Items), p.Total, texts[1])
		}
	})
}

func TestSearchRebuildReproducesIndex(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		for i := range 8 {
			f.postBody(alice, "Sandpiper "+string(rune('a'+i)), "shore birds of the "+strings.Repeat("coast ", i))
		}
		queries := []store.PostSearch{{Query: "sandpiper"}, {Query: "coast shore"}, {Query: "sand"}, {Query: "birds", Sort: store.SearchNew}}
		var before [][]string
		for _, q := range queries {
			before = append(before, f.search("", q, 3))
		}
		written := store.SearchIndexDump(t, f.s)
		if _, err := f.s.Rebuild(f.ctx); err != nil {
			t.Fatal(err)
		}
		// With no edits, the index the writes built and the one rebuild derives are the same.
		if rebuilt := store.SearchIndexDump(t, f.s); !slices.Equal(written, rebuilt) {
			t.Fatalf("rebuild derived another index:\n%q\n%q", written, rebuilt)
		}
		for i, q := range queries {
			if got := f.search("", q, 3); !slices.Equal(got, before[i]) {
				t.Errorf("after rebuild %q: %q, want %q", q.Query, got, before[i])
			}
		}
		dump1 := store.SearchIndexDump(t, f.s)
		if _, err := f.s.Rebuild(f.ctx); err != nil {
			t.Fatal(err)
		}
		if dump2 := store.SearchIndexDump(t, f.s); !slices.Equal(dump1, dump2) {
			t.Fatalf("a second rebuild wrote another index:\n%q\n%q", dump1, dump2)
		}
	})
}

func TestSearchOff(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1, NoSearch: true})
		alice := f.user("alice")
		f.postBody(alice, "Curlew", "")
		if _, err := f.s.NewLoader().SearchPosts(f.ctx, store.PostSearch{Query: "curlew"}, store.Window{First: 5}, nil); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("search with the index off: %v", err)
		}
		if dump := store.SearchIndexDump(t, f.s); len(dump) != 0 {
			t.Fatalf("the index was written with search off: %q", dump)
		}
	})
}

// The reference articles behind agora's Redis patterns are Chinese: a Chinese query finds them.
func TestSearchFindsTheChineseReferenceArticles(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "reference")
	files, _ := filepath.Glob(filepath.Join(dir, "00*.txt"))
	if len(files) == 0 {
		t.Skip("../shared/reference is not beside the repository")
	}
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		for _, file := range files {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			body := []rune(string(text))
			if len(body) > store.MaxPostBodyRunes {
				body = body[:store.MaxPostBodyRunes]
			}
			f.postBody(alice, filepath.Base(file), string(body))
		}
		for q, want := range map[string]string{
			"二级评论":   "000_55c8cc6eb01724d2.txt",
			"投票后端":   "001_b46bed4c181bab20.txt",
			"數據結構存儲": "002_7b30efd68e3da2ce.txt",
			"消费队列":   "003_eb4eb5420de19c1a.txt",
			"好友列表":   "004_d01b67da35016ace.txt",
		} {
			got := f.search("", store.PostSearch{Query: q}, 10)
			if len(got) == 0 || got[0] != want {
				t.Errorf("%q found %q, want %s first", q, got, want)
			}
		}
	})
}

func TestSearchComments(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice, bob := f.user("alice"), f.user("bob")
		f.admin("admin")
		p1 := f.postBody(alice, "First", "")
		p2 := f.postBody(alice, "Second", "")
		comment := func(uid, pid, body string) *store.Comment {
			t.Helper()
			c, err := f.s.CreateComment(f.ctx, uk(uid), store.NewComment{PostID: pid, Body: body})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		find := func(in store.CommentSearch) []string {
			t.Helper()
			var out []string
			var totals []int
			after := ""
			for {
				p, err := f.s.NewLoader().SearchComments(f.ctx, in, store.Window{First: 2, After: after})
				if err != nil {
					t.Fatalf("search %+v: %v", in, err)
				}
				for _, c := range p.Items {
					out = append(out, c.Text)
				}
				totals = append(totals, p.Total)
				if !p.HasNext {
					for _, total := range totals {
						if total != len(out) {
							t.Errorf("search %+v: totalCount %v, but paging finds %d", in, totals, len(out))
							break
						}
					}
					return out
				}
				after = p.EndCursor()
			}
		}
		a := comment(alice, p1.ID, "Wagtails wag their tails")
		comment(bob, p1.ID, "a wagtail in the garden")
		c := comment(bob, p2.ID, "wagtail song at dawn")
		gone := comment(alice, p2.ID, "wagtail to delete")
		if got := find(store.CommentSearch{Query: "wagtail ", Sort: store.SearchNew}); !slices.Equal(got, []string{"wagtail to delete", "wagtail song at dawn", "a wagtail in the garden"}) {
			t.Fatalf("new: %q", got)
		}
		if got := find(store.CommentSearch{Query: "wagtail", PostID: p2.ID, Author: "bob"}); !slices.Equal(got, []string{"wagtail song at dawn"}) {
			t.Fatalf("on post 2 by bob: %q", got)
		}
		if err := f.s.DeleteComment(f.ctx, uk(alice), gone.ID); err != nil {
			t.Fatal(err)
		}
		body := "plain text now"
		if _, err := f.s.EditComment(f.ctx, uk(bob), c.ID, body); err != nil {
			t.Fatal(err)
		}
		if got := find(store.CommentSearch{Query: "wagtail "}); !slices.Equal(got, []string{"a wagtail in the garden"}) {
			t.Fatalf("after a delete and an edit: %q", got)
		}
		if got := find(store.CommentSearch{Query: "plain"}); !slices.Equal(got, []string{"plain text now"}) {
			t.Fatalf("the edit's words: %q", got)
		}
		if got := find(store.CommentSearch{Query: "wagtails"}); !slices.Equal(got, []string{a.Text}) {
			t.Fatalf("wagtails: %q", got)
		}
		if _, err := f.s.RemovePost(f.ctx, uk("admin"), p1.ID, "spam"); err != nil {
			t.Fatal(err)
		}
		if got := find(store.CommentSearch{Query: "wagtail"}); len(got) != 0 {
			t.Fatalf("comments of a removed post: %q", got)
		}
		if _, err := f.s.Rebuild(f.ctx); err != nil {
			t.Fatal(err)
		}
		if got := find(store.CommentSearch{Query: "plain"}); !slices.Equal(got, []string{"plain text now"}) {
			t.Fatalf("after rebuild: %q", got)
		}
	})
}

func TestSearchIndexRepairedAfterACutOffWrite(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clock := storetest.NewClock()
		f := newFixture(t, b, store.Options{WriteLimit: -1, Now: clock.Now})
		alice := f.user("alice")
		p := f.postBody(alice, "Dunlin", "")
		// The post's write is cut off after its atomic step: its repair note is left due and its
		// index is lost.
		store.CutOffPostIndex(t, f.s, p.ID)
		if got := f.search("", store.PostSearch{Query: "dunlin"}, 5); len(got) != 0 {
			t.Fatalf("the index was not cut: %q", got)
		}
		clock.Add(store.RepairGrace + time.Second)
		settle(t, f.s)
		if got := f.search("", store.PostSearch{Query: "dunlin"}, 5); !slices.Equal(got, []string{"Dunlin"}) {
			t.Fatalf("after repair: %q", got)
		}
	})
}

// On a Cluster the index spreads over the masters: its buckets are hash tags of their own.
func TestSearchIndexSpreadsOverTheCluster(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		cc, ok := b.Client.(*rdb.ClusterClient)
		if !ok {
			t.Skip("a Cluster only")
		}
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		for i := range 20 {
			f.postBody(alice, fmt.Sprintf("Spread %d", i), "turnstone sanderling knot redshank dotterel whimbrel godwit curlew")
		}
		var mu sync.Mutex
		masters := 0
		err := cc.ForEachMaster(f.ctx, func(ctx context.Context, c *rdb.Client) error {
			iter := c.Scan(ctx, 0, f.s.Options().Prefix+"{sx:p:*", 1000).Iterator()
			if iter.Next(ctx) {
				mu.Lock()
				masters++
				mu.Unlock()
			}
			return iter.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		if masters < 2 {
			t.Fatalf("the index sits on %d master(s)", masters)
		}
		if got := f.search("", store.PostSearch{Query: "godwit curlew"}, 7); len(got) != 20 {
			t.Fatalf("found %d of 20", len(got))
		}
	})
}

func TestSearchGroupsAndUsers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice, bob := f.user("Alice_Birder"), f.user("bob")
		desc := "Field notes about owls and other birds of prey"
		if _, err := f.s.CreateGroup(f.ctx, uk(alice), "owls", &desc); err != nil {
			t.Fatal(err)
		}
		f.postBody(bob, "A group made by a post", "", "night-herons")
		bio := "I watch birds at night"
		if _, err := f.s.UpdateProfile(f.ctx, uk(bob), store.ProfileEdit{Bio: &bio}); err != nil {
			t.Fatal(err)
		}
		groups := func(q string) []string {
			t.Helper()
			p, err := f.s.NewLoader().SearchGroups(f.ctx, q, store.Window{First: 10})
			if err != nil {
				t.Fatalf("groups %q: %v", q, err)
			}
			var out []string
			for _, g := range p.Items {
				out = append(out, g.Name)
			}
			if p.Total != len(out) {
				t.Errorf("groups %q: totalCount %d, found %d", q, p.Total, len(out))
			}
			return out
		}
		users := func(q string) []string {
			t.Helper()
			p, err := f.s.NewLoader().SearchUsers(f.ctx, q, store.Window{First: 10})
			if err != nil {
				t.Fatalf("users %q: %v", q, err)
			}
			var out []string
			for _, u := range p.Items {
				out = append(out, u.Name)
			}
			if p.Total != len(out) {
				t.Errorf("users %q: totalCount %d, found %d", q, p.Total, len(out))
			}
			return out
		}
		for _, tc := range []struct {
			got, want []string
		}{
			{groups("owls"), []string{"owls"}},
			{groups("birds of prey"), []string{"owls"}},
			{groups("heron"), []string{"night-herons"}},
			{groups("night"), []string{"night-herons"}},
			{users("alice"), []string{"Alice_Birder"}},
			{users("birder"), []string{"Alice_Birder"}},
			{users("birds night"), []string{"bob"}},
		} {
			if !slices.Equal(tc.got, tc.want) {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		}
		// A name outranks a bio: "birds" is in bob's bio, "birder" prefixes alice's name.
		if got := users("bird"); !slices.Equal(got, []string{"Alice_Birder", "bob"}) {
			t.Errorf("bird: %q", got)
		}
		// Edits are searchable at once, and old words no longer find them.
		desc2 := "Barn owls only"
		if _, err := f.s.UpdateGroup(f.ctx, uk(alice), "owls", store.GroupEdit{Description: &desc2}); err != nil {
			t.Fatal(err)
		}
		if got := groups("prey"); len(got) != 0 {
			t.Errorf("an old description still finds the group: %q", got)
		}
		if got := groups("barn"); !slices.Equal(got, []string{"owls"}) {
			t.Errorf("barn: %q", got)
		}
		title := "The night watch"
		if _, err := f.s.UpdateGroup(f.ctx, uk(alice), "owls", store.GroupEdit{Title: &title}); err != nil {
			t.Fatal(err)
		}
		if got := groups("watch"); !slices.Equal(got, []string{"owls"}) {
			t.Errorf("a group's title: %q", got)
		}
		if _, err := f.s.Rebuild(f.ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RebuildUsers(f.ctx); err != nil {
			t.Fatal(err)
		}
		if got := groups("barn"); !slices.Equal(got, []string{"owls"}) {
			t.Errorf("barn after rebuild: %q", got)
		}
		if got := users("birds night"); !slices.Equal(got, []string{"bob"}) {
			t.Errorf("bio after rebuild: %q", got)
		}
	})
}

// A search costs a fixed number of round trips whatever the page size: the counts, the prefix's
// words and the lists (the ones this process guesses it needs) in one, then the page's posts;
// its totalCount one more per 1,000 candidates (here 30), when the response shows it. What the
// guess misses — a block begun since, a word new to the dictionary — costs one more, and the
// answer stays exact.
func TestSearchRoundTrips(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		cb, rt := b.Counted(t)
		f := newFixture(t, cb, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		for i := range 30 {
			f.postBody(alice, fmt.Sprintf("Phalarope %d", i), "red-necked and grey")
		}
		search := func(n int, noTotal bool) (*store.Page[*store.Post], int64) {
			t.Helper()
			rt.Reset()
			p, err := f.s.NewLoader().SearchPosts(f.ctx, store.PostSearch{Query: "phalarope gre"}, store.Window{First: n, NoTotal: noTotal}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return p, rt.Count()
		}
		if _, n := search(1, true); n != 3 {
			t.Fatalf("the process's first search: %d round trips, want 3", n)
		}
		for _, tc := range []struct {
			noTotal bool
			want    int64
		}{{true, 2}, {false, 3}} {
			for _, n := range []int{1, 5, 25} {
				p, trips := search(n, tc.noTotal)
				if len(p.Items) != n {
					t.Fatalf("page of %d: %d items", n, len(p.Items))
				}
				if want := map[bool]int{true: 0, false: 30}[tc.noTotal]; p.Total != want {
					t.Fatalf("page of %d: total %d, want %d", n, p.Total, want)
				}
				if trips != tc.want {
					t.Fatalf("page of %d (no total: %v): %d round trips, want %d", n, tc.noTotal, trips, tc.want)
				}
			}
		}
		// The next post begins block 1 (posts 16384…) with a word new to the dictionary.
		if err := b.Client.Set(f.ctx, f.s.Options().Prefix+"seq:post", 20_000, 0).Err(); err != nil {
			t.Fatal(err)
		}
		f.postBody(alice, "Phalarope and greenshank", "")
		p, trips := search(1, true)
		if len(p.Items) != 1 || p.Items[0].Title != "Phalarope and greenshank" || trips != 3 {
			t.Fatalf("after a new block and a new word: %d posts in %d round trips, want the new post in 3", len(p.Items), trips)
		}
		if p, trips := search(31, false); len(p.Items) != 31 || p.Total != 31 || trips != 3 {
			t.Fatalf("again: %d posts of %d in %d round trips, want 31 in 3", len(p.Items), p.Total, trips)
		}
		// A response without the bodies reads none, in as many round trips; an edited result's
		// body is read after its hash, to match it, in one more.
		noBody := func() *store.Needs { return &store.Needs{PostFieldsChosen: true} }
		for _, edited := range []bool{false, true} {
			if edited {
				if _, err := f.s.EditPost(f.ctx, uk(alice), p.Items[0].ID, store.PostEdit{Body: ptr("red-necked, grey and edited")}); err != nil {
					t.Fatal(err)
				}
			}
			rt.Reset()
			p, err := f.s.NewLoader().SearchPosts(f.ctx, store.PostSearch{Query: "phalarope gre"}, store.Window{First: 5, NoTotal: true}, noBody)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int64{false: 2, true: 3}[edited]; len(p.Items) != 5 || rt.Count() != want {
				t.Fatalf("without bodies (an edited result: %v): %d posts in %d round trips, want 5 in %d", edited, len(p.Items), rt.Count(), want)
			}
		}
	})
}

// Groups and users found with the same score page by name: a cursor names the group or user,
// so that paging neither repeats nor skips one.
func TestSearchNamesPageOnTies(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		var want []string
		for _, g := range []string{"tern-a", "tern-b", "tern-c", "tern-d", "tern-e"} {
			if _, err := f.s.CreateGroup(f.ctx, uk(alice), g, nil); err != nil {
				t.Fatal(err)
			}
			want = append(want, g)
		}
		var got []string
		after := ""
		for range 10 {
			p, err := f.s.NewLoader().SearchGroups(f.ctx, "tern", store.Window{First: 2, After: after})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range p.Items {
				got = append(got, g.Name)
			}
			if !p.HasNext {
				break
			}
			after = p.EndCursor()
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("paging by 2: %q, want each of %q once", got, want)
		}
	})
}

// TestSearchTopTwiceInOneLoader: searches by TOP that read the same posts' votes in one response
// (two aliases of one search) rank alike: the second does not count the NSFW part's votes again
// on the loader's shared replies.
func TestSearchTopTwiceInOneLoader(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice, bob, carol := f.user("alice"), f.user("bob"), f.user("carol")
		n, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: "Grebe nsfw", NSFW: true})
		if err != nil {
			t.Fatal(err)
		}
		s := f.postBody(alice, "Grebe sfw", "")
		f.vote(bob, s.ID, 1)
		f.vote(carol, s.ID, 1)
		f.vote(bob, n.ID, 1)
		l := f.s.NewLoader() // shows NSFW posts
		var first []string
		for i := range 3 {
			p, err := l.SearchPosts(f.ctx, store.PostSearch{Query: "grebe", Sort: store.SearchTop}, store.Window{First: 5}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range p.Items {
				got = append(got, it.Title)
			}
			got = append(got, p.Cursors...)
			if i == 0 {
				first = got
				if len(p.Items) != 2 || p.Items[0].Title != "Grebe sfw" {
					t.Fatalf("the first search: %q, want the safe post (2 votes) first", got)
				}
			} else if !slices.Equal(got, first) {
				t.Errorf("search %d in the same loader: %q, the first: %q", i+1, got, first)
			}
		}
	})
}

// A search whose response shows no post body still matches the words of the body: an edited
// post, or a phrase, is checked against its text as it is now, whatever fields the response
// shows (layout 5 reads no body for a listing that shows none).
func TestSearchMatchesTheBodyWhenTheResponseShowsNone(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		f.postBody(alice, "Grebe dive", "a great crested grebe")
		edited := f.postBody(alice, "Grebe nest", "a little grebe")
		body := "a little grebe on its osprey-free nest"
		if _, err := f.s.EditPost(f.ctx, uk(alice), edited.ID, store.PostEdit{Body: &body}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ query, want string }{
			{`"great crested"`, "Grebe dive"}, // a phrase is checked against the text
			{"osprey", "Grebe nest"},          // so is an edited post
		} {
			for _, n := range []*store.Needs{nil, {PostFieldsChosen: true, PostBody: true}, {PostFieldsChosen: true}} {
				page, err := f.s.NewLoader().SearchPosts(f.ctx, store.PostSearch{Query: tc.query, Sort: store.SearchNew},
					store.Window{First: 5}, func() *store.Needs { return n })
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, p := range page.Items {
					got = append(got, p.Title)
				}
				if !slices.Equal(got, []string{tc.want}) || page.Total != 1 {
					t.Errorf("search %q with needs %+v: %q (total %d), want %q (total 1)", tc.query, n, got, page.Total, tc.want)
				}
			}
		}
	})
}

// bodyReads counts the commands that read a post's body (an HMGET of its texts' field "b"),
// each one in a pipeline or alone.
// bodyReads counts the post bodies a client reads (HMGET of a thread's bodies hash, field "b"),
// and their bytes.
// bodyReads counts the reads of post bodies (n, bytes) and the bytes of comment bodies read
// (commentBytes) from the threads' bodies hashes.
type bodyReads struct{ n, bytes, commentBytes atomic.Int64 }

// count counts the body reads among cmds, once their replies are in.
func (r *bodyReads) count(cmds []rdb.Cmder) {
	for _, c := range cmds {
		a := c.Args()
		if c.Name() != "hmget" || len(a) < 3 {
			continue
		}
		key, _ := a[1].(string)
		if k, ok := a[1].(*string); ok { // the loader's keys go by address
			key = *k
		}
		into := &r.commentBytes
		switch {
		case len(a) == 3 && a[2] == "b":
			r.n.Add(1)
			into = &r.bytes
		case !strings.HasSuffix(key, ":c:body"):
			continue
		}
		if sc, ok := c.(*rdb.StringSliceCmd); ok { // the loader's HMGET (sendHMGET)
			for _, v := range sc.Val() {
				into.Add(int64(len(v)))
			}
		}
	}
}

// newBodyReadsFixture returns a fixture on b over a client of its own, whose post body reads
// the returned bodyReads counts.
func newBodyReadsFixture(t *testing.T, b storetest.Backend) (*fixture, *bodyReads) {
	t.Helper()
	reads := &bodyReads{}
	b = b.Hooked(t, storetest.After(reads.count))
	return newFixture(t, b, store.Options{WriteLimit: -1, SearchTextBytes: store.SearchTextBytes}), reads
}

// TestSearchTextWorkIsBoundedInBytes: a page of a phrase search and its totalCount each match at
// most about store.SearchTextBytes of their candidates' text, however long those are — posts of
// 40,000 characters planted with a phrase's words in another order do not make one query read
// and analyze every one of them, also behind short decoys that make the first texts look cheap —
// and a match among them is still found; a page stopped by the budget goes on from where it
// stopped.
func TestSearchTextWorkIsBoundedInBytes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f, reads := newBodyReadsFixture(t, b)
		var matched atomic.Int64 // the bytes of text the searches matched
		f.s.OnTextMatch(func(n int) { matched.Add(int64(n)) })
		alice := f.user("alice")
		f.postBody(alice, "The old match", "a tern gull")                           // the oldest: past the page's budget
		long := "gull " + strings.Repeat("and a tern ", (store.TestTextRunes-5)/11) // never "tern gull"
		plant := func(n int, title, body string) {
			t.Helper()
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Go(func() {
					for i := w; i < n; i += 4 {
						if _, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: fmt.Sprintf("%s %d", title, i), Body: body}); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		}
		const planted = 120
		plant(planted, "Seabirds", long)
		// Each of a page and its count matches at most its budget and one text more.
		most := int64(store.SearchTextBytes + len(long) + len("Seabirds 100"))
		search := func(what string, w store.Window) *store.Page[*store.Post] {
			t.Helper()
			reads.bytes.Store(0)
			matched.Store(0)
			p, err := f.s.NewLoader().SearchPosts(f.ctx, store.PostSearch{Query: `"tern gull"`, Sort: store.SearchNew}, w, nil)
			if err != nil {
				t.Fatal(err)
			}
			limit := most
			if !w.NoTotal {
				limit *= 2
			}
			if n := matched.Load(); n > limit || n == 0 {
				t.Errorf("%s: %d bytes of text matched, want at most %d", what, n, limit)
			}
			return p
		}
		for _, decoys := range []int{0, 40} {
			newest := "The new match"
			if decoys > 0 {
				// Short posts with the words but not the phrase, newer than the long ones: the
				// first texts matched are short, and the long ones behind them still cost no more.
				plant(decoys, "Decoy", "gull and a tern")
				newest = "The newest match"
			}
			f.postBody(alice, newest, "a tern gull") // the newest: found in the first round
			what := fmt.Sprintf("with %d decoys", decoys)
			p := search(what+", the first page and its count", store.Window{First: 20})
			if decoys == 0 {
				// What the page and its count read: their budgets, the page's overrun by at most
				// one text (its first round of 21 is within it) and the count's by at most its
				// first batch (before a text's cost is known).
				limit := int64(2*store.SearchTextBytes + (store.SearchTextFirst+2)*len(long))
				if n := reads.bytes.Load(); n > limit || n == 0 {
					t.Errorf("%s: %d bytes of bodies read for %d posts of %d bytes, want at most %d", what, n, planted, len(long), limit)
				}
			}
			if len(p.Items) == 0 || p.Items[0].Title != newest || !p.HasNext || p.EndCursor() == "" {
				t.Fatalf("%s: the first page: %d results, hasNext %v, endCursor %q; want the newest match first and a page to go on",
					what, len(p.Items), p.HasNext, p.EndCursor())
			}
			if p.Total < 1 || p.Total > planted+decoys+3 {
				t.Errorf("%s: totalCount %d, want an estimate between 1 and %d", what, p.Total, planted+decoys+3)
			}
			// Paging on from where each page stopped finds the old match, each page within its
			// budget, both ways.
			after, found := p.EndCursor(), false
			var before string
			for range planted + decoys {
				p := search(what+", a page after "+after, store.Window{First: 100, After: after, NoTotal: true})
				for _, it := range p.Items {
					found = found || it.Title == "The old match"
				}
				if !p.HasNext {
					before = p.EndCursor()
					break
				}
				after = p.EndCursor()
			}
			if !found {
				t.Errorf("%s: paging on did not reach the oldest match", what)
			}
			got := map[string]bool{}
			for range planted + decoys {
				p := search(what+", a page before "+before, store.Window{Last: 100, Before: before, NoTotal: true})
				for _, it := range p.Items {
					got[it.Title] = true
				}
				if !p.HasPrev {
					break
				}
				before = p.StartCursor()
			}
			if !got[newest] {
				t.Errorf("%s: paging back from the end did not reach the newest match: %v", what, got)
			}
		}
	})
}

// TestSearchHiddenCandidatesCostTheirBodies: a search page reads a candidate's body only when the
// response shows it or the query matches it, and the bodies it reads of candidates the viewer
// cannot see count against its text budget like those it matches — posts of 40,000 characters
// a viewer never finds (NSFW for one who hides it, scheduled) do not make one page read them by
// the megabyte — and paging on still reaches the visible match behind them.
func TestSearchHiddenCandidatesCostTheirBodies(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f, reads := newBodyReadsFixture(t, b)
		alice := f.user("alice")
		f.postBody(alice, "The visible tern", "a tern over the bay") // the oldest: behind every hidden one
		long := strings.Repeat("a tern and a gull ", store.TestTextRunes/18)
		const nsfw, scheduled = 110, 10 // a user schedules 10 posts at most
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < nsfw+scheduled; i += 4 {
					np := store.NewPost{Title: fmt.Sprintf("Hidden %d", i), Body: long, NSFW: i < nsfw}
					if i >= nsfw {
						np.PublishAt = time.Now().Add(24 * time.Hour)
					}
					if _, err := f.s.CreatePost(f.ctx, uk(alice), np); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		showBody := func() *store.Needs { return &store.Needs{PostFieldsChosen: true, PostBody: true} }
		noBody := func() *store.Needs { return &store.Needs{PostFieldsChosen: true} }
		for _, tc := range []struct {
			name  string
			needs func() *store.Needs
			most  int64 // bytes of bodies one page may read
		}{
			// The first round (the page and one more) is read whole, as a listing's page of its
			// size would be; the rounds after it as far as the budget pays, one text past it.
			{"the response shows bodies", showBody, int64(21*len(long) + store.SearchTextBytes + len(long))},
			{"the response shows no body", noBody, 0},
		} {
			l := f.s.NewLoader()
			l.HideNSFW(true)
			reads.bytes.Store(0)
			p, err := l.SearchPosts(f.ctx, store.PostSearch{Query: "tern", Sort: store.SearchNew}, store.Window{First: 20, NoTotal: true}, tc.needs)
			if err != nil {
				t.Fatal(err)
			}
			if n := reads.bytes.Load(); n > tc.most {
				t.Errorf("%s: the first page read %d bytes of bodies for %d hidden posts of %d bytes, want at most %d",
					tc.name, n, nsfw+scheduled, len(long), tc.most)
			}
			found := false
			for page := 0; ; page++ {
				for _, it := range p.Items {
					if it.Title != "The visible tern" {
						t.Fatalf("%s: a hidden post was found: %q", tc.name, it.Title)
					}
					found = true
				}
				if !p.HasNext || page > nsfw+scheduled {
					break
				}
				l := f.s.NewLoader()
				l.HideNSFW(true)
				if p, err = l.SearchPosts(f.ctx, store.PostSearch{Query: "tern", Sort: store.SearchNew}, store.Window{First: 20, After: p.EndCursor(), NoTotal: true}, tc.needs); err != nil {
					t.Fatal(err)
				}
			}
			if !found {
				t.Errorf("%s: paging on did not reach the visible post", tc.name)
			}
		}
	})
}

// TestSearchHiddenCommentsCostTheirBodies: the bodies a comment search's page reads of comments the
// viewer cannot see (those of an NSFW post, for a viewer who hides them) count against its text
// budget: 300 such comments of 10,000 characters do not make one page read them all, and paging
// on still reaches the visible comment behind them.
func TestSearchHiddenCommentsCostTheirBodies(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f, reads := newBodyReadsFixture(t, b)
		alice := f.user("alice")
		open := f.postBody(alice, "Open", "an open thread")
		if _, err := f.s.CreateComment(f.ctx, uk(alice), store.NewComment{PostID: open.ID, Body: "a tern over the bay"}); err != nil {
			t.Fatal(err)
		}
		hidden, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: "Hidden", Body: "a thread", NSFW: true})
		if err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("a tern and a gull ", store.MaxCommentBodyRunes/16/18)
		const planted = 300
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < planted; i += 4 {
					if _, err := f.s.CreateComment(f.ctx, uk(alice), store.NewComment{PostID: hidden.ID, Body: long}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		search := func(after string) *store.Page[*store.Comment] {
			t.Helper()
			l := f.s.NewLoader()
			l.HideNSFW(true)
			p, err := l.SearchComments(f.ctx, store.CommentSearch{Query: "tern", Sort: store.SearchNew}, store.Window{First: 20, After: after, NoTotal: true})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		reads.commentBytes.Store(0)
		p := search("")
		// The first round (the page and one more) is read whole; the rounds after it as far as
		// the budget pays, one text past it.
		if n, most := reads.commentBytes.Load(), int64(22*len(long)+store.SearchTextBytes); n > most {
			t.Errorf("the first page read %d bytes of comment bodies for %d hidden comments of %d bytes, want at most %d", n, planted, len(long), most)
		}
		found := false
		for page := 0; ; page++ {
			for _, c := range p.Items {
				if c.Text != "a tern over the bay" {
					t.Fatalf("a hidden comment was found: %.20q", c.Text)
				}
				found = true
			}
			if !p.HasNext || page > planted {
				break
			}
			p = search(p.EndCursor())
		}
		if !found {
			t.Error("paging on did not reach the visible comment")
		}
	})
}

// A phrase is checked against each candidate's text, so a phrase of common words in an order no
// post has (one anonymous request) would read the body of every post that has the words: a
// page's six rounds and its totalCount each read at most store.SearchTextChecks bodies, whatever
// the number of candidates, and a match among them is still found and counted (the older
// candidates estimated from the checked ones).
func TestSearchPhraseWorkIsBounded(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f, reads := newBodyReadsFixture(t, b)
		alice := f.user("alice")
		candidates := 2*store.SearchTextChecks + 200
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < candidates-1; i += 4 {
					if _, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: fmt.Sprintf("Seabird %d", i), Body: "a gull and a tern"}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		f.postBody(alice, "The match", "a tern gull") // the newest: the phrase's one match
		for _, tc := range []struct {
			sort    store.SearchSort
			noTotal bool
		}{{store.SearchNew, true}, {store.SearchNew, false}, {store.SearchRelevance, false}} {
			reads.n.Store(0)
			p, err := f.s.NewLoader().SearchPosts(f.ctx, store.PostSearch{Query: `"tern gull"`, Sort: tc.sort},
				store.Window{First: 100, NoTotal: tc.noTotal}, nil)
			if err != nil {
				t.Fatal(err)
			}
			limit := int64(store.SearchTextChecks)
			if !tc.noTotal {
				limit *= 2 // the page's, then the count's
			}
			if n := reads.n.Load(); n > limit {
				t.Errorf("sort %v, totalCount %v: %d post bodies read for %d candidates, want at most %d", tc.sort, !tc.noTotal, n, candidates, limit)
			}
			if tc.sort == store.SearchNew && (len(p.Items) != 1 || p.Items[0].Title != "The match") {
				t.Errorf("sort NEW: %d results, want the newest post", len(p.Items))
			}
			// The newest SearchTextChecks candidates hold the one match: the older ones are
			// estimated at that proportion, not counted as if they all matched.
			if !tc.noTotal && (p.Total < 1 || p.Total > 3) {
				t.Errorf("sort %v: totalCount %d, want 1–3 (the match, and an estimate of the older candidates)", tc.sort, p.Total)
			}
		}
	})
}

// TestSearchPagesGoOnPastTheirBound: when a page's verification stops at its bound short of its
// size — here a phrase whose only matches are older than the hundreds of newer posts holding its
// words in another order — the page says where it stopped: its endCursor goes on from there even
// when it holds nothing, and paging on finds every match once and ends. (Pages of one: the
// rounds' bound, 2+4+…+64 candidates, binds before the phrase's 500.)
func TestSearchPagesGoOnPastTheirBound(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		want := map[string]bool{}
		for i := range 3 { // the oldest posts: the phrase's matches
			title := fmt.Sprintf("Match %d", i)
			f.postBody(alice, title, "a tern gull")
			want[title] = true
		}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < 160; i += 4 {
					if _, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: fmt.Sprintf("Seabird %d", i), Body: "a gull and a tern"}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		got := map[string]bool{}
		after, pages, empty := "", 0, 0
		for {
			p, err := f.s.NewLoader().SearchPosts(f.ctx, store.PostSearch{Query: `"tern gull"`, Sort: store.SearchNew},
				store.Window{First: 1, After: after, NoTotal: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(p.Items) == 0 {
				empty++
			}
			for _, it := range p.Items {
				if got[it.Title] {
					t.Errorf("page %d: %q again", pages, it.Title)
				}
				got[it.Title] = true
			}
			if !p.HasNext {
				break
			}
			if p.EndCursor() == "" || p.EndCursor() == after {
				t.Fatalf("page %d (%d items) has a next page but no new cursor to go on from: %q", pages, len(p.Items), p.EndCursor())
			}
			if pages > 50 {
				t.Fatal("paging did not end in 50 pages")
			}
			after = p.EndCursor()
		}
		if len(got) != len(want) {
			t.Errorf("paging found %v, want %v", got, want)
		}
		if empty == 0 {
			t.Error("no page stopped at its bound empty: the test does not test what it says")
		}
	})
}

// TestSearchCountKeepsItsBatchesPastALongText: one long edited post among a search's candidates
// (its text matched for the count) does not shrink the count's batches of the other candidates,
// whose text is not read: the count costs the same round trips as without it.
func TestSearchCountKeepsItsBatchesPastALongText(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		b, rt := b.Counted(t)
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		const n = 300
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < n; i += 4 {
					if _, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: fmt.Sprintf("Plover %d", i), Body: "a plover"}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		count := func() (int, int64) {
			t.Helper()
			before := rt.Count()
			p, err := f.s.NewLoader().SearchPosts(f.ctx, store.PostSearch{Query: "plover", Sort: store.SearchNew}, store.Window{First: 5}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return p.Total, rt.Count() - before
		}
		total, plain := count()
		newest := f.postBody(alice, "The newest plover", "a plover")
		long := "plover " + strings.Repeat("and a tern ", (store.MaxPostBodyRunes-7)/11)
		if _, err := f.s.EditPost(f.ctx, uk(alice), newest.ID, store.PostEdit{Body: &long}); err != nil {
			t.Fatal(err)
		}
		got, withLong := count()
		if total != n || got != n+1 {
			t.Errorf("totalCount %d, then %d; want %d, then %d", total, got, n, n+1)
		}
		// The edited post's text is one more read, in the count's own pipeline after its fields.
		if withLong > plain+1 {
			t.Errorf("a count with one long edited post took %d round trips, %d without it", withLong, plain)
		}
	})
}

// A relevance cursor stays valid while posts are created between pages: every new post changes
// the statistics a score is computed from (how many documents there are, how many hold each
// word), and a cursor that kept only its score skipped or repeated the results around it. Two
// words and a prefix, so that each list's weight moves apart from the others'.
func TestSearchRelevanceCursorSurvivesNewPosts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		var want []string
		for i := range 12 {
			title := fmt.Sprintf("Plover %d %s", i, strings.Repeat("plover ", i%4))
			f.postBody(alice, title, "sand "+strings.Repeat("word ", i)+strings.Repeat("sanderling ", i%3))
			want = append(want, title)
		}
		for _, query := range []string{"plover", "plover sand", "plover san"} {
			in := store.PostSearch{Query: query}
			var got []string
			after := ""
			for page := 0; ; page++ {
				p, err := f.s.NewLoader().SearchPosts(f.ctx, in, store.Window{First: 4, After: after}, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range p.Items {
					got = append(got, it.Title)
				}
				if !p.HasNext || page > 10 {
					break
				}
				after = p.EndCursor()
				// Between pages, posts with none of the words, and one with only some of them.
				for j := range 8 {
					f.postBody(alice, fmt.Sprintf("Dunlin %d", j), "mud")
				}
				f.postBody(alice, "Sand martin", "sand sanderling")
			}
			sorted := slices.Sorted(slices.Values(got))
			if !slices.Equal(sorted, slices.Sorted(slices.Values(want))) {
				t.Errorf("%q paged with new posts between pages: %d results %q, want each of the %d once", query, len(got), got, len(want))
			}
		}
	})
}

// TestSearchPrefixExpandsToTheFirst32Words pins the documented bound of a prefix (docs/API.md,
// search syntax): the last word of a query stands for the first 32 words of the index that begin
// with it, in byte order, the word itself first when it is one; a document holding only a word
// past them is found by a longer prefix, never by an error.
func TestSearchPrefixExpandsToTheFirst32Words(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		var words []string
		for i := range 40 {
			words = append(words, fmt.Sprintf("qz%02d", i))
		}
		words = append(words, "qz")
		for _, w := range words {
			f.postBody(alice, w, "")
		}
		sorted := slices.Sorted(slices.Values(words))
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"qz", sorted[:32]}, // "qz" itself, then qz00 … qz30
			{"qz3", []string{"qz30", "qz31", "qz32", "qz33", "qz34", "qz35", "qz36", "qz37", "qz38", "qz39"}},
			{"qz39", []string{"qz39"}},
			{"qz ", []string{"qz"}}, // a space ends the word: no prefix
		} {
			got := f.search("", store.PostSearch{Query: tc.query, Sort: store.SearchNew}, 100)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("query %q: %q, want %q", tc.query, got, tc.want)
			}
		}
	})
}

// TestSearchFindsWordsWithInvisibleCharacters: a post whose word holds a character that shows
// nothing (a zero-width space, a soft hyphen) is found by the word as typed, whole and by prefix,
// and not by its parts.
func TestSearchFindsWordsWithInvisibleCharacters(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		f.postBody(alice, "Redis clus\u200btering", "shar\u00adding notes")
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"clustering ", []string{"Redis clus\u200btering"}},
			{"clust", []string{"Redis clus\u200btering"}},
			{"sharding ", []string{"Redis clus\u200btering"}},
			{"tering ", nil},
			{"clus ", nil},
		} {
			if got := f.search("", store.PostSearch{Query: tc.query}, 10); !slices.Equal(got, tc.want) {
				t.Errorf("query %q: %q, want %q", tc.query, got, tc.want)
			}
		}
	})
}

// TestSearchTextWorkIsBoundedPerRequest: the searches of one request (one Loader) share one
// budget of text to match, so that aliasing a phrase search does not multiply the work. Each
// search had a budget of its own: 99 aliased phrase searches of planted 40,000-character posts
// were estimated at 19,899 and took the server 9.1 s of CPU and 6 GB of allocations to match
// 99 MB of text (a real Redis, TestCostOfFieldsThatReadMoreThanTheirPage's setting).
func TestSearchTextWorkIsBoundedPerRequest(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f, _ := newBodyReadsFixture(t, b)
		var matched atomic.Int64 // the bytes of text the searches matched
		f.s.OnTextMatch(func(n int) { matched.Add(int64(n)) })
		alice := f.user("alice")
		long := "gull " + strings.Repeat("and a tern ", (store.TestTextRunes-5)/11) // never "tern gull"
		for i := range 60 {
			if _, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: fmt.Sprintf("Seabirds %d", i), Body: long}); err != nil {
				t.Fatal(err)
			}
		}
		l := f.s.NewLoader()
		const searches = 5
		for i := range searches {
			// Pages of different sizes, as aliases would ask for, and no count.
			if _, err := l.SearchPosts(f.ctx, store.PostSearch{Query: `"tern gull"`, Sort: store.SearchNew}, store.Window{First: 10 + i, NoTotal: true}, nil); err != nil {
				t.Fatal(err)
			}
		}
		// The request's budget, overrun by at most one text.
		if most := int64(store.RequestSearchTextBytes + len(long)); matched.Load() > most {
			t.Errorf("%d searches of one request matched %d bytes of text, want at most %d", searches, matched.Load(), most)
		}
		// Another request has a budget of its own.
		matched.Store(0)
		if _, err := f.s.NewLoader().SearchPosts(f.ctx, store.PostSearch{Query: `"tern gull"`, Sort: store.SearchNew}, store.Window{First: 10, NoTotal: true}, nil); err != nil {
			t.Fatal(err)
		}
		if matched.Load() < store.SearchTextBytes {
			t.Errorf("a new request matched %d bytes of text, want its page's budget, %d", matched.Load(), store.SearchTextBytes)
		}
	})
}
