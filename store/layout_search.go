package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// splitSearchDicts moves the words of every bucket's dictionary of layout 4 (one sorted set,
// {sx:<kind>:<n>}:d) into the dictionary's nodes (searchDict, search_dict_add.lua), leaving
// out the words of one rune, which no prefix expands to, and returns how many words it moved:
// the search index's step of the migration from layout 4. Each bucket's words go a chunk at a
// time, added to their parts before they leave the old set (the keys share the bucket's slot),
// so a run cut off loses none and running it again moves what is left; once a set is empty Redis
// has deleted it. The posting lists are packSearchLists's to move.
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
			var adds []scriptCall
			for ws := range slices.Chunk(words, searchDictWordsPerCall) {
				if call, ok := searchDictAdd(part+":d:", ws...); ok {
					adds = append(adds, call)
				}
			}
			for _, w := range words {
				if _, ok := searchDictHead(w); ok {
					moved++ // a word of one rune has no node
				}
			}
			// A node these leave past searchDictMax is split by the step from layout 5, which follows.
			if err := s.runMany(ctx, adds); err != nil {
				return moved, fmt.Errorf("write the nodes of the search dictionary %s: %w", dict, err)
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

// searchKinds are the kinds of documents the index keeps, by their code.
var searchKinds = map[string]searchKind{"p": searchPosts, "c": searchComments, "g": searchGroupsKind, "u": searchUsersKind}

// packSearchLists moves the posting list of every term that names one document into the term's
// field of its bucket's searchRare hash, as a write of layout 5 leaves such a term, and returns how
// many it moved: the second search step of the migration from layout 4. Lists are read in
// batches and each moved by a script on the bucket's slot (search_rare.lua) only if it is still
// as read, and only into a field still empty, so it is safe beside traffic; a run cut off is
// resumed by running it again, which moves what is left.
func (s *Store) packSearchLists(ctx context.Context) (int, error) {
	moved := 0
	var batch []string
	flush := func() error {
		defer func() { batch = batch[:0] }()
		ops := make([]op, len(batch))
		gets := make([]*rdb.StringCmd, len(batch))
		for i, key := range batch {
			ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				gets[i] = p.Get(ctx, key)
				return gets[i], nil
			}}
		}
		if err := s.pipeline(ctx, ops, false); err != nil && !isNil(err) {
			return fmt.Errorf("read search lists: %w", err)
		}
		var calls []scriptCall
		for i, list := range batch {
			call, ok := s.packSearchListCall(list, gets[i].Val())
			if ok {
				calls = append(calls, call)
			}
		}
		if len(calls) == 0 {
			return nil
		}
		replies, err := s.runScripts(ctx, calls)
		if err != nil {
			return fmt.Errorf("move search lists: %w", err)
		}
		for i, r := range replies {
			n, err := replyInt(calls[i].name, r)
			if err != nil {
				return err
			}
			if n == 1 {
				moved++
			}
		}
		return nil
	}
	err := s.scanKeys(ctx, s.k.prefix+"{sx:*}:t:*", func(key string) error {
		if batch = append(batch, key); len(batch) >= 500 {
			return flush()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	return moved, err
}

// packSearchListCall returns the script call that moves list, whose value is v, into its term's
// field; ok is false when the list names more than one document (or none, or is not a list).
func (s *Store) packSearchListCall(list, v string) (call scriptCall, ok bool) {
	rest, found := strings.CutPrefix(list, s.k.prefix+"{sx:")
	if !found {
		return call, false
	}
	code, rest, _ := strings.Cut(rest, ":")
	bucketStr, rest, _ := strings.Cut(rest, "}:t:")
	blockStr, term, _ := strings.Cut(rest, ":")
	kind, known := searchKinds[code]
	bucket, err1 := strconv.Atoi(bucketStr)
	block, err2 := strconv.ParseInt(blockStr, 10, 64)
	if !known || err1 != nil || err2 != nil || term == "" || v == "" {
		return call, false
	}
	ps, err := kind.codec.Decode(nil, []byte(v))
	if err != nil || len(ps) != 1 {
		return call, false
	}
	posting := string(kind.codec.Append(nil, ps[0]))
	return scriptCall{name: "search_rare", keys: []string{list, s.k.searchRare(kind, bucket, term, block)}, args: []any{term, v, posting}}, true
}
