package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/agora/agora/internal/rdb"
)

// A post's and a comment's hash keep their author's name (field aname) next to the author's key.
// A name never changes after sign-up, so the copy is never stale, and a listing that shows only
// `author { id name }` — a front page, the last level of a thread — needs no read of the authors:
// one round trip and one HMGET per author fewer. The creating script writes the name with the
// item; Rebuild derives it for items written before names were kept; a hash without it makes the
// walk read the author as before.

// Named is an item whose hash keeps its author's name: a *Post or a *Comment.
type Named interface {
	namedAuthor() (UserKey, string)
}

func (p *Post) namedAuthor() (UserKey, string)    { return p.Author, p.authorName }
func (c *Comment) namedAuthor() (UserKey, string) { return c.Author, c.authorName }

// NamedAuthor returns the author of a post or comment as its hash keeps them: only ID and Name
// are set. It is for a response that shows nothing else of the author; nil when the hash lacks
// the name, and when the item shows no author (a deleted or masked comment, or one by a user the
// viewer blocks). Every item of one author gets the same User.
func (l *Loader) NamedAuthor(item Named) *User {
	uid, name := item.namedAuthor()
	if uid == "" || name == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := l.named[uid]; u != nil && u.Name == name {
		return u
	}
	if l.named == nil {
		l.named = make(map[UserKey]*User)
	}
	u := &User{ID: userID(string(uid)), Name: name}
	l.named[uid] = u
	return u
}

// nameRead is the read of a user's name, to be added to a write's first round trip (see
// allowWrite); name returns it once that ran: "" when the user has no hash.
func (s *Store) nameRead(ctx context.Context, uid string) (op, func() (string, error)) {
	key := s.k.user(uid)
	var cmd *rdb.StringCmd
	o := op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		cmd = p.HGet(ctx, key, "name")
		return cmd, nil
	}}
	return o, func() (string, error) {
		if cmd == nil {
			return "", nil
		}
		name, err := cmd.Result()
		if err != nil && !errors.Is(err, rdb.Nil) {
			return "", fmt.Errorf("read the name of %s: %w", uid, err)
		}
		return name, nil
	}
}

// userName reads a user's name: "" when the user has no hash.
func (s *Store) userName(ctx context.Context, uid string) (string, error) {
	names, err := s.userNames(ctx, []string{uid})
	return names[uid], err
}

// namingFieldArgs are the fields of a comment nameAuthors reads, as HMGET arguments.
var namingFields = []string{"author", "aname", "deleted"}

// namingFieldArgs are namingFields as HMGET arguments, in either shape of a comment's hash.
var namingFieldArgs = commentArgs(namingFields...)

// nameBatch bounds the hashes one name_authors call writes.
const nameBatch = 500

// nameAuthors gives the post pid (whose hash is h) and the comments of its thread the name of
// their author where their hash lacks it: Rebuild's step for items written before names were
// kept. It returns how many hashes got a name.
func (s *Store) nameAuthors(ctx context.Context, pid string, h map[string]string) (int, error) {
	var keys, authors []string
	if h["aname"] == "" && h["author"] != "" && h["deleted"] != "1" {
		keys, authors = append(keys, s.k.post(pid)), append(authors, h["author"])
	}
	nums, err := s.threadNums(ctx, pid)
	if err != nil {
		return 0, err
	}
	ops := make([]op, len(nums))
	cmds := make([]*rdb.StringSliceCmd, len(nums))
	for i, num := range nums {
		key := s.k.comment(pid, num)
		ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cmds[i] = hmget(ctx, p, key, namingFieldArgs)
			return cmds[i], nil
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return 0, fmt.Errorf("read the comments of post %s: %w", pid, err)
	}
	for i, c := range cmds {
		v := c.Val()
		if len(v) == len(namingFieldArgs) {
			v = commentValues(namingFields, v)
		}
		if len(v) == 3 && v[0] != "" && v[1] == "" && v[2] != "1" {
			keys, authors = append(keys, s.k.comment(pid, nums[i])), append(authors, v[0])
		}
	}
	if len(keys) == 0 {
		return 0, nil
	}
	names, err := s.userNames(ctx, authors)
	if err != nil {
		return 0, err
	}
	named := 0
	for start := 0; start < len(keys); start += nameBatch {
		end := min(start+nameBatch, len(keys))
		var ks []string
		var args []any
		for i := start; i < end; i++ {
			if name := names[authors[i]]; name != "" {
				ks, args = append(ks, keys[i]), append(args, authors[i], name)
			}
		}
		if len(ks) == 0 {
			continue
		}
		v, err := s.run(ctx, "name_authors", ks, args...)
		if err != nil {
			return named, err
		}
		n, err := replyInt("name_authors", v)
		if err != nil {
			return named, err
		}
		named += int(n)
	}
	return named, nil
}

// userNames reads the names of users in one round trip, by key; a user without a hash has none.
func (s *Store) userNames(ctx context.Context, uids []string) (map[string]string, error) {
	var distinct []string
	seen := make(map[string]bool, len(uids))
	for _, uid := range uids {
		if !seen[uid] {
			seen[uid] = true
			distinct = append(distinct, uid)
		}
	}
	ops := make([]op, len(distinct))
	names := make([]func() (string, error), len(distinct))
	for i, uid := range distinct {
		ops[i], names[i] = s.nameRead(ctx, uid)
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return nil, fmt.Errorf("read user names: %w", err)
	}
	out := make(map[string]string, len(distinct))
	for i, uid := range distinct {
		name, err := names[i]()
		if err != nil {
			return nil, err
		}
		out[uid] = name
	}
	return out, nil
}
