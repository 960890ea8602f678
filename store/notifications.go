package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// The notification inbox.
//
// Each user's inbox is its own aggregate, {n:<user>} (see keys.go): a hash of notifications by
// id and a sorted set of every id kept (the inbox, by creation time). A notification's record says
// whether it is unread (the kind's letter in lower case; see pack), and the hash's field "#u"
// (unreadField) counts the unread ones. Only two scripts change either — notify.lua inserts a
// notification and mark_read.lua marks some or all read — each in the same step as the records it
// counts. So the count cannot drift from the records: not under retries, concurrency or a crash
// between two calls, which is how counters kept beside their data drift. Layout 6 kept the unread
// ids in a sorted set of their own, 24 bytes a notification more (layout_unread.go).
//
// A notification's id is its cause within the inbox — "c:<post>:<comment>" for a comment (a REPLY
// or a MENTION: one per recipient and comment, a REPLY when both apply), "p:<post>" for a post's
// MENTION, "f:<follower>" for a FOLLOW — so producing it again, as a job run twice does, finds it
// there and adds nothing. Its global id adds the recipient ("notification:alice:c:17:4"), so that
// only the recipient can read it. Notifications are produced by jobs after the writes that cause
// them (notify.go), never inside those writes.
//
// An inbox keeps the newest NotificationCap notifications; the oldest leave every key, and the
// count, in the script that inserts past the cap. A notification outlives what it is about: once its post
// or comment is deleted it stays in the inbox, with that field null.

// NotificationKind is what a notification is about.
type NotificationKind string

// The kinds of notification.
const (
	// NotificationReply is a comment on the recipient's post, or a reply to their comment.
	NotificationReply NotificationKind = "REPLY"
	// NotificationMention is an @name of the recipient in a post's or a comment's body.
	NotificationMention NotificationKind = "MENTION"
	// NotificationFollow is a new follower.
	NotificationFollow NotificationKind = "FOLLOW"
)

// NotificationCap is how many notifications one inbox keeps: the newest.
const NotificationCap = 500

// unreadField is the field of an inbox's hash that counts its unread notifications: no
// notification id starts with "#".
const unreadField = "#u"

// Notification is one entry of a user's inbox.
type Notification struct {
	ID        string // the global id: "notification:<recipient>:<cause>"
	Kind      NotificationKind
	CreatedAt time.Time // when its cause happened: the comment, post or follow
	Read      bool
	Actor     UserKey // who caused it
	PostID    string  // the global id of the post it is about; "" for a FOLLOW
	CommentID string  // the global id of the comment that caused it; "" unless a comment did
	// ModActionID is the global id of the moderation log's entry of a MOD_ACTION; "" otherwise.
	ModActionID string
}

// NodeID returns the notification's global id.
func (n *Notification) NodeID() string { return n.ID }

// noticeRecord is a notification as the inbox's hash keeps it (see pack).
type noticeRecord struct {
	Kind    NotificationKind `json:"k"`
	At      int64            `json:"t"`           // created (Unix ms); 0 in a packed record of layout 7, the inbox's score
	Actor   string           `json:"a"`           // user key
	Post    string           `json:"p,omitempty"` // post key
	Comment string           `json:"c,omitempty"` // comment number, short form ("4")
	Mod     string           `json:"m,omitempty"` // MOD_ACTION: the action's key in the moderation log
	// Unread is the read state a packed record holds (layout 7); layout 4's JSON held none.
	Unread bool `json:"-"`
}

// noticeCodes are the one-letter codes of the kinds in a packed record, and noticeKinds the
// reverse.
var (
	noticeCodes = map[NotificationKind]byte{NotificationReply: 'R', NotificationMention: 'M', NotificationFollow: 'F',
		NotificationModAction: 'A', NotificationWatchedComment: 'C', NotificationWatchedPost: 'P'}
	noticeKinds = func() map[byte]NotificationKind {
		m := make(map[byte]NotificationKind, len(noticeCodes))
		for k, c := range noticeCodes {
			m[c] = k
		}
		return m
	}()
)

