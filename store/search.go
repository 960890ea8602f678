package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/search"
)

// The search index is derived data, like the rankings: package search turns text into terms
// and ranks posting lists; this file keeps the lists in Redis.
//
//   - Terms, not documents, are partitioned: each term hashes to one of searchBuckets buckets
//     per kind of document, and a bucket is a hash tag ({sx:p:3}) holding its terms' posting
//     lists, a dictionary of its terms (for the prefix of search as you type) and its counts.
//     Buckets spread over a Cluster's nodes, and a query reads only the buckets of its terms,
//     in one pipeline. Partitioning by document instead would keep every term once per
//     partition: by estimate (a key costs about 60 bytes), 8 partitions of the bench corpus's
//     30,000 words would cost more in keys than the 1.5× of its text the index may take.
//   - A posting list is packed postings (a document's id as varints and one byte of BM25 impact,
//     see package search): 3–5 bytes a posting. A term's list is cut into blocks of searchBlock
//     documents (by post number), so that no list grows without bound and a query reads at most
//     searchMaxBlocks of the newest blocks: the documented ceiling of a term that matches
//     everything. A term's first posting in a block is a field of a hash of its bucket
//     (searchRare), its others a Redis string (searchList): a term of one document costs a field,
//     not a key. The dictionary is a tree of sorted sets by the first runes of its words
//     (searchDict), none of more than searchDictMax members, so that each stays a listpack.
//   - Writes put each posting in with one command (an APPEND to the list of a term known to have
//     postings, a HSETNX of the field of any other), in the pipeline of the write's other
//     derived writes, and finish in a second (finishSearch). Edits write again; the last posting
//     of a document counts. Nothing is removed: a deleted, removed or edited document is checked
//     at read time against what it is now (searchVisible), so results are exact, and `rebuild`
//     writes every list anew from the primary data, compact.

// searchBuckets is how many buckets the terms of one kind are spread over.
const searchBuckets = 4

// searchBlockShift sets the size of a block: posts 0–16383 are block 0, and so on.
const searchBlockShift = 14

// searchMaxBlocks is how many blocks, newest first, a query reads per term: the newest
// searchMaxBlocks << searchBlockShift posts (about a million) and their comments are searched.
const searchMaxBlocks = 64

// searchMaxExpansions is how many dictionary words the prefix of a query expands to, at most:
// the first ones in byte order.
const searchMaxExpansions = 32

// searchTopCap bounds the sort by votes: the newest searchTopCap matches are sorted by their
// votes. Relevance and NEW sort every match.
const searchTopCap = 5000

// commentVoteFields are the fields commentsByVotes reads of each candidate of a TOP search of
// comments: its vote counts (besides those every read has).
const commentVoteFields = CommentUp | CommentDown

// searchKind is one kind of indexed document.
type searchKind struct {
	code  string // in the bucket's hash tag: "p" posts, "c" comments
	codec search.Codec
	// rareParts is how many searchRare hashes a bucket's terms of one block are spread over:
	// enough that each stays listpack-encoded (128 fields) with 128 × rareParts × searchBuckets
	// terms of one document in a block, few enough that a small index fills each with several.
	rareParts int
}

var (
	// A block of posts holds 16,384 posts: up to 64 Ki terms of one post stay listpack-encoded.
	searchPosts = searchKind{code: "p", codec: search.Number, rareParts: 128}
	// A block's comments are those of 16,384 posts: up to 128 Ki terms of one comment.
	searchComments = searchKind{code: "c", codec: search.Pair, rareParts: 256}
)

// Weights of the fields: a word of a title counts as three of a body.
const (
	searchTitleWeight = 3
	searchBodyWeight  = 1
)

// The usual lengths of the fields, in terms (BM25's avgdl, field by field): a field longer than
// its usual length is discounted, a shorter one counts more (see search.Impacts).
const (
	searchTitleLen   = 8
	searchBodyLen    = 75
	searchCommentLen = 40
)

// searchBucket returns the bucket of a term.
func searchBucket(term string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(term))
	return int(h.Sum32() % searchBuckets)
}

// searchTag returns the hash tag of one bucket of a kind.
func (k keys) searchTag(kind string, bucket int) string {
	return k.prefix + "{sx:" + kind + ":" + strconv.Itoa(bucket) + "}"
}

// searchList is a string: the posting list of one term in one block of a kind's documents, but
// for its first posting, which its field of a searchRare hash holds.
func (k keys) searchList(kind string, bucket int, term string, block int64) string {
	return k.searchTag(kind, bucket) + ":t:" + strconv.FormatInt(block, 10) + ":" + term
}

// searchRare is a hash of one part of a bucket's terms in one block: a term's field holds its
// first posting, and its list (searchList) the ones after it, so that a term of one document
// costs a field (about 20 bytes) and not a key (about 90). The terms of a bucket are spread over
// kind.rareParts parts by their hash, so that each stays listpack-encoded (128 fields or fewer).
func (k keys) searchRare(kind searchKind, bucket int, term string, block int64) string {
	return k.searchTag(kind.code, bucket) + ":r:" + strconv.FormatInt(block, 10) + ":" + strconv.Itoa(searchRarePart(kind, term))
}

// searchRarePart returns the part of term's bucket whose searchRare hash holds its field.
func searchRarePart(kind searchKind, term string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(term))
	return int(h.Sum32() / searchBuckets % uint32(kind.rareParts)) // the bits the bucket left
}

// searchDict is a node of the dictionary of one bucket, for prefixes: a sorted set (all scores
// 0) of words that begin with prefix (two runes or more), and of marks "<child>\x00" of children
// (prefix and one more rune) whose words are all in their own nodes, none in this one. The roots
// are the nodes of the first two runes of words (search.MinPrefixRunes, the shortest prefix);
// a node that is full (searchDictMax members, the most a listpack-encoded sorted set holds) and
// takes a word moves the words of the word's next prefix into that prefix's node first
// (search_dict_add.lua), so that every node stays listpack-encoded: about 10 bytes a word, where a
// skiplist costs about 100. A word's nodes are those of its prefixes, known before the write, so
// its script declares every key it touches. A prefix's words are read by one script per bucket
// (search_dict_read.lua), in the query's pipeline: down the prefix's chain to the first node
// without the mark of the next, then that node's words of the prefix with each mark's child's
// words in its place, in byte order. Layout 5 kept one sorted set per root, however large: those
// are nodes without marks, which read as they did, and the migration from layout 5 splits those
// past searchDictMax (splitSearchDictNodes).
func (k keys) searchDict(kind string, bucket int, prefix string) string {
	return k.searchDictBase(kind, bucket) + prefix
}

// searchDictBase is the name of every node of a bucket's dictionary without its prefix.
func (k keys) searchDictBase(kind string, bucket int) string {
	return k.searchTag(kind, bucket) + ":d:"
}

// searchDictMax is the most members a node of the dictionary holds but for a word that is its
// prefix: zset-max-listpack-entries, Redis's default.
const searchDictMax = 128

// searchDictChain returns the nodes of word's prefixes of search.MinPrefixRunes runes or more,
// shortest first (base is searchDictBase), and the prefixes' lengths in bytes; nil for a word
// shorter than that.
func searchDictChain(base, word string) (nodes []string, lens []any) {
	n := 0
	for i := range word {
		if n >= search.MinPrefixRunes {
			nodes, lens = append(nodes, base+word[:i]), append(lens, i)
		}
		n++
	}
	if n >= search.MinPrefixRunes {
		nodes, lens = append(nodes, base+word), append(lens, len(word))
	}
	return nodes, lens
}

// searchDictWordsPerCall bounds the words of one search_dict_add call, so that a document of many
// words (or a rebuild's batch of documents) does not hold Redis in one long script.
const searchDictWordsPerCall = 256

// searchDictAdd returns the script call that puts words into the dictionary whose nodes' base is
// base (search_dict_add.lua), leaving out those no prefix expands to; ok is false when none is
// left.
func searchDictAdd(base string, words ...string) (call scriptCall, ok bool) {
	call = scriptCall{name: "search_dict_add", args: []any{searchDictMax}}
	for _, w := range words {
		nodes, lens := searchDictChain(base, w)
		if len(nodes) == 0 {
			continue
		}
		call.keys = append(call.keys, nodes...)
		call.args = append(append(call.args, w, len(nodes)), lens...)
	}
	return call, len(call.keys) > 0
}

// searchDictHead returns the first two runes of word, which name its root in the dictionary; ok
// is false for a word shorter than that, which no prefix can expand to and so no node holds.
func searchDictHead(word string) (head string, ok bool) {
	n := 0
	for i := range word {
		if n == search.MinPrefixRunes {
			return word[:i], true
		}
		n++
	}
	return word, n == search.MinPrefixRunes
}

// searchCounts is a sorted set of one bucket whose scores are its counts: docs (documents first
// indexed in the bucket: the sum over buckets is the kind's count, for IDF) and top (the newest
// block written in the bucket).
func (k keys) searchCounts(kind string, bucket int) string { return k.searchTag(kind, bucket) + ":n" }

// searchFilter returns the pseudo-term that marks a document's group or author: "#g:golang",
// "#a:alice". Terms of text are letters and digits only, so they never collide.
func searchFilter(kind byte, value string) string { return "#" + string(kind) + ":" + value }

// searchDoc is one document to index.
type searchDoc struct {
	kind    searchKind
	doc     search.Doc
	block   int64
	fields  []search.Field
	filters []string // pseudo-terms: groups, author
	isNew   bool     // first indexed: counted for IDF
}

// searchWrite is the index writes of some documents, in two steps. First (ops) every posting is
// appended to its list with a plain APPEND, each document is counted (ZINCRBY) and each bucket's
// newest block recorded (ZADD GT); these ride in the pipeline of the write's other derived writes.
// Then, once Redis has applied them all (finish), the words whose list in a block has just begun
// join their bucket's dictionary and every bucket written raises its revision. A revision raised
// only after the data it guards keeps the response cache exact: a response that read a bucket
// before an append holds an older revision than the bucket has after it. The first step has no
// Lua: a script call costs Redis about 16 µs on top of its commands, and a post touches every
// bucket. The words join their dictionaries with one script a bucket (search_dict_add.lua, which
// may have to move words down the tree), and only the words whose list in a block begins.
type searchWrite struct {
	s        *Store
	appends  []op
	postings []searchPosting
	revs     []string       // the revision counters of the buckets written
	counts   [][2]rdb.Cmder // the commands of each bucket's counts (top, docs)
	// full adds every word to its dictionary, not only those whose list began: a repair's
	// writes, after a write whose appends went in but whose dictionary step was cut off.
	full bool
}

