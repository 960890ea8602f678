package store

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// Group is a named collection of posts.
type Group struct {
	ID   string
	Name string
}

// NodeID returns the group's global id.
func (g *Group) NodeID() string { return g.ID }

// Groups returns the groups the post is in.
func (p *Post) Groups() []*Group {
	out := make([]*Group, len(p.GroupNames))
	for i, n := range p.GroupNames {
		out[i] = NewGroup(n)
	}
	return out
}

// NewGroup returns the Group value for a (normalized) name.
func NewGroup(name string) *Group { return &Group{ID: groupID(name), Name: name} }

// The reads of the three kinds of item. Each reads only the fields the model holds (HMGET), and
// every lookup of an item — by a resolver or by Walk — is the same read, so that an item is read
// once per response.

// userFields are the fields of a user hash that reads return; never the password hash.
var userFields = []string{"name", "created", "bio", "avatar"}

// postFields are the fields of a post hash that Post holds.
var postFields = []string{"title", "body", "url", "author", "created", "closes", "up", "down", "ver", "groups", "comments", "deleted",
	"edited", "removed", "locked", "aname", "active", "erased", "nsfw", "spoiler"}

// commentFields are the fields of a comment hash that Comment holds.
var commentFields = [...]string{"parent", "author", "body", "created", "edited", "depth", "up", "down", "replies", "ver", "deleted", "removed",
	"aname"}

// userFieldArgs and postFieldArgs are userFields and postFields as HMGET arguments;
// postHashArgs is postFields without body, which no post keeps in its hash since layout 5.
var userFieldArgs, postFieldArgs, postHashArgs = boxed(userFields), boxed(postFields), boxed(postFieldsBut("body"))

// postTextArgs are the fields of postTexts a post read that reads the body asks for.
var postTextArgs = [1][]any{{postTextBody}}

func (l *Loader) userRead(uid string) read { return hashRead(l.s.k.userIn("m:", uid), userFieldArgs) }

// postRead reads a post with its body: postReadOf(pid, true).
func (l *Loader) postRead(pid string) read { return l.postReadOf(pid, true) }

// postReadOf reads the fields of a post's hash that Post holds and, when body, in the same
// pipeline (one slot), its body kept apart (keys.postTexts). A listing whose response shows no
// body reads the hash alone, one command a post (Needs.ReadsPostBody): the title and url stay in
// the hash (see scripts/lib/post_texts.lua).
//
// Since layout 5 no post keeps its body in its hash. A process that found the keyspace of an
// earlier layout at start-up asks the hash for it too until it has migrated it
// (Store.postBodiesInHashes); a text in the hash is newer than one apart (see
// scripts/lib/post_texts.lua).
func (l *Loader) postReadOf(pid string, body bool) read {
	fields := postHashArgs
	if l.s.postBodiesInHashes.Load() {
		fields = postFieldArgs
	}
	if !body {
		ck, key := l.s.k.postIn("m:", pid, "\x00t") // one allocation for both
		return read{key: ck, rkey: key, fields: fields, fill: fillPostRead}
	}
	tkey := l.s.k.postTexts(pid)
	key := tkey[:len(tkey)-len(":c:body")] // keys.post, without an allocation of its own
	return read{key: "m:" + key, rkey: key, fields: fields, fill: fillPostRead, texts: 1, tkey: tkey}
}

// fillPostRead adds a post read's commands to a pipeline: the HMGET of its texts apart and that
// of its hash.
func fillPostRead(ctx context.Context, p rdb.Pipeliner, c *call) {
	if c.r.texts == 0 {
		if c.args == nil {
			c.args = hmgetArgs(make([]any, 0, 2+len(c.r.fields)), &c.r.rkey, c.r.fields)
		}
		c.cmd = sendHMGET(ctx, p, c.args)
		return
	}
	texts := postTextArgs[c.r.texts-1]
	if c.args == nil {
		c.args = hmgetArgs(hmgetArgs(make([]any, 0, 4+len(c.r.fields)+len(texts)), &c.r.rkey, c.r.fields), &c.r.tkey, texts)
	}
	n := 2 + len(c.r.fields) // the hash's HMGET, then the texts' (see giveArgs)
	// The texts go first, so that the hash's counts are followed at once by whatever the walk
	// reads with them (the viewer's vote: see Loader.Walk).
	c.cmd2 = sendHMGET(ctx, p, c.args[n:])
	c.cmd = sendHMGET(ctx, p, c.args[:n:n])
}