// causeRecord returns what the cause id of a notification says of its record: the post and
// comment of "c:<post>:<num>", the post of "p:<post>", the actor of "f:<user>", the action of
// "m:<key>".
func causeRecord(cause string) noticeRecord {
	kind, rest, _ := strings.Cut(cause, ":")
	var r noticeRecord
	switch kind {
	case "c":
		r.Post, r.Comment, _ = strings.Cut(rest, ":")
	case "p":
		r.Post = rest
	case "f":
		r.Actor = rest
	case "m":
		r.Mod = rest
	}
	return r
}

// pack writes the record of the notification of cause as the inbox's hash keeps it: the kind's
// code — in lower case while unread (layout 7; notify.lua stores a new record so) — then,
// separated by spaces, the actor, the post, the comment and the action, each left empty when the
// cause says it, trailing empty fields left out. A reply is "R <actor>": under 64 bytes, so that
// an inbox's hash stays listpack-encoded (layout 4's JSON, ~70 bytes, made every inbox a
// hashtable: ~110 bytes more a notification). The creation time is the id's score in the inbox;
// layout 6 wrote it in the record too, in base 36 after the code ("R<time> <actor>": 8 bytes
// more), which is still read.
func (r noticeRecord) pack(cause string) string {
	c := causeRecord(cause)
	fields := [4]string{r.Actor, r.Post, r.Comment, r.Mod}
	for i, known := range [4]string{c.Actor, c.Post, c.Comment, c.Mod} {
		if fields[i] == known {
			fields[i] = ""
		}
	}
	n := len(fields)
	for n > 0 && fields[n-1] == "" {
		n--
	}
	var b strings.Builder
	code := noticeCodes[r.Kind]
	if r.Unread {
		code += 'a' - 'A'
	}
	b.WriteByte(code)
	for _, f := range fields[:n] {
		b.WriteByte(' ')
		b.WriteString(f)
	}
	return b.String()
}

// unpackNotice reads the stored record of the notification of cause: packed (see pack), or the
// JSON of layout 4, which the migration to layout 5 packs (packNotices).
func unpackNotice(cause, raw string) (noticeRecord, bool) {
	if strings.HasPrefix(raw, "{") {
		var rec noticeRecord
		err := json.Unmarshal([]byte(raw), &rec)
		return rec, err == nil
	}
	if raw == "" {
		return noticeRecord{}, false
	}
	code, unread := raw[0], raw[0] >= 'a' && raw[0] <= 'z'
	if unread {
		code -= 'a' - 'A'
	}
	kind, ok := noticeKinds[code]
	if !ok {
		return noticeRecord{}, false
	}
	head, rest, _ := strings.Cut(raw[1:], " ")
	var at int64 // 0: the inbox's score says it
	if head != "" {
		var err error
		if at, err = strconv.ParseInt(head, 36, 64); err != nil {
			return noticeRecord{}, false
		}
	}
	rec := causeRecord(cause)
	rec.Kind, rec.At, rec.Unread = kind, at, unread
	parts := strings.SplitN(rest, " ", 4)
	for i, f := range [4]*string{&rec.Actor, &rec.Post, &rec.Comment, &rec.Mod} {
		if i < len(parts) && parts[i] != "" {
			*f = parts[i]
		}
	}
	return rec, true
}

// Cause ids: what a notification is about, unique within one inbox.
func commentCause(pid, num string) string { return "c:" + pid + ":" + shortNum(num) }
func postCause(pid string) string         { return "p:" + pid }
func followCause(follower string) string  { return "f:" + follower }

// notificationID returns the global id of the notification of cause in uid's inbox.
func notificationID(uid, cause string) string { return TypeNotification + ":" + uid + ":" + cause }

// splitNotificationKey splits the key of a notification's global id ("alice:c:17:4") into its
// recipient and cause, checking both.
func splitNotificationKey(key string) (recipient, cause string, ok bool) {
	recipient, cause, _ = strings.Cut(key, ":")
	if !validUserName(recipient) {
		return "", "", false
	}
	kind, rest, _ := strings.Cut(cause, ":")
	switch kind {
	case "c":
		p, n, _ := strings.Cut(rest, ":")
		ok = isDigits(p) && isDigits(n) && len(n) <= commentNumWidth
	case "p":
		ok = isDigits(rest)
	case "f":
		ok = validUserName(rest)
	case "m":
		ok = validModKey(rest)
	}
	return recipient, cause, ok
}