// searchPosting is one posting of a searchWrite.
type searchPosting struct {
	length *rdb.IntCmd  // the list's length after the APPEND; nil where a field was tried
	first  *rdb.BoolCmd // whether HSETNX set the term's first posting; nil for an APPEND
	list   string       // the term's list
	kind   string       // the code of the document's kind
	term   string
	value  string // the posting
	word   string // the word of the term, "" for a mark or a word of one rune
	dict   string // the base of the nodes of the word's dictionary (searchDictBase)
}

// repairing makes w add every word to its dictionary (see full); it returns w.
func (w *searchWrite) repairing() *searchWrite {
	if w != nil {
		w.full = true
	}
	return w
}

// searchWrites returns the index writes of docs; nil when the index is off or docs have no terms.
func (s *Store) searchWrites(docs ...searchDoc) *searchWrite {
	if !s.opts.searchOn() || len(docs) == 0 {
		return nil
	}
	w := &searchWrite{s: s}
	seenRev := map[string]bool{}
	for _, d := range docs {
		impacts, _ := search.Impacts(d.fields)
		for _, f := range d.filters {
			impacts[f] = 1
		}
		terms := make([]string, 0, len(impacts))
		for t := range impacts {
			terms = append(terms, t)
		}
		slices.Sort(terms)
		w.postings = slices.Grow(w.postings, len(terms))
		w.appends = slices.Grow(w.appends, len(terms)+searchBuckets) // a posting a term, the counts a bucket
		touched := map[int]bool{}
		for _, t := range terms {
			b := searchBucket(t)
			touched[b] = true
			list := s.k.searchList(d.kind.code, b, t, d.block)
			posting := string(d.kind.codec.Append(nil, search.Posting{Doc: d.doc, Impact: impacts[t]}))
			i := len(w.postings)
			w.postings = append(w.postings, searchPosting{list: list, kind: d.kind.code, term: t, value: posting})
			if _, ok := searchDictHead(t); ok && !strings.HasPrefix(t, "#") {
				// A mark, or a word shorter than any prefix, has none: no prefix finds it.
				w.postings[i].word, w.postings[i].dict = t, s.k.searchDictBase(d.kind.code, b)
			}
			if s.searchCommon.has(d.kind.code, t) {
				w.appends = append(w.appends, op{key: list, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
					w.postings[i].length = p.Append(context.Background(), list, posting)
					return w.postings[i].length, nil
				}})
				continue
			}
			// A term not known to have postings: its field takes the posting if it has none
			// yet; if it has, finishSearch appends the posting to the term's list.
			rare := s.k.searchRare(d.kind, b, t, d.block)
			w.appends = append(w.appends, op{key: rare, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				w.postings[i].first = p.HSetNX(context.Background(), rare, t, posting)
				return w.postings[i].first, nil
			}})
		}
		for b := range touched {
			counts, block := s.k.searchCounts(d.kind.code, b), float64(d.block)
			count := d.isNew && len(terms) > 0 && b == searchBucket(terms[0]) // in its first term's bucket
			j := len(w.counts)
			w.counts = append(w.counts, [2]rdb.Cmder{})
			w.appends = append(w.appends, op{key: counts, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				w.counts[j] = [2]rdb.Cmder{p.ZAddGT(context.Background(), counts, rdb.Z{Score: block, Member: "top"}), nil}
				if count {
					w.counts[j][1] = p.ZIncrBy(context.Background(), counts, 1, "docs")
				}
				return w.counts[j][0], w.counts[j][1]
			}})
			if rev := s.k.revOf(counts); !seenRev[rev] {
				seenRev[rev] = true
				w.revs = append(w.revs, rev)
			}
		}
	}
	if len(w.appends) == 0 {
		return nil
	}
	return w
}

// ops returns the first step's operations, for the pipeline of a write's derived writes; its
// caller checks err once the pipeline returned.
func (w *searchWrite) ops() []op {
	if w == nil {
		return nil
	}
	return w.appends
}

// err returns the first error Redis answered to the first step's commands (a full Redis's OOM
// among them), typed: the pipeline that carried them reports only its own failure, and a write
// whose index writes were refused must fail, keeping its repair note, rather than pass for done.
func (w *searchWrite) err() error {
	if w == nil {
		return nil
	}
	for _, sp := range w.postings {
		var err error
		switch {
		case sp.length != nil:
			err = sp.length.Err()
		case sp.first != nil:
			err = sp.first.Err()
		}
		if err != nil {
			return fmt.Errorf("index for search: %w", rdb.StorageFull(err))
		}
	}
	for _, cs := range w.counts {
		if err := rdb.FirstErr(cs); err != nil {
			return fmt.Errorf("index for search: %w", rdb.StorageFull(err))
		}
	}
	return nil
}

// finishSearch is the second step of w, after its ops have run: the dictionaries, then the
// revisions; then the split of any node of a dictionary that search_dict_add left past
// searchDictMax (a full node that took a word of a group it held none of).
func (s *Store) finishSearch(ctx context.Context, w *searchWrite) error {
	if w == nil {
		return nil
	}
	var ops []op
	var bases []string             // the dictionaries written, in the order they came
	words := map[string][]string{} // by base: the words that join the dictionary
	for _, sp := range w.postings {
		began := sp.length != nil && sp.length.Val() == int64(len(sp.value)) // the term's list has just begun
		if f := sp.first; f != nil {
			if f.Err() != nil {
				continue // the pipeline has failed: its error is the write's
			}
			began = f.Val() // the term's first posting
			if !began {
				// The term had its first posting: this one goes to its list, and the term's
				// next ones straight there.
				w.s.searchCommon.learn(sp.kind, sp.term)
				list, posting := sp.list, sp.value
				ops = append(ops, op{key: list, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
					return p.Append(ctx, list, posting), nil
				}})
			}
		}
		if sp.word == "" || !w.full && !began {
			continue // the term had postings already: its word is in the dictionary
		}
		if words[sp.dict] == nil {
			bases = append(bases, sp.dict)
		}
		words[sp.dict] = append(words[sp.dict], sp.word)
	}
	// One script a dictionary (searchDictWordsPerCall words at most), which raises the bucket's
	// revision itself, as runScripts has every write script do; it rides here, in the pipeline of
	// the step's other commands.
	var adds []*rdb.Cmd // each call's, the last sent (a retry sends again)
	for _, base := range bases {
		for ws := range slices.Chunk(words[base], searchDictWordsPerCall) {
			call, _ := searchDictAdd(base, ws...) // every word has a node
			sc, keys, args := s.scripts.get(call.name), append(call.keys, s.k.revOf(call.keys[0])), call.args
			j := len(adds)
			adds = append(adds, nil)
			ops = append(ops, op{key: keys[0], fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				adds[j] = sc.EvalSha(ctx, p, keys, args...)
				return adds[j], nil
			}})
		}
	}
	for _, rev := range w.revs {
		ops = append(ops, op{key: rev, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			return p.Incr(ctx, rev), nil
		}})
	}
	if err := s.pipeline(ctx, ops, true); err != nil {
		return fmt.Errorf("finish the search index: %w", err)
	}
	for i := range ops {
		if err := rdb.FirstErr(ops[i].Sent()); err != nil {
			return fmt.Errorf("finish the search index: %w", rdb.StorageFull(err))
		}
	}
	var over []string
	for _, cmd := range adds {
		_, nodes, err := searchDictAdded(cmd.Val())
		if err != nil {
			return err
		}
		over = append(over, nodes...)
	}
	if _, err := s.splitSearchDictNodesOf(ctx, over); err != nil {
		return fmt.Errorf("finish the search index: %w", err)
	}
	return nil
}

// searchDictAdded returns what search_dict_add replied: how many words it put in, and the nodes
// it left with more than searchDictMax members, which splitSearchDictNodesOf brings down.
func searchDictAdded(v any) (added int64, over []string, err error) {
	arr, err := replyArray("search_dict_add", v, 1)
	if err != nil {
		return 0, nil, err
	}
	if added, err = replyInt("search_dict_add", arr[0]); err != nil {
		return 0, nil, err
	}
	if over, err = replyStrings("search_dict_add", arr[1:], -1); err != nil {
		return 0, nil, err
	}
	return added, over, nil
}

// writeSearch indexes docs in its two steps.
func (s *Store) writeSearch(ctx context.Context, docs ...searchDoc) error {
	return s.runSearchWrite(ctx, s.searchWrites(docs...))
}

// runSearchWrite runs w's two steps.
func (s *Store) runSearchWrite(ctx context.Context, w *searchWrite) error {
	if w == nil {
		return nil
	}
	if err := s.pipeline(ctx, w.ops(), true); err != nil {
		return fmt.Errorf("index for search: %w", err)
	}
	if err := w.err(); err != nil {
		return err
	}
	return s.finishSearch(ctx, w)
}

// postSearchDoc is the document of a live post.
func postSearchDoc(p *Post, isNew bool) searchDoc {
	n, _ := strconv.ParseUint(p.Key(), 10, 64)
	filters := []string{searchFilter('a', string(p.Author))}
	for _, g := range p.GroupNames {
		filters = append(filters, searchFilter('g', g))
	}
	return searchDoc{
		kind:    searchPosts,
		doc:     search.Doc{A: n},
		block:   int64(n >> searchBlockShift),
		fields:  []search.Field{{Text: p.Title, Weight: searchTitleWeight, AvgLen: searchTitleLen}, {Text: p.Body, Weight: searchBodyWeight, AvgLen: searchBodyLen}},
		filters: filters,
		isNew:   isNew,
	}
}

