package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestMigrateSearchIndex writes posts, comments and users with enough words that each bucket's
// dictionary of layout 4 holds more than 128 (a skiplist on real Redis): every part of the
// dictionaries and every hash of first postings is listpack-encoded. It puts the index back as
// layout 4 kept it (one dictionary per bucket, with a word of one rune; a list a term) and
// migrates: prefix searches of posts, comments and users find what they found before, the index
// reads as it did (and has as many lists: those of terms of more than one document), every part
// and hash is listpack-encoded, no dictionary of layout 4 is left, and a second run moves nothing.
func TestMigrateSearchIndex(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		uid := f.user("wren")
		for _, name := range []string{"kestrel_one", "kestrel_two", "kite_red"} {
			f.user(name)
		}
		word := func(i int) string { return fmt.Sprintf("%c%cq%d", 'a'+i%26, 'a'+(i/26)%26, i) }
		for p := range 8 {
			var words []string
			for i := p * 100; i < (p+1)*100; i++ {
				words = append(words, word(i))
			}
			post := f.postBody(uid, fmt.Sprintf("post %d", p), strings.Join(words, " "))
			for c := range 3 {
				if _, err := f.s.CreateComment(ctx, uk(uid), store.NewComment{PostID: post.ID, Body: fmt.Sprintf("kestrel note%d%d", p, c)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		prefixes := []string{"aa", "baq", "ke", "kes", "ki", "zz", "note1", "note", word(123), word(799)}
		results := func() []string {
			t.Helper()
			var out []string
			for _, q := range prefixes {
				out = append(out, q+": "+strings.Join(f.search("", store.PostSearch{Query: q}, 10), ","))
				p, err := f.s.NewLoader().SearchUsers(ctx, q, store.Window{First: 10})
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, u := range p.Items {
					names = append(names, u.Name)
				}
				slices.Sort(names)
				out = append(out, q+" (users): "+strings.Join(names, ","))
				cp, err := f.s.NewLoader().SearchComments(ctx, store.CommentSearch{Query: q}, store.Window{First: 30})
				if err != nil {
					t.Fatal(err)
				}
				var texts []string
				for _, c := range cp.Items {
					texts = append(texts, c.Text)
				}
				out = append(out, q+" (comments): "+strings.Join(texts, ","))
			}
			return out
		}
		want := results()
		if all := strings.Join(want, "\n"); !strings.Contains(all, "kestrel_one,kestrel_two") || !strings.Contains(all, "kestrel note10") || !strings.Contains(want[0], "post 0") {
			t.Fatalf("the prefixes find too little to test with: %q", want)
		}
		searchKeys := func(pattern string) []string {
			t.Helper()
			keys, err := f.s.SearchKeys(ctx, pattern)
			if err != nil {
				t.Fatal(err)
			}
			return keys
		}
		encodings := func(pattern string) map[string]int {
			t.Helper()
			keys := searchKeys(pattern)
			n := map[string]int{}
			for _, k := range keys {
				enc := "any"
				if b.Name != "miniredis" { // miniredis has no encodings
					enc = b.Client.ObjectEncoding(ctx, k).Val()
				}
				if strings.HasSuffix(k, ":d") {
					enc = "legacy " + enc
				}
				n[enc]++
			}
			return n
		}
		for _, pattern := range []string{":d*", ":r:*"} {
			if n := encodings(pattern); n["listpack"]+n["any"] == 0 || len(n) != 1 {
				t.Fatalf("the encodings of %s: %v; want all listpack", pattern, n)
			}
		}
		index, lists := store.SearchIndexDump(t, f.s), len(searchKeys(":t:*"))

		// Layout 4: one sorted set per bucket, with a word of one rune.
		if n, err := f.s.SearchDictsAsLayout4(ctx); err != nil || n < 800 {
			t.Fatalf("layout 4: %d words, %v", n, err)
		}
		if n, err := f.s.SearchListsAsLayout4(ctx); err != nil || n < 800 {
			t.Fatalf("layout 4: %d lists, %v", n, err)
		}
		keys := searchKeys(":d*")
		if len(keys) == 0 || len(searchKeys(":r:*")) != 0 || len(searchKeys(":t:*")) < 800 {
			t.Fatalf("layout 4's dictionaries %v, hashes %v, %d lists", keys, searchKeys(":r:*"), len(searchKeys(":t:*")))
		}
		if err := b.Client.ZAdd(ctx, keys[0], rdb.Z{Member: "x"}).Err(); err != nil {
			t.Fatal(err)
		}
		if n := encodings(":d*"); b.Name != "miniredis" && n["legacy skiplist"] == 0 {
			t.Fatalf("layout 4's dictionaries: %v; want skiplists", n)
		}
		if err := b.Client.HSet(ctx, f.s.Options().Prefix+"{meta}:layout", "version", 4).Err(); err != nil {
			t.Fatal(err)
		}
		ran, err := f.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != store.Layout-4 || ran[0].From != 4 {
			t.Fatalf("ran %+v, %v; want the migration from layout 4", ran, err)
		}
		if got := results(); !slices.Equal(got, want) {
			t.Errorf("migrated: prefix searches find\n%q\nwant\n%q", got, want)
		}
		for _, pattern := range []string{":d*", ":r:*"} {
			if n := encodings(pattern); n["listpack"]+n["any"] == 0 || len(n) != 1 {
				t.Errorf("migrated: the encodings of %s: %v; want all listpack, none of layout 4", pattern, n)
			}
		}
		if got := store.SearchIndexDump(t, f.s); !slices.Equal(got, index) {
			t.Errorf("migrated: the index reads\n%q\nwant\n%q", got, index)
		}
		if n := len(searchKeys(":t:*")); n != lists {
			t.Errorf("migrated: %d lists, want %d", n, lists)
		}
		if n, err := f.s.SplitSearchDictsForTest(ctx); err != nil || n != 0 {
			t.Errorf("second run: moved %d words, %v; want 0", n, err)
		}
		if n, err := f.s.PackSearchListsForTest(ctx); err != nil || n != 0 {
			t.Errorf("second run: moved %d lists, %v; want 0", n, err)
		}
	})
}

// TestSearchIndexStaysListpack writes what the memory probe writes, smaller: users whose names
// are two words of their own, and comments with a word of their own each. Every part of the
// dictionaries and every hash of first postings is listpack-encoded on a real Redis, and no term
// of one document has a list (a key) of its own: the lists are those of the words many
// documents share.
func TestSearchIndexStaysListpack(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		var uid string
		for k := range 300 {
			uid = f.user(fmt.Sprintf("m%d_%d", k, 50000+k*7))
		}
		post := f.postBody(uid, "a thread", "of many comments")
		for k := range 600 {
			if _, err := f.s.CreateComment(ctx, uk(uid), store.NewComment{PostID: post.ID, Body: fmt.Sprintf("c%d lorem ipsum", k)}); err != nil {
				t.Fatal(err)
			}
		}
		for _, pattern := range []string{":d:*", ":r:*"} {
			keys, err := f.s.SearchKeys(ctx, pattern)
			if err != nil || len(keys) < 50 {
				t.Fatalf("%s: %d keys, %v", pattern, len(keys), err)
			}
			if b.Name == "miniredis" {
				continue // miniredis has no encodings
			}
			for _, k := range keys {
				if enc := b.Client.ObjectEncoding(ctx, k).Val(); enc != "listpack" {
					t.Errorf("%s is encoded %q, want listpack", k, enc)
				}
			}
		}
		lists, err := f.s.SearchKeys(ctx, ":t:*")
		if err != nil {
			t.Fatal(err)
		}
		// lorem, ipsum, the post's and the author's marks (comments); of, many, comments, a,
		// thread and the author's mark (posts): 10 at most.
		if len(lists) > 10 {
			t.Errorf("%d lists, want only those of shared words: %q", len(lists), lists)
		}
		// Each comment and user is still found by its word of its own.
		for _, q := range []string{"c599", "c0", "m299", "50000"} {
			cp, err := f.s.NewLoader().SearchComments(ctx, store.CommentSearch{Query: q}, store.Window{First: 5})
			if err != nil {
				t.Fatal(err)
			}
			up, err := f.s.NewLoader().SearchUsers(ctx, q, store.Window{First: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(cp.Items)+len(up.Items) == 0 {
				t.Errorf("%q finds nothing", q)
			}
		}
	})
}