// ParseNotificationID returns the recipient and the cause of a notification's global id, or
// KindInvalid.
func ParseNotificationID(id string) (recipient UserKey, cause string, err error) {
	key, err := parseTypedID(id, TypeNotification)
	if err != nil {
		return "", "", err
	}
	r, c, _ := splitNotificationKey(key)
	return UserKey(r), c, nil
}

// notificationFromRecord builds a Notification of uid's from its stored record, with the read
// state it holds, and its score in the inbox (its creation time, Unix ms; 0 when it is not
// there); nil when there is none (or it cannot be read).
func notificationFromRecord(uid, cause string, raw string, created float64) *Notification {
	if raw == "" {
		return nil
	}
	rec, ok := unpackNotice(cause, raw)
	if !ok {
		return nil
	}
	if rec.At == 0 { // layout 7 keeps the creation time in the inbox alone
		if created == 0 {
			return nil // trimmed since the record was read
		}
		rec.At = int64(created)
	}
	n := &Notification{ID: notificationID(uid, cause), Kind: rec.Kind, CreatedAt: fromMillis(rec.At),
		Read: !rec.Unread, Actor: UserKey(rec.Actor)}
	if rec.Mod != "" {
		n.ModActionID = modActionID(rec.Mod)
	}
	if rec.Post != "" {
		n.PostID = postID(rec.Post)
		if rec.Comment != "" {
			n.CommentID = TypeComment + ":" + rec.Post + ":" + rec.Comment
		}
	}
	return n
}

// noticesRead reads notifications of uid by cause id: their records, which hold their read
// state (HMGET), and their creation times, their scores in the inbox (ZMSCORE, in the same
// pipeline on the same slot). A process that found the keyspace of layout 6 reads them with legacy_notes.lua
// until it has migrated it (Store.legacyUnread): an inbox not yet migrated keeps its read state
// apart (layout_unread.go).
func (l *Loader) noticesRead(uid string, causes []string) read {
	notes, inbox := l.s.k.inboxNotes(uid), l.s.k.inbox(uid)
	key := "nt:" + notes + "\x00" + strings.Join(causes, "\x00")
	if l.s.legacyUnread.Load() {
		keys, sc := []string{notes, l.s.k.legacyInboxUnread(uid)}, l.s.scripts.get("legacy_notes")
		return read{key: key, rkey: notes, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
			c.cmd = sc.EvalSha(ctx, p, keys, append([]any{"notes"}, boxed(causes)...)...)
			c.cmd2 = p.ZMScore(ctx, inbox, causes...)
		}}
	}
	return read{key: key, rkey: notes, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = hmget(ctx, p, notes, boxed(causes))
		c.cmd2 = p.ZMScore(ctx, inbox, causes...)
	}}
}

// noticesOf parses a done noticesRead of uid's notifications of causes; a notification no longer
// kept is nil at its index.
func noticesOf(c *call, uid string, causes []string) ([]*Notification, error) {
	out := make([]*Notification, len(causes))
	created := c.cmd2.(*rdb.FloatSliceCmd).Val() // 0 for an id not kept: no creation time is 0
	if _, ok := c.cmd.(*rdb.StringSliceCmd); ok {
		for i, raw := range fields(c) {
			out[i] = notificationFromRecord(uid, causes[i], raw, created[i])
		}
		return out, nil
	}
	recs, unread, err := parseLegacyNotes(c.cmd.(*rdb.Cmd).Val(), len(causes))
	if err != nil {
		return nil, err
	}
	for i, raw := range recs {
		if out[i] = notificationFromRecord(uid, causes[i], raw, created[i]); out[i] != nil {
			out[i].Read = !unread[i]
		}
	}
	return out, nil
}

