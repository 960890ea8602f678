package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agora/agora/jobs"
)

// Producing notifications. A write that causes notifications queues one job for them (see
// background.go); the job reads what the write made, works out the recipients and delivers to
// all of them in one pipeline of notify.lua calls, one per recipient on the recipient's slot.
// Handlers are idempotent because a notification's id is its cause: a job that runs twice, or a
// cause queued twice, delivers each notification once.
//
//   - A new comment (notify-comment) is a REPLY to the post's author for a top-level comment, or
//     to the parent comment's author for a reply, and a MENTION to each user its body names with
//     @name (see mentionedUsers). Nobody is notified of their own comment, and the REPLY recipient
//     gets no MENTION of the same comment.
//   - A new post (notify-post) is a MENTION to each user its body names.
//   - A new follower (notify-follow) is a FOLLOW, once per follower: unfollowing and following
//     again finds the notification there (unless the inbox has trimmed it since).
//   - Nobody is notified by a user they block: deliver checks each recipient's block list when
//     the job runs.
//
// A queued job must not be lost between the write and the queue. A post's and a follow's writes
// already queue their repair job before their atomic step (repair.go), and their repair queues
// the job again. A comment has no such note, so its job is queued before the atomic
// step, due only noticeGrace later — long after the write has either happened or failed — and the
// write, once done, moves it to now. A job that runs and finds no comment (a write that failed, or
// an idempotency key that named an earlier comment) does nothing.

// noticeGrace is how long the job queued before a comment's atomic step waits unless the write
// moves it to now: longer than any write takes, with its retries (the repair jobs' grace).
const noticeGrace = RepairGrace

// MaxMentions is how many @names of one post or comment are notified at most: the first ones.
const MaxMentions = 10

// commentNoticeJob is the job that delivers the notifications of comment num (stored form) of
// post pid, due at (zero: now).
func commentNoticeJob(pid, num string, at time.Time) jobs.Job {
	return jobs.Job{ID: jobNotifyComment + ":" + pid + ":" + shortNum(num), Kind: jobNotifyComment, Arg: pid + " " + num, At: at}
}

// postNoticeJob is the job that delivers the mentions of post pid.
func postNoticeJob(pid string) jobs.Job {
	return jobs.Job{ID: jobNotifyPost + ":" + pid, Kind: jobNotifyPost, Arg: pid}
}

// followNoticeJob is the job that tells b that a follows them.
func followNoticeJob(a, b string) jobs.Job {
	return jobs.Job{ID: jobNotifyFollow + ":" + a + ":" + b, Kind: jobNotifyFollow, Arg: a + " " + b}
}

// queueCommentNotice queues, before a comment's atomic step, the job of its notifications, due
// noticeGrace from now: if the write stops before promoteCommentNotice, the job still runs.
//
// It also notes the comment for repair (see repairComment), in the same round trip, and returns
// the note for the writer to settle.
func (s *Store) queueCommentNotice(ctx context.Context, pid, num string) (note, error) {
	c, err := s.jobs.EnqueueCall(commentNoticeJob(pid, num, s.now().Add(noticeGrace)), false)
	if err != nil {
		return note{}, err
	}
	n, rc := s.noteCall(repairComment + ":" + pid + ":" + num)
	if err := s.runMany(ctx, []scriptCall{jobCall(c), rc}); err != nil {
		return note{}, fmt.Errorf("queue the notifications of comment %s: %w", commentID(pid, num), err)
	}
	return n, nil
}

// promoteCommentNotice makes the job of a written comment's notifications due now. A failure is
// logged, not returned: the comment is written, and the job queued beforehand runs anyway.
func (s *Store) promoteCommentNotice(ctx context.Context, pid, num string) {
	if err := s.jobs.Schedule(ctx, commentNoticeJob(pid, num, time.Time{})); err != nil {
		s.opts.Log.WarnContext(ctx, "notifications of a new comment: they go out after the grace",
			"comment", commentID(pid, num), "grace", noticeGrace, "err", err)
	}
}

// queueFollowNotice queues the job that tells b that a follows them.
func (s *Store) queueFollowNotice(ctx context.Context, a, b string) error {
	if err := s.jobs.Enqueue(ctx, followNoticeJob(a, b)); err != nil {
		return fmt.Errorf("queue the notification of %s following %s: %w", a, b, err)
	}
	return nil
}

