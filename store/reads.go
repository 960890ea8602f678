package store

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Group is a named collection of posts.
type Group struct {
	ID   string
	Name string
}

// NodeID returns the group's global id.
func (g *Group) NodeID() string { return g.ID }

// NewGroup returns the Group value for a (normalized) name.
func NewGroup(name string) *Group { return &Group{ID: groupID(name), Name: name} }

// User loads a user by global id; nil when there is none.
func (l *Loader) User(ctx context.Context, id string) (*User, error) {
	uid, err := UserKey(id)
	if err != nil {
		return nil, err
	}
	return l.userByKey(ctx, uid)
}

// UserByName loads a user by name, ignoring case; nil when there is none.
func (l *Loader) UserByName(ctx context.Context, name string) (*User, error) {
	if !validUserName(name) {
		return nil, invalidf("name must be 3–32 of A-Z a-z 0-9 _ -")
	}
	return l.userByKey(ctx, strings.ToLower(name))
}

func (l *Loader) userByKey(ctx context.Context, uid string) (*User, error) {
	vals, err := l.hashFields(ctx, l.s.k.user(uid), userFields...)
	if err != nil {
		return nil, err
	}
	if vals[0] == nil {
		return nil, nil
	}
	return userFromFields(uid, vals[0], vals[1]), nil
}

// userFields are the fields of a user hash that reads return; never the password hash.
var userFields = []string{"name", "created"}

// userRead is the read behind userByKey, for batching users with other reads.
func (l *Loader) userRead(uid string) read {
	return hashFieldsRead(l.s.k.user(uid), userFields...)
}

// Post loads a post by global id; nil when there is none or it was deleted.
func (l *Loader) Post(ctx context.Context, id string) (*Post, error) {
	pid, err := PostKey(id)
	if err != nil {
		return nil, err
	}
	return l.postByKey(ctx, pid)
}

func (l *Loader) postByKey(ctx context.Context, pid string) (*Post, error) {
	h, err := l.hash(ctx, l.s.k.post(pid))
	if err != nil {
		return nil, err
	}
	return l.s.postFromHash(pid, h), nil
}

// postsByKey loads many posts in one round trip, dropping missing ones; kept lists the indexes
// of the posts returned.
func (l *Loader) postsByKey(ctx context.Context, pids []string) ([]*Post, []int, error) {
	reads := make([]read, len(pids))
	for i, pid := range pids {
		reads[i] = hashRead(l.s.k.post(pid))
	}
	cmds, err := l.doAll(ctx, reads)
	if err != nil {
		return nil, nil, err
	}
	var out []*Post
	var kept []int
	for i, cmd := range cmds {
		if p := l.s.postFromHash(pids[i], cmd.(*redis.MapStringStringCmd).Val()); p != nil {
			out = append(out, p)
			kept = append(kept, i)
		}
	}
	return out, kept, nil
}

// PostVote returns uid's vote on a post: 1, -1 or 0. The author counts as having voted up.
func (l *Loader) PostVote(ctx context.Context, p *Post, viewerID string) (int, error) {
	return l.vote(ctx, l.s.k.postVotes(p.Key()), p.AuthorID, viewerID)
}

// vote reads a viewer's vote from a votes hash (voter → "1" | "-1"): 1, -1 or 0 for none or an
// anonymous viewer. The author of the item counts as having voted up.
func (l *Loader) vote(ctx context.Context, votesKey, authorID, viewerID string) (int, error) {
	if viewerID == "" {
		return 0, nil
	}
	if viewerID == authorID {
		return 1, nil
	}
	uid, err := UserKey(viewerID)
	if err != nil {
		return 0, err
	}
	v, err := l.hashField(ctx, votesKey, uid)
	if err != nil {
		return 0, err
	}
	switch v {
	case "1":
		return 1, nil
	case "-1":
		return -1, nil
	}
	return 0, nil
}

// Posts loads one page of posts in sort order, site-wide (group "") or in one group.
func (l *Loader) Posts(ctx context.Context, sort PostSort, group string, first int, after string) (*Page[*Post], error) {
	if err := CheckFirst(first); err != nil {
		return nil, err
	}
	if group != "" {
		var err error
		if group, err = NormalizeGroupName(group); err != nil {
			return nil, err
		}
	}
	r := l.s.k.ranking(group)
	key, tag := r.hot, "ph"
	switch sort {
	case SortNew:
		key, tag = r.new, "pn"
	case SortTop:
		key, tag = r.top, "pt"
	}
	if group != "" {
		tag += ":" + group // a cursor of one list is refused on another
	}
	return l.postPage(ctx, key, tag, first, after)
}

// UserPosts loads one page of a user's posts, newest first.
func (l *Loader) UserPosts(ctx context.Context, userID string, first int, after string) (*Page[*Post], error) {
	if err := CheckFirst(first); err != nil {
		return nil, err
	}
	uid, err := UserKey(userID)
	if err != nil {
		return nil, err
	}
	return l.postPage(ctx, l.s.k.userPosts(uid), "pu", first, after)
}

// postPage pages a sorted set of post ids (highest score first) and loads the posts.
func (l *Loader) postPage(ctx context.Context, key, tag string, first int, after string) (*Page[*Post], error) {
	c, err := decodeCursor(after, tag)
	if err != nil {
		return nil, err
	}
	rp, err := l.page(ctx, key, true, first, c)
	if err != nil {
		return nil, err
	}
	posts, kept, err := l.postsByKey(ctx, rp.members)
	if err != nil {
		return nil, err
	}
	all := rp.cursors(tag)
	cursors := make([]string, len(kept))
	for i, k := range kept {
		cursors[i] = all[k]
	}
	return &Page[*Post]{Items: posts, Cursors: cursors, Total: rp.total, HasNext: rp.hasNext, HasPrev: rp.start > 0}, nil
}

// Group loads a group by name; nil when it holds no posts.
func (l *Loader) Group(ctx context.Context, name string) (*Group, error) {
	n, err := NormalizeGroupName(name)
	if err != nil {
		return nil, err
	}
	count, err := l.GroupPostCount(ctx, n)
	if err != nil || count == 0 {
		return nil, err
	}
	return NewGroup(n), nil
}

// GroupPostCount returns how many posts a group holds.
func (l *Loader) GroupPostCount(ctx context.Context, name string) (int, error) {
	return l.zcard(ctx, l.s.k.ranking(name).new)
}
