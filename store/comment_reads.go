package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Comment loads a comment by global id; nil when there is none or its post was deleted. A deleted
// comment still in the tree loads as a tombstone (Deleted, no author, no text).
func (l *Loader) Comment(ctx context.Context, id string) (*Comment, error) {
	pid, num, err := CommentKey(id)
	if err != nil {
		return nil, err
	}
	// The post and the comment go into the same batch: a comment of a deleted post is hidden even
	// while its keys are being dropped.
	calls := l.queue(ctx, hashRead(l.s.k.post(pid)), hashRead(l.s.k.comment(pid, num)))
	var h [2]map[string]string
	for i, c := range calls {
		cmd, err := c.wait(ctx)
		if err != nil {
			return nil, err
		}
		h[i] = cmd.(*redis.MapStringStringCmd).Val()
	}
	if l.s.postFromHash(pid, h[0]) == nil {
		return nil, nil
	}
	return commentFromHash(pid, num, h[1]), nil
}

// CommentNeeds says what a response reads of each comment of a list besides the comment itself,
// so that the Loader can read a whole thread level by level, one pipeline per level, instead of
// leaving each field to its own timing.
type CommentNeeds struct {
	Author  bool         // the author's user record
	Viewer  string       // the viewer's user id when the viewer's vote is read; "" otherwise
	Replies []ReplyNeeds // the pages of replies read below each comment
}

// ReplyNeeds is one page of replies a response reads below each comment, and what it reads of them.
type ReplyNeeds struct {
	Sort  CommentSort
	First int
	After string
	Needs CommentNeeds
}

func (n *CommentNeeds) empty() bool { return !n.Author && n.Viewer == "" && len(n.Replies) == 0 }

// PostComments loads one page of a post's top-level comments. When needs is not nil and the
// page's subtree has not been loaded yet, it then loads what needs() says the response will read
// below the page, level by level (see prefetch).
func (l *Loader) PostComments(ctx context.Context, p *Post, sort CommentSort, first int, after string, needs func() CommentNeeds) (*Page[*Comment], error) {
	if p.CommentCount == 0 {
		// No live comment means no comment at all: a tombstone only stays while it has replies.
		return emptyCommentPage(p.Key(), topLevel, sort, first, after)
	}
	return l.commentPage(ctx, p.Key(), topLevel, sort, first, after, needs)
}

// Replies loads one page of a comment's direct replies, and with needs, what the response reads
// below them, like PostComments.
func (l *Loader) Replies(ctx context.Context, c *Comment, sort CommentSort, first int, after string, needs func() CommentNeeds) (*Page[*Comment], error) {
	if c.ReplyCount == 0 {
		return emptyCommentPage(c.pid, c.num, sort, first, after)
	}
	return l.commentPage(ctx, c.pid, c.num, sort, first, after, needs)
}

// emptyCommentPage answers for a list known to be empty without reading it; the arguments are
// still checked as for any other page.
func emptyCommentPage(pid, parent string, sort CommentSort, first int, after string) (*Page[*Comment], error) {
	if err := CheckFirst(first); err != nil {
		return nil, err
	}
	if _, err := decodeCursor(after, commentListTag(pid, parent, sort)); err != nil {
		return nil, err
	}
	return &Page[*Comment]{}, nil
}

