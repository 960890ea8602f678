package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/agora/agora/internal/rdb"
)

// Comment loads a comment by global id; nil when there is none or its post was deleted. A deleted
// comment still in the tree loads as a tombstone (Deleted, no author, no text). A comment of an
// NSFW post read by a viewer who does not show NSFW posts comes withheld with its post: no body,
// and no replies (see Replies).
func (l *Loader) Comment(ctx context.Context, id string) (*Comment, error) {
	pid, num, err := CommentKey(id)
	if err != nil {
		return nil, err
	}
	// The post and the comment go into the same pipeline: a comment of a deleted post is hidden
	// even while its keys are being dropped.
	calls := l.getAll(ctx, l.postRead(pid), l.commentRead(pid, num, AllCommentFields))
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	post := l.postOf(calls[0], pid)
	if post == nil {
		return nil, nil
	}
	c := l.commentOf(calls[1], pid, num, AllCommentFields)
	if c != nil && post.NSFW {
		w := *c // the loader's own copy stays as read
		w.postNSFW = true
		if post.NSFWHidden {
			w.Text, w.postHidden = "", true
		}
		c = &w
	}
	return c, nil
}

// PostComments loads one page of a post's top-level comments. Unless Walk has already read below
// this page, it then reads what needs() says the response reads below it (see Walk). The thread
// of an NSFW post withheld from the viewer (NSFWHidden) is withheld with it: its pages are empty.
func (l *Loader) PostComments(ctx context.Context, p *Post, sort CommentSort, w Window, needs func() *Needs) (*Page[*Comment], error) {
	if p.CommentCount == 0 || p.NSFWHidden {
		// No live comment means no comment at all: a tombstone only stays while it has replies.
		return emptyCommentPage(p.Key(), topLevel, sort, w)
	}
	return l.commentPage(ctx, p.Key(), topLevel, sort, w, needs)
}

// Replies loads one page of a comment's direct replies, and with needs, what the response reads
// below them, like PostComments: none for a comment withheld with its NSFW post (see Comment).
func (l *Loader) Replies(ctx context.Context, c *Comment, sort CommentSort, w Window, needs func() *Needs) (*Page[*Comment], error) {
	if c.ReplyCount == 0 || c.postHidden {
		return emptyCommentPage(c.pid, c.num, sort, w)
	}
	return l.commentPage(ctx, c.pid, c.num, sort, w, needs)
}

// emptyCommentPage answers for a list known to be empty without reading it; the arguments are
// still checked as for any other page.
func emptyCommentPage(pid, parent string, sort CommentSort, w Window) (*Page[*Comment], error) {
	if _, err := w.decode(commentListTag(pid, parent, sort)); err != nil {
		return nil, err
	}
	return &Page[*Comment]{}, nil
}

// commentListTag names one list of replies in its cursors, so that a cursor of one parent or sort
// is refused by another.
func commentListTag(pid, parent string, sort CommentSort) string {
	return "c" + strconv.Itoa(int(sort)) + ":" + pid + ":" + shortNum(parent)
}

// commentList returns the sorted set of the direct replies of parent (topLevel for the post) in
// a sort, its order and the list's cursor tag.
func (l *Loader) commentList(pid, parent string, sort CommentSort) (key string, desc bool, tag string) {
	key, desc = l.commentListKey(pid, parent, sort)
	return key, desc, commentListTag(pid, parent, sort)
}

// commentListKey returns the sorted set of the direct replies of parent (topLevel for the post)
// in a sort, and its order.
func (l *Loader) commentListKey(pid, parent string, sort CommentSort) (key string, desc bool) {
	switch sort {
	case CommentsOld:
		return l.s.k.repliesByTime(pid, parent), false
	case CommentsTop:
		return l.s.k.repliesByTop(pid, parent), true
	case CommentsBest:
		return l.s.k.repliesByBest(pid, parent), true
	case CommentsControversial:
		return l.s.k.repliesByControversy(pid, parent), true
	}
	return l.s.k.repliesByTime(pid, parent), true
}

