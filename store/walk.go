package store

import (
	"context"
	"slices"
	"strconv"
)

// Walk is the one way every list of a response is read: level by level, each level in one
// pipeline, sent the moment the level is known — no timer, no waiting for resolvers. A list's
// resolver calls it with the items it holds (or the page it read) and Needs, what the response
// reads below them; the resolvers that run next find everything in the loader.
//
// One round reads, in one pipeline: the hashes of the items whose keys are known, each followed by
// the viewer's vote on it (so the counts and the vote are read together) and whether the viewer
// saved it, the reads those keys alone decide (the pages below them, a user's karma or counts),
// and the reads that needed the previous round's hashes (authors, group sizes). A thread of depth
// d therefore costs d+1 round trips when it shows more of its authors than their id and name (the
// authors of the deepest level come last), and d when it shows only those, which every post and
// comment hash keeps (see NamedAuthor). Errors are left to the resolvers, which meet them again
// when they read the same data.

// ItemKind is the kind of the items of a list.
type ItemKind int

// The kinds of items a Walk reads.
const (
	ItemPost ItemKind = iota
	ItemComment
	ItemUser
	ItemGroup // keys are group names
)

// Items names items of one kind by key: post keys, user keys, or comment numbers (as stored) of
// the post Post.
type Items struct {
	Kind ItemKind
	Post string // comments: the key of their post
	Keys []string
	// rank, for the comments of a reply list ranked by the reader (see replyListRead), ranks them
	// once their hashes are read: only what is below the ones on the page is read further.
	rank *replyRank
}

// replyRank is how the reader ranks the replies of a parent that keeps no sorted set of the
// sort: the sort, and the page of them a response shows.
type replyRank struct {
	sort   CommentSort
	span   span
	window Window
}

// Needs says what a response reads of each item of a list besides the item itself.
type Needs struct {
	// Viewer is the viewer for the viewer-dependent reads below; "" when anonymous.
	Viewer UserKey
	// Author (posts, comments): the author is read, and what Author says of them.
	Author *Needs
	// AuthorName (posts, comments): the response shows the author's id and name and nothing
	// else, which the item's hash keeps (see Loader.NamedAuthor): the author is read only for an
	// item whose hash lacks the name.
	AuthorName bool
	// Vote (posts, comments): the viewer's vote.
	Vote bool
	// Saved (posts): whether the viewer saved it.
	Saved bool
	// ReadState (posts): the viewer's read mark and the thread's live bitmap (see readstate.go).
	ReadState bool
	// LiveComments (posts): the thread's live bitmap alone, for read state left as holes (see
	// readsplice.go); nothing of the viewer.
	LiveComments bool
	// Watch (posts, groups): the viewer's watch mode (see watch.go).
	Watch bool
	// GroupSizes (posts): how many posts each of the post's groups holds.
	GroupSizes bool
	// PinnedIn (posts): whether each of the post's groups pins it.
	PinnedIn bool
	// ReportCount (posts, comments): the open report count, and whether the viewer moderates the
	// post's groups (who else sees no count).
	ReportCount bool
	// Groups (posts): the post's groups are read, and what Groups says of them.
	Groups *Needs
	// Groups: their oldest post (the created time of a group indexed before groups recorded
	// theirs), member count, moderators (and what Moderators says of them), and whether the
	// viewer is a member or a moderator. A group's info and post count are always read.
	GroupCreated, MemberCount, ViewerIsMember, ViewerIsModerator bool
	Moderators                                                   *Needs
	// ActiveUsers (groups): the windows whose count of active users the response shows.
	ActiveUsers ActivityWindows
	// Users: karma, place on the leaderboard, follower and following counts, and whether the
	// viewer follows them or they follow the viewer.
	Karma, Rank, FollowerCount, FollowingCount, ViewerFollows, FollowsViewer bool
	// PostFieldsChosen (posts) says that the response's post fields are known, so that PostBody
	// says whether it shows a post's body: a listing that shows none reads none (postReadOf).
	// Without it the body is read.
	PostFieldsChosen, PostBody bool
	// CommentFields (comments) are the stored fields the response shows; zero reads them all.
	// Whether a comment exists, is deleted and who wrote it is always read.
	CommentFields CommentFields
	// Lists are the pages read below each item.
	Lists []List
}