// prefetch reads what needs says a response reads below the comments cs: their authors and the
// viewer's votes on them, pages of their replies, then the same for those replies, and so on.
// Everything one level needs goes to Redis in one pipeline, with the next level's pages of
// replies (which carry their comments' hashes), so a thread costs one round trip per level
// whatever its size. Errors are left for the resolvers, which meet them again when they read the
// same data.
func (l *Loader) prefetch(ctx context.Context, cs []*Comment, needs CommentNeeds) {
	type group struct {
		cs    []*Comment
		needs *CommentNeeds
	}
	type pageRead struct {
		at       int // index in reads
		pid, tag string
		first    int
		rn       *ReplyNeeds
	}
	level := []group{{cs, &needs}}
	for len(level) > 0 {
		var reads []read
		var pages []pageRead
		for _, g := range level {
			for _, c := range g.cs {
				if g.needs.Author && c.AuthorID != "" {
					reads = append(reads, l.userRead(strings.TrimPrefix(c.AuthorID, TypeUser+":")))
				}
				if v := g.needs.Viewer; v != "" && v != c.AuthorID {
					reads = append(reads, hashFieldRead(l.s.k.commentVotes(c.pid, c.num), strings.TrimPrefix(v, TypeUser+":")))
				}
				for i := range g.needs.Replies {
					rn := &g.needs.Replies[i]
					if c.ReplyCount == 0 || CheckFirst(rn.First) != nil {
						continue
					}
					r, tag, err := l.commentPageRead(c.pid, c.num, rn.Sort, rn.First, rn.After)
					if err != nil {
						continue // a bad cursor: the resolver reports it
					}
					reads = append(reads, r)
					pages = append(pages, pageRead{at: len(reads) - 1, pid: c.pid, tag: tag, first: rn.First, rn: rn})
				}
			}
		}
		calls := l.queue(ctx, reads...)
		for _, c := range calls {
			if _, err := c.wait(ctx); err != nil && ctx.Err() != nil {
				return
			}
		}
		var next []group
		for _, pr := range pages {
			p, err := l.readCommentPage(ctx, calls[pr.at], pr.pid, pr.tag, pr.first)
			if err != nil {
				continue
			}
			l.markWalked(calls[pr.at], p)
			if len(p.Items) > 0 && !pr.rn.Needs.empty() {
				next = append(next, group{p.Items, &pr.rn.Needs})
			}
		}
		level = next
	}
}

// CommentVote returns uid's vote on a comment: 1, -1 or 0. The author counts as having voted up.
func (l *Loader) CommentVote(ctx context.Context, c *Comment, viewerID string) (int, error) {
	return l.vote(ctx, l.s.k.commentVotes(c.pid, c.num), c.AuthorID, viewerID)
}

// commentListTag names one list of replies in its cursors, so that a cursor of one parent or sort
// is refused by another.
func commentListTag(pid, parent string, sort CommentSort) string {
	return "c" + strconv.Itoa(int(sort)) + ":" + pid + ":" + shortNum(parent)
}

// queueHashPage adds a page script call to a pipeline that also reads the hash prefix+member of
// each of the first items.
func (s *Store) queueHashPage(ctx context.Context, pipe redis.Pipeliner, key string, desc bool, first int, c cursor, prefix string) *redis.Cmd {
	order := "asc"
	if desc {
		order = "desc"
	}
	// One more than asked tells whether a next page exists; its hash is not needed.
	return s.scripts.get("page").EvalSha(ctx, pipe, []string{key}, order, first+1, c.score, c.member, prefix, first)
}

// commentPageRead is the read of one page of the direct replies of parent (topLevel for the post)
// together with the replies' hashes: one page script reads the ids and the hashes in a single
// command. It also returns the list's cursor tag.
func (l *Loader) commentPageRead(pid, parent string, sort CommentSort, first int, after string) (read, string, error) {
	tag := commentListTag(pid, parent, sort)
	c, err := decodeCursor(after, tag)
	if err != nil {
		return read{}, "", err
	}
	key, desc := l.s.k.repliesByTime(pid, parent), true
	switch sort {
	case CommentsOld:
		desc = false
	case CommentsTop:
		key = l.s.k.repliesByTop(pid, parent)
	}
	prefix := l.s.k.thread(pid)
	ck := "cpg:" + key + "\x00" + strconv.FormatBool(desc) + "\x00" + strconv.Itoa(first) + "\x00" + c.score + "\x00" + c.member
	return read{key: ck, fill: func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return l.s.queueHashPage(ctx, p, key, desc, first, c, prefix)
	}}, tag, nil
}

