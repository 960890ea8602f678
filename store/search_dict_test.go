package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// searchDictVocabulary is a vocabulary that fills the dictionary's nodes several levels deep: a
// long tail of numbers (c0…c2999, whose root c1 holds a word that is its own prefix), a chain of
// words each the prefix of the next (zz, zza, zzaa, …), many words of one long prefix, and words
// of two-byte runes.
func searchDictVocabulary() []string {
	var words []string
	for i := range 3000 {
		words = append(words, fmt.Sprintf("c%d", i))
	}
	for k := range 40 {
		words = append(words, "zz"+strings.Repeat("a", k))
	}
	for i := range 400 {
		words = append(words, fmt.Sprintf("qqxxxxxxxxxx%d", i))
	}
	for i := range 300 {
		words = append(words, fmt.Sprintf("éé%dü", i))
	}
	return words
}

// searchDictPrefixes are prefixes to expand: every prefix of a sample of the vocabulary, and
// some that begin no word.
func searchDictPrefixes(words []string) []string {
	seen := map[string]bool{}
	var out []string
	for i, w := range words {
		if i%37 != 0 && !strings.HasPrefix(w, "zz") {
			continue
		}
		r := []rune(w)
		for n := 2; n <= len(r); n++ {
			if p := string(r[:n]); !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return append(out, "c9999", "zy", "qqy", "éf", "c3000")
}

// wantExpansions is what prefix expands to in words: the first 32 words with it, in byte order.
func wantExpansions(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out[:min(len(out), 32)]
}

// checkSearchDict checks that every prefix expands in bucket 0 to what words say, and that every
// node of the bucket's dictionary holds 128 members or fewer, listpack-encoded on a real Redis.
func checkSearchDict(t *testing.T, b storetest.Backend, s *store.Store, words []string) {
	t.Helper()
	ctx := context.Background()
	for _, p := range searchDictPrefixes(words) {
		got, err := s.SearchDictExpandForTest(ctx, 0, p)
		if err != nil {
			t.Fatal(err)
		}
		if want := wantExpansions(words, p); !slices.Equal(got, want) {
			t.Errorf("%q expands to %q, want %q", p, got, want)
		}
	}
	nodes, err := s.SearchDictNodesForTest(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) < 20 {
		t.Errorf("%d nodes, want the long tail split into many", len(nodes))
	}
	for _, n := range nodes {
		if c := b.Client.ZCard(ctx, n).Val(); c > 128 {
			t.Errorf("node %s holds %d members, want 128 at most", n, c)
		}
		if b.Mini == nil {
			if enc := b.Client.ObjectEncoding(ctx, n).Val(); enc != "listpack" {
				t.Errorf("node %s is encoded %q, want listpack", n, enc)
			}
		}
	}
}

// TestSearchDictionaryNodes puts a vocabulary into a dictionary in random order, twice: every
// word goes in once (the second time puts none in), every node stays small enough to be a
// listpack, and every prefix expands to the first 32 words with it in byte order.
func TestSearchDictionaryNodes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		words := searchDictVocabulary()
		shuffled := slices.Clone(words)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if n, err := f.s.SearchDictAddForTest(ctx, 0, shuffled...); err != nil || n != len(words) {
			t.Fatalf("put in %d words, %v; want %d", n, err, len(words))
		}
		if n, err := f.s.SearchDictAddForTest(ctx, 0, words...); err != nil || n != 0 {
			t.Fatalf("again: put in %d words, %v; want 0", n, err)
		}
		checkSearchDict(t, b, f.s, words)
	})
}

// TestMigrateSearchDictFromLayout5 writes a dictionary as layout 5 did (one sorted set per first
// two runes, a skiplist past 128 words on a real Redis), reads it before the migration (the
// readers of a keyspace being migrated), puts a few words in with the writes' script meanwhile
// (a write that meets a part too large moves its own group), and migrates from layout 5: every
// prefix expands as before, every node is listpack-encoded, and a second run moves nothing.
func TestMigrateSearchDictFromLayout5(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		words := searchDictVocabulary()
		late := []string{"c30000", "c1999x", "qqxxxxxxxxxx9999", "zzb"}
		if err := f.s.SearchDictAsLayout5ForTest(ctx, 0, words...); err != nil {
			t.Fatal(err)
		}
		if b.Mini == nil {
			if enc := b.Client.ObjectEncoding(ctx, f.s.Options().Prefix+"{sx:c:0}:d:c1").Val(); enc != "skiplist" {
				t.Fatalf("layout 5's part c1 is encoded %q, want skiplist", enc)
			}
		}
		for _, p := range searchDictPrefixes(words) {
			got, err := f.s.SearchDictExpandForTest(ctx, 0, p)
			if err != nil {
				t.Fatal(err)
			}
			if want := wantExpansions(words, p); !slices.Equal(got, want) {
				t.Fatalf("layout 5: %q expands to %q, want %q", p, got, want)
			}
		}
		if n, err := f.s.SearchDictAddForTest(ctx, 0, late...); err != nil || n != len(late) {
			t.Fatalf("put in %d words, %v; want %d", n, err, len(late))
		}
		words = append(words, late...)
		if err := b.Client.HSet(ctx, f.s.Options().Prefix+"{meta}:layout", "version", 5).Err(); err != nil {
			t.Fatal(err)
		}
		ran, err := f.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != store.Layout-5 || ran[0].From != 5 {
			t.Fatalf("ran %+v, %v; want the migration from layout 5", ran, err)
		}
		checkSearchDict(t, b, f.s, words)
		if n, err := f.s.SplitSearchDictNodesForTest(ctx); err != nil || n != 0 {
			t.Errorf("second run: moved %d words, %v; want 0", n, err)
		}
	})
}