// postFieldsBut is postFields without the field name.
func postFieldsBut(name string) []string {
	var out []string
	for _, f := range postFields {
		if f != name {
			out = append(out, f)
		}
	}
	return out
}

// postValues returns the values of postFields of a done post read (postReadOf): the hash's, with
// the texts kept apart where the hash has none.
func postValues(c *call) []string {
	v := fields(c)
	if len(v) < len(postFields) { // read without the hash's body: v[1] is the body's place
		w := make([]string, len(v)+1)
		w[0] = v[0]
		copy(w[2:], v[1:])
		v = w
	}
	if c.cmd2 != nil {
		mergePostTexts(v, c.cmd2.(*rdb.StringSliceCmd).Val())
	}
	return v
}

// mergePostTexts puts the body kept apart, t (as postTextArgs), into v, the values of postFields,
// where the hash has none.
func mergePostTexts(v, t []string) {
	if len(t) > 0 && v[1] == "" && v[17] != "1" { // body in postFields; an erased post keeps none apart
		v[1] = t[0]
	}
}

// commentRead reads the fields of a comment that fs names, with those always read, and its body
// from the thread's bodies (keys.commentBodies) when fs names it: the loader reads the bodies of
// the comments of one thread that a batch asks for in one HMGET (Loader.exec).
//
// The body is read from the thread's bodies (read.body), not from the hash: since layout 3 no
// comment keeps it there. A process that found the keyspace of an earlier layout at start-up
// asks the hash for it too until it has migrated it (Store.bodiesInHashes): each field asked
// of a listpack costs a scan of it. Likewise the fields packed since layout 6 (comment_meta.go)
// are read from the packed field alone, and also under their names of layout 5 by a process
// that found an earlier layout, until it has migrated it (Store.unpackedComments).
func (l *Loader) commentRead(pid, num string, fs CommentFields) read {
	set := commentFieldSets[fs.normal()]
	if l.s.bodiesInHashes.Load() {
		set = legacyCommentFieldSets[fs.normal()]
	} else if l.s.unpackedComments.Load() {
		set = unpackedCommentFieldSets[fs.normal()]
	}
	ck, key := l.s.k.commentIn("m:", pid, num, set.tail)
	return read{key: ck, rkey: key, fields: set.args, fill: fillHMGET,
		body: fs.normal()&CommentBody != 0}
}

// normal is the fields fs reads: every field for zero.
func (fs CommentFields) normal() CommentFields {
	if fs == 0 {
		return AllCommentFields
	}
	return fs & AllCommentFields
}

// commentFieldSet is the HMGET of one CommentFields: the field names and where each value goes
// among commentFields.
type commentFieldSet struct {
	tail string // ends the cache key of a read of the set: "\x00" and the set's id
	args []any  // the names, as HMGET arguments
	at   []int  // the places among commentFields; atPacked and atName for the fields that are none
}

// atPacked marks commentMetaField among a commentFieldSet's places: its value fills the fields
// packed in it (commentPacked); atName marks commentNameField asked only for the author (see
// authorOf).
const atPacked, atName = -1, -2

// commentPacked are the places among commentFields of the fields packed in commentMetaField,
// in the order of commentMetaNames (-1 for those that Comment does not hold).
var commentPacked = [len(commentMetaNames)]int{0, 3, -1, 5, -1}

// commentFieldSets holds the HMGET of every CommentFields of a keyspace of layout 6, without the
// field body and with the packed fields in commentMetaField alone (see commentRead);
// unpackedCommentFieldSets asks for the packed fields under their names of layout 5 too, and
// legacyCommentFieldSets for the field body as well. They never change after start-up.
var commentFieldSets, unpackedCommentFieldSets, legacyCommentFieldSets = fieldSets(false, false), fieldSets(false, true), fieldSets(true, true)

// commentFieldSetsOf lists the three in the order commentOf tries them.
var commentFieldSetsOf = [...][]commentFieldSet{commentFieldSets, unpackedCommentFieldSets, legacyCommentFieldSets}

