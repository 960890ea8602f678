package store

import (
	"context"
	"slices"

	"github.com/agora/agora/internal/rdb"
)

// SearchDictAddForTest puts words into bucket b's dictionary of comments as the writes do
// (search_dict_add.lua, then splitSearchDictNodesOf for the nodes it left past searchDictMax) and
// returns how many it put in (those not there already).
func (s *Store) SearchDictAddForTest(ctx context.Context, b int, words ...string) (int, error) {
	added := 0
	for ws := range slices.Chunk(words, 50) {
		call, ok := searchDictAdd(s.k.searchDictBase(searchComments.code, b), ws...)
		if !ok {
			continue
		}
		v, err := s.run(ctx, call.name, call.keys, call.args...)
		if err != nil {
			return added, err
		}
		n, over, err := searchDictAdded(v)
		if err != nil {
			return added, err
		}
		added += int(n)
		if _, err := s.splitSearchDictNodesOf(ctx, over); err != nil {
			return added, err
		}
	}
	return added, nil
}

// SearchDictExpandForTest returns the words prefix expands to in bucket b's dictionary of
// comments, as a search reads them.
func (s *Store) SearchDictExpandForTest(ctx context.Context, b int, prefix string) ([]string, error) {
	l := s.NewLoader()
	c, err := l.get(ctx, l.searchDictRead(s.k.searchDictBase(searchComments.code, b), prefix))
	if err != nil {
		return nil, err
	}
	return searchDictWords(c)
}

// SearchDictAsLayout5ForTest puts words into bucket b's dictionary of comments as layout 5 did:
// into the sorted set of their first two runes, however many it holds.
func (s *Store) SearchDictAsLayout5ForTest(ctx context.Context, b int, words ...string) error {
	for _, w := range words {
		head, ok := searchDictHead(w)
		if !ok {
			continue
		}
		if err := s.rdb.ZAdd(ctx, s.k.searchDict(searchComments.code, b, head), rdb.Z{Member: w}).Err(); err != nil {
			return err
		}
	}
	return nil
}

// SearchDictNodesForTest returns the keys of the nodes of bucket b's dictionary of comments.
func (s *Store) SearchDictNodesForTest(ctx context.Context, b int) ([]string, error) {
	var keys []string
	err := s.scanKeys(ctx, s.k.searchDictBase(searchComments.code, b)+"*", func(key string) error {
		keys = append(keys, key)
		return nil
	})
	return keys, err
}

// SplitSearchDictNodesForTest runs the search dictionaries' step of the migration from layout 5
// again: how many words it moved.
func (s *Store) SplitSearchDictNodesForTest(ctx context.Context) (int, error) {
	return s.splitSearchDictNodes(ctx)
}

// SearchBucketForTest returns the bucket of a term.
func SearchBucketForTest(term string) int { return searchBucket(term) }