// parseLegacyNotes reads legacy_notes.lua's reply to n ids: their records and read states.
func parseLegacyNotes(v any, n int) (recs []string, unread []bool, err error) {
	arr, err := replyArrayLen("legacy_notes", v, 2)
	if err != nil {
		return nil, nil, err
	}
	if recs, err = replyStrings("legacy_notes", arr[0], n); err != nil { // nil: none, ""
		return nil, nil, err
	}
	us, err := replyArrayLen("legacy_notes", arr[1], n)
	if err != nil {
		return nil, nil, err
	}
	unread = make([]bool, n)
	for i, u := range us {
		flag, err := replyInt("legacy_notes", u)
		if err != nil {
			return nil, nil, err
		}
		unread[i] = flag == 1
	}
	return recs, unread, nil
}

// notices loads notifications of uid by cause id; a notification no longer kept is nil at its
// index.
func (l *Loader) notices(ctx context.Context, uid string, causes []string) ([]*Notification, error) {
	out := make([]*Notification, len(causes))
	if len(causes) == 0 {
		return out, nil
	}
	c, err := l.get(ctx, l.noticesRead(uid, causes))
	if err != nil {
		return nil, err
	}
	return noticesOf(c, uid, causes)
}

// Notification loads one notification of the viewer's by global id; nil when it is not the
// viewer's (an anonymous viewer has none) or no longer kept.
func (l *Loader) Notification(ctx context.Context, viewer UserKey, id string) (*Notification, error) {
	recipient, cause, err := ParseNotificationID(id)
	if err != nil {
		return nil, err
	}
	if viewer == "" || recipient != viewer {
		return nil, nil
	}
	ns, err := l.notices(ctx, string(recipient), []string{cause})
	if err != nil {
		return nil, err
	}
	return ns[0], nil
}

// UnreadNotificationCount returns how many of the viewer's notifications are unread: the inbox's
// count (HGET), or, by a process that found the keyspace of layout 6 until it has migrated it,
// whichever layout the inbox is of (legacy_notes.lua).
func (l *Loader) UnreadNotificationCount(ctx context.Context, viewer UserKey) (int, error) {
	uid := string(viewer)
	if !validUserName(uid) {
		return 0, invalidf("malformed user %q", truncate(uid, 40))
	}
	notes := l.s.k.inboxNotes(uid)
	if !l.s.legacyUnread.Load() {
		v, err := l.hashField(ctx, notes, unreadField)
		if err != nil || v == "" {
			return 0, err
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("the unread count of %s: %w", uid, err)
		}
		return n, nil
	}
	keys, sc := []string{notes, l.s.k.legacyInboxUnread(uid)}, l.s.scripts.get("legacy_notes")
	c, err := l.get(ctx, read{key: "nu#:" + notes, rkey: notes, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = sc.EvalSha(ctx, p, keys, "count")
	}})
	if err != nil {
		return 0, err
	}
	n, err := replyInt("legacy_notes", c.cmd.(*rdb.Cmd).Val())
	return int(n), err
}

// NotificationNeeds says what a response reads of the actors, posts and comments of a list of
// notifications; a nil field reads nothing of that kind.
type NotificationNeeds struct {
	Actor, Post, Comment *Needs
}

// Cursor tags of the two lists of an inbox: all notifications, and the unread ones.
const (
	inboxTag       = "n"
	inboxUnreadTag = "nu"
)

// Notifications loads one page of the viewer's notifications, newest first — only the unread
// ones with unreadOnly (unread_page.lua, which walks the inbox: at most NotificationCap ids) — and
// what needs says the response reads of their actors, posts and comments. It costs one round trip
// for the page, one for the notifications with their read state, and then those of
// WalkNotifications. Its cursors stay valid while notifications come, are read, and go.
func (l *Loader) Notifications(ctx context.Context, viewer UserKey, w Window, unreadOnly bool, needs func() *NotificationNeeds) (*Page[*Notification], error) {
	uid := string(viewer)
	if !validUserName(uid) {
		return nil, invalidf("malformed user %q", truncate(uid, 40))
	}
	tag := inboxTag
	if unreadOnly {
		tag = inboxUnreadTag
	}
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	r := l.pageRead(l.s.k.inbox(uid), true, sp)
	if unreadOnly {
		r = l.unreadPageRead(uid, sp)
	}
	cl, err := l.get(ctx, r)
	if err != nil {
		return nil, err
	}
	rp, err := pageOf(cl, sp)
	if err != nil {
		return nil, err
	}
	ns, err := l.notices(ctx, uid, rp.members)
	if err != nil {
		return nil, err
	}
	p := keptItems(rp, tag, ns) // nil: trimmed since the page was read
	if needs != nil {
		l.WalkNotifications(ctx, p.Items, needs())
	}
	return p, nil
}