// TestSearchDictionaryFullNodeNewGroup fills a node with the words of one child and then puts in
// words whose next rune is new to the node: the new word's group, empty, leaves a mark, and the
// writer then moves the node's largest group down, or the node grows past 128 members (a
// skiplist on Redis) by one mark a new word.
func TestSearchDictionaryFullNodeNewGroup(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		var words []string
		for i := range 128 {
			words = append(words, fmt.Sprintf("abz%d", i))
		}
		for _, r := range "qrstuvwxy" {
			words = append(words, "ab"+string(r))
		}
		if n, err := f.s.SearchDictAddForTest(ctx, 0, words...); err != nil || n != len(words) {
			t.Fatalf("put in %d words, %v; want %d", n, err, len(words))
		}
		checkNodeSizes(t, b, f.s)
		checkExpansions(t, f.s, words, "ab", "abz", "abz1", "abq")
	})
}

// TestMigrateSearchDictWideNode migrates a part of layout 5 whose words mostly differ in their
// third rune (as a CJK vocabulary's do): moving a group of one word into a node of its own saves
// nothing (its mark takes its place) and costs a key, so the migration moves only the groups of
// two words or more, and every prefix still expands as before.
func TestMigrateSearchDictWideNode(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		var words []string
		for i := range 150 {
			words = append(words, "日本"+string(rune(0x4E00+i))+"x")
		}
		for i := range 100 {
			words = append(words, fmt.Sprintf("日本語%d", i))
		}
		if err := f.s.SearchDictAsLayout5ForTest(ctx, 0, words...); err != nil {
			t.Fatal(err)
		}
		if err := b.Client.HSet(ctx, f.s.Options().Prefix+"{meta}:layout", "version", 5).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Migrate(ctx, 10*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		nodes, err := f.s.SearchDictNodesForTest(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes) > 4 {
			t.Errorf("%d nodes after the migration, want the root and 日本語's few: groups of one word moved for nothing", len(nodes))
		}
		checkExpansions(t, f.s, words, "日本", "日本語", "日本語1", "日本"+string(rune(0x4E00+7)), "日本"+string(rune(0x4E00+7))+"x")
	})
}

// TestSearchDictionaryFullNodeThroughWrites writes comments whose words fill a node of bucket 0
// with one group and then bring it words of new groups, through the writes' own path (the
// search index's second step): the node stays within 128 members.
func TestSearchDictionaryFullNodeThroughWrites(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := newFixture(t, b, store.Options{WriteLimit: -1})
		alice := f.user("alice")
		post := f.post(alice, "dictionary")
		var full, fresh []string
		for i := 0; len(full) < 128; i++ {
			if w := fmt.Sprintf("abz%d", i); store.SearchBucketForTest(w) == 0 {
				full = append(full, w)
			}
		}
		for r := 'a'; r < 'z'; r++ {
			if w := "ab" + string(r) + "x"; store.SearchBucketForTest(w) == 0 {
				fresh = append(fresh, w)
			}
		}
		for _, words := range [][]string{full, fresh} {
			if _, err := f.s.CreateComment(ctx, store.UserKey(alice), store.NewComment{PostID: post.ID, Body: strings.Join(words, " ")}); err != nil {
				t.Fatal(err)
			}
		}
		checkNodeSizes(t, b, f.s)
		words := append(slices.Clone(full), fresh...)
		checkExpansions(t, f.s, words, "ab", "abz", "abz1", fresh[0])
	})
}

// checkNodeSizes fails for each node of bucket 0's dictionary of more than 128 members.
func checkNodeSizes(t *testing.T, b storetest.Backend, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	nodes, err := s.SearchDictNodesForTest(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if c := b.Client.ZCard(ctx, n).Val(); c > 128 {
			t.Errorf("node %s holds %d members, want 128 at most", n, c)
		}
	}
}

// checkExpansions fails for each of prefixes that does not expand in bucket 0 to what words say.
func checkExpansions(t *testing.T, s *store.Store, words []string, prefixes ...string) {
	t.Helper()
	for _, p := range prefixes {
		got, err := s.SearchDictExpandForTest(context.Background(), 0, p)
		if err != nil {
			t.Fatal(err)
		}
		if want := wantExpansions(words, p); !slices.Equal(got, want) {
			t.Errorf("%q expands to %q, want %q", p, got, want)
		}
	}
}
