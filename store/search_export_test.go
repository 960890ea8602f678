package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/search"
)

// SearchIndexDump lists the search index as its reads see it: every posting list decoded (one
// posting per document, in document order, its first posting's field and its list together),
// every dictionary and count, sorted.
func SearchIndexDump(t testing.TB, s *Store) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	firsts, lists := map[string][]byte{}, map[string][]byte{} // by list key
	dicts := map[string][]rdb.Z{}                             // the words of a dictionary, by root
	err := s.scanKeys(ctx, s.k.prefix+"{sx:*", func(key string) error {
		if strings.HasSuffix(key, ":rev") {
			return nil
		}
		typ, err := s.rdb.Type(ctx, key).Result()
		if err != nil {
			return err
		}
		switch typ {
		case "string":
			v, err := s.rdb.Get(ctx, key).Bytes()
			if err != nil {
				return err
			}
			lists[key] = v
		case "zset":
			v, err := s.rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
			if err != nil {
				return err
			}
			if base, _, ok := searchDictNodeKey(s.k, key); ok {
				// A node of a dictionary: its words, under their root (the tree's shape
				// depends on the order the words came in; reads do not).
				for _, z := range v {
					if w, _ := z.Member.(string); !strings.HasSuffix(w, "\x00") {
						head, _ := searchDictHead(w)
						dicts[base+head] = append(dicts[base+head], z)
					}
				}
				return nil
			}
			out = append(out, fmt.Sprintf("%s %v", key, v))
		case "hash":
			v, err := s.rdb.HGetAll(ctx, key).Result()
			if err != nil {
				return err
			}
			tag, rest, ok := strings.Cut(key, "}:r:")
			if !ok {
				out = append(out, fmt.Sprintf("%s %v", key, v))
				return nil
			}
			block, _, _ := strings.Cut(rest, ":")
			for term, first := range v {
				firsts[tag+"}:t:"+block+":"+term] = []byte(first)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for root, zs := range dicts {
		slices.SortFunc(zs, func(a, b rdb.Z) int { return strings.Compare(a.Member.(string), b.Member.(string)) })
		out = append(out, fmt.Sprintf("%s %v", root, zs))
	}
	for key, first := range firsts {
		lists[key] = append(first, lists[key]...)
	}
	for key, v := range lists {
		codec := map[byte]search.Codec{'p': search.Number, 'c': search.Pair, 'g': search.Text, 'u': search.Text}[key[len(s.k.prefix)+4]]
		ps, err := codec.Decode(nil, v)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		out = append(out, fmt.Sprintf("%s %v", key, ps))
	}
	slices.Sort(out)
	return out
}

// CutOffPostIndex plays a createPost cut off between its atomic step and its derived writes: the
// post's search index is deleted, and its repair note is left due after RepairGrace, as the
// write noted it before its atomic step.
func CutOffPostIndex(t testing.TB, s *Store, id string) {
	t.Helper()
	ctx := context.Background()
	pid, err := PostKey(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.dropSearch(ctx, searchPosts, searchComments); err != nil {
		t.Fatal(err)
	}
	if _, err := s.noteRepair(ctx, repairPost+":"+pid); err != nil {
		t.Fatal(err)
	}
}

// SearchTextChecks is searchTextChecks, for the tests of a phrase search's work.
const SearchTextChecks = searchTextChecks

// SearchTextBytes and SearchTextFirst are searchTextBytes and searchTextFirst, for the tests of a
// search's work on long texts.
const SearchTextFirst = searchTextFirst

// SearchTextBytes is the budget of text the tests of its bound give a search
// (Options.SearchTextBytes): the default's sixteenth, with texts a sixteenth of the longest
// (TestTextRunes), so that those tests write 16 times less and bound the same.
const SearchTextBytes = searchTextBytes / 16

// RequestSearchTextBytes is the budget of a request's searches with SearchTextBytes.
const RequestSearchTextBytes = 2 * SearchTextBytes

// TestTextRunes is the length of the long texts of the tests of the bound: a sixteenth of a
// post's longest body, as SearchTextBytes is of the default budget.
const TestTextRunes = MaxPostBodyRunes / 16

// SearchBlockPosts is how many posts one block of the search index holds (by post number; a
// comment is in its post's block).
const SearchBlockPosts = 1 << searchBlockShift

// SkipPosts moves the numbering of posts on by n, as n posts created and gone would: the tests of
// the index's blocks begin a new block without writing a block's worth of posts.
func (s *Store) SkipPosts(ctx context.Context, n int64) error {
	return s.rdb.IncrBy(ctx, s.k.postSeq(), n).Err()
}

// SearchListBytes is searchListBytes, the default budget of the posting lists one search reads.
const SearchListBytes = searchListBytes