// unreadPageRead reads the page of uid's unread notifications that sp names (unread_page.lua):
// the page page.lua gave of layout 6's sorted set of them, with the same cursors.
func (l *Loader) unreadPageRead(uid string, sp span) read {
	keys := []string{l.s.k.inboxNotes(uid), l.s.k.inbox(uid), l.s.k.legacyInboxUnread(uid)}
	sc, dir, cp := l.s.scripts.get("unread_page"), "first", sp
	if sp.backward {
		dir = "last"
	}
	return read{key: "nu:" + keys[1] + "\x00" + sp.key(), rkey: keys[0], fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = sc.EvalSha(ctx, p, keys, cp.n, dir, cp.after.score, cp.after.member, cp.before.score, cp.before.member)
	}}
}

// WalkNotifications reads the actors, posts and comments of notifications, and what needs says
// the response reads below them, in one walk (see Walk): each level of all three kinds goes in
// one pipeline. A comment is read with its post, as Loader.Comment reads it.
func (l *Loader) WalkNotifications(ctx context.Context, ns []*Notification, needs *NotificationNeeds) {
	if needs == nil || len(ns) == 0 {
		return
	}
	var comment *Needs
	if needs.Comment != nil {
		all := *needs.Comment // the resolver reads the whole comment (Loader.Comment)
		all.CommentFields = AllCommentFields
		comment = &all
	}
	var items []walkItem
	for _, n := range ns {
		if needs.Actor != nil && n.Actor != "" {
			items = append(items, newWalkItem(ItemUser, "", string(n.Actor), needs.Actor))
		}
		pid, _ := PostKey(n.PostID)
		if needs.Post != nil && pid != "" {
			items = append(items, newWalkItem(ItemPost, "", pid, needs.Post))
		}
		if comment != nil && n.CommentID != "" {
			if cp, num, err := CommentKey(n.CommentID); err == nil {
				items = append(items, newWalkItem(ItemPost, "", cp, &Needs{}), newWalkItem(ItemComment, cp, num, comment))
			}
		}
	}
	l.walk(ctx, items, nil)
}

// MarkNotificationsRead marks notifications of the user uid read: every one with all, else those
// ids names (global ids of uid's notifications; ids of notifications no longer kept, or read
// already, change nothing). It returns the number of uid's unread notifications left, counted in
// the same script as the change. Giving neither ids nor all is KindInvalid; an id of someone
// else's notification is KindForbidden.
func (s *Store) MarkNotificationsRead(ctx context.Context, user UserKey, ids []string, all bool) (int, error) {
	uid := string(user)
	if ids == nil && !all {
		return 0, invalidf("give the ids of the notifications to mark read, or all: true")
	}
	if len(ids) > NotificationCap {
		return 0, invalidf("at most %d ids at once (an inbox keeps %d notifications)", NotificationCap, NotificationCap)
	}
	args := []any{"ids"}
	if all {
		args = []any{"all"}
	}
	for _, id := range ids {
		recipient, cause, err := ParseNotificationID(id)
		if err != nil {
			return 0, err
		}
		if recipient != user {
			return 0, &Error{Kind: KindForbidden, Msg: fmt.Sprintf("notification %s is not yours", truncate(id, 60))}
		}
		if !all {
			args = append(args, cause)
		}
	}
	if _, err := s.allowWrite(ctx, uid, "", banFree); err != nil {
		return 0, err
	}
	v, err := s.run(ctx, "mark_read", []string{s.k.inboxNotes(uid), s.k.legacyInboxUnread(uid)}, args...)
	if err != nil {
		return 0, err
	}
	n, err := replyInt("mark_read", v)
	if err != nil {
		return 0, err
	}
	return int(n), nil
}