// searchPostTokens returns the tokens of a post's text as its index has them (search.Impacts):
// the title's, an empty token, the body's.
func searchPostTokens(p *Post) []string {
	return append(append(search.Analyze(p.Title), ""), search.Analyze(p.Body)...)
}

// SearchSort orders search results.
type SearchSort int

// The orders of search results.
const (
	SearchRelevance SearchSort = iota // BM25, title above body
	SearchNew                         // newest first
	SearchTop                         // most net votes first (among the newest searchTopCap matches)
)

// PostSearch is what searchPosts asks for.
type PostSearch struct {
	Query  string
	Group  string     // only posts in this group; "" for all
	Author string     // only posts by this user (a name); "" for all
	Since  *time.Time // only posts published at or after this time
	Sort   SearchSort
}

// ErrSearchOff is the error of a search on a server run with -search=false.
func errSearchOff() error {
	return &Error{Kind: KindForbidden, Msg: "search is turned off on this server (-search=false)"}
}

// parseSearch parses a query, mapping its errors to KindInvalid.
func parseSearch(raw string) (search.Query, error) {
	q, err := search.Parse(raw)
	if err != nil {
		return q, invalidf("%s", err.Error())
	}
	return q, nil
}

// searchPlan is the part of a search that reads the index: what terms, in which blocks.
type searchPlan struct {
	kind    searchKind
	q       search.Query
	filters []string
	// at are the statistics to score with: those a cursor of the search carries (cursorStats),
	// so that its next pages rank as its first did; the index's own when zero.
	at search.Stats
}

// searchGuesses is what this process last learnt of the index, so that a search reads its
// counts, its prefix's words and its posting lists in one round trip rather than two: the
// newest block of each kind, and the words each prefix expanded to. A guess only chooses what
// the first pipeline reads besides the counts and the dictionaries; those are read in the same
// pipeline, and whatever the guess missed (a block begun since, a word new to the dictionary)
// is read in a second one. So a guess never changes an answer, only its round trips.
type searchGuesses struct {
	mu         sync.Mutex
	tops       map[string]int64    // kind → its newest block
	expansions map[string][]string // kind, prefix → the words it expanded to
}

// searchGuessesMax bounds how many prefixes searchGuesses remembers: past it, it forgets them all.
const searchGuessesMax = 4096

// guess returns the newest block of kind last seen (ok false when none was), and the words
// prefix last expanded to (known false when unknown).
func (g *searchGuesses) guess(kind, prefix string) (top int64, ok bool, words []string, known bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	top, ok = g.tops[kind]
	if prefix != "" {
		words, known = g.expansions[kind+"\x00"+prefix]
	}
	return top, ok, words, known
}

// learn records what a search read: the newest block of kind, and what prefix expanded to.
func (g *searchGuesses) learn(kind string, top int64, prefix string, words []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tops == nil || len(g.expansions) >= searchGuessesMax {
		g.tops, g.expansions = map[string]int64{}, map[string][]string{}
	}
	g.tops[kind] = top
	if prefix != "" {
		g.expansions[kind+"\x00"+prefix] = words
	}
}

// searchCommonTerms is the terms of each kind that this process knows to have postings after
// their first (in their lists, not only in their searchRare field), so that a write appends their
// postings straight to their lists: a common word costs one command per write, as a rare one does,
// and not a field's check and then an append. It only chooses where a write puts a posting, both
// places are read, so it never changes an answer; a term it does not know yet costs one command
// more, once (finishSearch), and a term it knows whose list a rebuild has dropped only gets a list
// where a field would have done.
type searchCommonTerms struct {
	mu    sync.Mutex
	terms map[searchTermOf]struct{}
}

// searchTermOf names a term of one kind.
type searchTermOf struct{ kind, term string }

// searchCommonMax bounds how many terms searchCommonTerms remembers: past it, it forgets them all.
const searchCommonMax = 1 << 16

// has reports whether term of kind is known to have postings after its first.
func (c *searchCommonTerms) has(kind, term string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.terms[searchTermOf{kind, term}]
	return ok
}

// learn records that term of kind has postings after its first.
func (c *searchCommonTerms) learn(kind, term string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.terms == nil || len(c.terms) >= searchCommonMax {
		c.terms = map[searchTermOf]struct{}{}
	}
	c.terms[searchTermOf{kind, term}] = struct{}{}
}

// searchDictRead is the read of the first searchMaxExpansions words that begin with prefix (of
// search.MinPrefixRunes runes or more) in the dictionary whose nodes' base is base
// (search_dict_read.lua); searchDictWords decodes it.
func (l *Loader) searchDictRead(base, prefix string) read {
	sc := l.s.scripts.get("search_dict_read")
	nodes, lens := searchDictChain(base, prefix)
	args := append([]any{prefix, searchMaxExpansions, base}, lens...)
	return read{key: "sxd:" + base + prefix, rkey: nodes[0], fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = sc.EvalSha(ctx, p, nodes, args...)
	}}
}

// searchDictWords returns the words of a done searchDictRead, in byte order.
func searchDictWords(c *call) ([]string, error) {
	return replyStrings("search_dict_read", c.cmd.(*rdb.Cmd).Val(), -1)
}

// searchHits reads the posting lists of a plan and returns its matches in document order. One
// pipeline reads every bucket's counts (the documents, for IDF, and the newest block), the
// prefix's words from the dictionaries, and the lists that searchGuesses says the search will
// need; a second one reads only what the guess missed. The lists are read within the search's
// budget (searchListBytes, out of its request's: listBudget), newest blocks first
// (searchListsOf): the search covers the newest blocks that every bucket of its terms read, down
// to its horizon.
func (l *Loader) searchHits(ctx context.Context, pl searchPlan) ([]search.Hit, search.Stats, error) {
	k, code := l.s.k, pl.kind.code
	terms := append(slices.Clone(pl.q.Terms), pl.filters...)
	budget := l.searchListBudget()
	share := budget.reserve(int64(l.s.opts.SearchListBytes))
	var spent int64 // the bytes of the lists read
	defer func() { budget.settle(share, spent) }()
	var reads []read
	for b := range searchBuckets {
		key := k.searchCounts(code, b)
		reads = append(reads, read{key: "sxn:" + key, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
			c.cmd = p.ZMScore(ctx, key, "docs", "top")
		}})
	}
	if pl.q.Prefix != "" {
		for b := range searchBuckets {
			reads = append(reads, l.searchDictRead(k.searchDictBase(code, b), pl.q.Prefix))
		}
	}
	fixed := len(reads)
	guessTop, guessed, guessWords, knownWords := l.s.searchGuess.guess(code, pl.q.Prefix)
	if guessed && (pl.q.Prefix == "" || knownWords) {
		// The block after the newest too: a block begun since costs no second round trip. A
		// prefix whose words are not known reads its lists in the second round trip it needs
		// anyway, with every term's, so that no list is read twice.
		reads = append(reads, l.searchListsOf(pl.kind, append(slices.Clone(terms), guessWords...), guessTop+1, share).reads...)
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, search.Stats{}, err
	}
	var docs int64
	top := int64(-1)
	for _, c := range calls[:searchBuckets] {
		v := c.cmd.(*rdb.FloatSliceCmd).Val() // a missing count reads 0
		if len(v) == 2 {
			docs += int64(v[0])
			top = max(top, int64(v[1]))
		}
	}
	var expansions []string
	for _, c := range calls[searchBuckets:fixed] {
		words, err := searchDictWords(c)
		if err != nil {
			return nil, search.Stats{}, err
		}
		expansions = append(expansions, words...)
	}
	slices.Sort(expansions)
	if len(expansions) > searchMaxExpansions {
		expansions = expansions[:searchMaxExpansions]
	}
	l.s.searchGuess.learn(code, top, pl.q.Prefix, expansions)
	guessedLists := calls[fixed:]
	if top < 0 {
		spent = searchListsBytes(guessedLists)
		return nil, search.Stats{}, nil // an empty index
	}
	// The lists of every term, newest blocks first: those of the first pipeline when its guess
	// was right (the same reads: the loader's already), else one more. Blocks from hi down.
	hi := top + 1
	if guessed && (top == guessTop || top == guessTop+1) {
		hi = guessTop + 1
	}
	all := append(terms, expansions...)
	sl := l.searchListsOf(pl.kind, all, hi, share)
	calls = l.getAll(ctx, sl.reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, search.Stats{}, err
	}
	spent = searchListsBytes(append(slices.DeleteFunc(guessedLists, func(c *call) bool { return slices.Contains(calls, c) }), calls...))
	replies := make([][]any, len(calls))
	horizon := max(0, top-searchMaxBlocks+1) // the oldest block the search covers
	for i, c := range calls {
		arr, err := replyArray("search_lists", c.cmd.(*rdb.Cmd).Val(), 1)
		if err != nil {
			return nil, search.Stats{}, err
		}
		n, err := replyInt("search_lists", arr[0])
		if err != nil {
			return nil, search.Stats{}, err
		}
		if want := 1 + 2*int(n)*len(sl.terms[i]); len(arr) != want {
			return nil, search.Stats{}, &ReplyError{Script: "search_lists", Want: fmt.Sprintf("an array of %d", want), Got: arr}
		}
		replies[i] = arr[1:]
		horizon = max(horizon, hi-n+1) // the bucket read n blocks from hi down
	}
	decode := func(term int) ([]search.Posting, error) {
		var ps []search.Posting
		var buf []byte
		r, at := sl.at[term][0], sl.at[term][1]
		nt := len(sl.terms[r])
		for blk := horizon; blk <= top; blk++ { // the oldest first: the postings in document order
			j := 2 * (int(hi-blk)*nt + at)
			first, err := replyString("search_lists", replies[r][j])
			if err != nil {
				return nil, err
			}
			list, err := replyString("search_lists", replies[r][j+1])
			if err != nil {
				return nil, err
			}
			buf = append(append(buf[:0], first...), list...) // one list: the first posting, then the others
			if ps, err = pl.kind.codec.Decode(ps, buf); err != nil {
				return nil, fmt.Errorf("search list %s: %w", k.searchList(code, searchBucket(all[term]), all[term], blk), err)
			}
		}
		return ps, nil
	}
	// The lists decode side by side: a common word's list is most of a search's own work.
	lists := make([][]search.Posting, len(all))
	errs := make([]error, len(lists))
	var wg sync.WaitGroup
	for i := range lists {
		wg.Go(func() { lists[i], errs[i] = decode(i) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, search.Stats{}, err
	}
	required := lists[:len(terms)]
	for _, ps := range required {
		if len(ps) == 0 {
			return nil, search.Stats{}, nil // a required term matches nothing
		}
	}
	var prefix *search.Prefix
	if pl.q.Prefix != "" {
		prefix = &search.Prefix{Exact: -1, Lists: lists[len(terms):]}
		for i, word := range expansions {
			if word == pl.q.Prefix {
				prefix.Exact = i
			}
		}
	}
	at := pl.at
	if at.DF == nil {
		at.N = int(docs)
	}
	hits, used := search.MatchAt(required, prefix, at)
	return hits, used, nil
}

// searchLists is the reads of a search's posting lists: a search_lists call per bucket of its
// terms, each reading the bucket's terms' lists from block hi down, newest first, within the
// bucket's share of the search's budget.
type searchLists struct {
	reads []read
	terms [][]string // the terms of each read, in its order
	at    [][2]int   // for each term of the search, its read and its place among the read's terms
}

// searchListsOf returns the reads of the posting lists of terms (some may repeat) in the
// searchMaxBlocks+1 blocks from hi down, with budget bytes in all: each bucket's read has the
// share of its terms. A bucket's read stops at the first block whose lists do not fit in its
// share, so that it reads its newest blocks; the search then covers the blocks every bucket
// read (searchHits). The same terms, hi and budget make the same reads, which the loader sends
// once: the second pipeline of a search whose guess was right reads nothing new.
func (l *Loader) searchListsOf(kind searchKind, terms []string, hi int64, budget int64) searchLists {
	k := l.s.k
	sl := searchLists{at: make([][2]int, len(terms))}
	byBucket := [searchBuckets][]string{}
	place := map[string][2]int{} // a term's bucket and place in it
	for _, t := range terms {
		if _, ok := place[t]; !ok {
			b := searchBucket(t)
			place[t] = [2]int{b, len(byBucket[b])}
			byBucket[b] = append(byBucket[b], t)
		}
	}
	lo := max(0, hi-searchMaxBlocks)
	readOf := [searchBuckets]int{}
	for b, ts := range byBucket {
		if len(ts) == 0 {
			continue
		}
		share := budget * int64(len(ts)) / int64(len(place))
		keys := make([]string, 0, 2*len(ts)*int(hi-lo+1))
		for blk := hi; blk >= lo; blk-- {
			for _, t := range ts {
				keys = append(keys, k.searchList(kind.code, b, t, blk), k.searchRare(kind, b, t, blk))
			}
		}
		args := make([]any, 0, 1+len(ts))
		args = append(args, share)
		for _, t := range ts {
			args = append(args, t)
		}
		sc := l.s.scripts.get("search_lists")
		key := "sxs:" + k.searchTag(kind.code, b) + ":" + strconv.FormatInt(hi, 10) + ":" + strconv.FormatInt(share, 10) + ":" + strings.Join(ts, "\x00")
		readOf[b] = len(sl.reads)
		sl.reads = append(sl.reads, read{key: key, rkey: keys[0], fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
			c.cmd = sc.EvalSha(ctx, p, keys, args...)
		}})
		sl.terms = append(sl.terms, ts)
	}
	for i, t := range terms {
		pt := place[t]
		sl.at[i] = [2]int{readOf[pt[0]], pt[1]}
	}
	return sl
}