// fieldSets makes the HMGET of every CommentFields, asking for the field body (for
// CommentBody) when body, and for the packed fields under their names of layout 5 when
// unpacked.
func fieldSets(body, unpacked bool) []commentFieldSet {
	always := []int{1, 3, 10, 11} // author, created, deleted, removed
	bits := map[CommentFields]int{CommentParent: 0, CommentBody: 2, CommentEdited: 4, CommentDepth: 5, CommentUp: 6,
		CommentDown: 7, CommentReplies: 8, CommentVersion: 9, CommentAuthorName: 12}
	sets := make([]commentFieldSet, AllCommentFields+1)
	for fs := range sets {
		id := strconv.Itoa(fs)
		if unpacked {
			id = "u" + id
		}
		if body {
			id = "b" + id
		}
		set := commentFieldSet{tail: "\x00" + id}
		packed := false
		for i := range commentFields {
			if i == 2 && !body {
				continue // the body: from the thread's bodies
			}
			in := false
			for _, a := range always {
				in = in || a == i
			}
			for b, at := range bits {
				in = in || (CommentFields(fs)&b != 0 && at == i)
			}
			if !in {
				continue
			}
			p := packedNameOf(commentFields[i])
			if p == "" || unpacked { // a field of its own, or one of layout 5
				set.args, set.at = append(set.args, commentFields[i]), append(set.at, i)
			}
			if p != "" {
				packed = true
			}
			if p != "" && p != commentMetaField { // renamed: author, aname
				set.args, set.at = append(set.args, p), append(set.at, i)
			}
		}
		if packed { // always: author and created are
			set.args, set.at = append(set.args, commentMetaField), append(set.at, atPacked)
		}
		if !slices.Contains(set.args, any(commentNameField)) { // the author is the name's without a
			set.args, set.at = append(set.args, commentNameField), append(set.at, atName)
		}
		sets[fs] = set
	}
	return sets
}

// fields returns the values of a done HMGET: "" for a missing field.
func fields(c *call) []string { return c.cmd.(*rdb.StringSliceCmd).Val() }

// userOf parses a done user read: nil when there is no such user.
func (l *Loader) userOf(c *call, uid string) *User {
	u, _ := l.parsed(c, func(c *call) any {
		v := fields(c)
		if v[0] == "" { // every user has a name
			return (*User)(nil)
		}
		return l.s.userFromFields(uid, v)
	}).(*User)
	return u
}

// postOf parses a done post read: nil when there is none or it was deleted.
func (l *Loader) postOf(c *call, pid string) *Post {
	hide := l.hidesNSFW()
	groups := l.nsfwGroupSet()
	p, _ := l.parsed(c, func(c *call) any {
		p := l.s.postFromFields(pid, postValues(c))
		if p != nil && !p.NSFW {
			p.NSFW = groups.any(p.GroupNames)
		}
		if hide {
			p = Withheld(p)
		}
		return p
	}).(*Post)
	return p
}

// commentOf parses a done comment read of the fields fs names: nil when there is none. The
// fields not read are zero. A comment by a user the viewer blocks comes collapsed.
func (l *Loader) commentOf(c *call, pid, num string, fs CommentFields) *Comment {
	blocks := l.viewerBlocks()
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.val == nil { // parsed once, like parsed, without a closure per comment
		v := fields(c)
		var set commentFieldSet
		for _, sets := range commentFieldSetsOf { // the set commentRead asked for (see there)
			if set = sets[fs.normal()]; len(v) == len(set.at) {
				break
			}
		}
		var all [len(commentFields)]string // on the stack: commentFromFields keeps none of it
		m, name := "", ""
		for i, at := range set.at {
			switch {
			case at == atPacked:
				m = v[i]
			case at == atName:
				name = v[i]
			case v[i] != "": // of the two names of a field asked in either shape, the one the hash has
				all[at] = v[i]
			}
		}
		if m != "" { // a packed hash (layout 6) has none of the fields of layout 5 it packs
			unpackCommentFields(all[:], m)
			if name == "" {
				name = all[12]
			}
			all[1] = authorOf(all[1], name)
		}
		if all[2] == "" { // a body in the hash (read only before layout 3) is newer
			all[2] = c.body
		}
		if l.postGID.pid != pid { // the comments of a page share their post's id
			l.postGID.pid, l.postGID.id = pid, postID(pid)
		}
		cm := commentFromFields(pid, l.postGID.id, num, all[:])
		collapseBlocked(cm, blocks)
		c.val = cm
	}
	cm, _ := c.val.(*Comment)
	return cm
}

// str is an HMGET value as a string; "" for a missing field.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// valuesOf lists the values of names in a hash map, as fields gives an HMGET's.
func valuesOf(h map[string]string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = h[n]
	}
	return out
}