// CommentFields is a set of stored fields of a comment, so that a page reads only what it
// shows: on Redis, every field of an HMGET is a scan of the comment's small hash.
type CommentFields uint16

// The comment fields a response may show besides the ones always read.
const (
	CommentBody CommentFields = 1 << iota
	CommentEdited
	CommentDepth
	CommentUp
	CommentDown
	CommentReplies // the reply count; a page of replies needs it too
	CommentParent
	CommentVersion
	CommentAuthorName               // the author's name, which the comment's hash keeps (see NamedAuthor)
	AllCommentFields  CommentFields = 1<<iota - 1
	// CommentFieldsChosen marks a set chosen field by field, so that choosing none of the
	// fields above reads only those always read rather than all of them.
	CommentFieldsChosen CommentFields = 1 << 15
)

// ListKind is a list below an item.
type ListKind int

// The lists below items.
const (
	ListComments  ListKind = iota // a post's top-level comments or a comment's replies
	ListPosts                     // a user's posts
	ListFollowers                 // a user's followers
	ListFollowing                 // the users a user follows
)

// List is one page read below each item of a list, and what is read of its items.
type List struct {
	Kind ListKind
	Sort CommentSort // ListComments only
	// PostSort is the order of ListPosts; its zero value is HOT, and a user's posts are listed
	// by NEW unless asked otherwise.
	PostSort PostSort
	// Window is the part of the list the page holds, and what is shown of it.
	Window Window
	Needs  Needs
}

// ReadsPostBody reports whether the response reads the body of the posts n is the needs of: unless
// it chose the post fields it shows and the body is not among them. A nil n reads it.
func (n *Needs) ReadsPostBody() bool {
	return n == nil || !n.PostFieldsChosen || n.PostBody
}

// withPostBody returns n reading the posts' bodies: n itself when it does already.
func withPostBody(n *Needs) *Needs {
	if n.ReadsPostBody() {
		return n
	}
	c := *n
	c.PostBody = true
	return &c
}

// hashDerived reports whether the needs read something that depends on the item's hash.
func (n *Needs) hashDerived() bool {
	return n.Author != nil || n.GroupSizes || n.PinnedIn || n.ReportCount || n.Groups != nil || n.Moderators != nil
}

// walkItem is one item in a walk: its kind and key, its read, and what is read of it.
type walkItem struct {
	kind  ItemKind
	pid   string // posts and comments
	key   string // post key, comment number or user key
	needs *Needs
	call  *call // the item's read
}

// walkList is one page in a walk.
type walkList struct {
	list *List
	kind ItemKind // of its items
	pid  string   // comments: their post
	key  string   // the page's name among the walked pages (see pageKey)
	tag  string   // the cursor tag of the list
	span span
	call *call
	// ranked, for a user's posts in an order other than NEW, is what ranks them (user_posts.go):
	// call reads the candidates, and scores, in the next round, their scores.
	ranked *userRanking
	scores *call
}

// walkPage is a page whose items are being read; at is where its first item is among the
// round's items. wl is the page's list as the round that read the page made it (a walkList is
// large, and goes from round to round by its address).
type walkPage struct {
	wl *walkList
	rp rawPage
	at int
	// rank, for a reply list ranked by the reader, says how: rp holds every reply, the page is
	// known once their hashes are read. keep is false for the items Walk was given, whose page
	// their caller builds.
	rank *replyRank
	keep bool
}

// walkKey marks an item or page already walked with some needs, so that an author met a hundred
// times is walked once.
type walkKey struct {
	c *call
	n *Needs
}