// searchListsBytes returns the bytes of the lists that the done search_lists calls cs read.
func searchListsBytes(cs []*call) int64 {
	n := int64(0)
	for _, c := range cs {
		arr, err := replyArray("search_lists", c.cmd.(*rdb.Cmd).Val(), 1)
		if err != nil {
			continue // searchHits refuses the reply where it decodes it
		}
		for _, e := range arr[1:] {
			if s, ok := e.(string); ok {
				n += int64(len(s))
			}
		}
	}
	return n
}

// listBudget is what the searches of one request may still read of posting lists together
// (requestSearchListBytes): each search takes its budget out of it before it reads, and gives
// back what it did not read.
type listBudget struct {
	mu   sync.Mutex
	left int64
}

// reserve takes up to n bytes out of the budget for one search and returns how many it took:
// none once the request's searches have read it all.
func (b *listBudget) reserve(n int64) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	took := max(0, min(n, b.left))
	b.left -= took
	return took
}

// settle gives back the bytes a search reserved but did not read; a search that read more (a
// first pipeline that guessed wrong, then its second) takes what it read past them.
func (b *listBudget) settle(reserved, read int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left += reserved - read
}

// searchListBudget returns the budget of posting lists that all the searches of the loader's
// request share (requestSearchListBytes).
func (l *Loader) searchListBudget() *listBudget {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lists == nil {
		l.lists = &listBudget{left: 2 * int64(l.s.opts.SearchListBytes)} // requestSearchListBytes by default
	}
	return l.lists
}

// searchCursorTag names the list of one search in its cursors, so that a cursor of one search
// is refused by another.
func searchCursorTag(kind string, sort SearchSort, parts ...string) string {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return "s" + kind + strconv.Itoa(int(sort)) + ":" + strconv.FormatUint(h.Sum64(), 36)
}

// hitOfCursor turns a decoded cursor back into the hit it names; ok is false for no cursor.
func hitOfCursor(c cursor, kind searchKind) (search.Hit, bool, error) {
	if c.score == "" {
		return search.Hit{}, false, nil
	}
	score, err := strconv.ParseFloat(c.score, 64)
	if err != nil {
		return search.Hit{}, false, invalidf("malformed cursor")
	}
	m, _, _ := strings.Cut(c.member, "|") // the statistics after it: cursorStats
	d, err := searchDocOfMember(kind, m)
	if err != nil {
		return search.Hit{}, false, err
	}
	return search.Hit{Doc: d, Score: score}, true, nil
}

// searchDocOfMember parses the member of a search cursor: a post number, "post:num" for a
// comment, or the key of a group or a user.
func searchDocOfMember(kind searchKind, m string) (search.Doc, error) {
	if kind.codec == search.Text {
		if m == "" {
			return search.Doc{}, invalidf("malformed cursor")
		}
		return search.Doc{S: m}, nil
	}
	a, b, pair := strings.Cut(m, ":")
	x, err := strconv.ParseUint(a, 10, 64)
	if err != nil || pair != (kind.codec == search.Pair) {
		return search.Doc{}, invalidf("malformed cursor")
	}
	d := search.Doc{A: x}
	if pair {
		if d.B, err = strconv.ParseUint(b, 10, 64); err != nil {
			return search.Doc{}, invalidf("malformed cursor")
		}
	}
	return d, nil
}

// searchCursor encodes the cursor of a hit; stats, when not empty, are the statistics its page
// scored with (searchStats), which the next pages score with again.
func searchCursor(tag string, h search.Hit, stats string) string {
	m := strconv.FormatUint(h.Doc.A, 10)
	switch {
	case h.Doc.S != "":
		m = h.Doc.S
	case h.Doc.B != 0:
		m += ":" + strconv.FormatUint(h.Doc.B, 10)
	}
	if stats != "" {
		m += "|" + stats
	}
	return cursor{list: tag, score: strconv.FormatFloat(h.Score, 'g', -1, 64), member: m}.encode()
}

// searchStats encodes the statistics a page of a relevance search scored with, for its cursors:
// the number of documents, then each list's document frequency, in base 36 with dots between.
// A score depends on them, and every document indexed changes them: a cursor that kept only its
// score was compared, on the next page, with scores of other statistics, and skipped or repeated
// the results around it (every one of them, for a one-word query, when posts were created
// between the pages). Sorts other than RELEVANCE rank by what the statistics do not change, and
// their cursors carry none ("").
func searchStats(st search.Stats) string {
	b := strconv.AppendInt(nil, int64(st.N), 36)
	for _, df := range st.DF {
		b = strconv.AppendInt(append(b, '.'), int64(df), 36)
	}
	return string(b)
}

// searchMaxStatLists bounds the lists a cursor's statistics name: a query's terms and prefix
// (search.MaxQueryTerms) and its filters (a scope and an author).
const searchMaxStatLists = search.MaxQueryTerms + 2

// cursorStats returns the statistics the cursor of sp carries (its after cursor's, else its
// before cursor's), for the search to score with again; zero when it carries none (a first page,
// or a cursor of an older server), and then the index's own are used.
func cursorStats(sp span) (search.Stats, error) {
	c := sp.after
	if c.score == "" {
		c = sp.before
	}
	_, raw, ok := strings.Cut(c.member, "|")
	if !ok {
		return search.Stats{}, nil
	}
	parts := strings.Split(raw, ".")
	if len(parts) < 2 || len(parts) > searchMaxStatLists+1 {
		return search.Stats{}, invalidf("malformed cursor")
	}
	var st search.Stats
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 36, 31)
		if err != nil {
			return search.Stats{}, invalidf("malformed cursor")
		}
		if i == 0 {
			st.N = int(v)
		} else {
			st.DF = append(st.DF, int(v))
		}
	}
	return st, nil
}

// searchLimits bound the hits one search verifies.
type searchLimits struct {
	// checks is the most hits a page's rounds examine in all; 0 leaves the rounds' own bound.
	checks int
	// count is the most hits a totalCount checks, the newest (see searchTotal).
	count int
	// estimate counts the older hits a totalCount does not check in the proportion of the
	// checked ones it keeps, rather than all of them.
	estimate bool
	// pageText and countText, when not nil, are what a page's checks and a totalCount's matched
	// of their candidates' text against the query: each stops at searchTextBytes.
	pageText, countText *textBudget
}

