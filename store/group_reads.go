package store

import (
	"context"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// The reads of groups. A group is an item of Walk (ItemGroup): a list of groups — a user's, the
// suggestions, the groups of the posts on a page — reads the info, post count and whatever Needs
// asks of every group in one pipeline, and their moderators in the next; the resolvers of a
// group's fields then find their reads in the loader.

// groupInfoFieldArgs are the fields of a group's info hash that reads return, as HMGET arguments.
// A group's rules, which may be long, are read apart, only by a response that shows them.
var groupInfoFieldArgs = boxed([]string{"created", "creator", "description", "ver", "title", "icon", "banner", "restricted", "nsfw"})

func (l *Loader) groupInfoRead(g string) read {
	return hashFieldsRead(l.s.k.groupInfo(g), groupInfoFieldArgs)
}

// groupRulesFieldArgs are the HMGET arguments of a group's rules.
var groupRulesFieldArgs = boxed([]string{"rules"})

// groupRulesRead reads a group's rules from its info hash, cached apart from groupInfoRead.
func (l *Loader) groupRulesRead(g string) read {
	r := hashFieldsRead(l.s.k.groupInfo(g), groupRulesFieldArgs)
	r.key += "#rules"
	return r
}

// groupModsRead reads a group's moderators, in the order they became moderators.
func (l *Loader) groupModsRead(g string) read {
	return zrangeRead(l.s.k.groupMods(g), 0, MaxGroupModerators-1)
}

// groupOldestRead reads the oldest post of a group, with its publish time: the created time of a
// group that holds posts indexed before groups recorded one.
// Both parts of the NEW ranking are read (see nsfw_lists.go); oldestOf takes the older.
func (l *Loader) groupOldestRead(g string) read {
	key := l.s.k.ranking(g).new
	nkey := nsfwKey(key)
	return read{key: "old:" + key, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd, c.cmd2 = p.ZRangeWithScores(ctx, key, 0, 0), p.ZRangeWithScores(ctx, nkey, 0, 0)
	}}
}

// oldestOf is the publish time (ms) of the oldest post a done groupOldestRead found; ok is false
// when the group holds none.
func oldestOf(c *call) (ms int64, ok bool) {
	for _, cmd := range []rdb.Cmder{c.cmd, c.cmd2} {
		if zs := cmd.(*rdb.ZSliceCmd).Val(); len(zs) > 0 && (!ok || int64(zs[0].Score) < ms) {
			ms, ok = int64(zs[0].Score), true
		}
	}
	return ms, ok
}

// groupNeeds adds the reads of a group that its name decides: always its post count (whether it
// exists needs it, with the info), and what n asks.
func (l *Loader) groupNeeds(g string, n *Needs, reads []read) []read {
	k := l.s.k
	reads = append(reads, partCountReads(k.ranking(g).new)...) // whether it exists, its post count
	if n.GroupCreated {
		reads = append(reads, l.groupOldestRead(g))
	}
	if n.MemberCount {
		reads = append(reads, zcardRead(k.groupMembers(g)))
	}
	for w := ActiveHour; w <= ActiveYear; w++ {
		if n.ActiveUsers.Has(w) {
			reads = append(reads, l.activeUsersRead(g, w))
		}
	}
	if n.Moderators != nil {
		reads = append(reads, l.groupModsRead(g))
	}
	if v := string(n.Viewer); v != "" {
		if n.ViewerIsMember {
			reads = append(reads, zscoreRead(k.userGroups(v), g))
		}
		if n.ViewerIsModerator && !l.s.IsAdmin(n.Viewer) {
			reads = append(reads, zscoreRead(k.groupMods(g), v))
		}
	}
	return reads
}

// moderatorItems adds a walked group's moderators to the items of the next round.
func (l *Loader) moderatorItems(it walkItem, items *[]walkItem) {
	if it.needs.Moderators == nil {
		return
	}
	c := l.cached(l.groupModsRead(it.key))
	if c == nil || c.err != nil {
		return
	}
	for _, m := range zrangeMembers(c) {
		*items = append(*items, newWalkItem(ItemUser, "", m, it.needs.Moderators))
	}
}

// cached returns the call of a read already started, or nil.
func (l *Loader) cached(r read) *call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cache[r.key]
}