// strs is the values of a reply that go-redis gives as interfaces (a script's, HMGet's) as
// fields gives them.
func strs(v []any) []string {
	out := make([]string, len(v))
	for i := range v {
		out[i] = str(v[i])
	}
	return out
}

// User loads a user; nil when there is none.
func (l *Loader) User(ctx context.Context, uid UserKey) (*User, error) {
	return l.userByKey(ctx, string(uid))
}

// UserByName loads a user by name, ignoring case; nil when there is none.
func (l *Loader) UserByName(ctx context.Context, name string) (*User, error) {
	if !validUserName(name) {
		return nil, invalidf("name must be 3–32 of A-Z a-z 0-9 _ -")
	}
	return l.userByKey(ctx, strings.ToLower(name))
}

// userByKey loads a user by key. A user already loaded is found by key alone, without building
// its read again: the author of a hundred comments is looked up a hundred times.
func (l *Loader) userByKey(ctx context.Context, uid string) (*User, error) {
	l.mu.Lock()
	u, ok := l.users[uid]
	l.mu.Unlock()
	if ok {
		return u, nil
	}
	c, err := l.get(ctx, l.userRead(uid))
	if err != nil {
		return nil, err
	}
	u = l.userOf(c, uid)
	l.mu.Lock()
	if l.users == nil {
		l.users = make(map[string]*User)
	}
	l.users[uid] = u
	l.mu.Unlock()
	return u, nil
}