// searchListBytes bounds the posting lists one search reads: the bytes of its terms' lists
// (their first postings' fields too) in the blocks it covers. The blocks and the terms bound the
// commands, not the bytes: a word in 30% of the comments of a site of 100,000 posts with 20
// comments each has a list of about 2 MB, and a search of 8 such words and a prefix of 32 read 80
// MB and decoded and merged every posting. A search reads its blocks newest first, every term's
// list of a block or none (search_lists.lua), and covers the newest blocks whose lists the budget
// pays for: its horizon, below which it finds nothing, as below searchMaxBlocks. 4 MiB is about a
// million postings: on the search harness's 100,000 posts, its 8 commonest words read 2.6 MB
// together, the heaviest search of its query mix 0.1 MB.
const searchListBytes = 4 << 20

// requestSearchListBytes bounds the posting lists all the searches of one request (one Loader)
// read together: twice one search's, so that aliasing searches of distinct words does not
// multiply the reading (listBudget).
const requestSearchListBytes = 2 * searchListBytes

// searchTextBytes bounds the text one page of a search, and its totalCount, match against the
// query (searchTextCheck: a phrase, or a result edited since it was indexed). The candidates'
// number alone does not bound that work: planted posts of 40,000 characters holding a phrase's
// words in another order would make one phrase query read and analyze 500 × 40 KB for its page
// and as much for its count. A text is matched only while the budget has bytes left (so it is
// overrun by at most one text), and the candidates whose text is read at once are as many as the
// bytes left would pay for at the longest text met so far. A page stops where its budget ran out
// and goes on from there; a count estimates the rest, or counts them as the index proposes them
// (see searchTotal).
const searchTextBytes = 1 << 20

// requestSearchTextBytes bounds the text all the searches of one request (one Loader) match
// together: as much as one search's page and its count may. Each search keeps its own budget
// within it, so that aliasing a phrase search many times does not multiply the work: matching
// costs the server about 110 ms of CPU and 60 MB of allocations a megabyte of text, and 99
// aliased phrase searches matched 99 MB (9.1 s) while their estimated cost was 19,899. A search
// that finds the request's budget spent stops where it is, as at its own budget: its page ends
// there and goes on from its cursor, and its count estimates the rest.
const requestSearchTextBytes = 2 * searchTextBytes

// textBudget counts the bytes of text a page or a count of one search matched against its query
// (see searchTextBytes). A nil budget counts nothing and never runs out.
type textBudget struct {
	mu      sync.Mutex
	size    int64 // the bytes it holds; searchTextBytes when 0
	spent   int64 // bytes matched
	longest int64 // the longest text matched
	texts   int   // texts matched
	// observe, when not nil, is told the length of each text matched (Store.onTextMatch).
	observe func(n int)
	// shared, when not nil, is the budget of the whole request, which every text matched counts
	// against too (requestSearchTextBytes).
	shared *textBudget
}

// bytes is the size of the budget; callers hold mu.
func (b *textBudget) bytes() int64 {
	if b.size == 0 {
		return searchTextBytes
	}
	return b.size
}

// left returns the bytes the budget has left, its shared budget's included; callers hold mu
// (the shared budget's is taken here: a budget's lock always comes before its shared one's).
func (b *textBudget) left() int64 {
	left := b.bytes() - b.spent
	if b.shared != nil {
		b.shared.mu.Lock()
		left = min(left, b.shared.left())
		b.shared.mu.Unlock()
	}
	return left
}

// take reports whether a text of n bytes may be matched — while the budget has anything left —
// and counts it if so.
func (b *textBudget) take(n int) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spent >= b.bytes() || !b.shared.take(n) {
		return false
	}
	b.spent += int64(n)
	b.longest = max(b.longest, int64(n))
	b.texts++
	if b.observe != nil {
		b.observe(n)
	}
	return true
}

// spend counts n bytes of text read but not matched (see postResults.keeps): they shrink the
// rounds and batches that follow (room) as matched ones do, but never stop a text from being
// matched by themselves: the next take does, when they have spent the budget.
func (b *textBudget) spend(n int) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent += int64(n)
	b.longest = max(b.longest, int64(n))
	b.texts++
	if b.observe != nil {
		b.observe(n)
	}
	b.shared.spend(n)
}

// spentAll reports whether the budget has no bytes left.
func (b *textBudget) spentAll() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left() <= 0
}