// notice is one notification to deliver: its recipient (user key), its cause and its record.
type notice struct {
	to    string
	cause string
	rec   noticeRecord
}

// runNotifyComment delivers the notifications of a new comment ("<post> <number>").
func (s *Store) runNotifyComment(ctx context.Context, j jobs.Job) error {
	pid, num, ok := strings.Cut(j.Arg, " ")
	if !ok {
		return fmt.Errorf("%s job: bad argument %q", j.Kind, j.Arg)
	}
	l := s.NewLoader()
	c, err := l.Comment(ctx, commentID(pid, num))
	if err != nil {
		return fmt.Errorf("notifications of comment %s: %w", commentID(pid, num), err)
	}
	if c == nil || c.Deleted || c.Removed || c.Author == "" {
		return nil // never written, deleted since (with its post, maybe) or removed: nothing to tell
	}
	p, err := l.Post(ctx, c.PostID) // read with the comment
	if err != nil || p == nil || p.Removed {
		return err // a moderator removed the post since: its thread left its readers' view
	}
	// One round trip: the parent comment (for a reply) and the users the body names.
	names := mentionedUsers(c.Text, c.Author)
	var reads []read
	var pnum string
	if c.ParentID != "" {
		if _, pnum, err = CommentKey(c.ParentID); err != nil {
			return fmt.Errorf("notifications of comment %s: %w", c.ID, err)
		}
		reads = append(reads, l.commentRead(pid, pnum, AllCommentFields))
	}
	for _, n := range names {
		reads = append(reads, l.userRead(n))
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return fmt.Errorf("notifications of comment %s: %w", c.ID, err)
	}
	replyTo := p.Author
	if pnum != "" {
		replyTo = ""
		if parent := l.commentOf(calls[0], pid, pnum, AllCommentFields); parent != nil {
			replyTo = parent.Author // "" for a deleted parent: nobody to tell
		}
		calls = calls[1:]
	}
	rec := noticeRecord{At: c.CreatedAt.UnixMilli(), Actor: string(c.Author), Post: pid, Comment: shortNum(num)}
	cause := commentCause(pid, num)
	var out []notice
	if replyTo != "" && replyTo != c.Author {
		r := rec
		r.Kind = NotificationReply
		out = append(out, notice{to: string(replyTo), cause: cause, rec: r})
	}
	for i, n := range names {
		if UserKey(n) != replyTo && l.userOf(calls[i], n) != nil {
			r := rec
			r.Kind = NotificationMention
			out = append(out, notice{to: n, cause: cause, rec: r})
		}
	}
	// Muted recipients hear nothing; the watchers with ALL hear of it after the others (see
	// watch.go), so that a recipient of both keeps the REPLY or MENTION.
	out, fans, err := s.withoutMuted(ctx, l, pid, p.Author, p.GroupNames, out, true)
	if err != nil {
		return fmt.Errorf("notifications of comment %s: %w", c.ID, err)
	}
	if err := s.deliver(ctx, out); err != nil {
		return err
	}
	if fans[0] {
		return s.queueWatchComment(ctx, pid, num)
	}
	return nil
}

// runNotifyPost delivers the mentions of a new post ("<post>").
func (s *Store) runNotifyPost(ctx context.Context, j jobs.Job) error {
	pid := j.Arg
	l := s.NewLoader()
	p, err := l.Post(ctx, postID(pid))
	if err != nil {
		return fmt.Errorf("notifications of post %s: %w", pid, err)
	}
	if p == nil || p.Removed {
		return nil // deleted or removed since, or never written
	}
	names := mentionedUsers(p.Body, p.Author)
	users, err := l.usersByKey(ctx, names)
	if err != nil {
		return fmt.Errorf("notifications of post %s: %w", pid, err)
	}
	var out []notice
	for i, u := range users {
		if u != nil {
			out = append(out, notice{to: names[i], cause: postCause(pid),
				rec: noticeRecord{Kind: NotificationMention, At: p.CreatedAt.UnixMilli(), Actor: string(p.Author), Post: pid}})
		}
	}
	out, fans, err := s.withoutMuted(ctx, l, pid, p.Author, p.GroupNames, out, false)
	if err != nil {
		return fmt.Errorf("notifications of post %s: %w", pid, err)
	}
	if err := s.deliver(ctx, out); err != nil {
		return err
	}
	for i, g := range p.GroupNames {
		if fans[i] {
			if err := s.queueWatchPost(ctx, g, pid); err != nil {
				return err
			}
		}
	}
	return nil
}

