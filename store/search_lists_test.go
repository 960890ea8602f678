package store_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// listReads counts the bytes of the posting lists a client read: the replies of the reads of
// the index's lists and their first postings' fields (GET, HGET), and of the scripts that read
// them, the dictionary's reads (words, not postings) left out.
type listReads struct{ bytes atomic.Int64 }

// count adds the bytes of the list reads among cmds, once their replies are in
// (storetest.After).
func (r *listReads) count(cmds []rdb.Cmder) {
	dict := store.ScriptSHA("search_dict_read")
	for _, c := range cmds {
		args := c.Args()
		if len(args) < 2 {
			continue
		}
		name, _ := args[0].(string)
		switch strings.ToLower(name) {
		case "get", "hget":
			if key, _ := args[1].(string); strings.Contains(key, "{sx:") {
				if sc, ok := c.(*rdb.StringCmd); ok {
					r.bytes.Add(int64(len(sc.Val())))
				}
			}
		case "evalsha":
			sha, _ := args[1].(string)
			key := ""
			if len(args) > 3 {
				key, _ = args[3].(string)
			}
			if sha == dict || !strings.Contains(key, "{sx:") {
				continue
			}
			if sc, ok := c.(*rdb.Cmd); ok {
				r.bytes.Add(replyBytes(sc.Val()))
			}
		}
	}
}

// replyBytes is the bytes of the strings of a reply.
func replyBytes(v any) int64 {
	switch v := v.(type) {
	case string:
		return int64(len(v))
	case []any:
		n := int64(0)
		for _, e := range v {
			n += replyBytes(e)
		}
		return n
	}
	return 0
}

// listTestBudget is the budget of posting lists the tests of its bound give a search
// (Options.SearchListBytes), with a corpus that fits it: listTestPosts posts in each of
// listTestBlocks blocks, whose bodies each hold every word of listTestWords. A word's list costs
// 240 bytes in each of the two newest blocks (60 postings of post numbers of 3 bytes and an
// impact) and 120 in the oldest (numbers of 1 byte): a search of k of the words costs 240k,
// 480k, then 600k bytes as it covers one, two or the three blocks.
const (
	listTestBudget = 2000
	listTestPosts  = 60
	listTestBlocks = 3
	listTestWords  = 54
)

// newListFixture is a store with the budget listTestBudget whose client counts the bytes of the
// posting lists it reads, and its corpus; it returns the posts' ids by block, oldest first.
func newListFixture(t *testing.T, b storetest.Backend) (*fixture, *listReads, [][]string) {
	t.Helper()
	reads := &listReads{}
	b = b.Hooked(t, storetest.After(reads.count))
	f := newFixture(t, b, store.Options{WriteLimit: -1, SearchListBytes: listTestBudget})
	alice := f.user("alice")
	words := make([]string, listTestWords)
	for i := range words {
		words[i] = listWord(i)
	}
	body := strings.Join(words, " ")
	blocks := make([][]string, listTestBlocks)
	for blk := range blocks {
		if blk > 0 {
			// The next block: its first post is number blk × SearchBlockPosts.
			last, _ := strconv.ParseInt(blocks[blk-1][len(blocks[blk-1])-1], 10, 64)
			if err := f.s.SkipPosts(f.ctx, int64(blk*store.SearchBlockPosts)-last-1); err != nil {
				t.Fatal(err)
			}
		}
		for i := range listTestPosts {
			p, err := f.s.CreatePost(f.ctx, uk(alice), store.NewPost{Title: fmt.Sprintf("Kelp %d", i), Body: body})
			if err != nil {
				t.Fatal(err)
			}
			blocks[blk] = append(blocks[blk], p.ID)
		}
	}
	return f, reads, blocks
}

// listWord is the i-th word every post of the corpus of newListFixture holds.
func listWord(i int) string { return fmt.Sprintf("kelp%cq%d", 'a'+rune(i%26), i) }