// room returns how many of the next n candidates, each of which may have its text read, one
// batch may take: as many as the bytes left pay for at the longest text matched so far, and at
// most twice as many as have been matched (or first), so that texts longer than any met so far
// cost at most one batch's read past the budget (their matching stops at it: take); before any
// text was matched, first for a first batch (started false) and all n after it (the candidates
// so far needed no text).
func (b *textBudget) room(n, first int, started bool) int {
	if b == nil {
		return n
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	left := b.left()
	switch {
	case left <= 0:
		return 0
	case b.longest == 0 && !started:
		return min(n, first)
	case b.longest == 0:
		return n
	}
	return int(min(int64(n), left/b.longest+1, int64(max(first, 2*b.texts))))
}

// searchText returns the budget of text that all the searches of the loader's request share
// (requestSearchTextBytes).
func (l *Loader) searchText() *textBudget {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.text == nil {
		l.text = &textBudget{size: 2 * int64(l.s.opts.SearchTextBytes)} // requestSearchTextBytes by default
	}
	return l.text
}

// searchLimitsOf returns the limits of a search of posts or comments for q: a query whose every
// candidate's text is read (a phrase) examines at most searchTextChecks hits for its page and as
// many for its totalCount, which estimates the older ones from those, so that a phrase of common
// words in an order no document has does not read the text of every document that has the words;
// and every such search matches at most searchTextBytes of text for its page and as much for its
// count, however long the candidates are, and all the searches of a request together at most
// what shared, the request's budget, holds (requestSearchTextBytes).
func (s *Store) searchLimitsOf(q search.Query, shared *textBudget) searchLimits {
	size := int64(s.opts.SearchTextBytes) // searchTextBytes by default
	lim := searchLimits{count: searchCountCap, pageText: &textBudget{size: size, observe: s.onTextMatch, shared: shared},
		countText: &textBudget{size: size, observe: s.onTextMatch, shared: shared}}
	if searchTextCheck(q, nil) {
		lim.checks, lim.count, lim.estimate = searchTextChecks, searchTextChecks, true
	}
	return lim
}

// searchPage pages ranked hits, keeping those verify accepts. It examines hits in rank order in
// rounds of growing size until the page is full or the hits run out (at most searchRounds
// rounds, and at most lim.checks hits): hits that fail verification are skipped, and the cursors
// are those of the hits kept. The page's Total is count's answer (see searchTotal), or 0 when
// count is nil: the response does not show it.
func searchPage[T any](ctx context.Context, hits []search.Hit, tag, stats string, sp span, kind searchKind, lim searchLimits,
	verify searchVerify[T], count searchCount) (*Page[T], error) {
	after, hasAfter, err := hitOfCursor(sp.after, kind)
	if err != nil {
		return nil, err
	}
	before, hasBefore, err := hitOfCursor(sp.before, kind)
	if err != nil {
		return nil, err
	}
	var lo, hi *search.Hit
	if hasAfter {
		lo = &after
	}
	if hasBefore {
		hi = &before
	}
	type kept struct {
		item T
		hit  search.Hit
	}
	var got []kept
	more := false
	want := sp.n + 1 // one more tells whether a next page exists
	examined := 0
	for round := 0; round < searchRounds && len(got) < want; round++ {
		k := (want - len(got)) << round
		if lim.checks > 0 {
			k = min(k, lim.checks-examined)
		}
		first := want // a first round as large as the page, but for a phrase, whose every candidate's text is matched
		if lim.checks > 0 {
			first = min(want, searchTextFirst)
		}
		if k = lim.pageText.room(k, first, examined > 0); k <= 0 {
			break // more stays as the last round left it: true
		}
		page, rest := search.Best(hits, lo, hi, k, sp.backward)
		more = rest
		if len(page) == 0 {
			break
		}
		// The hits are verified in the order the page goes, from its cursor on: a round the text
		// budget stops short has examined the hits nearest the cursor, and goes on after them.
		order := page
		if sp.backward {
			order = slices.Clone(page)
			slices.Reverse(order)
		}
		items, idx, n, err := verify(ctx, order)
		if err != nil {
			return nil, err
		}
		examined += n
		batch := make([]kept, len(items))
		for i, it := range items {
			batch[i] = kept{item: it, hit: order[idx[i]]}
		}
		stopped := n < len(order)
		if stopped {
			more = true // the text budget ran out: the hits after the n examined are not
		}
		if n > 0 {
			if sp.backward {
				slices.Reverse(batch) // rank order
				got = append(batch, got...)
				hi = &order[n-1]
			} else {
				got = append(got, batch...)
				lo = &order[n-1]
			}
		}
		if !rest || stopped {
			break
		}
	}
	out := &Page[T]{}
	if count != nil {
		if out.Total, err = searchTotal(ctx, hits, lim, count); err != nil {
			return nil, err
		}
	}
	extra := len(got) > sp.n
	if extra {
		if sp.backward {
			got = got[len(got)-sp.n:]
		} else {
			got = got[:sp.n]
		}
	}
	for _, g := range got {
		out.Items = append(out.Items, g.item)
		out.Cursors = append(out.Cursors, searchCursor(tag, g.hit, stats))
	}
	if sp.backward {
		out.HasPrev, out.HasNext = extra || more, hasBefore
	} else {
		out.HasNext, out.HasPrev = extra || more, hasAfter
	}
	// A page whose rounds stopped short (their bound, not the hits, ran out) goes on from the
	// last hit it examined: the hits between its last item and that one failed verification, and
	// an empty page has no item to go on from.
	if !extra && more {
		if sp.backward && hi != nil {
			out.start = searchCursor(tag, *hi, stats)
		} else if !sp.backward && lo != nil {
			out.end = searchCursor(tag, *lo, stats)
		}
	}
	return out, nil
}

// searchVerify checks a batch of a search's hits, in the order given: the items it keeps with
// their indexes in hs, and how many of hs it examined — all, unless the text budget ran out
// (then a prefix of hs: the rest were not examined).
type searchVerify[T any] func(ctx context.Context, hs []search.Hit) (items []T, idx []int, examined int, err error)

// searchCount counts a batch of a search's hits: how many it keeps, and how many it examined
// (all, unless the text budget ran out).
type searchCount func(ctx context.Context, hs []search.Hit) (kept, examined int, err error)

// searchRounds bounds how many rounds of verification one page takes.
const searchRounds = 6

// searchTextChecks bounds the candidates whose text one page of a search, and its totalCount,
// match against the query when every candidate's text must be read (a query with a phrase: see
// searchTextCheck).
const searchTextChecks = 500

// searchCountCap bounds the work of a totalCount: the newest searchCountCap candidates are each
// checked as a page's are, the older ones counted as the index proposes them.
const searchCountCap = 10_000

// searchCountBatch is how many candidates one pipeline of a count checks.
const searchCountBatch = 1_000

// searchTextFirst is the most candidates the first batch of a count, and the first round of a
// page, of a phrase examine: until the text those match tells what a candidate's text costs
// (textBudget.batch), so that the first batch cannot overrun searchTextBytes by more than
// searchTextFirst long texts.
const searchTextFirst = 32

// searchTotal is a search's totalCount: the candidates among the newest lim.count (hits are in
// document order, the newest last) that count says the viewer could page through — the same
// check as a page's, so that the count is exactly what paging reaches — plus every older
// candidate, unchecked, or with lim.estimate as many of them as the checked ones' proportion
// kept says. The count is exact whenever the index proposes at most lim.count candidates —
// searchCountCap (always for TOP, which ranks only the newest searchTopCap), or searchTextChecks
// for a query with a phrase (searchLimitsOf) — and the text they match stays within
// searchTextBytes (lim.countText): past it, the older candidates count as unchecked ones do.
func searchTotal(ctx context.Context, hits []search.Hit, lim searchLimits, count searchCount) (int, error) {
	from := max(0, len(hits)-lim.count)
	first := searchTextFirst // a phrase's first batch (see textBudget.room)
	kept, checked := 0, 0
	for i := len(hits); i > from; { // the newest first, in batches
		k := min(searchCountBatch, i-from)
		if lim.estimate {
			// A phrase matches every candidate's text: its batches are as many as the text
			// budget pays for. Otherwise only the edited candidates' text is matched, which
			// countTexts sizes, and a batch is the fields of up to searchCountBatch candidates.
			k = lim.countText.room(k, first, checked > 0)
		} else if lim.countText.spentAll() {
			k = 0
		}
		if k <= 0 {
			break // the text budget is spent: the older candidates are not checked
		}
		batch := slices.Clone(hits[i-k : i])
		slices.Reverse(batch) // the newest first: a batch the text budget stops short has checked those
		n, examined, err := count(ctx, batch)
		if err != nil {
			return 0, err
		}
		kept, checked, i = kept+n, checked+examined, i-k
		if examined < k {
			break // the text budget ran out in the batch
		}
	}
	older := len(hits) - checked
	if lim.estimate && older > 0 && checked > 0 {
		return kept + int(math.Round(float64(older)*float64(kept)/float64(checked))), nil
	}
	return kept + older, nil
}

// searchTextCheck reports whether a result's text as it is now must be matched against the
// query: when it was edited (its lists may still hold the words it had) or when the query has a
// phrase (the lists hold no positions). A document never edited has in its lists exactly the
// terms of its text, so that the lists' match is its text's.
func searchTextCheck(q search.Query, edited *time.Time) bool {
	return edited != nil || len(q.Phrases) > 0
}

// postResults is the check of a search of posts: whether a post is one the viewer could page
// through.
type postResults struct {
	q             search.Query
	group, author string
	since         *time.Time
	blocks        *Blocks
	text          *textBudget // what matching the posts' text spends (searchTextBytes)
}

// visible reports whether the viewer may find p, its text aside (see keeps).
func (f postResults) visible(p *Post) bool {
	switch {
	case p == nil || p.NSFWHidden || p.Removed || p.Erased || p.PublishAt != nil || f.blocks.Has(p.Author):
	case f.group != "" && !slices.Contains(p.GroupNames, f.group):
	case f.author != "" && string(p.Author) != f.author:
	case f.since != nil && p.CreatedAt.Before(*f.since):
	default:
		return true
	}
	return false
}

// keeps reports whether p, read with its text, is a result; examined is false when its text
// had to be matched and the text budget had run out. read is how many bytes of text were read of
// p that it does not match (a body the response shows, or one read with a candidate the viewer
// cannot see): they count against the budget all the same (textBudget.spend).
func (f postResults) keeps(p *Post, read int) (keep, examined bool) {
	switch {
	case !f.visible(p):
		f.text.spend(read)
		return false, true
	case !searchTextCheck(f.q, p.EditedAt):
		f.text.spend(read)
		return true, true
	case !f.text.take(len(p.Title) + len(p.Body)):
		return false, false
	}
	return f.q.Match(searchPostTokens(p)), true
}

// searchPostFields are the fields of a post that decide whether it is a result, but for its text:
// what a count reads of every candidate (searchPostOf).
var searchPostFields = []string{"title", "author", "created", "groups", "deleted", "edited", "removed", "erased", "nsfw"}

// searchPostFieldArgs is searchPostFields as HMGET arguments, and searchPostAt where each goes in
// postFields.
var searchPostFieldArgs, searchPostAt = boxed(searchPostFields), func() []int {
	at := make([]int, len(searchPostFields))
	for i, f := range searchPostFields {
		at[i] = slices.Index(postFields, f)
	}
	return at
}()

// searchPostRead reads the fields of searchPostFields of a post.
func (l *Loader) searchPostRead(pid string) read {
	key := l.s.k.post(pid)
	return read{key: "sxm:" + key, rkey: key, fields: searchPostFieldArgs, fill: fillHMGET}
}

// searchPostOf parses a done searchPostRead: the post without its body (its title is there only
// to tell that it exists), marked NSFWHidden as postOf marks it; nil when there is none.
func (l *Loader) searchPostOf(c *call, pid string) *Post {
	v := make([]string, len(postFields))
	for i, x := range fields(c) {
		v[searchPostAt[i]] = x
	}
	p := l.s.postFromFields(pid, v)
	if p != nil && !p.NSFW {
		p.NSFW = l.nsfwGroupSet().any(p.GroupNames)
	}
	if p != nil && p.NSFW && l.hidesNSFW() {
		p.NSFWHidden = true
	}
	return p
}

// countPosts counts the posts of hs that f keeps, and how many of hs it examined (see
// searchCount): one pipeline of the fields that decide, then the whole posts whose text must be
// matched (searchTextCheck), in as many pipelines as the text budget sizes (countTexts).
func (l *Loader) countPosts(ctx context.Context, f postResults, hs []search.Hit) (kept, examined int, err error) {
	pids := make([]string, len(hs))
	reads := make([]read, len(hs))
	for i, h := range hs {
		pids[i] = strconv.FormatUint(h.Doc.A, 10)
		reads[i] = l.searchPostRead(pids[i])
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return 0, 0, err
	}
	var text []string
	for i, c := range calls {
		p := l.searchPostOf(c, pids[i])
		switch {
		case !f.visible(p):
		case searchTextCheck(f.q, p.EditedAt):
			text = append(text, pids[i])
		default:
			kept++
		}
	}
	tk, te, err := countTexts(ctx, f.text, len(text), func(ctx context.Context, from, to int) (int, int, error) {
		posts, at, err := l.postsByKey(ctx, text[from:to], true) // the body's words are matched
		if err != nil {
			return 0, 0, err
		}
		kept := 0
		for i, p := range posts {
			keep, ok := f.keeps(p, 0) // each is matched: its text counts as matched
			if !ok {
				return kept, at[i], nil
			}
			if keep {
				kept++
			}
		}
		return kept, to - from, nil
	})
	if err != nil {
		return 0, 0, err
	}
	return kept + tk, len(hs) - len(text) + te, nil
}

// countTexts counts, of n candidates whose text must be matched, those kept, reading them in
// chunks the text budget sizes (textBudget.room): check reads the texts of candidates [from, to)
// and returns how many it keeps and how many it examined (fewer than to-from once the budget has
// run out, which ends the count's checks).
func countTexts(ctx context.Context, b *textBudget, n int, check func(ctx context.Context, from, to int) (kept, examined int, err error)) (kept, examined int, err error) {
	for from, chunk := 0, 0; from < n; chunk++ {
		k := b.room(n-from, searchTextFirst, chunk > 0)
		if k <= 0 {
			break
		}
		kk, done, err := check(ctx, from, from+k)
		if err != nil {
			return 0, 0, err
		}
		kept, examined, from = kept+kk, examined+done, from+k
		if done < k {
			break
		}
	}
	return kept, examined, nil
}

// searchArgs are what a search of posts or comments shares: the words, an author, a time, an
// order and a scope (a group of posts, or the post of comments) with its mark.
type searchArgs struct {
	query, author string
	since         *time.Time
	sort          SearchSort
	scope         string
	scopeMark     byte
	// byVotes scores hits for TOP, leaving out those published before since (when not nil).
	byVotes func(ctx context.Context, hits []search.Hit, since *time.Time) ([]search.Hit, error)
}

// searchRun is a search read from the index and ordered, before its page is checked.
type searchRun struct {
	q      search.Query
	author string // the author asked for, as a user key; "" for any
	hits   []search.Hit
	tag    string
	sp     span
	stats  string // the statistics its relevance scores were computed with, for its cursors
}

// runSearch parses a search of posts or comments, reads its matches and orders them.
func (l *Loader) runSearch(ctx context.Context, kind searchKind, a searchArgs, w Window) (*searchRun, error) {
	if !l.s.opts.searchOn() {
		return nil, errSearchOff()
	}
	q, err := parseSearch(a.query)
	if err != nil {
		return nil, err
	}
	pl := searchPlan{kind: kind, q: q}
	if a.scope != "" {
		pl.filters = append(pl.filters, searchFilter(a.scopeMark, a.scope))
	}
	author := strings.ToLower(strings.TrimSpace(a.author))
	if a.author != "" {
		if !validUserName(author) {
			return nil, invalidf("author %q is not a user name", truncate(a.author, 40))
		}
		pl.filters = append(pl.filters, searchFilter('a', author))
	}
	since := ""
	if a.since != nil {
		since = strconv.FormatInt(a.since.UnixMilli(), 10)
	}
	r := &searchRun{q: q, author: author, tag: searchCursorTag(kind.code, a.sort, q.Key(), a.scope, author, since)}
	if r.sp, err = w.decode(r.tag); err != nil {
		return nil, err
	}
	if author != "" {
		// A deleted account's kept posts and comments show no author: its name finds nothing.
		c, err := l.get(ctx, l.userRead(author))
		if err != nil {
			return nil, err
		}
		if l.userOf(c, author) == nil {
			return r, nil
		}
	}
	if pl.at, err = cursorStats(r.sp); err != nil {
		return nil, err
	}
	var st search.Stats
	if r.hits, st, err = l.searchHits(ctx, pl); err != nil {
		return nil, err
	}
	switch a.sort {
	case SearchRelevance:
		r.stats = searchStats(st)
	case SearchNew:
		for i := range r.hits {
			r.hits[i].Score = 0
		}
	case SearchTop:
		if r.hits, err = a.byVotes(ctx, r.hits, a.since); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// SearchPosts finds posts by words (see package search for the query syntax) and loads one page
// of them in the order asked for, with what needs says the response reads of them. Only what the
// viewer may see is returned, checked against the posts as they are now.
func (l *Loader) SearchPosts(ctx context.Context, in PostSearch, w Window, needs func() *Needs) (*Page[*Post], error) {
	var group string
	if in.Group != "" {
		var err error
		if group, err = NormalizeGroupName(in.Group); err != nil {
			return nil, err
		}
	}
	r, err := l.runSearch(ctx, searchPosts, searchArgs{query: in.Query, author: in.Author, since: in.Since,
		sort: in.Sort, scope: group, scopeMark: 'g', byVotes: l.byVotes}, w)
	if err != nil {
		return nil, err
	}
	lim := l.s.searchLimitsOf(r.q, l.searchText())
	f := postResults{q: r.q, group: group, author: r.author, since: in.Since, blocks: l.viewerBlocks(), text: lim.pageText}
	var count searchCount
	if !w.NoTotal {
		fc := f
		fc.text = lim.countText
		count = func(ctx context.Context, hs []search.Hit) (int, int, error) { return l.countPosts(ctx, fc, hs) }
	}
	page, err := searchPage(ctx, r.hits, r.tag, r.stats, r.sp, searchPosts, lim, func(ctx context.Context, hs []search.Hit) ([]*Post, []int, int, error) {
		return l.searchPostsCheck(ctx, f, hs, evalNeeds(needs))
	}, count)
	if err != nil {
		return nil, err
	}
	return page, nil
}

// searchPostsCheck is the check of a round of a page of a search of posts (searchVerify): the
// posts of hs that f keeps, read with what n says the response reads of them.
//
// The candidates and what the response reads below them go level by level, as a listing's page
// does (postPage): the posts read for the check are the ones the response shows. Their bodies are
// read with them only when the response shows them or every candidate's text is matched (a
// phrase); otherwise the bodies of the visible candidates edited since they were indexed, whose
// text is matched (searchTextCheck), are read after them. Every body read counts against the
// page's text budget, those of candidates the viewer cannot see (NSFW withheld, removed,
// scheduled, by a blocked author) too: planted long posts a viewer never finds cannot make
// the page's rounds read them by the megabyte (the rounds after the first are as many as the
// budget left pays for: textBudget.room).
func (l *Loader) searchPostsCheck(ctx context.Context, f postResults, hs []search.Hit, n *Needs) ([]*Post, []int, int, error) {
	pids := make([]string, len(hs))
	for i, h := range hs {
		pids[i] = strconv.FormatUint(h.Doc.A, 10)
	}
	body := n.ReadsPostBody() || searchTextCheck(f.q, nil)
	if body {
		n = withPostBody(n)
	}
	l.Walk(ctx, Items{Kind: ItemPost, Keys: pids}, n)
	reads := make([]read, len(pids))
	for i, pid := range pids {
		reads[i] = l.postReadOf(pid, body)
	}
	calls := l.getAll(ctx, reads...) // read by the walk: no round trip
	if err := waitAll(ctx, calls); err != nil {
		return nil, nil, 0, err
	}
	posts := make([]*Post, len(calls))
	var edited []int // visible, edited, and read without their bodies
	for i, c := range calls {
		posts[i] = l.postOf(c, pids[i])
		if !body && f.visible(posts[i]) && searchTextCheck(f.q, posts[i].EditedAt) {
			edited = append(edited, i)
		}
	}
	if len(edited) > 0 {
		keys := make([]string, len(edited))
		for j, i := range edited {
			keys[j] = pids[i]
		}
		withText, at, err := l.postsByKey(ctx, keys, true)
		if err != nil {
			return nil, nil, 0, err
		}
		for j, p := range withText {
			posts[edited[at[j]]] = p
		}
	}
	var out []*Post
	var idx []int
	for i, p := range posts {
		read := 0
		if body {
			read = postBodyLen(calls[i])
		}
		keep, ok := f.keeps(p, read)
		if !ok {
			return out, idx, i, nil // the text budget ran out here
		}
		if keep {
			out, idx = append(out, p), append(idx, i)
		}
	}
	return out, idx, len(hs), nil
}

// postBodyLen returns the length of the body a done post read with its texts (postReadOf) read,
// withheld or not.
func postBodyLen(c *call) int {
	if c.cmd2 != nil && c.cmd2.Err() == nil {
		if t := c.cmd2.(*rdb.StringSliceCmd).Val(); len(t) > 0 {
			return len(t[0])
		}
	}
	return len(postValues(c)[1]) // a keyspace of an earlier layout: the body in the hash
}

// byVotes scores the newest searchTopCap hits by their posts' net votes (the site's TOP
// ranking) and drops the rest. With since, the posts published before it are dropped first, by
// their publish times in NEW's set read in the same pipeline: a windowed TOP ranks the newest
// searchTopCap matches of its window, and its pages are not left short by older posts.
func (l *Loader) byVotes(ctx context.Context, hits []search.Hit, since *time.Time) ([]search.Hit, error) {
	if len(hits) > searchTopCap {
		hits = hits[len(hits)-searchTopCap:] // document order: the newest are last
	}
	r := l.s.k.ranking("")
	var reads []read
	const chunk = 500
	for i := 0; i < len(hits); i += chunk {
		part := hits[i:min(i+chunk, len(hits))]
		members := make([]string, len(part))
		for j, h := range part {
			members[j] = strconv.FormatUint(h.Doc.A, 10)
		}
		for _, key := range []string{r.top, r.new} {
			if key == r.new && since == nil {
				continue
			}
			ck := "sxv:" + key + "\x00" + strings.Join(members, ",")
			reads = append(reads, read{key: ck, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
				// Both parts of the ranking (nsfw_lists.go): a post is in one, absent (0) from the other.
				c.cmd, c.cmd2 = p.ZMScore(ctx, key, members...), p.ZMScore(ctx, nsfwKey(key), members...)
			}})
		}
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	per := 1
	if since != nil {
		per = 2
	}
	out := hits[:0]
	// scoresOf is the scores a call read, a post's from whichever part holds it, in a slice of its
	// own: the replies are the loader's, shared with every other search of the response that reads
	// the same members, and must not be written to.
	scoresOf := func(c *call) []float64 {
		scores, nscores := c.cmd.(*rdb.FloatSliceCmd).Val(), c.cmd2.(*rdb.FloatSliceCmd).Val()
		sum := make([]float64, len(scores))
		for j, sc := range scores {
			sum[j] = sc
			if j < len(nscores) {
				sum[j] += nscores[j]
			}
		}
		return sum
	}
	for ci := 0; ci < len(calls); ci += per {
		scores := scoresOf(calls[ci])
		var published []float64
		if since != nil {
			published = scoresOf(calls[ci+1])
		}
		for j, sc := range scores {
			if published != nil && int64(published[j]) < since.UnixMilli() {
				continue // before the window, or not ranked at all: verification would drop it
			}
			h := hits[ci/per*chunk+j]
			h.Score = sc // a post not ranked (removed, not yet derived) scores 0; verify decides
			out = append(out, h)
		}
	}
	return out, nil
}

// dropSearch deletes the search index of the kinds named, for a rebuild to write it anew. The
// buckets' revision counters stay: a counter that started again from zero could come back to a
// value a cached response recorded.
func (s *Store) dropSearch(ctx context.Context, kinds ...searchKind) error {
	for _, kind := range kinds {
		if err := s.dropSearchKind(ctx, kind); err != nil {
			return err
		}
	}
	return nil
}

// dropSearchKind deletes the search index of one kind. The dictionaries' nodes go last, parents
// before their children (a parent's key is the shorter): a node's mark never outlives its child,
// which search_dict_read.lua would take for a node still moving on a cluster.
func (s *Store) dropSearchKind(ctx context.Context, kind searchKind) error {
	unlink := func(key string) error {
		return s.pipeline(ctx, []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			return p.Unlink(ctx, key), nil
		}}}, false)
	}
	var nodes []string
	err := s.scanKeys(ctx, s.k.prefix+"{sx:"+kind.code+":*", func(key string) error {
		if strings.HasSuffix(key, ":rev") {
			return nil
		}
		if _, _, ok := searchDictNodeKey(s.k, key); ok {
			nodes = append(nodes, key)
			return nil
		}
		return unlink(key)
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(nodes, func(a, b string) int { return cmp.Compare(len(a), len(b)) })
	for _, key := range nodes {
		if err := unlink(key); err != nil {
			return err
		}
	}
	return nil
}

// commentSearchDoc is the document of a comment.
func commentSearchDoc(c *Comment) (searchDoc, bool) {
	p, _ := strconv.ParseUint(c.pid, 10, 64)
	n, err := strconv.ParseUint(strings.TrimLeft(c.num, "0"), 10, 64)
	if err != nil || c.Text == "" || c.Author == "" {
		return searchDoc{}, false
	}
	return searchDoc{
		kind:    searchComments,
		doc:     search.Doc{A: p, B: n},
		block:   int64(p >> searchBlockShift),
		fields:  []search.Field{{Text: c.Text, Weight: searchBodyWeight, AvgLen: searchCommentLen}},
		filters: []string{searchFilter('a', string(c.Author)), searchFilter('p', c.pid)},
	}, true
}

// indexComment writes a live comment's text into the search index; a tombstone has none. A
// repair's (repair) adds every word to the dictionaries (see searchWrite.full).
func (s *Store) indexComment(ctx context.Context, c *Comment, repair bool) error {
	d, ok := commentSearchDoc(c)
	if !ok {
		return nil
	}
	d.isNew = c.EditedAt == nil && !repair
	w := s.searchWrites(d)
	if repair {
		w.repairing()
	}
	if err := s.runSearchWrite(ctx, w); err != nil {
		return fmt.Errorf("index comment %s: %w", c.ID, err)
	}
	return nil
}

// CommentSearch is what searchComments asks for.
type CommentSearch struct {
	Query  string
	PostID string     // only comments on this post (a global id); "" for all
	Author string     // only comments by this user (a name); "" for all
	Since  *time.Time // only comments written at or after this time
	Sort   SearchSort
}

// SearchComments finds comments by words, as SearchPosts finds posts. A comment is found only
// while the viewer may read it and its post: deleted, removed and blocked comments, and comments
// of removed or deleted posts, are left out.
func (l *Loader) SearchComments(ctx context.Context, in CommentSearch, w Window) (*Page[*Comment], error) {
	var onPost string
	if in.PostID != "" {
		var err error
		if onPost, err = PostKey(in.PostID); err != nil {
			return nil, err
		}
	}
	r, err := l.runSearch(ctx, searchComments, searchArgs{query: in.Query, author: in.Author, since: in.Since,
		sort: in.Sort, scope: onPost, scopeMark: 'p', byVotes: l.commentsByVotes}, w)
	if err != nil {
		return nil, err
	}
	lim := l.s.searchLimitsOf(r.q, l.searchText())
	f := commentResults{q: r.q, author: r.author, since: in.Since, blocks: l.viewerBlocks(), text: lim.pageText}
	var count searchCount
	if !w.NoTotal {
		fc := f
		fc.text = lim.countText
		count = func(ctx context.Context, hs []search.Hit) (int, int, error) { return l.countComments(ctx, fc, hs) }
	}
	return searchPage(ctx, r.hits, r.tag, r.stats, r.sp, searchComments, lim, func(ctx context.Context, hs []search.Hit) ([]*Comment, []int, int, error) {
		reads := make([]read, 0, 2*len(hs))
		for _, h := range hs {
			pid, num := commentOfHit(h)
			reads = append(reads, l.postRead(pid), l.commentRead(pid, num, AllCommentFields))
		}
		calls := l.getAll(ctx, reads...)
		if err := waitAll(ctx, calls); err != nil {
			return nil, nil, 0, err
		}
		var out []*Comment
		var idx []int
		for i, h := range hs {
			pid, num := commentOfHit(h)
			c := l.commentOf(calls[2*i+1], pid, num, AllCommentFields)
			read := 0
			if c != nil {
				read = len(c.Text)
			}
			keep, ok := f.keeps(l.postOf(calls[2*i], pid), c, read)
			if !ok {
				return out, idx, i, nil // the text budget ran out here
			}
			if keep {
				out, idx = append(out, c), append(idx, i)
			}
		}
		return out, idx, len(hs), nil
	}, count)
}

// commentOfHit returns the post and the number of the comment a hit names.
func commentOfHit(h search.Hit) (pid, num string) {
	return strconv.FormatUint(h.Doc.A, 10), padNum(strconv.FormatUint(h.Doc.B, 10))
}

// commentResults is the check of a search of comments: whether a comment is one the viewer could
// page through.
type commentResults struct {
	q      search.Query
	author string
	since  *time.Time
	blocks *Blocks
	text   *textBudget // what matching the comments' text spends (searchTextBytes)
}

// keeps reports whether comment c of post p, read with its text, is a result; examined is false
// when its text had to be matched and the text budget had run out. read is how many bytes of
// text were read of c: those it does not match count against the budget all the same (see
// postResults.keeps).
func (f commentResults) keeps(p *Post, c *Comment, read int) (keep, examined bool) {
	switch {
	case !f.visible(p, c):
		f.text.spend(read)
		return false, true
	case !searchTextCheck(f.q, c.EditedAt):
		f.text.spend(read)
		return true, true
	case !f.text.take(len(c.Text)):
		return false, false
	}
	return f.q.Match(search.Analyze(c.Text)), true
}

// visible reports whether the viewer may find comment c of post p, its text aside.
func (f commentResults) visible(p *Post, c *Comment) bool {
	switch {
	case p == nil || p.Removed || p.Erased || p.PublishAt != nil || p.NSFWHidden || f.blocks.Has(p.Author):
	case c == nil || c.Deleted || c.Removed || c.BlockedByViewer || c.Author == "":
	case f.author != "" && string(c.Author) != f.author:
	case f.since != nil && c.CreatedAt.Before(*f.since):
	default:
		return true
	}
	return false
}

// countComments counts the comments of hs that f keeps, and how many of hs it examined (see
// searchCount): one pipeline of what decides (each comment's fields but its body, its post's as a
// count reads them), then the bodies of those whose text must be matched, in as many pipelines
// as the text budget sizes (countTexts).
func (l *Loader) countComments(ctx context.Context, f commentResults, hs []search.Hit) (kept, examined int, err error) {
	const fs = CommentFieldsChosen | CommentEdited
	reads := make([]read, 0, 2*len(hs))
	for _, h := range hs {
		pid, num := commentOfHit(h)
		reads = append(reads, l.searchPostRead(pid), l.commentRead(pid, num, fs))
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return 0, 0, err
	}
	var text []read
	var textHits []search.Hit
	for i, h := range hs {
		pid, num := commentOfHit(h)
		p, c := l.searchPostOf(calls[2*i], pid), l.commentOf(calls[2*i+1], pid, num, fs)
		switch {
		case !f.visible(p, c):
		case searchTextCheck(f.q, c.EditedAt):
			text = append(text, l.commentRead(pid, num, CommentFieldsChosen|CommentBody))
			textHits = append(textHits, h)
		default:
			kept++
		}
	}
	tk, te, err := countTexts(ctx, f.text, len(text), func(ctx context.Context, from, to int) (int, int, error) {
		calls := l.getAll(ctx, text[from:to]...)
		if err := waitAll(ctx, calls); err != nil {
			return 0, 0, err
		}
		kept := 0
		for i, c := range calls {
			pid, num := commentOfHit(textHits[from+i])
			cm := l.commentOf(c, pid, num, CommentFieldsChosen|CommentBody)
			if cm == nil {
				continue
			}
			if !f.text.take(len(cm.Text)) {
				return kept, i, nil
			}
			if f.q.Match(search.Analyze(cm.Text)) {
				kept++
			}
		}
		return kept, to - from, nil
	})
	if err != nil {
		return 0, 0, err
	}
	return kept + tk, len(hs) - len(text) + te, nil
}

// commentsByVotes scores the newest searchTopCap hits by their comments' net votes, leaving out
// the comments written before since (when not nil). It reads of each comment its vote counts and
// the fields always read (its time, whether it is deleted or removed), not its body: the page's
// comments are read whole when they are checked.
func (l *Loader) commentsByVotes(ctx context.Context, hits []search.Hit, since *time.Time) ([]search.Hit, error) {
	if len(hits) > searchTopCap {
		hits = hits[len(hits)-searchTopCap:]
	}
	reads := make([]read, len(hits))
	for i, h := range hits {
		pid, num := commentOfHit(h)
		reads[i] = l.commentRead(pid, num, commentVoteFields)
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	out := hits[:0]
	for i, h := range hits {
		pid, num := commentOfHit(h)
		c := l.commentOf(calls[i], pid, num, commentVoteFields)
		switch {
		case c == nil:
			h.Score = 0 // verification drops it
		case since != nil && c.CreatedAt.Before(*since):
			continue
		default:
			h.Score = float64(c.Upvotes - c.Downvotes)
		}
		out = append(out, h)
	}
	return out, nil
}

// indexThread indexes the text of every live comment of post pid, lists every comment in (or out
// of) its author's comments and records its net votes in its author's karma: rebuild's step for
// comments, in sorted order so that every list is written in document order.
func (s *Store) indexThread(ctx context.Context, pid string) error {
	nums, err := s.threadNums(ctx, pid)
	if err != nil {
		return err
	}
	const batch = 200
	for start := 0; start < len(nums); start += batch {
		part := nums[start:min(start+batch, len(nums))]
		hashes, err := s.commentHashes(ctx, pid, part)
		if err != nil {
			return err
		}
		var calls []scriptCall
		var docs []searchDoc
		var karma []karmaRecord
		for i, h := range hashes {
			cm := commentFromHash(pid, part[i], h)
			if cm == nil {
				continue
			}
			if cm.Author != "" {
				calls = append(calls, s.userCommentCall(string(cm.Author), pid, part[i], cm))
				karma = append(karma, karmaRecord{author: string(cm.Author), item: cm.ID, net: cm.Upvotes - cm.Downvotes, version: cm.Version})
			}
			if d, ok := commentSearchDoc(cm); ok {
				d.isNew = true
				docs = append(docs, d)
			}
		}
		sx := s.searchWrites(docs...)
		if len(calls) > 0 || sx != nil {
			if _, err := s.runScripts(ctx, calls, sx.ops()...); err != nil {
				return fmt.Errorf("index the comments of post %s: %w", pid, err)
			}
			if err := sx.err(); err != nil {
				return fmt.Errorf("index the comments of post %s: %w", pid, err)
			}
		}
		if err := s.finishSearch(ctx, sx); err != nil {
			return err
		}
		// The comments' net votes in their authors' karma, as Rebuild records each post's; the
		// comment's version guards it as a vote's record is guarded, so a vote recorded since wins.
		if err := s.recordKarmas(ctx, karma); err != nil {
			return fmt.Errorf("record the karma of the comments of post %s: %w", pid, err)
		}
	}
	return nil
}