// Walk reads items and what needs says the response reads below them (see above). It returns
// once everything is read; the caller then reads the items and its resolvers the rest, from the
// loader. A nil needs reads only the items.
func (l *Loader) Walk(ctx context.Context, items Items, needs *Needs) {
	if needs == nil {
		needs = &Needs{}
	}
	byKey := make([]walkItem, len(items.Keys))
	for i, k := range items.Keys {
		byKey[i] = newWalkItem(items.Kind, items.Post, k, needs)
	}
	var ranked []walkPage
	if items.rank != nil {
		ranked = []walkPage{{wl: &walkList{list: &List{Needs: *needs}, kind: ItemComment, pid: items.Post},
			rp: rawPage{members: items.Keys}, rank: items.rank}}
	}
	l.walk(ctx, byKey, ranked)
}

// walk is Walk of items of any kinds, each with its own needs: the first level reads them all in
// one pipeline. ranked are reply lists among them that the reader ranks (see walkPage). The
// slices byKey and ranked are walk's from then on: it reuses them.
func (l *Loader) walk(ctx context.Context, byKey []walkItem, ranked []walkPage) {
	seen := make(map[walkKey]bool)
	var loaded []walkItem
	var lists []*walkList // into the previous round's pages
	filling := ranked
	// A round's reads go into calls (enqueue copies them), its items into the next round's
	// (after, loaded): the slices of a round that is over are used again, not made anew each round.
	var reads []read
	var spare []walkItem
	for len(byKey)+len(loaded)+len(lists) > 0 {
		reads = reads[:0]
		// Items whose hashes came in the last round: their authors join this round's items.
		var after []walkItem // items with reads that need their hash, for the next round
		for _, it := range loaded {
			reads = l.hashNeeds(it, reads, &byKey)
		}
		spare = loaded[:0]
		byKey = distinctItems(byKey) // an author of a hundred comments is read once
		// Pages that came in the last round: their items are read now. A ranked list whose
		// candidates came reads their scores first.
		filling = slices.Grow(filling, len(lists))
		type scoringAt struct {
			at int
			wl *walkList
		}
		var scoring []scoringAt
		for _, wl := range lists {
			if wl.call.err != nil {
				continue
			}
			var rp rawPage
			var err error
			switch {
			case wl.ranked != nil && wl.scores == nil:
				scoring = append(scoring, scoringAt{len(reads), wl})
				reads = append(reads, wl.ranked.scoresRead(wl.call))
				continue
			case wl.ranked != nil:
				if wl.scores.err != nil {
					continue
				}
				rp = wl.ranked.rankedPage(wl.call, wl.scores, wl.span)
			default:
				if rp, err = pageOf(wl.call, wl.span); err != nil {
					continue
				}
			}
			wp := walkPage{wl: wl, rp: rp, at: len(byKey), keep: true}
			if few, ok := fewReplies(wl.call); ok {
				// Every reply is read, with its votes, and ranked once read. (wl is this page's
				// alone: nothing else reads its list.)
				lc := *wl.list
				lc.Needs.CommentFields = withVotes(lc.Needs.CommentFields)
				wp.wl.list, wp.rp = &lc, rawPage{members: few}
				wp.rank = &replyRank{sort: lc.Sort, span: wl.span, window: lc.Window}
			}
			filling = append(filling, wp)
			byKey = slices.Grow(byKey, len(wp.rp.members))
			for _, m := range wp.rp.members {
				byKey = append(byKey, newWalkItem(wp.wl.kind, wp.wl.pid, m, &wp.wl.list.Needs))
			}
		}
		lists = nil
		// Items whose keys are known: their hashes, and the reads their keys decide.
		type pageAt struct {
			at   int
			wl   walkList
			item int // the item the page is below, in byKey
		}
		nPages := 0
		for _, it := range byKey {
			nPages += len(it.needs.Lists)
		}
		pages := make([]pageAt, 0, nPages)
		reads = slices.Grow(reads, len(byKey)+nPages)
		itemAt := make([]int, len(byKey))
		for i, it := range byKey {
			itemAt[i] = len(reads)
			reads = append(reads, l.itemRead(it))
			n := it.needs
			switch it.kind {
			case ItemUser:
				reads = l.userNeeds(it.key, n, reads)
			case ItemGroup:
				reads = l.groupNeeds(it.key, n, reads)
			}
			if v := l.voteRead(it); v != nil {
				// Right after the item's hash, in the same pipeline: the counts and the viewer's
				// vote are read together, so a response never shows a vote the counts lack.
				reads = append(reads, *v)
			}
			if v := l.savedRead(it); v != nil {
				reads = append(reads, *v)
			}
			reads = l.readStateWalkReads(it, reads)
			reads = l.watchWalkReads(it, reads)
			reads = l.reportCountReads(it, reads)
			for j := range n.Lists {
				wl, lr, err := l.listRead(it, &n.Lists[j])
				if err != nil {
					continue // a bad argument: the resolver reports it
				}
				pages = append(pages, pageAt{len(reads), wl, i})
				reads = append(reads, lr)
			}
		}
		if len(reads) == 0 {
			break
		}
		calls := l.getAll(ctx, reads...)
		if err := waitAll(ctx, calls); err != nil && ctx.Err() != nil {
			return
		}
		var offPage map[*call]bool // ranked replies off their page: nothing below them is read
		for _, wp := range filling {
			items := make([]*call, len(wp.rp.members))
			for i := range items {
				items[i] = calls[itemAt[wp.at+i]]
			}
			if wp.rank != nil {
				if offPage == nil {
					offPage = make(map[*call]bool)
				}
				wp.rp, items = l.rankWalked(wp, items, offPage)
			}
			if wp.keep {
				l.keepPage(wp, items)
			}
		}
		filling = filling[:0]
		after = slices.Grow(spare, len(byKey))
		lists = make([]*walkList, 0, len(pages)+len(scoring))
		for _, sc := range scoring {
			sc.wl.scores = calls[sc.at]
			lists = append(lists, sc.wl)
		}
		for i, it := range byKey {
			it.call = calls[itemAt[i]]
			if offPage[it.call] {
				continue
			}
			if (it.needs.hashDerived() || l.nameless(it)) && it.call.err == nil && !seen[walkKey{it.call, it.needs}] {
				seen[walkKey{it.call, it.needs}] = true
				after = append(after, it)
			}
		}
		for i := range pages {
			p := &pages[i]
			if offPage[calls[itemAt[p.item]]] {
				continue
			}
			p.wl.call = calls[p.at]
			if !seen[walkKey{p.wl.call, &p.wl.list.Needs}] {
				seen[walkKey{p.wl.call, &p.wl.list.Needs}] = true
				lists = append(lists, &p.wl)
			}
		}
		byKey, loaded = byKey[:0], after
	}
}