// listWords returns n words of the corpus from the from-th on, as a query.
func listWords(from, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = listWord(from + i)
	}
	return strings.Join(ws, " ")
}

// TestSearchListReadsAreBoundedPerRequest: the posting lists that the searches of one request
// read together stay within the request's budget (twice a search's), however many searches of
// distinct common words it aliases and however long their lists are; before, every search read
// every list of its terms in the newest 64 blocks whole, so that the bytes grew with the corpus
// and with the searches. Another request has a budget of its own.
func TestSearchListReadsAreBoundedPerRequest(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f, reads, _ := newListFixture(t, b)
		const searches, words = 9, 6 // distinct words: the reads are not shared
		l := f.s.NewLoader()
		reads.bytes.Store(0)
		for i := range searches {
			q := store.PostSearch{Query: listWords(i*words, words), Sort: store.SearchNew}
			if _, err := l.SearchPosts(f.ctx, q, store.Window{First: 10}, nil); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%d searches of %d common words in one request read %d bytes of posting lists", searches, words, reads.bytes.Load())
		if most := int64(2 * listTestBudget); reads.bytes.Load() > most {
			t.Errorf("%d searches of %d common words in one request read %d bytes of posting lists, want at most %d (the request's budget)",
				searches, words, reads.bytes.Load(), most)
		}
		reads.bytes.Store(0)
		p, err := f.s.NewLoader().SearchPosts(f.ctx, store.PostSearch{Query: listWords(0, words), Sort: store.SearchNew}, store.Window{First: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) == 0 || reads.bytes.Load() == 0 || reads.bytes.Load() > listTestBudget {
			t.Errorf("a new request's search found %d posts reading %d bytes of lists, want some within its own budget, %d",
				len(p.Items), reads.bytes.Load(), listTestBudget)
		}
	})
}

// TestSearchListHorizon: a search covers the newest blocks whose posting lists its budget pays
// for, every term's list of a block or none, and pages through exactly those: no page repeats
// or skips another's results, totalCount is what the pages show, and the last page has no next.
// A search whose lists all fit covers every block, as before.
func TestSearchListHorizon(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f, _, blocks := newListFixture(t, b)
		tests := []struct {
			name   string
			words  int
			blocks int // the newest blocks the search covers
		}{
			{"one word: every block", 1, 3},
			{"three words: every block", 3, 3},
			{"four words: the two newest blocks", 4, 2},
			{"six words: the newest block", 6, 1},
			{"eight words: the newest block", 8, 1},
		}
		for _, tt := range tests {
			var want []string
			for _, ids := range blocks[len(blocks)-tt.blocks:] {
				want = append(want, ids...)
			}
			for _, sort := range []store.SearchSort{store.SearchNew, store.SearchRelevance} {
				t.Run(fmt.Sprintf("%s, sort %d", tt.name, sort), func(t *testing.T) {
					q := store.PostSearch{Query: listWords(10, tt.words), Sort: sort}
					var got []string
					after := ""
					for page := 0; ; page++ {
						// A request of its own per page, as a client paging would send.
						p, err := f.s.NewLoader().SearchPosts(f.ctx, q, store.Window{First: 25, After: after}, nil)
						if err != nil {
							t.Fatal(err)
						}
						if p.Total != len(want) {
							t.Errorf("page %d: totalCount %d, want %d", page, p.Total, len(want))
						}
						for _, it := range p.Items {
							got = append(got, it.ID)
						}
						if !p.HasNext {
							break
						}
						if page > len(want) {
							t.Fatalf("%d pages and still a next one", page)
						}
						after = p.EndCursor()
					}
					sorted := slices.Clone(got)
					slices.Sort(sorted)
					if len(slices.Compact(sorted)) != len(got) {
						t.Errorf("the pages repeat results: %v", got)
					}
					slices.Sort(want)
					if !slices.Equal(sorted, want) {
						t.Errorf("the pages show %d posts, want the %d of the newest %d blocks", len(got), len(want), tt.blocks)
					}
				})
			}
		}
	})
}
