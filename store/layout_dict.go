package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/search"
)

// Layout 5 kept a bucket's search dictionary in parts, one sorted set per first two runes of its
// words ({sx:<kind>:<n>}:d:<head>), however many: a part of a long-tail vocabulary (numbers,
// names, typos) grew past 128 words and became a skiplist, about 100 bytes a word. Layout 6 keeps
// it as a tree of nodes of at most searchDictMax members each (searchDict): a part of layout 5 is
// a root without marks, which reads as it did, so readers and writers need no second shape while
// the migration runs; the migration moves the words of the largest parts down into nodes of
// longer prefixes, one child at a time (search_dict_split.lua), until every node is small enough
// to be listpack-encoded. Each move is one script on the bucket's slot, safe beside traffic (a
// write that meets a full node moves its own word's group the same way) and to run again: a
// group moved leaves its mark, and a second run finds every node small.

// splitSearchDictsDoes is what the migration's step for the search dictionaries does, for
// `agora migrate --dry-run`.
const splitSearchDictsDoes = "split every part of the search dictionaries of more than 128 words " +
	"({sx:<kind>:<n>}:d:<first two runes>, a skiplist) into nodes of longer prefixes ({sx:<kind>:<n>}:d:<prefix>) " +
	"of 128 members or fewer, so that each is listpack-encoded (about 90 bytes less per word of a long-tail vocabulary)"

// splitSearchDictNodes brings every node of the search dictionaries down to searchDictMax members or
// fewer, moving the largest groups of its words (those of one child, its prefix and one more rune)
// into their children's nodes, and the children's in turn, and returns how many words it moved:
// the search index's step of the migration from layout 5. A node whose words differ mostly in
// their next rune (more than searchDictMax groups of one word, a CJK prefix's) stays larger.
func (s *Store) splitSearchDictNodes(ctx context.Context) (int, error) {
	var nodes []string
	err := s.scanKeys(ctx, s.k.prefix+"{sx:*}:d:*", func(key string) error {
		nodes = append(nodes, key)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return s.splitSearchDictNodesOf(ctx, nodes)
}

// splitSearchDictNodesOf brings the nodes named (keys of nodes of search dictionaries) down to
// searchDictMax members or fewer as splitSearchDictNodes does every node: the migration's work,
// and a write's when search_dict_add left a node past searchDictMax.
func (s *Store) splitSearchDictNodesOf(ctx context.Context, nodes []string) (int, error) {
	moved := 0
	for len(nodes) > 0 {
		node := nodes[len(nodes)-1]
		nodes = nodes[:len(nodes)-1]
		base, prefix, ok := searchDictNodeKey(s.k, node)
		if !ok {
			continue
		}
		var read *rdb.StringSliceCmd
		if err := s.pipeline(ctx, []op{{key: node, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			read = p.ZRange(ctx, node, 0, -1)
			return read, nil
		}}}, false); err != nil {
			return moved, fmt.Errorf("read the search dictionary's node %s: %w", node, err)
		}
		members := read.Val()
		left := len(members)
		if left <= searchDictMax {
			continue
		}
		children, sizes := searchDictGroups(prefix, members)
		var calls []scriptCall
		for _, c := range children {
			// Largest first; a group of one word saves nothing (its mark takes its place) and costs
			// a key: a node of more than searchDictMax children of one word each stays as it is.
			if left <= searchDictMax || sizes[c] < 2 {
				break
			}
			calls = append(calls, scriptCall{name: "search_dict_split", keys: []string{node, base + c}, args: []any{c, searchDictMax}})
			left -= sizes[c] - 1 // the group goes, its mark comes
		}
		// In one pipeline, on one slot: each call reads the node as the one before left it.
		replies, err := s.runScripts(ctx, calls)
		if err != nil {
			return moved, fmt.Errorf("split the search dictionary's node %s: %w", node, err)
		}
		for i, v := range replies {
			n, err := replyInt(calls[i].name, v)
			if err != nil {
				return moved, err
			}
			moved += int(n)
			nodes = append(nodes, calls[i].keys[1]) // a child past searchDictMax is split in turn
		}
	}
	return moved, nil
}

// searchDictNodeKey returns the base ("<prefix>{sx:c:2}:d:") and the prefix of the key of a node
// of a search dictionary, and false for any other key.
func searchDictNodeKey(k keys, key string) (base, prefix string, ok bool) {
	rest, ok := strings.CutPrefix(key, k.prefix+"{sx:")
	if !ok {
		return "", "", false
	}
	code, rest, _ := strings.Cut(rest, ":")
	bucketStr, prefix, ok := strings.Cut(rest, "}:d:")
	bucket, err := strconv.Atoi(bucketStr)
	if _, known := searchKinds[code]; !ok || !known || err != nil || utf8.RuneCountInString(prefix) < search.MinPrefixRunes ||
		key != k.searchDict(code, bucket, prefix) {
		return "", "", false
	}
	return k.searchDictBase(code, bucket), prefix, true
}

// searchDictGroups returns the children of the node of prefix that hold words among members (the
// node's members), largest first (the smaller child first among equals), with how many each holds.
func searchDictGroups(prefix string, members []string) (children []string, sizes map[string]int) {
	sizes = map[string]int{}
	for _, m := range members {
		if strings.HasSuffix(m, "\x00") || len(m) <= len(prefix) || !strings.HasPrefix(m, prefix) {
			continue // a mark, or the word that is the prefix
		}
		_, size := utf8.DecodeRuneInString(m[len(prefix):])
		c := m[:len(prefix)+size]
		if sizes[c] == 0 {
			children = append(children, c)
		}
		sizes[c]++
	}
	slices.SortFunc(children, func(a, b string) int {
		return cmp.Or(cmp.Compare(sizes[b], sizes[a]), strings.Compare(a, b))
	})
	return children, sizes
}