// runNotifyFollow tells b that a follows them ("<a> <b>"), if a still does; the notification's
// time is the follow's.
func (s *Store) runNotifyFollow(ctx context.Context, j jobs.Job) error {
	a, b, ok := strings.Cut(j.Arg, " ")
	if !ok {
		return fmt.Errorf("%s job: bad argument %q", j.Kind, j.Arg)
	}
	at, present, err := s.NewLoader().zscore(ctx, s.k.following(a), b)
	if err != nil {
		return fmt.Errorf("notification of %s following %s: %w", a, b, err)
	}
	if !present {
		return nil // unfollowed since
	}
	return s.deliver(ctx, []notice{{to: b, cause: followCause(a),
		rec: noticeRecord{Kind: NotificationFollow, At: int64(at), Actor: a}}})
}

// deliver inserts notifications, each into its recipient's inbox, in one pipeline, and announces
// those that were new (notificationAdded). A recipient who blocks the notification's actor, when
// the job runs, gets nothing; nor does a deleted account.
func (s *Store) deliver(ctx context.Context, ns []notice) error {
	_, err := s.deliverKept(ctx, ns)
	return err
}

// deliverKept is deliver, which also returns the notices it kept: those not left out for their
// recipients (who block the actor, or whose account is deleted).
func (s *Store) deliverKept(ctx context.Context, ns []notice) ([]notice, error) {
	if len(ns) == 0 {
		return nil, nil
	}
	dropped, err := s.undeliverableNotices(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("deliver %d notifications: %w", len(ns), err)
	}
	kept := ns[:0:0]
	for i, n := range ns {
		if !dropped[i] {
			kept = append(kept, n)
		}
	}
	if ns = kept; len(ns) == 0 {
		return nil, nil
	}
	calls := make([]scriptCall, len(ns))
	for i, n := range ns {
		calls[i] = scriptCall{name: "notify", keys: []string{s.k.inboxNotes(n.to), s.k.inbox(n.to), s.k.legacyInboxUnread(n.to), s.k.inboxUnannounced(n.to)},
			args: []any{n.cause, n.rec.At, n.rec.pack(n.cause), NotificationCap}}
	}
	replies, err := s.runScripts(ctx, calls)
	if err != nil {
		return nil, fmt.Errorf("deliver %d notifications: %w", len(ns), err)
	}
	// Announce what each inbox has not announced yet — the new notifications, and any that a
	// delivery cut off by a crash added without announcing — then mark them announced.
	pending := map[string]map[string]bool{} // recipient → causes
	for i, r := range replies {
		arr, err := replyArray("notify", r, 1) // {added, unannounced ids...}
		if err != nil {
			return nil, fmt.Errorf("deliver %d notifications: %w", len(ns), err)
		}
		for _, v := range arr[1:] {
			cause, err := replyString("notify", v)
			if err != nil {
				return nil, fmt.Errorf("deliver %d notifications: %w", len(ns), err)
			}
			if pending[ns[i].to] == nil {
				pending[ns[i].to] = map[string]bool{}
			}
			pending[ns[i].to][cause] = true
		}
	}
	s.announceNotifications(ctx, pending)
	return ns, nil
}

// mentionedUsers returns the user keys that text names with @name, in order of first appearance,
// without repeats and without author's own: at most MaxMentions of them, counting names of users
// that may not exist (the caller checks), so that one text costs a bounded number of reads. A
// mention is "@" followed by a user name (3–32 of A-Z a-z 0-9 _ -) and not preceded by a name
// character, so an e-mail address mentions nobody; names match ignoring case.
func mentionedUsers(text string, author UserKey) []string {
	var out []string
	for i := 0; i < len(text) && len(out) < MaxMentions; i++ {
		if text[i] != '@' || (i > 0 && isNameByte(text[i-1])) {
			continue
		}
		j := i + 1
		for j < len(text) && isNameByte(text[j]) {
			j++
		}
		name := strings.ToLower(text[i+1 : j])
		i = j - 1
		if !validUserName(name) || UserKey(name) == author || contains(out, name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// isNameByte reports whether c can be part of a user name.
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