// usersByKey loads many users in one round trip; a missing user is nil at its index.
func (l *Loader) usersByKey(ctx context.Context, uids []string) ([]*User, error) {
	reads := make([]read, len(uids))
	for i, uid := range uids {
		reads[i] = l.userRead(uid)
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	users := make([]*User, len(uids))
	for i, c := range calls {
		users[i] = l.userOf(c, uids[i])
	}
	return users, nil
}

// existingUsers loads many users in one round trip, in order, leaving out missing ones.
func (l *Loader) existingUsers(ctx context.Context, uids []string) ([]*User, error) {
	users, err := l.usersByKey(ctx, uids)
	if err != nil {
		return nil, err
	}
	out := make([]*User, 0, len(users))
	for _, u := range users {
		if u != nil {
			out = append(out, u)
		}
	}
	return out, nil
}

// Post loads a post by global id; nil when there is none or it was deleted.
func (l *Loader) Post(ctx context.Context, id string) (*Post, error) {
	pid, err := PostKey(id)
	if err != nil {
		return nil, err
	}
	c, err := l.get(ctx, l.postRead(pid))
	if err != nil {
		return nil, err
	}
	return l.postOf(c, pid), nil
}

// postsByKey loads many posts in one round trip, dropping missing ones; kept lists the indexes
// of the posts returned. body says whether their bodies are read (postReadOf): as the Walk of the
// same posts read them, so that the reads are the walk's.
func (l *Loader) postsByKey(ctx context.Context, pids []string, body bool) ([]*Post, []int, error) {
	reads := make([]read, len(pids))
	for i, pid := range pids {
		reads[i] = l.postReadOf(pid, body)
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, nil, err
	}
	var out []*Post
	var kept []int
	for i, c := range calls {
		if p := l.postOf(c, pids[i]); p != nil && !p.NSFWHidden {
			out = append(out, p)
			kept = append(kept, i)
		}
	}
	return out, kept, nil
}

// PostVote returns the viewer's vote on a post: 1, -1 or 0. The author counts as having voted up.
func (l *Loader) PostVote(ctx context.Context, p *Post, viewer UserKey) (int, error) {
	return l.vote(ctx, l.s.k.postVotes(p.Key()), p.Author, viewer)
}

// vote reads a viewer's vote from a votes hash (voter → "1" | "-1"): 1, -1 or 0 for none or an
// anonymous viewer. The author of the item counts as having voted up.
func (l *Loader) vote(ctx context.Context, votesKey string, author, viewer UserKey) (int, error) {
	if viewer == "" {
		return 0, nil
	}
	if viewer == author {
		return 1, nil
	}
	v, err := l.hashField(ctx, votesKey, string(viewer))
	if err != nil {
		return 0, err
	}
	return voteValue(v), nil
}

// voteValue is the vote a votes hash holds, "1" or "-1", as 1 or -1; 0 for anything else (none).
func voteValue(v string) int {
	switch v {
	case "1":
		return 1
	case "-1":
		return -1
	}
	return 0
}

// rankingList returns the sorted set of a post ranking and the tag of its cursors (the part that
// is not NSFW: see nsfw_lists.go).
func (l *Loader) rankingList(sort PostSort, group string) (key, tag string) {
	r := l.s.k.ranking(group)
	key, tag = r.hot, "ph"
	switch sort {
	case SortNew:
		key, tag = r.new, "pn"
	case SortTop:
		key, tag = r.top, "pt"
	case SortActive:
		key, tag = r.active, "pa"
	case SortControversial:
		key, tag = r.controversial, "pc"
	case SortMostComments:
		key, tag = r.comments, "pm"
	}
	if i := sort.window(); i >= 0 {
		key, tag = r.windows[i], "pt"+TopWindows[i].Name
	}
	if group != "" {
		tag += ":" + group // a cursor of one list is refused on another
	}
	return key, tag
}

// rankingCut is the read-time filter of a windowed TOP ranking now; zero for other sorts. A
// response that reads a window changes when a post leaves it, with no write to raise a revision:
// it is not cached.
func (l *Loader) rankingCut(sort PostSort, group string) windowCut {
	i := sort.window()
	if i < 0 {
		return windowCut{}
	}
	if l.revs != nil {
		l.revs.timeDependent()
	}
	r := l.s.k.ranking(group)
	return windowCut{times: r.new, marks: r.trim, set: r.windows[i], cutoff: l.s.now().Add(-TopWindows[i].Length).UnixMilli(), group: group}
}

// withinWindow leaves out of a windowed TOP's page the posts published before its cutoff: those
// a write indexed while another, with a later clock, trimmed (page.lua leaves out the others).
func withinWindow(cut windowCut) func(*Page[*Post], error) (*Page[*Post], error) {
	return func(p *Page[*Post], err error) (*Page[*Post], error) {
		if err != nil || cut.set == "" {
			return p, err
		}
		return p.Without(func(it *Post) bool { return !cut.within(it.CreatedAt.UnixMilli()) }), nil
	}
}

// Posts loads one page of posts in sort order, site-wide (group "") or in one group, and what
// needs says the response reads of them (see Walk), without the posts of users the viewer blocks.
func (l *Loader) Posts(ctx context.Context, sort PostSort, group string, w Window, needs func() *Needs) (*Page[*Post], error) {
	if group != "" {
		var err error
		if group, err = NormalizeGroupName(group); err != nil {
			return nil, err
		}
		p, err := l.groupPosts(ctx, sort, group, w, needs) // pins first
		if err != nil {
			return nil, err
		}
		return l.WithoutBlocked(p), nil
	}
	key, tag := l.rankingList(sort, group)
	cut := l.rankingCut(sort, group)
	p, err := withinWindow(cut)(withoutRemoved(l.postPage(ctx, key, tag, cut, w, needs)))
	if err != nil {
		return nil, err
	}
	return l.WithoutBlocked(p), nil
}

// UserPosts loads one page of a user's posts in the order sort, and what needs says of them:
// SortNew from the user's post list, the other orders ranked from the site's rankings (see
// user_posts.go).
func (l *Loader) UserPosts(ctx context.Context, uid UserKey, sort PostSort, w Window, needs func() *Needs) (*Page[*Post], error) {
	if sort != SortNew {
		return withoutRemoved(l.userPostsRanked(ctx, uid, sort, w, needs))
	}
	return withoutRemoved(l.postPage(ctx, l.s.k.userPosts(string(uid)), "pu", windowCut{}, w, needs))
}

// postPage pages a sorted set of post ids (highest score first), then loads the posts and what
// needs says of them level by level; cut filters a windowed TOP.
func (l *Loader) postPage(ctx context.Context, key, tag string, cut windowCut, w Window, needs func() *Needs) (*Page[*Post], error) {
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	sp.cut = cut
	if p := keptPage[*Post](l, pageKey(key, true, w)); p != nil && cut.set == "" {
		return p, nil
	}
	c, err := l.get(ctx, l.postListRead(key, sp, !w.NoTotal, !w.NoCursors))
	if err != nil {
		return nil, err
	}
	rp, err := pageOf(c, sp)
	if err != nil {
		return nil, err
	}
	l.trimBacklog(ctx, cut, rp.backlog)
	n := evalNeeds(needs)
	l.Walk(ctx, Items{Kind: ItemPost, Keys: rp.members}, n)
	posts, kept, err := l.postsByKey(ctx, rp.members, n.ReadsPostBody())
	if err != nil {
		return nil, err
	}
	all := rp.cursors(tag)
	cursors := make([]string, len(kept))
	for i, k := range kept {
		cursors[i] = all[k]
	}
	return &Page[*Post]{Items: posts, Cursors: cursors, Total: rp.total, HasNext: rp.hasNext, HasPrev: rp.hasPrev}, nil
}

// GroupPostCount returns how many posts a group holds.
func (l *Loader) GroupPostCount(ctx context.Context, name string) (int, error) {
	return l.postCount(ctx, l.s.k.ranking(name).new)
}

// postFromFields builds a Post from the values of postFields, or returns nil for a missing or
// deleted post. A post exists when it has a creation time: its title may be kept apart
// (keys.postTexts) and not read.
func (s *Store) postFromFields(pid string, v []string) *Post {
	title := v[0]
	if v[4] == "" || v[11] == "1" {
		return nil
	}
	created := atoi64(v[4])
	p := &Post{
		ID:             postID(pid),
		Title:          title,
		Body:           v[1],
		Author:         UserKey(v[3]),
		CreatedAt:      fromMillis(created),
		Upvotes:        int(atoi64(v[6])),
		Downvotes:      int(atoi64(v[7])),
		VotingClosesAt: fromMillis(atoi64(v[5])),
		GroupNames:     splitGroups(v[9]),
		CommentCount:   int(atoi64(v[10])),
		Version:        atoi64(v[8]),
		Removed:        v[13] == "1",
		Locked:         v[14] == "1",
		authorName:     v[15],
		Erased:         v[17] == "1",
		NSFW:           v[18] == "1",
		Spoiler:        v[19] == "1",
	}
	if u := v[2]; u != "" {
		p.URL = &u
	}
	if e := v[12]; e != "" {
		t := fromMillis(atoi64(e))
		p.EditedAt = &t
	}
	p.ActiveAt = p.CreatedAt
	if a := atoi64(v[16]); a > created {
		p.ActiveAt = fromMillis(a)
	}
	p.HotRank = s.hotScore(created, p.Net())
	return p
}

// postFromHash builds a Post from its whole hash, as the write scripts return it.
func (s *Store) postFromHash(pid string, h map[string]string) *Post {
	return s.postFromFields(pid, valuesOf(h, postFields))
}

// commentFromFields builds a Comment from the values of commentFields, or returns nil when the
// comment does not exist (or only its removal marker is left); postGID is the global id of its
// post. A deleted comment still in the tree is a tombstone: Deleted, no author, no text.
func commentFromFields(pid, postGID, num string, v []string) *Comment {
	created := v[3]
	if created == "" {
		return nil
	}
	c := &Comment{
		ID:         commentID(pid, num),
		PostID:     postGID,
		Deleted:    v[10] == "1",
		Removed:    v[11] == "1",
		CreatedAt:  fromMillis(metaMillis(created)),
		Depth:      int(atoi64(v[5])),
		Upvotes:    int(atoi64(v[6])),
		Downvotes:  int(atoi64(v[7])),
		ReplyCount: int(atoi64(v[8])),
		Version:    atoi64(v[9]),
		pid:        pid,
		num:        num,
	}
	if p := v[0]; p != "" && p != topLevel {
		c.ParentID = commentID(pid, p)
	}
	if !c.Deleted {
		c.Author = UserKey(v[1])
		c.Text = v[2]
		c.authorName = v[12]
	}
	if e := v[4]; e != "" {
		t := fromMillis(atoi64(e))
		c.EditedAt = &t
	}
	return c
}

// commentFromHash builds a Comment from its whole hash, as the write scripts return it, in
// either shape (comment_meta.go).
func commentFromHash(pid, num string, h map[string]string) *Comment {
	return commentFromFields(pid, postID(pid), num, valuesOf(unpackCommentHash(h), commentFields[:]))
}

// unpackCommentFields puts the fields packed in m into all, the values of commentFields: the
// parent in stored form, created as m holds it (commentFromFields reads it with metaMillis), so
// that a time written short costs the read no string.
func unpackCommentFields(all []string, m string) {
	v := rawCommentMeta(m)
	if p := v[0]; p != "" && p != topLevel {
		v[0] = padNum(p)
	}
	for i, x := range v {
		if at := commentPacked[i]; at >= 0 {
			all[at] = x
		}
	}
}