// rankWalked ranks the replies of a reply list the reader ranks (wp.rank), whose hashes items
// read, and returns the page with its items; the replies off the page go into offPage, unless
// they are on another page.
func (l *Loader) rankWalked(wp walkPage, items []*call, offPage map[*call]bool) (rawPage, []*call) {
	fs := wp.wl.list.Needs.CommentFields
	cs := make([]*Comment, len(items))
	for i, c := range items {
		if c.err != nil {
			return wp.rp, items // not ranked, nor kept (keepPage): the resolver reads it again
		}
		cs[i] = l.commentOf(c, wp.wl.pid, wp.rp.members[i], fs)
	}
	rp, at := rankReplies(wp.rank.sort, wp.rp.members, cs, wp.rank.span, wp.rank.window)
	on := make([]*call, len(at))
	for i, j := range at {
		on[i] = items[j]
	}
	if len(on) < len(items) {
		for _, c := range items {
			if !slices.Contains(on, c) {
				offPage[c] = true
			}
		}
	}
	for _, c := range on {
		delete(offPage, c) // on this page, off another's
	}
	return rp, on
}

// distinctItems returns items without repeats (the same item with the same needs), in order.
func distinctItems(items []walkItem) []walkItem {
	if len(items) < 2 {
		return items
	}
	type id struct {
		kind     ItemKind
		pid, key string
		needs    *Needs
	}
	seen := make(map[id]bool, len(items))
	out := items[:0]
	for _, it := range items {
		k := id{it.kind, it.pid, it.key, it.needs}
		if !seen[k] {
			seen[k] = true
			out = append(out, it)
		}
	}
	return out
}

