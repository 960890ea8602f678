package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/agora/agora/internal/rdb"
)

// Autocomplete.
//
// User keys (lower-cased names) live in one sorted set and group names in another, every score 0,
// so each set is ordered by bytes and a prefix is one ZRANGE BYLEX from "[prefix" to
// "[prefix\xff" with a LIMIT: O(log n + first), one member per name (the article stores every
// prefix of every name instead). Names are ASCII, so a prefix is lower-cased byte by byte (never
// with Unicode case folding, which maps the Kelvin sign to "k") and a prefix holding any other
// character matches nothing.
//
// A group is registered when it is made (createGroup) or a post joins it, and removed when its last
// post leaves it unless it was made lasting (see pruneGroups and groups.go); suggestions also skip
// any group that does not exist at read time, so a group never shows once it is gone, even while
// a removal is in flight.

// MaxPrefixBytes is the longest autocomplete prefix accepted.
const MaxPrefixBytes = 64

// normalizePrefix lower-cases an autocomplete prefix. ok is false when the prefix holds a
// character no name can contain, so that nothing matches.
func normalizePrefix(prefix string) (p string, ok bool, err error) {
	if prefix == "" {
		return "", false, invalidf("prefix must not be empty")
	}
	if len(prefix) > MaxPrefixBytes {
		return "", false, invalidf("prefix must be at most %d bytes", MaxPrefixBytes)
	}
	b := []byte(prefix)
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			b[i] = c + ('a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return "", false, nil
		}
	}
	return string(b), true, nil
}

// SuggestUsers returns up to first users whose names start with prefix, ignoring case, in order
// of their lower-cased names, and reads what needs says the response reads of them.
func (l *Loader) SuggestUsers(ctx context.Context, prefix string, first int, needs func() *Needs) ([]*User, error) {
	if err := CheckFirst(first); err != nil {
		return nil, err
	}
	p, ok, err := normalizePrefix(prefix)
	if err != nil || !ok {
		return []*User{}, err
	}
	uids, err := l.zrangeByLex(ctx, l.s.k.userNames(), p, first)
	if err != nil {
		return nil, err
	}
	l.Walk(ctx, Items{Kind: ItemUser, Keys: uids}, evalNeeds(needs))
	return l.existingUsers(ctx, uids)
}

// SuggestGroups returns up to first existing groups whose names start with prefix, ignoring
// case, in order of name, and reads what needs says the response reads of them. A reader who
// does not show NSFW posts gets no NSFW group, as in the directory: the names are read from the
// directory's NSFW-free copy (directory.go), and a group labelled since the copy was written is
// left out by the set of NSFW groups the request read in its first pipeline.
func (l *Loader) SuggestGroups(ctx context.Context, prefix string, first int, needs func() *Needs) ([]*Group, error) {
	if err := CheckFirst(first); err != nil {
		return nil, err
	}
	p, ok, err := normalizePrefix(prefix)
	if err != nil || !ok {
		return []*Group{}, err
	}
	key, hide := l.s.k.groups(), l.hidesNSFW()
	if hide {
		key = l.s.k.sfwGroupDir().name
	}
	// Ask for more than first: a group whose last post is leaving may still be registered.
	names, err := l.zrangeByLex(ctx, key, p, 2*first)
	if err != nil {
		return nil, err
	}
	if nsfw := l.nsfwGroupSet(); hide && len(nsfw) > 0 {
		names = slices.DeleteFunc(slices.Clone(names), func(g string) bool { return nsfw[g] })
	}
	return l.existingGroups(ctx, names, first, needs)
}

// zrangeByLex loads up to n members of a sorted set (all scores equal) that start with prefix.
func (l *Loader) zrangeByLex(ctx context.Context, key, prefix string, n int) ([]string, error) {
	ck := fmt.Sprintf("zl:%s\x00%s\x00%d", key, prefix, n)
	c, err := l.get(ctx, read{key: ck, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.ZRangeByLex(ctx, key, &rdb.ZRangeBy{Min: "[" + prefix, Max: "[" + prefix + "\xff", Count: int64(n)})
	}})
	if err != nil {
		return nil, err
	}
	return c.cmd.(*rdb.StringSliceCmd).Val(), nil
}

// pruneGroups removes from the group registry those of groups that no longer exist: that hold no
// post any more and were never made lasting by createGroup or a moderator's change (groups.go).
//
// It is safe against a post joining a group at the same time: a joining post is written into the
// group's rankings before indexPost registers the group. The removal is followed by a second
// count, and a group that holds posts by then is registered again. Either the joining post's
// ranking write comes before that second count (which then puts the group back), or it comes after
// it, and then the post's own registration comes after the removal too. Either way a group with
// posts ends up registered.
func (s *Store) pruneGroups(ctx context.Context, groups []string) error {
	if len(groups) == 0 {
		return nil
	}
	empty, err := s.groupsInUse(ctx, groups, false)
	if err != nil || len(empty) == 0 {
		return err
	}
	if err := s.register(ctx, s.k.groups(), false, empty...); err != nil {
		return fmt.Errorf("unregister groups: %w", err)
	}
	// A group that no longer exists loses its members and watchers: made again, it starts empty.
	if _, err := s.buryGroups(ctx, empty); err != nil {
		return err
	}
	back, err := s.groupsInUse(ctx, empty, true)
	if err != nil || len(back) == 0 {
		return err
	}
	if err := s.register(ctx, s.k.groups(), true, back...); err != nil {
		return fmt.Errorf("register groups: %w", err)
	}
	return nil
}

// register adds names to (add) or removes them from a name registry: the users or the groups.
func (s *Store) register(ctx context.Context, registry string, add bool, names ...string) error {
	return s.registerNames(ctx, registry, add, false, names...)
}

// registerRepair adds names to a name registry as register does, for a repair job: the names the
// registry held already are indexed for search again. Only the write that adds a name indexes its
// words, right after the registry took it, so a write cut off between the two (or between the
// index write's two steps) left them out for good but for this. Indexed again, they are not
// counted as new documents (as a repaired post is not), and every word joins its dictionary.
func (s *Store) registerRepair(ctx context.Context, registry string, names ...string) error {
	return s.registerNames(ctx, registry, true, true, names...)
}

// registerNames is register, and registerRepair when repair is set.
func (s *Store) registerNames(ctx context.Context, registry string, add, repair bool, names ...string) error {
	args := make([]any, 0, len(names)+1)
	args = append(args, map[bool]string{true: "add", false: "rem"}[add])
	for _, n := range names {
		args = append(args, n)
	}
	reply, err := s.run(ctx, "register", []string{registry}, args...)
	if err != nil || !add {
		return err
	}
	// A name that joins a registry is a group or a user that now exists: its words go into the
	// search index.
	added, err := replyStrings("register", reply, -1)
	if err != nil {
		return err
	}
	kind := searchUsersKind
	if registry == s.k.groups() {
		kind = searchGroupsKind
	}
	if len(added) > 0 {
		if err := s.indexNames(ctx, kind, added, true, false); err != nil {
			return err
		}
	}
	if !repair {
		return nil
	}
	var again []string
	for _, n := range names {
		if !contains(added, n) {
			again = append(again, n)
		}
	}
	if len(again) == 0 {
		return nil
	}
	return s.indexNames(ctx, kind, again, false, true)
}
