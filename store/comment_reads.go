package store

import (
	"context"
	"fmt"

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
	var post map[string]string
	var postErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		post, postErr = l.hash(ctx, l.s.k.post(pid))
	}()
	h, err := l.hash(ctx, l.s.k.comment(pid, num))
	<-done
	if err != nil {
		return nil, err
	}
	if postErr != nil {
		return nil, postErr
	}
	if l.s.postFromHash(pid, post) == nil {
		return nil, nil
	}
	return commentFromHash(pid, num, h), nil
}

// PostComments loads one page of a post's top-level comments.
func (l *Loader) PostComments(ctx context.Context, p *Post, sort CommentSort, first int, after string) (*Page[*Comment], error) {
	return l.commentPage(ctx, p.Key(), topLevel, sort, first, after)
}

// Replies loads one page of a comment's direct replies.
func (l *Loader) Replies(ctx context.Context, c *Comment, sort CommentSort, first int, after string) (*Page[*Comment], error) {
	if c.ReplyCount == 0 {
		// Nothing to read; the page still says how many there are (none) like any other.
		if err := CheckFirst(first); err != nil {
			return nil, err
		}
		if _, err := decodeCursor(after, commentListTag(c.pid, c.num, sort)); err != nil {
			return nil, err
		}
		return &Page[*Comment]{}, nil
	}
	return l.commentPage(ctx, c.pid, c.num, sort, first, after)
}

// CommentVote returns uid's vote on a comment: 1, -1 or 0. The author counts as having voted up.
func (l *Loader) CommentVote(ctx context.Context, c *Comment, viewerID string) (int, error) {
	if viewerID == "" {
		return 0, nil
	}
	if viewerID == c.AuthorID {
		return 1, nil
	}
	uid, err := UserKey(viewerID)
	if err != nil {
		return 0, err
	}
	v, err := l.hashField(ctx, l.s.k.commentVotes(c.pid, c.num), uid)
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

// commentListTag names one list of replies in its cursors, so that a cursor of one parent or sort
// is refused by another.
func commentListTag(pid, parent string, sort CommentSort) string {
	return fmt.Sprintf("c%d:%s:%s", sort, pid, shortNum(parent))
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

// commentPage loads a page of the direct replies of parent (topLevel for the post) together with
// the replies' hashes: one page script reads the ids and the hashes in a single command, so a level
// of a thread costs one round trip. The hashes also fill the loader's cache.
func (l *Loader) commentPage(ctx context.Context, pid, parent string, sort CommentSort, first int, after string) (*Page[*Comment], error) {
	if err := CheckFirst(first); err != nil {
		return nil, err
	}
	tag := commentListTag(pid, parent, sort)
	c, err := decodeCursor(after, tag)
	if err != nil {
		return nil, err
	}
	key, desc := l.s.k.repliesByTime(pid, parent), true
	switch sort {
	case CommentsOld:
		desc = false
	case CommentsTop:
		key = l.s.k.repliesByTop(pid, parent)
	}
	prefix := l.s.k.thread(pid)
	ck := fmt.Sprintf("cpg:%s\x00%t\x00%d\x00%s\x00%s", key, desc, first, c.score, c.member)
	cmd, err := l.do(ctx, ck, func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return l.s.queueHashPage(ctx, p, key, desc, first, c, prefix)
	})
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

// prime stores a hash read by another command as if l.hash had read it.
func (l *Loader) prime(ctx context.Context, key string, h map[string]string) {
	cmd := redis.NewMapStringStringCmd(ctx, "hgetall", key)
	cmd.SetVal(h)
	c := &call{cmd: cmd, done: make(chan struct{})}
	close(c.done)
	l.mu.Lock()
	if _, ok := l.cache["h:"+key]; !ok {
		l.cache["h:"+key] = c
	}
	l.mu.Unlock()
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