// newWalkItem returns the walk item of key; a post is its own thread's post.
func newWalkItem(kind ItemKind, pid, key string, needs *Needs) walkItem {
	if kind == ItemPost {
		pid = key
	}
	return walkItem{kind: kind, pid: pid, key: key, needs: needs}
}

// itemRead is the read of an item's hash.
func (l *Loader) itemRead(it walkItem) read {
	switch it.kind {
	case ItemPost:
		return l.postReadOf(it.key, it.needs.ReadsPostBody())
	case ItemComment:
		return l.commentRead(it.pid, it.key, it.needs.CommentFields)
	case ItemGroup:
		return l.groupInfoRead(it.key)
	}
	return l.userRead(it.key)
}

// hashNeeds adds the reads that need an item's hash: its author and groups (to the items of this
// round), its groups' sizes, and whether the viewer moderates them (for report counts); for a
// group, its moderators (read with it) join the items.
func (l *Loader) hashNeeds(it walkItem, reads []read, items *[]walkItem) []read {
	n := it.needs
	var author UserKey
	named := false // the hash keeps the author's name
	switch it.kind {
	case ItemPost:
		p := l.postOf(it.call, it.key)
		if p == nil {
			return reads
		}
		author, named = p.Author, p.authorName != ""
		if n.GroupSizes {
			for _, g := range p.GroupNames {
				reads = append(reads, l.postCountReads(l.s.k.ranking(g).new)...)
			}
		}
		if n.PinnedIn && !p.Removed {
			reads = append(reads, l.pinReads(it.key, p.GroupNames)...)
		}
		reads = l.reportAuthorityReads(n, p.GroupNames, reads)
		if n.Groups != nil {
			for _, g := range p.GroupNames {
				*items = append(*items, newWalkItem(ItemGroup, "", g, n.Groups))
			}
		}
	case ItemComment:
		if n.ReportCount {
			if p := l.readPost(it.pid); p != nil {
				reads = l.reportAuthorityReads(n, p.GroupNames, reads)
			}
		}
		c := l.commentOf(it.call, it.pid, it.key, n.CommentFields)
		if c == nil || c.Author == "" {
			return reads
		}
		author, named = c.Author, c.authorName != ""
	case ItemGroup:
		l.moderatorItems(it, items)
		return reads
	default:
		return reads
	}
	switch {
	case n.Author != nil:
		*items = append(*items, newWalkItem(ItemUser, "", string(author), n.Author))
	case n.AuthorName && !named:
		*items = append(*items, newWalkItem(ItemUser, "", string(author), &l.noNeeds))
	}
	return reads
}

// nameless reports whether an item shows its author by name alone but its hash lacks the name
// (written before names were kept): its author is read in the next round.
func (l *Loader) nameless(it walkItem) bool {
	if !it.needs.AuthorName || it.needs.Author != nil || it.call.err != nil {
		return false
	}
	switch it.kind {
	case ItemPost:
		p := l.postOf(it.call, it.key)
		return p != nil && p.authorName == ""
	case ItemComment:
		c := l.commentOf(it.call, it.pid, it.key, it.needs.CommentFields)
		return c != nil && c.Author != "" && c.authorName == ""
	}
	return false
}

// voteRead is the read of the viewer's vote on a post or comment, when the needs ask for it.
func (l *Loader) voteRead(it walkItem) *read {
	n := it.needs
	if !n.Vote || n.Viewer == "" {
		return nil
	}
	var r read
	switch it.kind {
	case ItemPost:
		r = hashFieldRead(l.s.k.postVotes(it.key), string(n.Viewer))
	case ItemComment:
		r = l.commentVoteRead(it.pid, it.key, string(n.Viewer))
	default:
		return nil
	}
	return &r
}

