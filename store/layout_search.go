package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// splitSearchDicts moves the words of every bucket's dictionary of layout 4 (one sorted set,
// legacySearchDict) into the dictionary's parts (searchDict, one per first two runes), leaving
// out the words of one rune, which no prefix expands to, and returns how many words it moved:
// the search index's step of the migration from layout 4. Each bucket's words go a chunk at a
// time, added to their parts before they leave the old set (the keys share the bucket's slot),
// so a run cut off loses none and running it again moves what is left; once a set is empty Redis
// has deleted it. The posting lists and counts are kept as they are.
func (s *Store) splitSearchDicts(ctx context.Context) (int, error) {
	var dicts []string
	err := s.scanKeys(ctx, s.k.prefix+"{sx:*}:d", func(key string) error {
		dicts = append(dicts, key)
		return nil
	})
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, dict := range dicts {
		part, ok := strings.CutSuffix(dict, ":d")
		if !ok {
			continue
		}
		for {
			const chunk = 500
			words, err := s.cmd().ZRange(ctx, dict, 0, chunk-1).Result()
			if err != nil {
				return moved, fmt.Errorf("read the search dictionary %s: %w", dict, err)
			}
			if len(words) == 0 {
				break
			}
			heads := map[string][]rdb.Z{}
			for _, w := range words {
				if head, ok := searchDictHead(w); ok {
					heads[head] = append(heads[head], rdb.Z{Member: w})
				}
			}
			var adds []op
			for head, zs := range heads {
				key := part + ":d:" + head
				adds = append(adds, op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
					return p.ZAdd(ctx, key, zs...), nil
				}})
				moved += len(zs)
			}
			if err := s.pipeline(ctx, adds, true); err != nil {
				return moved, fmt.Errorf("write the parts of the search dictionary %s: %w", dict, err)
			}
			members := make([]any, len(words))
			for i, w := range words {
				members[i] = w
			}
			if err := s.cmd().ZRem(ctx, dict, members...).Err(); err != nil {
				return moved, fmt.Errorf("empty the search dictionary %s: %w", dict, err)
			}
		}
	}
	return moved, nil
}
