package store

import (
	"context"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// SearchDictsAsLayout4 puts the words of every part of the search dictionaries back into their
// bucket's one sorted set, as a keyspace of layout 4 has them, and returns how many it moved.
func (s *Store) SearchDictsAsLayout4(ctx context.Context) (int, error) {
	var parts []string
	if err := s.scanKeys(ctx, s.k.prefix+"{sx:*}:d:*", func(key string) error {
		parts = append(parts, key)
		return nil
	}); err != nil {
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

// SearchDictKeys returns every key of the search dictionaries, of both layouts.
func (s *Store) SearchDictKeys(ctx context.Context) ([]string, error) {
	var keys []string
	err := s.scanKeys(ctx, s.k.prefix+"{sx:*}:d*", func(key string) error {
		keys = append(keys, key)
		return nil
	})
	return keys, err
}