// groupInfo is a group's info hash as read.
type groupInfo struct {
	created     int64   // Unix ms; 0 when not recorded
	description *string // nil when none
	lasting     bool    // the info holds a version: the group exists without posts
	title       *string // nil when none
	icon        *string // nil when none
	banner      *string // nil when none
	restricted  bool    // only moderators post
	nsfw        bool    // labelled NSFW (see labels.go)
}

// groupInfoOf parses a done info read.
func (l *Loader) groupInfoOf(c *call) groupInfo {
	gi, _ := l.parsed(c, func(c *call) any {
		v := fields(c)
		gi := groupInfo{created: atoi64(v[0]), lasting: v[3] != "", restricted: v[7] == "1", nsfw: v[8] == "1",
			description: optional(v[2]), title: optional(v[4]), icon: optional(v[5]), banner: optional(v[6])}
		return gi
	}).(groupInfo)
	return gi
}

// optional is v, or nil for "".
func optional(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// groupExists reads whether groups exist, in one pipeline (cached with the walk's reads): a group
// exists while it holds posts or once its info holds a version.
func (l *Loader) groupExists(ctx context.Context, names []string) ([]bool, error) {
	reads := make([]read, 0, 3*len(names))
	for _, g := range names {
		reads = append(append(reads, l.groupInfoRead(g)), partCountReads(l.s.k.ranking(g).new)...)
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	out := make([]bool, len(names))
	for i := range names {
		out[i] = l.groupInfoOf(calls[3*i]).lasting || countOf(calls[3*i+1], calls[3*i+2]) > 0
	}
	return out, nil
}

// Group loads a group by name; nil when it does not exist.
func (l *Loader) Group(ctx context.Context, name string) (*Group, error) {
	return l.WalkGroup(ctx, name, nil)
}

// WalkGroup loads a group by name, and what needs says the response reads of it; nil when it
// does not exist.
func (l *Loader) WalkGroup(ctx context.Context, name string, needs func() *Needs) (*Group, error) {
	n, err := NormalizeGroupName(name)
	if err != nil {
		return nil, err
	}
	gs, err := l.existingGroups(ctx, []string{n}, 1, needs)
	if err != nil || len(gs) == 0 {
		return nil, err
	}
	return gs[0], nil
}

// existingGroups walks the groups names (normalized) with needs and returns up to first of those
// that exist, in order.
func (l *Loader) existingGroups(ctx context.Context, names []string, first int, needs func() *Needs) ([]*Group, error) {
	if needs != nil {
		l.Walk(ctx, Items{Kind: ItemGroup, Keys: names}, evalNeeds(needs))
	}
	exists, err := l.groupExists(ctx, names)
	if err != nil {
		return nil, err
	}
	out := make([]*Group, 0, min(first, len(names)))
	for i, g := range names {
		if exists[i] && len(out) < first {
			out = append(out, NewGroup(g))
		}
	}
	return out, nil
}

// WalkGroups reads groups, and what needs says the response reads of them, in one walk.
func (l *Loader) WalkGroups(ctx context.Context, groups []*Group, needs func() *Needs) {
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Name
	}
	l.Walk(ctx, Items{Kind: ItemGroup, Keys: names}, evalNeeds(needs))
}

// GroupDescription loads a group's description; nil when it has none.
func (l *Loader) GroupDescription(ctx context.Context, g *Group) (*string, error) {
	c, err := l.get(ctx, l.groupInfoRead(g.Name))
	if err != nil {
		return nil, err
	}
	return l.groupInfoOf(c).description, nil
}

// GroupPage loads what a group's page shows of its info: title, icon and banner URLs (nil
// when none) and whether only its moderators post.
func (l *Loader) GroupPage(ctx context.Context, g *Group) (title, icon, banner *string, restricted bool, err error) {
	c, err := l.get(ctx, l.groupInfoRead(g.Name))
	if err != nil {
		return nil, nil, nil, false, err
	}
	gi := l.groupInfoOf(c)
	return gi.title, gi.icon, gi.banner, gi.restricted, nil
}

// GroupRules loads a group's rules; nil when it has none.
func (l *Loader) GroupRules(ctx context.Context, g *Group) (*string, error) {
	c, err := l.get(ctx, l.groupRulesRead(g.Name))
	if err != nil {
		return nil, err
	}
	return optional(fields(c)[0]), nil
}

// GroupCreatedAt loads when a group was made: by createGroup, or by its oldest post (see
// groups.go). A group that holds posts indexed before groups recorded their time is as old as
// its oldest post, read in the same pipeline as its info.
func (l *Loader) GroupCreatedAt(ctx context.Context, g *Group) (time.Time, error) {
	calls := l.getAll(ctx, l.groupInfoRead(g.Name), l.groupOldestRead(g.Name))
	if err := waitAll(ctx, calls); err != nil {
		return time.Time{}, err
	}
	if ms := l.groupInfoOf(calls[0]).created; ms != 0 {
		return fromMillis(ms), nil
	}
	if ms, ok := oldestOf(calls[1]); ok {
		return fromMillis(ms), nil
	}
	return time.Time{}, nil
}

// GroupModerators loads a group's moderators, in the order they became moderators.
func (l *Loader) GroupModerators(ctx context.Context, g *Group) ([]*User, error) {
	c, err := l.get(ctx, l.groupModsRead(g.Name))
	if err != nil {
		return nil, err
	}
	return l.existingUsers(ctx, zrangeMembers(c))
}

// GroupMemberCount loads how many users joined a group.
func (l *Loader) GroupMemberCount(ctx context.Context, g *Group) (int, error) {
	return l.zcard(ctx, l.s.k.groupMembers(g.Name))
}

// IsMember reports whether user joined a group; false for an anonymous viewer ("").
func (l *Loader) IsMember(ctx context.Context, g *Group, user UserKey) (bool, error) {
	if user == "" {
		return false, nil
	}
	_, ok, err := l.zscore(ctx, l.s.k.userGroups(string(user)), g.Name)
	return ok, err
}

// IsModerator reports whether user moderates a group: one of its moderators, or an admin; false
// for an anonymous viewer ("").
func (l *Loader) IsModerator(ctx context.Context, g *Group, user UserKey) (bool, error) {
	if user == "" {
		return false, nil
	}
	if l.s.IsAdmin(user) {
		return true, nil
	}
	_, ok, err := l.zscore(ctx, l.s.k.groupMods(g.Name), string(user))
	return ok, err
}

// UserGroups loads one page of the groups user joined, most recently joined first, and what
// needs says the response reads of them. A reader who does not show NSFW posts is listed no NSFW
// group, as in the directory: their list is read whole (at most MaxGroupsJoined, in the same
// round trip as a page would be) and paged here without the groups of the set of NSFW groups,
// with the same cursors and a totalCount of what they see.
func (l *Loader) UserGroups(ctx context.Context, user UserKey, w Window, needs func() *Needs) (*Page[*Group], error) {
	const tag = "ugr"
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	var rp rawPage
	if l.hidesNSFW() {
		rp, err = l.sfwUserGroups(ctx, user, sp)
	} else {
		rp, err = l.page(ctx, l.s.k.userGroups(string(user)), true, sp)
	}
	if err != nil {
		return nil, err
	}
	l.Walk(ctx, Items{Kind: ItemGroup, Keys: rp.members}, evalNeeds(needs))
	p := &Page[*Group]{Total: rp.total, HasNext: rp.hasNext, HasPrev: rp.hasPrev, Cursors: rp.cursors(tag),
		Items: make([]*Group, len(rp.members))}
	for i, g := range rp.members {
		p.Items[i] = NewGroup(g)
	}
	return p, nil
}

// sfwUserGroups reads the whole list of the groups user joined and returns the page sp of those
// that are not NSFW, as a page read of the list returns it (see UserGroups).
func (l *Loader) sfwUserGroups(ctx context.Context, user UserKey, sp span) (rawPage, error) {
	c, err := l.get(ctx, zrangeRead(l.s.k.userGroups(string(user)), 0, -1))
	if err != nil {
		return rawPage{}, err
	}
	// The set of NSFW groups rode with the loader's first pipeline, at the latest with the list:
	// read from the loader, so that a failed read of it fails the list rather than show all.
	if _, err := l.get(ctx, l.nsfwGroupsRead()); err != nil {
		return rawPage{}, err
	}
	nsfw := l.nsfwGroupSet()
	zs := c.cmd.(*rdb.ZSliceCmd).Val()
	kept := make([]rankedEntry, 0, len(zs))
	for _, z := range zs {
		if g, _ := z.Member.(string); g != "" && !nsfw[g] {
			kept = append(kept, rankedEntry{id: g, score: z.Score})
		}
	}
	rp, _ := rankPage(kept, sp)
	return rp, nil
}
