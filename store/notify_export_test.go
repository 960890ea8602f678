package store

import (
	"context"
	"time"
)

// Hooks of the notification tests.

// RequeueCommentNotice queues the job of a comment's notifications again, due at at (zero: now),
// as a repeated cause, or the job queued before a write that stopped, would.
func (s *Store) RequeueCommentNotice(ctx context.Context, commentID string, at time.Time) error {
	pid, num, err := CommentKey(commentID)
	if err != nil {
		return err
	}
	return s.jobs.Schedule(ctx, commentNoticeJob(pid, num, at))
}

// RequeuePostNotice queues the job of a post's mentions again.
func (s *Store) RequeuePostNotice(ctx context.Context, postID string) error {
	pid, err := PostKey(postID)
	if err != nil {
		return err
	}
	return s.jobs.Enqueue(ctx, postNoticeJob(pid))
}

// RequeueFollowNotice queues the job of a's follow of b again.
func (s *Store) RequeueFollowNotice(ctx context.Context, a, b UserKey) error {
	return s.queueFollowNotice(ctx, string(a), string(b))
}

// InboxSizes returns the sizes of uid's inbox: its records (the notifications' hash but the
// unread count), its ids (the inbox) and the records that say they are unread, counted one by one
// (not the count the hash keeps, which the store's reads read).
func (s *Store) InboxSizes(ctx context.Context, uid UserKey) (notes, inbox, unread int64, err error) {
	u := string(uid)
	recs, err := s.rdb.HGetAll(ctx, s.k.inboxNotes(u)).Result()
	if err != nil {
		return
	}
	for cause, raw := range recs {
		if cause == unreadField {
			continue
		}
		notes++
		if rec, ok := unpackNotice(cause, raw); ok && rec.Unread {
			unread++
		}
	}
	inbox, err = s.rdb.ZCard(ctx, s.k.inbox(u)).Result()
	return
}

// RequeueWatchFanout queues the first chunk of a comment's fan-out to its thread's watchers
// again, as a retried or repeated job would.
func (s *Store) RequeueWatchFanout(ctx context.Context, commentID string) error {
	pid, num, err := CommentKey(commentID)
	if err != nil {
		return err
	}
	return s.queueWatchComment(ctx, pid, num)
}