// commentPage loads a page of the direct replies of parent (topLevel for the post) with the
// comments: the page a walk kept, or else the page and, through Walk, what needs says the
// response reads below it. The replies of a parent that keeps no sorted set of the sort are all
// read and ranked here (see replyListRead).
func (l *Loader) commentPage(ctx context.Context, pid, parent string, sort CommentSort, w Window, needs func() *Needs) (*Page[*Comment], error) {
	// A page a walk kept was decoded from the same window there: the list's key and tag are
	// made only when the page has to be read.
	var scratch [128]byte
	if p := keptPageOf[*Comment](l, appendCommentPageKey(scratch[:0], pid, parent, sort, w)); p != nil {
		return p, nil
	}
	key, desc, tag := l.commentList(pid, parent, sort)
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	cl, err := l.get(ctx, l.replyListRead(pid, parent, sort, key, desc, sp, w))
	if err != nil {
		return nil, err
	}
	rp, err := pageOf(cl, sp)
	if err != nil {
		return nil, err
	}
	n := evalNeeds(needs)
	fs := AllCommentFields
	if n != nil {
		fs = n.CommentFields.normal()
	}
	few, ranks := fewReplies(cl)
	if !ranks {
		l.Walk(ctx, Items{Kind: ItemComment, Post: pid, Keys: rp.members}, n)
		return l.commentItems(ctx, pid, rp, tag, fs)
	}
	// Every reply, with its votes: the walk reads them all, and what is below the ones on the
	// page.
	var vn *Needs
	if n != nil {
		c := *n
		c.CommentFields = withVotes(c.CommentFields)
		vn, fs = &c, c.CommentFields.normal()
	}
	l.Walk(ctx, Items{Kind: ItemComment, Post: pid, Keys: few, rank: &replyRank{sort: sort, span: sp, window: w}}, vn)
	calls, err := l.commentCalls(ctx, pid, few, fs)
	if err != nil {
		return nil, err
	}
	cs := make([]*Comment, len(few))
	for i, c := range calls {
		cs[i] = l.commentOf(c, pid, few[i], fs)
	}
	rp, at := rankReplies(sort, few, cs, sp, w)
	items := make([]*call, len(at))
	for i, j := range at {
		items[i] = calls[j]
	}
	return pageItems(rp, tag, items, func(c *call, m string) *Comment { return l.commentOf(c, pid, m, fs) }), nil
}

// commentCalls reads comments nums of post pid, with the fields fs, in one pipeline, and waits.
func (l *Loader) commentCalls(ctx context.Context, pid string, nums []string, fs CommentFields) ([]*call, error) {
	reads := make([]read, len(nums))
	for i, m := range nums {
		reads[i] = l.commentRead(pid, m, fs)
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	return calls, nil
}

// commentItems returns the page of rp, whose members are comments of post pid read (or read
// now) with the fields fs.
func (l *Loader) commentItems(ctx context.Context, pid string, rp rawPage, tag string, fs CommentFields) (*Page[*Comment], error) {
	calls, err := l.commentCalls(ctx, pid, rp.members, fs)
	if err != nil {
		return nil, err
	}
	return pageItems(rp, tag, calls, func(c *call, m string) *Comment { return l.commentOf(c, pid, m, fs) }), nil
}

// commentHashes reads the whole hashes of comments nums of post pid, each with its body from the
// thread's bodies (keys.commentBodies) as the field body, in one pipeline: what repair, rebuild
// and export read of a comment, the fields packed in commentMetaField under their own names
// (unpackCommentHash). A comment that does not exist has an empty map.
func (s *Store) commentHashes(ctx context.Context, pid string, nums []string) ([]map[string]string, error) {
	hashes := make([]*rdb.MapStringStringCmd, len(nums))
	bodies := make([]*rdb.SliceCmd, len(nums))
	ops := make([]op, len(nums))
	bk := s.k.commentBodies(pid)
	for i, num := range nums {
		key := s.k.comment(pid, num)
		ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			hashes[i], bodies[i] = p.HGetAll(ctx, key), p.HMGet(ctx, bk, shortNum(num))
			return hashes[i], bodies[i]
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return nil, fmt.Errorf("read the comments of post %s: %w", pid, err)
	}
	out := make([]map[string]string, len(nums))
	for i := range nums {
		h := hashes[i].Val()
		// A body in the hash is newer: only a binary of layout 2 writes it there.
		if b := str(bodies[i].Val()[0]); b != "" && len(h) > 0 && h["body"] == "" {
			h["body"] = b
		}
		out[i] = unpackCommentHash(h)
	}
	return out, nil
}
