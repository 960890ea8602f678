package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
)

// Removal notices. Removing, restoring or locking (and unlocking) a post, putting a content label
// on someone's post or taking one off, removing or restoring a comment, and banning (or
// unbanning) a user tells the post's or comment's author, or the banned user, with a MOD_ACTION
// notification in their inbox: its actor is the moderator, its post and comment what was acted
// on, and its modAction the entry of the moderation log — the action, the group and the
// moderator's reason (or the label). Nobody is told of their own action, and, as for every
// notification, nobody by a moderator they block.
//
// Exactly once: the notification's cause is the action's key in the log ("m:<key>"), and the
// log's keys derive from the action (see modActionID), so a retried request, which names the
// action it already logged, names the same notification. The job that delivers it
// (notify-mod, "<key>") is queued in the pipeline that copies the action's entry from its
// outbox into the log (flushModLog) — before the entry leaves the outbox — so the write's repeat
// or its repair queues it again if the process stopped in between; the job's id is the key, and
// notify.lua adds a cause once. Once delivered, the log links the action to its notification
// ({modlog}:notices, key → notification id): ModAction.noticeId, shown to its recipient only.

// jobNotifyMod is the job that delivers a moderation action's notice ("<action key>").
const jobNotifyMod = "notify-mod"

// NotificationModAction is a moderator's action on the recipient's post or comment, or on the
// recipient (a ban).
const NotificationModAction NotificationKind = "MOD_ACTION"

// noticeActions are the actions that notify.
var noticeActions = map[ModActionKind]bool{
	ModRemovePost: true, ModRestorePost: true, ModLockPost: true, ModUnlockPost: true,
	ModRemoveComment: true, ModRestoreComment: true, ModBanUser: true, ModUnbanUser: true,
	ModLabelPost: true, ModUnlabelPost: true,
}

// modCause is the cause of the notice of the action with key key.
func modCause(key string) string { return "m:" + key }

// modNoticeJob is the job that delivers the notice of the action with key key.
func modNoticeJob(key string) jobs.Job {
	return jobs.Job{ID: jobNotifyMod + ":" + key, Kind: jobNotifyMod, Arg: key}
}

// modNoticeCalls returns the calls that queue the notice of a, logged under key, when its action
// notifies.
func (s *Store) modNoticeCalls(key string, a *ModAction) ([]scriptCall, error) {
	if !noticeActions[a.Action] {
		return nil, nil
	}
	c, err := s.jobs.EnqueueCall(modNoticeJob(key), false)
	if err != nil {
		return nil, fmt.Errorf("queue the notice of %s: %w", a.ID, err)
	}
	return []scriptCall{jobCall(c)}, nil
}

// runNotifyMod delivers the notice of a moderation action ("<key>") to whom it concerns, and links
// the action to it.
func (s *Store) runNotifyMod(ctx context.Context, j jobs.Job) error {
	key := j.Arg
	l := s.NewLoader()
	a, err := l.ModAction(ctx, modActionID(key))
	if err != nil {
		return fmt.Errorf("notice of action %s: %w", key, err)
	}
	if a == nil {
		return nil // not logged: nothing to tell
	}
	rec := noticeRecord{Kind: NotificationModAction, At: a.CreatedAt.UnixMilli(), Actor: string(a.Moderator), Mod: key}
	var to string
	typ, _, _ := strings.Cut(a.TargetID, ":")
	switch typ {
	case TypePost:
		pid, err := PostKey(a.TargetID)
		if err != nil {
			return fmt.Errorf("notice of action %s: %w", key, err)
		}
		rec.Post = pid
		to, err = l.hashField(ctx, s.k.post(pid), "author")
		if err != nil {
			return fmt.Errorf("notice of action %s: %w", key, err)
		}
	case TypeComment:
		pid, num, err := CommentKey(a.TargetID)
		if err != nil {
			return fmt.Errorf("notice of action %s: %w", key, err)
		}
		rec.Post, rec.Comment = pid, shortNum(num)
		if err := s.shortenThreadOf(ctx, pid, num); err != nil { // read alone (layout_shortkeys.go)
			return fmt.Errorf("notice of action %s: %w", key, err)
		}
		v, err := s.commentFieldsNow(ctx, pid, num, "author")
		if err != nil {
			return fmt.Errorf("notice of action %s: %w", key, err)
		}
		to = v[0]
	case TypeUser:
		uid, err := ParseUserID(a.TargetID)
		if err != nil {
			return fmt.Errorf("notice of action %s: %w", key, err)
		}
		to = string(uid)
	}
	if to == "" || to == string(a.Moderator) {
		return nil // deleted, or their own doing
	}
	kept, err := s.deliverKept(ctx, []notice{{to: to, cause: modCause(key), rec: rec}})
	if err != nil || len(kept) == 0 {
		return err // not delivered (they block the moderator, or their account is deleted): no link
	}
	_, err = s.run(ctx, "modlog_notice", []string{s.k.modLogNotices()}, key, notificationID(to, modCause(key)))
	return err
}

// modNotices reads the global id of the notification of the action with key key; "" when none.
func (l *Loader) modNotices(ctx context.Context, key string) (string, error) {
	c, err := l.get(ctx, read{key: "mn:" + key, rkey: l.s.k.modLogNotices(), fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.HGet(ctx, l.s.k.modLogNotices(), key)
	}})
	if err != nil {
		return "", err
	}
	return c.cmd.(*rdb.StringCmd).Val(), nil
}

// ModActionNotice returns, to viewer, the global id of the notification that told them of an
// action, "" when none was sent (yet) — an action of a kind that does not notify, on one's own
// post, or not delivered — and to anyone but the notice's recipient. The log is public, and a
// notice is not delivered to an author who blocks the moderator: a link shown to all would tell
// them who blocks whom.
func (l *Loader) ModActionNotice(ctx context.Context, viewer UserKey, a *ModAction) (string, error) {
	if viewer == "" || !noticeActions[a.Action] {
		return "", nil
	}
	key, err := parseTypedID(a.ID, TypeModAction)
	if err != nil {
		return "", err
	}
	id, err := l.modNotices(ctx, key)
	if err != nil || id == "" {
		return "", err
	}
	if to, _, err := ParseNotificationID(id); err != nil || to != viewer {
		return "", nil
	}
	return id, nil
}