// commentPage loads a page of the direct replies of parent (topLevel for the post), and then with
// needs what the response reads below it, unless prefetch has already done so.
func (l *Loader) commentPage(ctx context.Context, pid, parent string, sort CommentSort, first int, after string, needs func() CommentNeeds) (*Page[*Comment], error) {
	if err := CheckFirst(first); err != nil {
		return nil, err
	}
	r, tag, err := l.commentPageRead(pid, parent, sort, first, after)
	if err != nil {
		return nil, err
	}
	c := l.queue(ctx, r)[0]
	if p := l.walkedPage(c); p != nil {
		return p, nil
	}
	p, err := l.readCommentPage(ctx, c, pid, tag, first)
	if err != nil {
		return nil, err
	}
	if needs != nil && len(p.Items) > 0 {
		l.prefetch(ctx, p.Items, needs())
	}
	return p, nil
}

// readCommentPage waits for a page read and builds its comments, which also fill the loader's
// cache of hashes.
func (l *Loader) readCommentPage(ctx context.Context, c *call, pid, tag string, first int) (*Page[*Comment], error) {
	cmd, err := c.wait(ctx)
	if err != nil {
		return nil, err
	}
	rp, hashes, err := parseHashPage(cmd.(*redis.Cmd).Val(), first)
	if err != nil {
		return nil, err
	}
	all := rp.cursors(tag)
	out := &Page[*Comment]{Total: rp.total, HasNext: rp.hasNext, HasPrev: rp.start > 0}
	for i, m := range rp.members {
		cm := commentFromHash(pid, m, hashes[i])
		if cm == nil {
			continue // cannot happen while the scripts keep the indexes and hashes together
		}
		l.prime(ctx, l.s.k.comment(pid, m), hashes[i])
		out.Items = append(out.Items, cm)
		out.Cursors = append(out.Cursors, all[i])
	}
	return out, nil
}

// markWalked records that prefetch has loaded the subtree below a page, keeping the page.
func (l *Loader) markWalked(c *call, p *Page[*Comment]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.walked == nil {
		l.walked = make(map[*call]*Page[*Comment])
	}
	l.walked[c] = p
}

// walkedPage returns the page of a call whose subtree prefetch has loaded, or nil.
func (l *Loader) walkedPage(c *call) *Page[*Comment] {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.walked[c]
}

// prime stores a hash read by another command as if l.hash had read it.
func (l *Loader) prime(ctx context.Context, key string, h map[string]string) {
	ck := "h:" + key
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.cache[ck]; ok {
		return
	}
	cmd := redis.NewMapStringStringCmd(ctx, "hgetall", key)
	cmd.SetVal(h)
	c := &call{cmd: cmd, done: make(chan struct{})}
	close(c.done)
	l.cache[ck] = c
}

// parseHashPage reads the reply of the page script called with a hash prefix, keeping at most
// first items.
func parseHashPage(v any, first int) (rawPage, []map[string]string, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) < 2 || (len(arr)-2)%3 != 0 {
		return rawPage{}, nil, fmt.Errorf("page: unexpected reply %T", v)
	}
	total, _ := arr[0].(int64)
	start, _ := arr[1].(int64)
	rp := rawPage{total: int(total), start: int(start)}
	var hashes []map[string]string
	for i := 2; i+2 < len(arr); i += 3 {
		m, _ := arr[i].(string)
		sc, _ := arr[i+1].(string)
		rp.members = append(rp.members, m)
		rp.scores = append(rp.scores, sc)
		hashes = append(hashes, hashFromReply(arr[i+2]))
	}
	if len(rp.members) > first {
		rp.members, rp.scores, hashes = rp.members[:first], rp.scores[:first], hashes[:first]
		rp.hasNext = true
	}
	return rp, hashes, nil
}
