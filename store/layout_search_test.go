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

// TestMigrateSplitSearchDicts writes posts and users with enough words that each bucket's
// dictionary of layout 4 holds more than 128 (a skiplist on real Redis), puts the dictionaries
// back as layout 4 kept them (one sorted set per bucket, with a word of one rune), and migrates:
// prefix searches of posts and users find what they found before; every part of a dictionary is
// listpack-encoded, no dictionary of layout 4 is left, and a second run moves nothing.
func TestMigrateSplitSearchDicts(t *testing.T) {
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
			f.postBody(uid, fmt.Sprintf("post %d", p), strings.Join(words, " "))
		}
		prefixes := []string{"aa", "baq", "ke", "kes", "ki", "zz", word(123), word(799)}
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
			}
			return out
		}
		want := results()
		if !strings.Contains(strings.Join(want, "\n"), "kestrel_one,kestrel_two") || !strings.Contains(want[0], "post 0") {
			t.Fatalf("the prefixes find too little to test with: %q", want)
		}
		encodings := func() map[string]int {
			t.Helper()
			keys, err := f.s.SearchDictKeys(ctx)
			if err != nil {
				t.Fatal(err)
			}
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
		if n := encodings(); n["listpack"]+n["any"] == 0 || len(n) != 1 {
			t.Fatalf("the dictionaries' encodings: %v; want all listpack", n)
		}

		// Layout 4: one sorted set per bucket, with a word of one rune.
		if n, err := f.s.SearchDictsAsLayout4(ctx); err != nil || n < 800 {
			t.Fatalf("layout 4: %d words, %v", n, err)
		}
		keys, err := f.s.SearchDictKeys(ctx)
		if err != nil || len(keys) == 0 {
			t.Fatalf("layout 4's dictionaries: %v, %v", keys, err)
		}
		if err := b.Client.ZAdd(ctx, keys[0], rdb.Z{Member: "x"}).Err(); err != nil {
			t.Fatal(err)
		}
		if n := encodings(); b.Name != "miniredis" && n["legacy skiplist"] == 0 {
			t.Fatalf("layout 4's dictionaries: %v; want skiplists", n)
		}
		if err := b.Client.HSet(ctx, f.s.Options().Prefix+"{meta}:layout", "version", 4).Err(); err != nil {
			t.Fatal(err)
		}
		ran, err := f.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != 1 || ran[0].From != 4 {
			t.Fatalf("ran %+v, %v; want the migration from layout 4", ran, err)
		}
		if got := results(); !slices.Equal(got, want) {
			t.Errorf("migrated: prefix searches find\n%q\nwant\n%q", got, want)
		}
		if n := encodings(); n["listpack"]+n["any"] == 0 || len(n) != 1 {
			t.Errorf("migrated: the dictionaries' encodings: %v; want all listpack, none of layout 4", n)
		}
		if n, err := f.s.SplitSearchDictsForTest(ctx); err != nil || n != 0 {
			t.Errorf("second run: moved %d, %v; want 0", n, err)
		}
	})
}
