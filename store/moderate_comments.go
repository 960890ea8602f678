package store

import (
	"context"
)

// Moderation of comments. A removed comment leaves its post's comment count at once. In the
// thread, one with replies stays in its place as a tombstone (like a deleted one: its author and
// the moderators still see its text); one without leaves its parent's reply indexes and reply
// count, with every tombstoned ancestor that this leaves without replies. Nothing is dropped: the
// parent of a comment out of the tree counts it in held, deletions keep such a parent's hash,
// and a restore puts the comment — and those ancestors — back in their places (see
// moderate_comment.lua). A removed comment takes no votes and no replies.

// RemoveComment removes a comment, as a moderator of one of its post's groups or a site admin.
func (s *Store) RemoveComment(ctx context.Context, actor UserKey, id, reason string) (*Comment, error) {
	return s.moderateComment(ctx, actor, id, ModRemoveComment, &reason)
}

// RestoreComment undoes RemoveComment.
func (s *Store) RestoreComment(ctx context.Context, actor UserKey, id string) (*Comment, error) {
	return s.moderateComment(ctx, actor, id, ModRestoreComment, nil)
}

// moderateComment runs one action of moderate_comment.lua on the post's slot, then logs it. The
// post's repair note covers the log write (repairPost empties the post's outbox).
func (s *Store) moderateComment(ctx context.Context, actor UserKey, id string, kind ModActionKind, reason *string) (*Comment, error) {
	pid, num, err := CommentKey(id)
	if err != nil {
		return nil, err
	}
	var undo undoVia
	if kind == ModRestoreComment {
		undo = undoVia{s.k.comment(pid, num), "removedVia"}
	}
	via, n, err := s.moderationStart(ctx, actor, pid, reason, kind == ModRemoveComment, undo, false)
	if err != nil {
		return nil, err
	}
	if reason, err = s.filteredReason(reason); err != nil {
		return nil, err
	}
	remove := kind == ModRemoveComment
	// A removal takes the comment out of the tree with the tombstones it leaves without replies;
	// a restoration brings back the tombstones out of the tree it hangs from.
	climb := func(replies int64, tomb bool) bool {
		return tomb && (remove && replies == 1 || !remove && replies == 0)
	}
	flag, text := reasonArgs(reason)
	outbox := s.k.postModOutbox(pid)
	var replies []string // the hashes of the replies of a parent the restore brings to replyOrdersAt
	for range maxChainReads {
		chain, err := s.ancestorChain(ctx, pid, num, climb)
		if err != nil {
			return nil, err
		}
		keys := []string{s.k.post(pid), outbox}
		args := []any{string(kind), string(actor), via, flag, text, s.now().UnixMilli(), pid}
		for _, c := range chain {
			keys = append(append(keys, s.k.comment(pid, c)), s.k.replyOrders(pid, c)...)
			args = append(args, c)
		}
		keys = append(append(keys, replies...), s.k.commentBodies(pid), s.k.liveComments(pid))
		reply, err := s.run(ctx, "moderate_comment", keys, args...)
		if err != nil {
			return nil, err
		}
		arr, err := replyArray("moderate_comment", reply, 1)
		if err != nil {
			return nil, err
		}
		if len(arr) == 1 { // {"again"}: the chain changed under the script; read it again
			if _, err := replyWord("moderate_comment", arr[0], "again"); err != nil {
				return nil, err
			}
			continue
		}
		if len(arr) == 2 { // {"replies", parent}: it brings parent to the threshold; read again with its replies
			if _, err := replyWord("moderate_comment", arr[0], "replies"); err != nil {
				return nil, err
			}
			parent, err := replyString("moderate_comment", arr[1])
			if err != nil {
				return nil, err
			}
			if replies, err = s.replyHashKeys(ctx, pid, parent); err != nil {
				return nil, err
			}
			continue
		}
		if len(arr) < 3 {
			return nil, &ReplyError{Script: "moderate_comment", Want: "an array of at least 3", Got: reply}
		}
		h, err := replyHash("moderate_comment", arr[2:])
		if err != nil {
			return nil, err
		}
		entries, err := replyHash("moderate_comment", arr[1])
		if err != nil {
			return nil, err
		}
		c := commentFromHash(pid, num, h)
		if c == nil {
			return nil, notFoundf("no such comment")
		}
		if err := s.flushModLog(ctx, outbox, entries); err != nil {
			return nil, err
		}
		if err := s.rerankPost(ctx, pid); err != nil { // its comment count
			return nil, err
		}
		if err := s.listComment(ctx, string(c.Author), c); err != nil {
			return nil, err
		}
		s.settled(ctx, n)
		s.publishPostChanged(ctx, pid) // the comment count moved
		return c, nil
	}
	return nil, busyf("the thread of comment %s kept changing while it was being moderated; retry", commentID(pid, num))
}
