package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// longText is a text longer than hash-max-listpack-value (64 bytes).
func longText(s string) string { return strings.Repeat(s+" ", 80/len(s)+1) }

// TestPostHashesStayListpack: a post's body is kept apart from its hash (in its thread's bodies),
// so that a hash whose title and url are short holds only short values and keeps Redis's compact
// encoding (a hashtable costs ~600 bytes more per post); a title or url longer than 64 bytes stays
// in the hash, which is then a hashtable (a listing reads the hash alone). The post reads back
// whole, and a listing that shows no body reads none. Encodings on real Redis only.
func TestPostHashesStayListpack(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix, WriteLimit: -1})
		ctx := f.ctx
		ann := f.user("ann")
		title, body, url := "a title", longText("a body"), "https://example.com/a-path"
		longTitle := longText("a title")
		p, err := f.s.CreatePost(ctx, uk(ann), store.NewPost{Title: title, Body: body, URL: url, Groups: []string{"go"}})
		if err != nil {
			t.Fatal(err)
		}
		if p.Title != title || p.Body != body || p.URL == nil || *p.URL != url {
			t.Fatalf("created %+v", p)
		}
		pid, _ := store.PostKey(p.ID)
		key := prefix + "{p:" + pid + "}"
		cases := []struct {
			name             string
			edit             store.PostEdit
			title, body, url string
			inHash           []string // the texts the hash keeps
			listpack         bool     // the hash's encoding
		}{
			{"a long body", store.PostEdit{}, title, body, url, []string{"title", "url"}, true},
			{"another title and url", store.PostEdit{Title: ptr("short"), URL: ptr("https://e.com/")}, "short", body, "https://e.com/", []string{"title", "url"}, true},
			{"no url, no body", store.PostEdit{Title: ptr(title + "!"), URL: ptr(""), Body: ptr("")}, title + "!", "", "", []string{"title"}, true},
			{"a body again", store.PostEdit{Body: ptr(body + " edited")}, title + "!", body + " edited", "", []string{"title"}, true},
			{"a long title", store.PostEdit{Title: ptr(longTitle)}, longTitle, body + " edited", "", []string{"title"}, false},
		}
		for _, tc := range cases {
			if tc.edit != (store.PostEdit{}) {
				if _, err := f.s.EditPost(ctx, uk(ann), p.ID, tc.edit); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
			}
			h, err := b.Client.HGetAll(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, field := range []string{"title", "body", "url"} {
				want := false
				for _, f := range tc.inHash {
					want = want || f == field
				}
				if _, ok := h[field]; ok != want {
					t.Errorf("%s: the hash has %s: %v, want %v (%v)", tc.name, field, ok, want, h)
				}
			}
			if b.Name != "miniredis" {
				want := map[bool]string{true: "listpack", false: "hashtable"}[tc.listpack]
				if enc, err := b.Client.ObjectEncoding(ctx, key).Result(); err != nil || enc != want {
					t.Errorf("%s: the post's hash is encoded %q (%v), want %s", tc.name, enc, err, want)
				}
			}
			got, err := f.s.NewLoader().Post(ctx, p.ID)
			if err != nil || got == nil {
				t.Fatalf("%s: read %+v, %v", tc.name, got, err)
			}
			if got.Title != tc.title || got.Body != tc.body || urlOf(got) != tc.url {
				t.Errorf("%s: read title %q body %q url %q, want %q %q %q", tc.name, got.Title, got.Body, urlOf(got), tc.title, tc.body, tc.url)
			}
			for _, n := range []*store.Needs{nil, {PostFieldsChosen: true, PostBody: true}, {PostFieldsChosen: true}} {
				page, err := f.s.NewLoader().Posts(ctx, store.SortNew, "go", store.Window{First: 5}, func() *store.Needs { return n })
				if err != nil || len(page.Items) != 1 {
					t.Fatalf("%s: listing %+v, %v", tc.name, page, err)
				}
				want := tc.body
				if !n.ReadsPostBody() {
					want = ""
				}
				if it := page.Items[0]; it.Title != tc.title || it.Body != want {
					t.Errorf("%s: listed with needs %+v: title %q body %q, want %q %q", tc.name, n, it.Title, it.Body, tc.title, want)
				}
			}
		}
		found, err := f.s.NewLoader().SearchPosts(ctx, store.PostSearch{Query: "edited"}, store.Window{First: 5}, nil)
		if err != nil || len(found.Items) != 1 || found.Items[0].Body != body+" edited" {
			t.Errorf("search for a word of the body apart: %+v, %v", found, err)
		}
		if err := f.s.DeletePost(ctx, uk(ann), p.ID); err != nil {
			t.Fatal(err)
		}
		if n, err := b.Client.Exists(ctx, prefix+"{p:"+pid+"}:c:body").Result(); err != nil || n != 0 {
			t.Errorf("the deleted post's texts are still kept (%d, %v)", n, err)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// urlOf is a post's URL, "" for none.
func urlOf(p *store.Post) string {
	if p.URL == nil {
		return ""
	}
	return *p.URL
}

// startAtLayout records version as the keyspace's layout and checks it as a server does at
// start-up, which makes reads ask hashes for the texts that layout kept in them.
func startAtLayout(t *testing.T, f *fixture, b storetest.Backend, prefix string, version int) {
	t.Helper()
	if err := b.Client.HSet(f.ctx, prefix+"{meta}:layout", "version", version).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.CheckLayout(f.ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMigratePostTexts writes posts, puts their texts back into their hashes as layout 4 kept
// them, and migrates: reads are right before (the migration runs beside traffic), during (an
// edit by this binary and one by a process of layout 4, which writes only the hash, between two
// runs) and after it; the texts leave the hashes, which are listpacks again, searches find the
// words of the bodies, and a second run moves nothing.
func TestMigratePostTexts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix, WriteLimit: -1})
		ctx := f.ctx
		ann := f.user("ann")
		type want struct{ title, body, url string }
		posts := map[string]*want{}
		add := func(title, body, url string) string {
			t.Helper()
			p, err := f.s.CreatePost(ctx, uk(ann), store.NewPost{Title: title, Body: body, URL: url})
			if err != nil {
				t.Fatal(err)
			}
			posts[p.ID] = &want{title, body, url}
			return p.ID
		}
		long := add(longText("a long title"), longText("a curlew body"), "https://example.com/"+strings.Repeat("x", 80))
		plain := add("a plain post", "a short body", "")
		edited := add("edited by this binary", longText("before"), "")
		old := add("edited by layout 4", longText("before"), "")
		bare := add("no body", "", "https://e.com/")

		// Layout 4: every text in the post's hash (url "" when none), nothing apart.
		for id, w := range posts {
			pid, _ := store.PostKey(id)
			key, texts := prefix+"{p:"+pid+"}", prefix+"{p:"+pid+"}:c:body"
			if err := b.Client.HSet(ctx, key, "title", w.title, "body", w.body, "url", w.url).Err(); err != nil {
				t.Fatal(err)
			}
			if err := b.Client.HDel(ctx, texts, "t", "b", "u").Err(); err != nil {
				t.Fatal(err)
			}
		}
		// A layout before 5 makes reads ask post hashes for their bodies too.
		startAtLayout(t, f, b, prefix, 4)
		check := func(when string) {
			t.Helper()
			l := f.s.NewLoader()
			for id, w := range posts {
				p, err := l.Post(ctx, id)
				if err != nil || p == nil {
					t.Fatalf("%s: post %s reads %+v, %v", when, id, p, err)
				}
				if p.Title != w.title || p.Body != w.body || urlOf(p) != w.url {
					t.Errorf("%s: post %s reads %q %q %q, want %q %q %q", when, id, p.Title, p.Body, urlOf(p), w.title, w.body, w.url)
				}
			}
		}
		check("before the migration")

		// Traffic while the keyspace is half migrated: this binary moves what it edits; a process
		// of layout 4 writes the hash alone, which is newer than what is apart.
		if n, err := f.s.MovePostTextsForTest(ctx); err != nil || n != len(posts) {
			t.Fatalf("a first run moved %d posts (%v), want %d", n, err, len(posts))
		}
		if _, err := f.s.EditPost(ctx, uk(ann), edited, store.PostEdit{Body: ptr(longText("after"))}); err != nil {
			t.Fatal(err)
		}
		posts[edited].body = longText("after")
		pid, _ := store.PostKey(old)
		if err := b.Client.HSet(ctx, prefix+"{p:"+pid+"}", "body", "written by layout 4").Err(); err != nil {
			t.Fatal(err)
		}
		posts[old].body = "written by layout 4"
		check("during the migration")

		ran, err := f.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != store.Layout-4 || ran[0].From != 4 {
			t.Fatalf("ran %+v, %v; want the migration from layout 4", ran, err)
		}
		check("after the migration")
		for id, w := range posts {
			pid, _ := store.PostKey(id)
			key := prefix + "{p:" + pid + "}"
			h, err := b.Client.HGetAll(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			_, hasURL := h["url"]
			if _, ok := h["body"]; ok || h["title"] != w.title || (w.url == "" && hasURL) {
				t.Errorf("post %s after the migration: %v", id, h)
			}
			if b.Name != "miniredis" && len(w.title) <= 64 && len(w.url) <= 64 { // long ones stay in the hash
				if enc, err := b.Client.ObjectEncoding(ctx, key).Result(); err != nil || enc != "listpack" {
					t.Errorf("post %s: hash encoded %q (%v), want listpack", id, enc, err)
				}
			}
		}
		if n, err := f.s.MovePostTextsForTest(ctx); err != nil || n != 0 {
			t.Fatalf("a second run moved %d posts (%v), want none", n, err)
		}
		check("after a second run")
		if _, err := f.s.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		found, err := f.s.NewLoader().SearchPosts(ctx, store.PostSearch{Query: "curlew"}, store.Window{First: 5}, nil)
		if err != nil || len(found.Items) != 1 || found.Items[0].ID != long {
			t.Errorf("search for a word of a moved body after a rebuild: %+v, %v", found, err)
		}
		_, _ = plain, bare
	})
}
