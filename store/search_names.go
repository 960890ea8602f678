package store

import (
	"context"
	"fmt"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/search"
)

// Groups and users are searched by name and by what they say of themselves (a group's
// description, a user's bio), in indexes of their own kinds ("g", "u") built like the posts':
// names are the documents (search.Text), in one block. A name weighs as five words of the text.

// Their terms of one document (a name's words, mostly) are spread over few searchRare hashes per
// bucket, so that a small site's fill with several fields each: 16 for groups (up to 8 Ki such
// terms listpack-encoded), 64 for users (32 Ki, about 20,000 users). Past that a hash becomes a
// hashtable, at about 60 bytes a field: still less than a key a term (about 90).
var (
	searchGroupsKind = searchKind{code: "g", codec: search.Text, rareParts: 16}
	searchUsersKind  = searchKind{code: "u", codec: search.Text, rareParts: 64}
)

// The weights of the fields of a group or a user: a word of a name counts as five words of a
// description or bio, a word of a group's title as three.
const (
	searchNameWeight  = 5
	searchTitleOfName = 3
)

// The usual lengths of the fields of a group or a user, in terms: a name's (one word or two), a
// group's title, and a description or a bio.
const (
	searchNameLen      = 1
	searchNameTitleLen = 3
	searchAboutLen     = 15
)

// nameSearchDoc is the document of a group (its name, title and description) or a user (name and
// bio); texts are the fields after the name.
func nameSearchDoc(kind searchKind, key, name string, isNew bool, texts ...string) searchDoc {
	fields := []search.Field{{Text: name, Weight: searchNameWeight, AvgLen: searchNameLen}}
	if kind == searchGroupsKind {
		fields = append(fields, search.Field{Text: texts[0], Weight: searchTitleOfName, AvgLen: searchNameTitleLen},
			search.Field{Text: texts[1], Weight: searchBodyWeight, AvgLen: searchAboutLen})
	} else {
		fields = append(fields, search.Field{Text: texts[0], Weight: searchBodyWeight, AvgLen: searchAboutLen})
	}
	return searchDoc{kind: kind, doc: search.Doc{S: key}, fields: fields, isNew: isNew}
}

// nameTokens returns the tokens of a group's or a user's fields, as a query matches them: the
// fields' one after another, an empty token between two (as search.Impacts returns them).
func nameTokens(name string, texts ...string) []string {
	tokens := search.Analyze(name)
	for _, t := range texts {
		tokens = append(append(tokens, ""), search.Analyze(t)...)
	}
	return tokens
}

// indexUser indexes a user's name and bio.
func (s *Store) indexUser(ctx context.Context, uid, name string, bio *string, isNew bool) error {
	if err := s.writeSearch(ctx, nameSearchDoc(searchUsersKind, uid, name, isNew, deref(bio))); err != nil {
		return fmt.Errorf("index user %s: %w", uid, err)
	}
	return nil
}

// deref is *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// SearchGroups finds groups by the words of their name and description, most relevant first.
func (l *Loader) SearchGroups(ctx context.Context, query string, w Window) (*Page[*Group], error) {
	if !l.s.opts.searchOn() {
		return nil, errSearchOff()
	}
	q, err := parseSearch(query)
	if err != nil {
		return nil, err
	}
	tag := searchCursorTag("g", SearchRelevance, q.Key())
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	at, err := cursorStats(sp)
	if err != nil {
		return nil, err
	}
	hits, st, err := l.searchHits(ctx, searchPlan{kind: searchGroupsKind, q: q, at: at})
	if err != nil {
		return nil, err
	}
	hits = l.withoutNSFWGroups(hits)
	verify := func(ctx context.Context, hs []search.Hit) ([]*Group, []int, int, error) {
		names := make([]string, len(hs))
		for i, h := range hs {
			names[i] = h.Doc.S
		}
		exists, err := l.groupExists(ctx, names) // reads the info with the title and description too
		if err != nil {
			return nil, nil, 0, err
		}
		var out []*Group
		var idx []int
		for i, g := range names {
			if !exists[i] {
				continue
			}
			c, _ := l.get(ctx, l.groupInfoRead(g)) // already read by groupExists
			gi := l.groupInfoOf(c)
			if gi.nsfw && l.hidesNSFW() { // labelled since the set of NSFW groups was read
				continue
			}
			if q.Match(nameTokens(g, deref(gi.title), deref(gi.description))) {
				out, idx = append(out, NewGroup(g)), append(idx, i)
			}
		}
		return out, idx, len(hs), nil
	}
	return searchPage(ctx, hits, tag, searchStats(st), sp, searchGroupsKind, searchLimits{count: searchCountCap}, verify, countBy(verify, w))
}

