package store

import (
	"context"

	"github.com/agora/agora/internal/rdb"
)

// commentVoteRead is the read of voter's vote on comment num (stored form) of post pid: an HGET
// of its field in the comment's bucket (keys.commentVote) and, while votes may still be kept as
// layout 5 kept them (Store.legacyCommentVotes), an HGET of the comment's hash of layout 5 beside
// it, in the same pipeline. A vote is in one of the two: a script that writes a comment's votes
// moves the hash into the bucket first.
func (l *Loader) commentVoteRead(pid, num, voter string) read {
	ck, key, field := l.s.k.commentVoteIn("f:", pid, num, voter)
	legacy := ""
	if l.s.legacyCommentVotes.Load() {
		legacy = l.s.k.legacyCommentVotes(pid, num)
	}
	return read{key: ck, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.HGet(ctx, key, field)
		if legacy != "" {
			c.cmd2 = p.HGet(ctx, legacy, voter)
		}
	}}
}

// commentVoteOf returns the vote a done commentVoteRead found: "1", "-1", or "" for none.
func commentVoteOf(c *call) string {
	if v := c.cmd.(*rdb.StringCmd).Val(); v != "" || c.cmd2 == nil {
		return v
	}
	return c.cmd2.(*rdb.StringCmd).Val()
}

// CommentVote returns the viewer's vote on a comment: 1, -1 or 0. The author counts as having
// voted up.
func (l *Loader) CommentVote(ctx context.Context, c *Comment, viewer UserKey) (int, error) {
	if viewer == "" {
		return 0, nil
	}
	if viewer == c.Author {
		return 1, nil
	}
	call, err := l.get(ctx, l.commentVoteRead(c.pid, c.num, string(viewer)))
	if err != nil {
		return 0, err
	}
	return voteValue(commentVoteOf(call)), nil
}