// userNeeds adds the reads of a user that its key decides.
func (l *Loader) userNeeds(uid string, n *Needs, reads []read) []read {
	k := l.s.k
	if n.Karma {
		reads = append(reads, hashFieldRead(k.karma(uid), "total"))
	}
	if n.Rank {
		reads = append(reads, zrankRead(k.leaderboard(), uid))
	}
	if n.FollowerCount {
		reads = append(reads, zcardRead(k.followers(uid)))
	}
	if n.FollowingCount {
		reads = append(reads, zcardRead(k.following(uid)))
	}
	if v := string(n.Viewer); v != "" && v != uid {
		if n.ViewerFollows {
			reads = append(reads, zscoreRead(k.following(v), uid))
		}
		if n.FollowsViewer {
			reads = append(reads, zscoreRead(k.following(uid), v))
		}
	}
	return reads
}

// listRead is the read of the page list asks for below an item.
func (l *Loader) listRead(it walkItem, list *List) (walkList, read, error) {
	wl := walkList{list: list, pid: it.pid}
	var key string
	desc := true
	switch list.Kind {
	case ListComments:
		parent := topLevel
		switch it.kind {
		case ItemComment:
			parent = it.key
		case ItemPost:
		default:
			return walkList{}, read{}, invalidf("comments are listed below posts and comments")
		}
		wl.kind = ItemComment
		key, desc = l.commentListKey(it.pid, parent, list.Sort)
		if w := list.Window; w.After != "" || w.Before != "" || !w.NoCursors {
			// The list's tag checks the cursors given and makes the page's; a page that shows
			// none is read without scores and has none to make (see rawPage.cursors).
			wl.tag = commentListTag(it.pid, parent, list.Sort)
		}
		var err error
		if wl.span, err = list.Window.decode(wl.tag); err != nil {
			return walkList{}, read{}, err
		}
		var scratch [128]byte
		wl.key = string(appendCommentPageKey(scratch[:0], it.pid, parent, list.Sort, list.Window))
		return wl, l.replyListRead(it.pid, parent, list.Sort, key, desc, wl.span, list.Window), nil
	case ListPosts, ListFollowers, ListFollowing:
		if it.kind != ItemUser {
			return walkList{}, read{}, invalidf("only users have posts, followers and following lists")
		}
		key, wl.tag, wl.kind = l.userListKey(list.Kind, it.key)
		if list.Kind == ListPosts && list.PostSort != SortNew {
			ur := l.userRanking(it.key, list.PostSort)
			wl.tag, wl.ranked = ur.tag, &ur
			var err error
			if wl.span, err = list.Window.decode(wl.tag); err != nil {
				return walkList{}, read{}, err
			}
			wl.key = ur.pageKey(list.Window)
			return wl, ur.cands, nil
		}
	default:
		return walkList{}, read{}, invalidf("unknown list")
	}
	var err error
	if wl.span, err = list.Window.decode(wl.tag); err != nil {
		return walkList{}, read{}, err
	}
	wl.key = pageKey(key, desc, list.Window)
	if wl.kind == ItemPost {
		return wl, l.postListRead(key, wl.span, !list.Window.NoTotal, !list.Window.NoCursors), nil
	}
	return wl, l.shownPageRead(key, desc, wl.span, list.Window), nil
}

// pageKey names a page of a sorted set among the pages a walk kept.
func pageKey(key string, desc bool, w Window) string {
	var scratch [128]byte
	return string(appendPageKey(scratch[:0], key, desc, w))
}

// appendPageKey appends pageKey(key, desc, w) to b.
func appendPageKey(b []byte, key string, desc bool, w Window) []byte {
	b = append(b, key...)
	b = append(b, 0)
	b = strconv.AppendBool(b, desc)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(w.First), 10)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(w.Last), 10)
	b = append(b, 0)
	b = append(b, w.After...)
	b = append(b, 0)
	b = append(b, w.Before...)
	b = append(b, 0)
	b = strconv.AppendBool(b, w.NoTotal)
	return strconv.AppendBool(b, w.NoCursors)
}

