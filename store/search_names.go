package store

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/agora/agora/search"
)

// Groups and users are searched by name and by what they say of themselves (a group's
// description, a user's bio), in indexes of their own kinds ("g", "u") built like the posts':
// names are the documents (search.Text), in one block. A name weighs as five words of the text.

var (
	searchGroupsKind = searchKind{code: "g", codec: search.Text, avgLen: 20}
	searchUsersKind  = searchKind{code: "u", codec: search.Text, avgLen: 20}
)

// searchNameWeight is how many words of a description or bio one word of a name counts as.
const searchNameWeight = 5

// nameSearchDoc is the document of a group or a user.
func nameSearchDoc(kind searchKind, key, name, text string, isNew bool) searchDoc {
	return searchDoc{
		kind:   kind,
		doc:    search.Doc{S: key},
		fields: []search.Field{{Text: name, Weight: searchNameWeight}, {Text: text, Weight: searchBodyWeight}},
		isNew:  isNew,
	}
}

// indexName writes a group's or a user's words into the search index.
func (s *Store) indexName(ctx context.Context, kind searchKind, key, name, text string, isNew bool) error {
	calls := s.searchCalls(nameSearchDoc(kind, key, name, text, isNew))
	if len(calls) == 0 {
		return nil
	}
	if err := s.runMany(ctx, calls); err != nil {
		return fmt.Errorf("index %s %s: %w", kind.code, key, err)
	}
	return nil
}

// indexGroup indexes a group's name and description.
func (s *Store) indexGroup(ctx context.Context, name string, description *string, isNew bool) error {
	return s.indexName(ctx, searchGroupsKind, name, name, deref(description), isNew)
}

// indexUser indexes a user's name and bio.
func (s *Store) indexUser(ctx context.Context, uid, name string, bio *string, isNew bool) error {
	return s.indexName(ctx, searchUsersKind, uid, name, deref(bio), isNew)
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
	hits, err := l.searchHits(ctx, searchPlan{kind: searchGroupsKind, q: q})
	if err != nil {
		return nil, err
	}
	return searchPage(ctx, hits, tag, sp, searchGroupsKind, func(ctx context.Context, hs []search.Hit) ([]*Group, []int, error) {
		names := make([]string, len(hs))
		for i, h := range hs {
			names[i] = h.Doc.S
		}
		exists, err := l.groupExists(ctx, names) // reads the info with the description too
		if err != nil {
			return nil, nil, err
		}
		var out []*Group
		var idx []int
		for i, g := range names {
			if !exists[i] {
				continue
			}
			c, _ := l.get(ctx, l.groupInfoRead(g)) // already read by groupExists
			_, tokens := search.Impacts([]search.Field{{Text: g, Weight: 1}, {Text: deref(l.groupInfoOf(c).description), Weight: 1}}, 1)
			if q.Match(tokens) {
				out, idx = append(out, NewGroup(g)), append(idx, i)
			}
		}
		return out, idx, nil
	})
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
	hits, err := l.searchHits(ctx, searchPlan{kind: searchUsersKind, q: q})
	if err != nil {
		return nil, err
	}
	return searchPage(ctx, hits, tag, sp, searchUsersKind, func(ctx context.Context, hs []search.Hit) ([]*User, []int, error) {
		uids := make([]string, len(hs))
		for i, h := range hs {
			uids[i] = h.Doc.S
		}
		users, err := l.usersByKey(ctx, uids)
		if err != nil {
			return nil, nil, err
		}
		var out []*User
		var idx []int
		for i, u := range users {
			if u == nil {
				continue
			}
			_, tokens := search.Impacts([]search.Field{{Text: u.Name, Weight: 1}, {Text: deref(u.Bio), Weight: 1}}, 1)
			if q.Match(tokens) {
				out, idx = append(out, u), append(idx, i)
			}
		}
		return out, idx, nil
	})
}

// reindexGroups indexes every registered group anew: rebuild's step for groups.
func (s *Store) reindexGroups(ctx context.Context) error {
	if !s.opts.searchOn() {
		return nil
	}
	var names *redis.StringSliceCmd
	key := s.k.groups()
	if err := s.pipeline(ctx, []op{{key: key, fill: func(p redis.Pipeliner) (redis.Cmder, redis.Cmder) {
		names = p.ZRange(ctx, key, 0, -1)
		return names, nil
	}}}, false); err != nil {
		return fmt.Errorf("list the groups: %w", err)
	}
	all := names.Val()
	const batch = 200
	for start := 0; start < len(all); start += batch {
		if err := s.indexNewNames(ctx, searchGroupsKind, all[start:min(start+batch, len(all))]); err != nil {
			return err
		}
	}
	return nil
}

// indexNewNames indexes groups or users that have just come to exist, reading what they say of
// themselves (a group's description, a user's name as written and bio) in one pipeline.
func (s *Store) indexNewNames(ctx context.Context, kind searchKind, keys []string) error {
	if !s.opts.searchOn() {
		return nil
	}
	ops := make([]op, len(keys))
	cmds := make([]*redis.SliceCmd, len(keys))
	for i, k := range keys {
		key, fields := s.k.groupInfo(k), []string{"description", "description"}
		if kind == searchUsersKind {
			key, fields = s.k.user(k), []string{"name", "bio"}
		}
		ops[i] = op{key: key, fill: func(p redis.Pipeliner) (redis.Cmder, redis.Cmder) {
			cmds[i] = p.HMGet(ctx, key, fields...)
			return cmds[i], nil
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return fmt.Errorf("read new names: %w", err)
	}
	var calls []scriptCall
	for i, k := range keys {
		v := cmds[i].Val()
		name, text := k, ""
		if len(v) == 2 {
			text, _ = v[1].(string)
			if n, ok := v[0].(string); ok && kind == searchUsersKind {
				name = n
			}
		}
		calls = append(calls, s.searchCalls(nameSearchDoc(kind, k, name, text, true))...)
	}
	if len(calls) == 0 {
		return nil
	}
	if err := s.runMany(ctx, calls); err != nil {
		return fmt.Errorf("index new names: %w", err)
	}
	return nil
}
