package store

import (
	"context"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// SearchDictsAsLayout4 puts the words of every part of the search dictionaries back into their
// bucket's one sorted set, as a keyspace of layout 4 has them, and returns how many it moved.
func (s *Store) SearchDictsAsLayout4(ctx context.Context) (int, error) {
	parts, err := s.SearchKeys(ctx, ":d:*")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, part := range parts {
		words, err := s.rdb.ZRange(ctx, part, 0, -1).Result()
		if err != nil {
			return n, err
		}
		legacy := part[:strings.LastIndex(part, ":d:")+2]
		for _, w := range words {
			if strings.HasSuffix(w, "\x00") {
				continue // a mark of a child, whose words have a node of their own
			}
			if err := s.rdb.ZAdd(ctx, legacy, rdb.Z{Member: w}).Err(); err != nil {
				return n, err
			}
			n++
		}
		if err := s.rdb.Del(ctx, part).Err(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// SplitSearchDictsForTest runs the search index's step of the migration from layout 4 again: how
// many words it moved.
func (s *Store) SplitSearchDictsForTest(ctx context.Context) (int, error) {
	return s.splitSearchDicts(ctx)
}

// SearchListsAsLayout4 puts the first postings of the search index's terms back at the head of
// their lists, as a keyspace of layout 4 has them (a string a term, no hash of first postings),
// and returns how many it moved.
func (s *Store) SearchListsAsLayout4(ctx context.Context) (int, error) {
	rares, err := s.SearchKeys(ctx, ":r:*")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, rare := range rares {
		fields, err := s.rdb.HGetAll(ctx, rare).Result()
		if err != nil {
			return n, err
		}
		tag, rest, _ := strings.Cut(rare, "}:r:")
		block, _, _ := strings.Cut(rest, ":")
		for term, first := range fields {
			list := tag + "}:t:" + block + ":" + term
			after, err := s.rdb.Get(ctx, list).Result()
			if err != nil && !isNil(err) {
				return n, err
			}
			if err := s.rdb.Set(ctx, list, first+after, 0).Err(); err != nil {
				return n, err
			}
			n++
		}
		if err := s.rdb.Del(ctx, rare).Err(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// PackSearchListsForTest runs the postings' step of the migration from layout 4 again: how many
// lists it moved.
func (s *Store) PackSearchListsForTest(ctx context.Context) (int, error) {
	return s.packSearchLists(ctx)
}

// SearchKeys returns the keys of the search index whose names, after their bucket's tag, match
// pattern (":d*" the dictionaries, ":r:*" the hashes of first postings, ":t:*" the lists).
func (s *Store) SearchKeys(ctx context.Context, pattern string) ([]string, error) {
	var keys []string
	err := s.scanKeys(ctx, s.k.prefix+"{sx:*}"+pattern, func(key string) error {
		keys = append(keys, key)
		return nil
	})
	return keys, err
}