// appendCommentPageKey appends to b the name of a page of the replies of parent (topLevel for
// the post's top-level comments) among the pages a walk kept. It names the list by its post,
// parent and sort, which decide its sorted set and order (commentList), so that the resolver
// listing the page finds it without building the set's key (see keptPageOf); no key of a sorted
// set begins with the 0 byte that these do.
func appendCommentPageKey(b []byte, pid, parent string, sort CommentSort, w Window) []byte {
	b = append(b, 0, 'c')
	b = strconv.AppendInt(b, int64(sort), 10)
	b = append(b, 0)
	b = append(b, pid...)
	b = append(b, 0)
	b = append(b, parent...)
	return appendPageKey(b, "", true, w)
}

// keepPage builds a walked page from its items' reads and keeps it for the resolver that lists it.
// A page with a failed read is not kept: its resolver reads it again and reports the error.
func (l *Loader) keepPage(wp walkPage, items []*call) {
	for _, c := range items {
		if c.err != nil {
			return
		}
	}
	var page any
	switch wp.wl.kind {
	case ItemComment:
		page = pageItems(wp.rp, wp.wl.tag, items, func(c *call, m string) *Comment {
			return l.commentOf(c, wp.wl.pid, m, wp.wl.list.Needs.CommentFields)
		})
	case ItemPost:
		page = pageItems(wp.rp, wp.wl.tag, items, l.listedPost)
	case ItemUser:
		page = pageItems(wp.rp, wp.wl.tag, items, l.userOf)
	}
	var fields CommentFields // the comment fields the page's items hold
	if wp.wl.kind == ItemComment {
		fields = wp.wl.list.Needs.CommentFields.normal()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pages == nil {
		l.pages = make(map[string]keptPageEntry)
	}
	// Two selections of one page may show different comment fields (aliases): the page kept is
	// one whose items hold every field either shows, or none, and each resolver then reads its
	// own.
	old, ok := l.pages[wp.wl.key]
	switch {
	case !ok:
		l.pages[wp.wl.key] = keptPageEntry{page: page, fields: fields}
	case old.page == nil: // already two that neither holds the other's fields
	case old.fields&fields == old.fields:
		l.pages[wp.wl.key] = keptPageEntry{page: page, fields: fields}
	case old.fields&fields != fields:
		l.pages[wp.wl.key] = keptPageEntry{fields: old.fields | fields}
	}
}

// keptPageEntry is a page a walk kept, and the comment fields its items hold; a nil page when
// walks of it held fields of which none holds all the others.
type keptPageEntry struct {
	page   any
	fields CommentFields
}

// pageItems builds the page of a raw page whose items' reads are done: parse turns each read into
// an item, or nil for one gone since the page was read, which the page then leaves out.
func pageItems[T comparable](rp rawPage, tag string, items []*call, parse func(c *call, member string) T) *Page[T] {
	parsed := make([]T, len(items))
	for i, c := range items {
		parsed[i] = parse(c, rp.members[i])
	}
	return keepItems(rp, tag, parsed, true)
}

// keptItems builds the page of a raw page whose members became items, in order, leaving out with
// their cursors the items gone since the page was read (the zero T).
func keptItems[T comparable](rp rawPage, tag string, items []T) *Page[T] {
	return keepItems(rp, tag, items, false)
}

// keepItems is keptItems; own says that items is the caller's to give away, so that a page
// whose items are all still there holds it as it is (and its cursors as rp.cursors made them)
// rather than copies: two allocations fewer a page, 300 on a thread page.
func keepItems[T comparable](rp rawPage, tag string, items []T, own bool) *Page[T] {
	var none T
	all := rp.cursors(tag)
	p := &Page[T]{Total: rp.total, HasNext: rp.hasNext, HasPrev: rp.hasPrev}
	if len(items) > 0 && !slices.Contains(items, none) {
		p.Items, p.Cursors = items, all
		if !own {
			p.Items = slices.Clone(items)
		}
		return p
	}
	p.Items, p.Cursors = make([]T, 0, len(items)), make([]string, 0, len(items))
	for i, it := range items {
		if it != none {
			p.Items, p.Cursors = append(p.Items, it), append(p.Cursors, all[i])
		}
	}
	if len(p.Items) == 0 && len(all) > 0 {
		p.start, p.end = all[0], all[len(all)-1] // paging goes on past it (see Page.Without)
	}
	return p
}

// keptPage returns the page a walk kept under key, or nil.
func keptPage[T any](l *Loader, key string) *Page[T] {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, _ := l.pages[key].page.(*Page[T])
	return p
}

// keptPageOf is keptPage of a key held in bytes, which looking it up does not copy.
func keptPageOf[T any](l *Loader, key []byte) *Page[T] {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, _ := l.pages[string(key)].page.(*Page[T])
	return p
}

// userListKey returns the sorted set, cursor tag and item kind of a list below a user.
func (l *Loader) userListKey(kind ListKind, uid string) (key, tag string, items ItemKind) {
	switch kind {
	case ListFollowers:
		return l.s.k.followers(uid), "uf", ItemUser
	case ListFollowing:
		return l.s.k.following(uid), "ug", ItemUser
	}
	return l.s.k.userPosts(uid), "pu", ItemPost
}

// evalNeeds evaluates lazy needs; nil reads nothing below the items.
func evalNeeds(needs func() *Needs) *Needs {
	if needs == nil {
		return nil
	}
	return needs()
}

// WalkID reads the item a global id names — a post, a comment (with its post) or a user — and
// what needs says the response reads below it. Ids of other kinds, and malformed ones, are left
// to the resolver, which reports them.
func (l *Loader) WalkID(ctx context.Context, id string, needs func() *Needs) {
	typ, key, err := ParseID(id)
	if err != nil {
		return
	}
	switch typ {
	case TypePost:
		l.Walk(ctx, Items{Kind: ItemPost, Keys: []string{key}}, evalNeeds(needs))
	case TypeUser:
		l.Walk(ctx, Items{Kind: ItemUser, Keys: []string{key}}, evalNeeds(needs))
	case TypeGroup:
		l.Walk(ctx, Items{Kind: ItemGroup, Keys: []string{key}}, evalNeeds(needs))
	case TypeComment:
		pid, num, err := CommentKey(id)
		if err != nil {
			return
		}
		l.getAll(ctx, l.postRead(pid)) // the comment's post decides whether it can be seen
		n := evalNeeds(needs)
		if n != nil {
			all := *n // the resolver reads the whole comment
			all.CommentFields = AllCommentFields
			n = &all
		}
		l.Walk(ctx, Items{Kind: ItemComment, Post: pid, Keys: []string{num}}, n)
	}
}

// WalkIDs reads the items many global ids name, like WalkID, with the posts in one walk, the
// users in another and the groups in a third, so that a list of ids costs the round trips of one
// item of each kind; needs gives what the response reads below items of a type ("Post", "User",
// "Group", "Comment").
func (l *Loader) WalkIDs(ctx context.Context, ids []string, needs func(typ string) func() *Needs) {
	var posts, users, groups []string
	for _, id := range ids {
		typ, key, err := ParseID(id)
		if err != nil {
			continue
		}
		switch typ {
		case TypePost:
			posts = append(posts, key)
		case TypeUser:
			users = append(users, key)
		case TypeGroup:
			groups = append(groups, key)
		case TypeComment:
			l.WalkID(ctx, id, needs("Comment"))
		}
	}
	if len(posts) > 0 {
		l.Walk(ctx, Items{Kind: ItemPost, Keys: posts}, evalNeeds(needs("Post")))
	}
	if len(users) > 0 {
		l.Walk(ctx, Items{Kind: ItemUser, Keys: users}, evalNeeds(needs("User")))
	}
	if len(groups) > 0 {
		l.Walk(ctx, Items{Kind: ItemGroup, Keys: groups}, evalNeeds(needs("Group")))
	}
}
