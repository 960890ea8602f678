package store

import (
	"context"
	"math"
)

// The group feed: the posts of the groups a user joined, merged in rank order.
//
// The groups' rankings live in their own hash slots, so no Redis command may merge them on a
// cluster (no ZUNIONSTORE). A page is merged in Go, like the home feed's pulled authors: the same
// window of each group's ranking — its next n entries after the cursor, or its last n before it —
// read in one pipeline, then merged in the rankings' order (score descending, ties by post id
// bytes descending), each post once however many of the groups hold it. A cursor is a position,
// a score and a post id, so it stays valid while posts come and go. At most MaxGroupFeedGroups
// groups are merged: those joined most recently.
//
// A page costs a round trip for the groups, one for all their windows, and the walk of its posts:
// the same whatever the number of groups and the page size.
//
// totalCount is the sum of the merged groups' post counts: a post in several of them counts once
// per group, so it is the number of posts in the feed only when no post is in two merged groups.
// Counting distinct posts would read every member of every group.

// groupFeedTag is the cursor list tag of the group feed in one order.
func groupFeedTag(sort PostSort) string {
	switch sort {
	case SortNew:
		return "gfn"
	case SortTop:
		return "gft"
	case SortActive:
		return "gfa"
	case SortControversial:
		return "gfc"
	case SortMostComments:
		return "gfm"
	}
	if i := sort.window(); i >= 0 {
		return "gft" + TopWindows[i].Name
	}
	return "gfh"
}

// GroupFeed loads one page of the posts in the groups user joined, in sort order (see above), and
// what needs says the response reads of them.
func (l *Loader) GroupFeed(ctx context.Context, user UserKey, sort PostSort, w Window, needs func() *Needs) (*Page[*Post], error) {
	tag := groupFeedTag(sort)
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	// Round one: the groups joined most recently.
	c, err := l.get(ctx, pageRead(l.s.k.userGroups(string(user)), true, span{n: MaxGroupFeedGroups}, false, false,
		l.s.scripts.get("page")))
	if err != nil {
		return nil, err
	}
	joined, err := pageOf(c, span{n: MaxGroupFeedGroups})
	if err != nil {
		return nil, err
	}
	// Round two: the window of each group's ranking.
	reads := make([]read, len(joined.members))
	cuts := make([]windowCut, len(joined.members))
	for i, g := range joined.members {
		key, _ := l.rankingList(sort, g)
		gsp := sp
		gsp.cut = l.rankingCut(sort, g)
		reads[i], cuts[i] = l.postListRead(key, gsp, true, true), gsp.cut
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	srcs := make([]feedSource, len(calls))
	for i, c := range calls {
		gsp := sp
		gsp.cut = cuts[i]
		rp, err := pageOf(c, gsp)
		if err != nil {
			return nil, err
		}
		l.trimBacklog(ctx, gsp.cut, rp.backlog)
		srcs[i] = feedSource{rp: rp, within: rp.total}
	}
	items, total, prev, more := mergeSources(srcs, sp, math.Inf(-1))
	return withinWindow(l.rankingCut(sort, ""))(
		l.feedPage(ctx, items, tag, needs, &Page[*Post]{Total: total, HasNext: more, HasPrev: prev}))
}