// countBy is the count of a search whose page's check is cheap enough to count with (groups,
// users): how many of the candidates verify keeps. It is nil when w does not show the count.
func countBy[T any](verify searchVerify[T], w Window) searchCount {
	if w.NoTotal {
		return nil
	}
	return func(ctx context.Context, hs []search.Hit) (int, int, error) {
		items, _, examined, err := verify(ctx, hs)
		return len(items), examined, err
	}
}

// SearchUsers finds users by the words of their name and bio, most relevant first.
func (l *Loader) SearchUsers(ctx context.Context, query string, w Window) (*Page[*User], error) {
	if !l.s.opts.searchOn() {
		return nil, errSearchOff()
	}
	q, err := parseSearch(query)
	if err != nil {
		return nil, err
	}
	tag := searchCursorTag("u", SearchRelevance, q.Key())
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	at, err := cursorStats(sp)
	if err != nil {
		return nil, err
	}
	hits, st, err := l.searchHits(ctx, searchPlan{kind: searchUsersKind, q: q, at: at})
	if err != nil {
		return nil, err
	}
	verify := func(ctx context.Context, hs []search.Hit) ([]*User, []int, int, error) {
		uids := make([]string, len(hs))
		for i, h := range hs {
			uids[i] = h.Doc.S
		}
		users, err := l.usersByKey(ctx, uids)
		if err != nil {
			return nil, nil, 0, err
		}
		var out []*User
		var idx []int
		for i, u := range users {
			if u == nil {
				continue
			}
			if q.Match(nameTokens(u.Name, deref(u.Bio))) {
				out, idx = append(out, u), append(idx, i)
			}
		}
		return out, idx, len(hs), nil
	}
	return searchPage(ctx, hits, tag, searchStats(st), sp, searchUsersKind, searchLimits{count: searchCountCap}, verify, countBy(verify, w))
}

// reindexGroups indexes every registered group anew: rebuild's step for groups.
func (s *Store) reindexGroups(ctx context.Context) error {
	if !s.opts.searchOn() {
		return nil
	}
	var names *rdb.StringSliceCmd
	key := s.k.groups()
	if err := s.pipeline(ctx, []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		names = p.ZRange(ctx, key, 0, -1)
		return names, nil
	}}}, false); err != nil {
		return fmt.Errorf("list the groups: %w", err)
	}
	all := names.Val()
	const batch = 200
	for start := 0; start < len(all); start += batch {
		if err := s.indexNames(ctx, searchGroupsKind, all[start:min(start+batch, len(all))], true, false); err != nil {
			return err
		}
	}
	return nil
}

// indexNames indexes groups or users, reading what they say of themselves (a group's title and
// description, a user's name as written and bio) in one pipeline. isNew counts them as new
// documents: they have just come to exist, or the index is being rebuilt. A repair's (repair)
// adds every word to the dictionaries (see searchWrite.full).
func (s *Store) indexNames(ctx context.Context, kind searchKind, keys []string, isNew, repair bool) error {
	if !s.opts.searchOn() {
		return nil
	}
	ops := make([]op, len(keys))
	cmds := make([]*rdb.SliceCmd, len(keys))
	for i, k := range keys {
		key, fields := s.k.groupInfo(k), []string{"title", "description"}
		if kind == searchUsersKind {
			key, fields = s.k.user(k), []string{"name", "bio"}
		}
		ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cmds[i] = p.HMGet(ctx, key, fields...)
			return cmds[i], nil
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return fmt.Errorf("read names to index: %w", err)
	}
	var docs []searchDoc
	for i, k := range keys {
		v := make([]string, 2)
		for j, x := range cmds[i].Val() {
			v[j], _ = x.(string)
		}
		d := nameSearchDoc(searchGroupsKind, k, k, isNew, v[0], v[1])
		if kind == searchUsersKind {
			name := v[0]
			if name == "" {
				name = k
			}
			d = nameSearchDoc(searchUsersKind, k, name, isNew, v[1])
		}
		docs = append(docs, d)
	}
	w := s.searchWrites(docs...)
	if repair {
		w.repairing()
	}
	if err := s.runSearchWrite(ctx, w); err != nil {
		return fmt.Errorf("index names: %w", err)
	}
	return nil
}

// withoutNSFWGroups leaves the NSFW groups (the set the loader read with its first pipeline) out
// of the hits of a group search, for a reader who does not show NSFW posts: they are in none of
// the pages, and totalCount does not count them. Other readers get hits as they are.
func (l *Loader) withoutNSFWGroups(hits []search.Hit) []search.Hit {
	if !l.hidesNSFW() {
		return hits
	}
	nsfw := l.nsfwGroupSet()
	if len(nsfw) == 0 {
		return hits
	}
	kept := make([]search.Hit, 0, len(hits))
	for _, h := range hits {
		if !nsfw[h.Doc.S] {
			kept = append(kept, h)
		}
	}
	return kept
}
