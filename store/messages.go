package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// Private messages.
//
// A conversation between two users is its own aggregate, {m:<a>:<b>} with the two user keys in
// order (keys.go): its messages, each one's hash, a copy of the last one, and a small hash of
// each participant's state — whether they accept the conversation (a:), a request pending to
// them (q:), their decline and until when it refuses requests (d:) and the last message the
// declined request held (x:), and up to when they have read it (r:). A message's global id names the pair and the message: "message:alice:bob:<id>", the id
// being 13 digits of its creation time (ms) and random hex, so that ids sort by time.
//
// Each user's mailbox, {mb:<user>}, holds what the user's lists need: the accepted
// conversations and the pending requests by last activity, and the unread messages themselves,
// as members "<other>:<message id>" of two sets (accepted conversations, requests). The unread
// count is the size of the first set, so it is exact by construction: a message is unread or
// not, whatever the number of retries. The mailbox keeps its own copy of the participant's
// state (a:, d:, r:).
//
// A write sends the conversation's script (message_send.lua, message_state.lua) and each
// mailbox's step (mailbox.lua) in one pipeline. Each applies the same rules to its own copy of
// the state, and the steps commute — unread sets are sets, read times and activity only move
// forward, a decline and a message agree whichever comes first — so the mailbox and the
// conversation agree whatever order the steps reach them in; the cluster runs them on different
// masters in parallel. Where one of them refuses what the other did (a race with a decline), the
// write derives both mailboxes again from the conversation (syncConversation), and the repair job
// noted before the write does the same should the process stop half-way. An idempotency key that
// names an earlier message costs no derivation, which would read every unread message of the
// conversation at each retry: the conversation takes the read position and activity the retry's
// steps took, and the retry's unread copy is taken back out of the recipient's mailbox (see send).
//
// Rules: a user cannot message themselves; blocks stop messages both ways (either user blocking
// the other, FORBIDDEN); a site ban refuses sending (BANNED); every message counts against the
// write limit and against MessageOptions.PerWindow. A first message to someone who has not
// written to the sender, nor accepted them, is a request: it waits in the recipient's
// messageRequests, does not count in their unreadMessageCount, until they accept it (or reply);
// declining it refuses further requests from the sender for MessageOptions.RequestCooldown.
// Sending marks the conversation read for the sender, up to the message sent. A conversation
// holds at most MessageOptions.MaxUnread messages its recipient has not read (LIMIT_REACHED),
// which bounds what a derivation of its mailboxes reads.

// Defaults of MessageOptions.
const (
	DefaultRequestCooldown   = 30 * 24 * time.Hour
	DefaultMessagesPerMinute = 30
	DefaultMaxUnread         = 500
)

// MaxMessageBodyRunes is the longest message body, as long as a comment's.
const MaxMessageBodyRunes = MaxCommentBodyRunes

// MessageOptions configures private messages.
type MessageOptions struct {
	// RequestCooldown is how long declining a message request refuses further requests from its
	// sender (-request-cooldown). Default 30 days.
	RequestCooldown time.Duration
	// PerWindow is how many messages one user may send per Window, on top of the write limit
	// (-message-limit). Off, like every limit, with a negative Options.WriteLimit. Default 30.
	PerWindow int
	// Window is the window of PerWindow. Default one minute.
	Window time.Duration
	// MaxUnread is how many messages a sender may have waiting unread by their recipient in one
	// conversation, those deleted since included (a derivation reads them too): the next is
	// LIMIT_REACHED until the recipient reads past them. It bounds what a derivation of the
	// conversation's mailboxes reads (syncConversation: every message after the earlier read
	// position), which a block and an unblock, or a message racing a decline, cause. Off, like
	// the limits, with a negative Options.WriteLimit. Default 500.
	MaxUnread int
}

func (o MessageOptions) withDefaults() MessageOptions {
	if o.RequestCooldown <= 0 {
		o.RequestCooldown = DefaultRequestCooldown
	}
	if o.PerWindow <= 0 {
		o.PerWindow = DefaultMessagesPerMinute
	}
	if o.Window <= 0 {
		o.Window = time.Minute
	}
	if o.MaxUnread <= 0 {
		o.MaxUnread = DefaultMaxUnread
	}
	return o
}

// repairConversation is the repair item of a conversation: conversation:<a>:<b> derives both
// mailboxes again from it.
const repairConversation = "conversation"

// Message is one private message.
type Message struct {
	ID        string // the global id: "message:<a>:<b>:<id>"
	Sender    UserKey
	Recipient UserKey
	Text      string // "" once deleted
	Deleted   bool
	CreatedAt time.Time
	EditedAt  *time.Time
}

// NodeID returns the message's global id.
func (m *Message) NodeID() string { return m.ID }

// Body returns the message's text, nil once deleted.
func (m *Message) Body() *string {
	if m.Deleted {
		return nil
	}
	return &m.Text
}

// Conversation is a viewer's conversation with one other user.
type Conversation struct {
	ID          string  // the global id: "conversation:<a>:<b>"
	Viewer      UserKey // whose view this is
	With        UserKey // the other user
	UpdatedAt   time.Time
	LastMessage *Message // nil when it has none
	UnreadCount int      // the viewer's unread messages in it
	IsRequest   bool     // a message request pending to the viewer
}

// NodeID returns the conversation's global id.
func (c *Conversation) NodeID() string { return c.ID }

// pair orders two user keys: a conversation's aggregate is named by the pair in order.
func pair(u, v string) (a, b string) {
	if u < v {
		return u, v
	}
	return v, u
}

// conversationID returns the global id of the conversation of u and v.
func conversationID(u, v string) string {
	a, b := pair(u, v)
	return TypeConversation + ":" + a + ":" + b
}

// messageID returns the global id of message id of the conversation of u and v.
func messageID(u, v, id string) string {
	a, b := pair(u, v)
	return TypeMessage + ":" + a + ":" + b + ":" + id
}

// msgIDLen is the length of a message id: 13 digits of ms and 6 hex digits.
const msgIDLen = 19

// newMessageID returns a fresh message id for a message created at t: 13 digits of ms, then 6
// hex digits of a counter that starts at random for each Store, so that the messages one process
// sends within a millisecond keep their order, and those of two processes are unlikely to meet.
func (s *Store) newMessageID(t time.Time) string {
	return fmt.Sprintf("%013d%06x", t.UnixMilli(), s.msgSeq.Add(1)&0xffffff)
}

// readPosition is the read position of everything sent up to t (see mailbox.lua): after every
// message id of t's millisecond.
func readPosition(t time.Time) string { return fmt.Sprintf("%013dffffff", t.UnixMilli()) }

// readNow is the read position a step that reads "up to now" passes its scripts, which read up to
// the later of it and the last message they hold: everything sent before now's millisecond. A
// message of now's own millisecond counts as read only when the script holds it (it is then at
// or before the last message): one sent just after, in the same millisecond, stays unread.
func readNow(now time.Time) string { return readPosition(now.Add(-time.Millisecond)) }

// validMessageID reports whether id is a message id.
func validMessageID(id string) bool {
	if len(id) != msgIDLen || !isDigits(id[:13]) {
		return false
	}
	for _, c := range id[13:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// splitConversationKey splits the key of a conversation's global id ("alice:bob").
func splitConversationKey(key string) (a, b string, ok bool) {
	a, b, _ = strings.Cut(key, ":")
	return a, b, validUserName(a) && validUserName(b) && a < b
}

// splitMessageKey splits the key of a message's global id ("alice:bob:<id>").
func splitMessageKey(key string) (a, b, id string, ok bool) {
	i := strings.LastIndexByte(key, ':')
	if i < 0 {
		return "", "", "", false
	}
	a, b, ok = splitConversationKey(key[:i])
	id = key[i+1:]
	return a, b, id, ok && validMessageID(id)
}

// ParseMessageID returns the participants and the id of a message's global id, or KindInvalid.
func ParseMessageID(gid string) (a, b UserKey, id string, err error) {
	key, err := parseTypedID(gid, TypeMessage)
	if err != nil {
		return "", "", "", err
	}
	x, y, id, _ := splitMessageKey(key)
	return UserKey(x), UserKey(y), id, nil
}

// ParseConversationID returns the participants of a conversation's global id, or KindInvalid.
func ParseConversationID(gid string) (a, b UserKey, err error) {
	key, err := parseTypedID(gid, TypeConversation)
	if err != nil {
		return "", "", err
	}
	x, y, _ := splitConversationKey(key)
	return UserKey(x), UserKey(y), nil
}

// other returns the participant of a and b who is not u; "" when u is neither.
func other(u, a, b UserKey) UserKey {
	switch u {
	case a:
		return b
	case b:
		return a
	}
	return ""
}

// messageFields are the fields of a message's hash a read of it asks for (HMGET), in the order
// messageFromFields takes them.
var messageFields = []string{"f", "b", "t", "e", "d"}

// messageFromFields builds a message of the conversation of a and b from the values of
// messageFields; nil when there is none.
func messageFromFields(a, b, id string, v []string) *Message {
	from := v[0]
	if from == "" {
		return nil
	}
	to := a
	if from == a {
		to = b
	}
	t, _ := strconv.ParseInt(v[2], 10, 64)
	m := &Message{ID: messageID(a, b, id), Sender: UserKey(from), Recipient: UserKey(to), Text: v[1],
		Deleted: v[4] == "1", CreatedAt: fromMillis(t)}
	if e, err := strconv.ParseInt(v[3], 10, 64); err == nil && e > 0 {
		et := fromMillis(e)
		m.EditedAt = &et
	}
	if m.Deleted {
		m.Text = ""
	}
	return m
}

// messageFromHash builds a message of the conversation of a and b from its hash; nil when there
// is none.
func messageFromHash(a, b, id string, h map[string]string) *Message {
	return messageFromFields(a, b, id, []string{h["f"], h["b"], h["t"], h["e"], h["d"]})
}

// checkMessageBody checks a message body as it is sent or edited, and returns the body to keep:
// the one place message bodies pass before they are written (SendMessage, EditMessage). It
// applies the site filters (filterText), so call it after the write's first round trip, which
// refreshes them.
func (s *Store) checkMessageBody(body string) (string, error) {
	if err := checkText("body", body, 1, MaxMessageBodyRunes); err != nil {
		return "", err
	}
	return s.filterText("body", body)
}

// mailboxCall is the call of one mailbox step (see mailbox.lua) of user uid about other.
func (s *Store) mailboxCall(uid, other string, step string, args ...any) scriptCall {
	mb := s.k.mailbox(uid)
	return scriptCall{name: "mailbox", keys: []string{mb.convs, mb.reqs, mb.unread, mb.runread, mb.state, mb.ver, mb.gone},
		args: append([]any{step, other}, args...)}
}

// sendGate checks, in one round trip, that from may send to to now: the write limit and the
// message limit (recording the attempt as member, see writeGuard), from's site bans, that to
// exists, that neither blocks the other, that to has not MaxUnread of from's messages unread
// (before the message's mailbox steps, which would move the conversation up in both lists; a
// retry of a message sent, its idempotency key found, goes on to find it), and that to's
// decline of from's requests is over
// (allowGuarded, with the reads of the recipient and the conversation). It notes the
// conversation for repair in the same round trip and returns the note, and what the
// conversation's script needs to grant a send lease after the message: the lease version this
// process last read, and how many messages the limits leave.
//
// A new account's message counts in its requests window unless it is no request (see
// writeGuard.refused): once counted, the mode returned says how to take it back out
// (sendMode.release), also with a refusal, which SendMessage then runs itself. idem is the
// client's idempotency key, under which the message's retries count once.
func (s *Store) sendGate(ctx context.Context, from, to, member, idem string) (note, sendMode, error) {
	a, b := pair(from, to)
	var name *rdb.StringCmd
	var state *rdb.SliceCmd
	var capped *rdb.ZSliceCmd
	var keyed *rdb.IntCmd // whether idem names a message already
	var usedMsgs, usedWrites *rdb.IntCmd
	blocks, blockErr := s.blockReads(ctx, from, to)
	reads := append([]op{
		{key: s.k.conv(a, b), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			state = p.HMGet(ctx, s.k.conv(a, b), "a:"+to, "d:"+to, "r:"+to)
			maxUnread := s.maxUnread()
			if maxUnread <= 0 {
				return state, nil
			}
			// The message MaxUnread places from the end: it is after the recipient's read
			// position when they have that many unread (see message_send.lua).
			capped = p.ZRangeWithScores(ctx, s.k.convMsgs(a, b), int64(-maxUnread), int64(-maxUnread))
			return state, capped
		}},
		{key: s.k.user(to), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			name = p.HGet(ctx, s.k.user(to), "name") // a deleted account's marker has none
			return name, nil
		}},
	}, blocks...)
	if idem != "" {
		// A retry finds its first message past the cap (message_send.lua "again").
		reads = append(reads, op{key: s.k.conv(a, b), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			keyed = p.Exists(ctx, s.k.convIdem(a, b, idemDigest(from+"\x00"+idem)))
			return keyed, nil
		}})
	}
	if s.opts.WriteLimit >= 0 {
		// What the limits hold once this message is counted: read after their scripts, on their
		// slot, in the same pipeline.
		now := s.now().UnixMilli()
		msgFrom := "(" + strconv.FormatInt(now-s.opts.Messages.Window.Milliseconds(), 10)
		writeFrom := "(" + strconv.FormatInt(now-s.opts.WriteWindow.Milliseconds(), 10)
		reads = append(reads, op{key: s.k.msgRate(from), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			usedMsgs = p.ZCount(ctx, s.k.msgRate(from), msgFrom, "+inf")
			usedWrites = p.ZCount(ctx, s.k.userRate(from), writeFrom, "+inf")
			return usedMsgs, usedWrites
		}})
	}
	// The lease version of the conversation as a reply read it in an earlier round trip than
	// these checks': a change they miss raises it after (message_send.lua, "Lease"). An admin
	// under RequireEmail is granted none: a replica whose list of admins is behind a revocation
	// would skip the address's check and grant one that outlives its next read of the list.
	// A new account's request counts in its requests window; whether the message is one is read
	// beside the count (state), which is taken back when it is not (sendMode.release).
	guard := &writeGuard{messaging: true, member: member, count: "requests", once: onceMember("m:"+to, idem)}
	bv, sent := s.leases.state(from, to)
	if s.opts.RequireEmail && s.IsAdmin(UserKey(from)) {
		bv = "-"
	}
	if bv != "-" {
		// The conversation is noted where the ends of from's leases look, before the checks read
		// what they end at (lease_note.lua).
		now := s.now()
		guard.also = []scriptCall{{name: "lease_note", keys: []string{s.k.msgLeases(from)},
			args: []any{to, now.Add(SendLeaseTTL + leaseNoteSlack).UnixMilli(), maxLeaseNotes, (SendLeaseTTL + leaseNoteSlack).Milliseconds()}}}
	}
	// The write's own checks (limits, site bans, the filters' refresh, the repair note) with the
	// reads above, in one round trip.
	n, err := s.allowGuarded(ctx, from, repairConversation+":"+a+":"+b, reads, guard)
	var v []any
	if state != nil {
		v = state.Val()
	}
	// A conversation its recipient accepted stays accepted: the message is no request, whatever
	// refuses it, and leaves the window it was counted in.
	accepted := len(v) == 3 && v[0] == "1"
	mode := sendMode{bv: bv, sent: sent, budget: s.leaseBudget(0, 0)}
	if accepted && guard.recorded {
		release := s.releaseCall(from, guard)
		mode.release = &release
	}
	if err != nil {
		return n, mode, err
	}
	if name.Val() == "" {
		return n, mode, notFoundf("no user %s", userID(to))
	}
	if err := blockErr(); err != nil {
		return n, mode, err
	}
	// The conversation's script decides; this only says until when, which it cannot.
	if !accepted && len(v) == 3 {
		if d, _ := v[1].(string); d != "" {
			if until := atoi64(d); until > s.now().UnixMilli() {
				return n, mode, &Error{Kind: KindForbidden, Msg: fmt.Sprintf("%s declined your message requests; you can write to them again after %s",
					to, fromMillis(until).UTC().Format(time.RFC3339))}
			}
		}
	}
	if !accepted && guard.refused != nil {
		return n, mode, guard.refused
	}
	if len(v) == 3 && (keyed == nil || keyed.Val() == 0) && s.unreadCapped(capped, str(v[2])) {
		// Refused before the message's steps, which would move the conversation up in both lists.
		return n, mode, s.unreadCapReached()
	}
	if usedMsgs != nil {
		mode.budget = s.leaseBudget(usedMsgs.Val(), usedWrites.Val())
	}
	return n, mode, nil
}

// blockReads returns the reads of whether u blocks o and whether o blocks u, for the round trip
// of a write's checks, and the check of what they read: KindForbidden across a block either way.
func (s *Store) blockReads(ctx context.Context, u, o string) ([]op, func() error) {
	var blocking, blocked *rdb.FloatCmd
	reads := []op{
		{key: s.k.blocks(u), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			blocking = p.ZScore(ctx, s.k.blocks(u), o)
			return blocking, nil
		}},
		{key: s.k.blocks(o), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			blocked = p.ZScore(ctx, s.k.blocks(o), u)
			return blocked, nil
		}},
	}
	return reads, func() error {
		if blocking.Err() == nil {
			return &Error{Kind: KindForbidden, Msg: "you block this user: unblock them to write to them"}
		}
		if blocked.Err() == nil {
			return &Error{Kind: KindForbidden, Msg: "this user does not accept your messages"}
		}
		return nil
	}
}

// SendMessage sends a private message from one user to another and returns it. A message to one
// who has not accepted the conversation is a message request (see the rules above). With an
// idempotencyKey (1–64 characters), a retried request returns the first message; without one,
// a resent script call still sends one message.
//
// A message on a send lease (message_leases.go) is one round trip: the message, both mailboxes,
// its live events, its repair note and its settling, and the sender's limits, in one pipeline.
// Without one it costs two: the checks (limits, bans, blocks, the recipient), then the message
// with the rest, which grants the lease. A message whose time, by this process's clock, is not
// past the conversation's (its recipient read it, or it holds a message, at a later time by
// another replica's clock) is sent again with a later one (see sendOnce), so that a message sent
// after a mark of read is never counted read.
func (s *Store) SendMessage(ctx context.Context, sender, recipient UserKey, body, idempotencyKey string) (*Message, error) {
	from, to := string(sender), string(recipient)
	if !validUserName(to) {
		return nil, invalidf("malformed user %q", truncate(to, 40))
	}
	if from == to {
		return nil, invalidf("you cannot send a message to yourself")
	}
	if err := checkText("body", body, 1, MaxMessageBodyRunes); err != nil {
		return nil, err
	}
	if err := checkIdempotencyKey(idempotencyKey); err != nil {
		return nil, err
	}
	// member names this message in the sender's limits, on a lease and through the checks alike,
	// so that one sent again through them after its lease stopped holding counts once.
	member := randomHex(8)
	if _, stale := s.filterCall(); !stale && s.leases.take(from, to, s.now().UnixMilli()) {
		checked, err := s.checkMessageBody(body)
		if err != nil {
			return nil, err
		}
		m, err := s.send(ctx, nil, sender, recipient, checked, idempotencyKey, sendMode{use: true, member: member})
		if !errors.Is(err, errNoLease) {
			return m, err
		}
	}
	n, mode, err := s.sendGate(ctx, from, to, member, idempotencyKey)
	if err == nil {
		body, err = s.checkMessageBody(body)
	}
	if err != nil {
		// A message refused that the checks counted as a request and read was none leaves the
		// requests window here: no pipeline of its own takes it out (sendMode.release).
		if mode.release != nil {
			if rerr := s.runMany(ctx, []scriptCall{*mode.release}); rerr != nil {
				s.opts.Log.WarnContext(ctx, "messages: could not take a refused message out of the requests window", "from", from, "to", to, "err", rerr)
			}
		}
		return nil, err
	}
	return s.send(ctx, &n, sender, recipient, body, idempotencyKey, mode)
}

// maxUnread is MessageOptions.MaxUnread, 0 (no bound) with the limits off.
func (s *Store) maxUnread() int {
	if s.opts.WriteLimit < 0 {
		return 0
	}
	return s.opts.Messages.MaxUnread
}

// unreadCapped reports whether the conversation holds maxUnread messages after the recipient's
// read position seen ("" for none), from the message maxUnread places from its end (capped, nil
// when there is no bound): that message is after the position's ms, as message_send.lua counts.
func (s *Store) unreadCapped(capped *rdb.ZSliceCmd, seen string) bool {
	if capped == nil {
		return false
	}
	zs := capped.Val()
	if len(zs) == 0 {
		return false
	}
	if len(seen) < 13 {
		return true
	}
	ms, err := strconv.ParseInt(seen[:13], 10, 64)
	return err == nil && zs[0].Score > float64(ms)
}

// unreadCapReached is the refusal of a message past MessageOptions.MaxUnread.
func (s *Store) unreadCapReached() error {
	return &Error{Kind: KindLimitReached, Msg: fmt.Sprintf("the recipient has not read your last %d messages here: wait until they read", s.maxUnread())}
}

// errNoLease is send's answer when a message on a lease found none that holds: nothing was
// sent, and the message must pass the checks.
var errNoLease = errors.New("no send lease holds")

// send sends the message of SendMessage in mode, after the checks noted n (nil on a lease, whose
// pipeline notes its own), and sends it again later while the conversation refuses its time.
func (s *Store) send(ctx context.Context, n *note, sender, recipient UserKey, body, idempotencyKey string, mode sendMode) (*Message, error) {
	now := s.now()
	for range lateAttempts {
		m, floor, err := s.sendOnce(ctx, n, sender, recipient, body, idempotencyKey, now, mode)
		if err != nil || floor == "" {
			return m, err
		}
		// This process's clock is behind the conversation's (a read position or a message of
		// another replica's later time): the message is sent again after it, with a note of its
		// own (the last attempt settled the one it was given).
		n = nil
		now = later(s.now(), fromMillis(atoi64(floor[:13])+1))
	}
	return nil, busyf("the conversation kept moving past this message's time; nothing was sent")
}

// sendMode is how a message is sent: on a lease (use), or after its checks, granting one.
type sendMode struct {
	use    bool   // on the sender's lease: the checks of other slots were not made
	member string // with use, the message's member in the sender's limits
	bv     string // after the checks: the lease version read before them, "-" for none
	sent   string // after the checks: the sender's count of messages read with bv, "-" for none
	budget int64  // after the checks: how many messages the lease it grants allows
	// release, after the checks, takes the message back out of the sender's new-account
	// requests window, which counted it before the checks read that the recipient had accepted
	// the conversation: it rides in the message's pipeline, or, the message refused, in a round
	// trip of its own (SendMessage).
	release *scriptCall
}

// lateAttempts bounds the times SendMessage sends a message again with a later time because the
// conversation had moved past the one it gave (see message_send.lua).
const lateAttempts = 8

// later is the later of t and u.
func later(t, u time.Time) time.Time {
	if u.After(t) {
		return u
	}
	return t
}

// sendOnce sends the message of SendMessage, created at now, in mode: after its checks (n is
// their repair note) or on a lease (n is nil: the pipeline notes the conversation itself, and
// records the message in the sender's limits). When the conversation refuses it as late — its
// recipient has read, or it holds a message, at or past the id now gives (a replica whose clock
// runs behind) — it writes no message, derives the mailboxes again (they took the steps of one
// that does not exist), and returns the position the message must follow as floor. On a lease
// that no longer holds it does the same and returns errNoLease.
func (s *Store) sendOnce(ctx context.Context, n *note, sender, recipient UserKey, body, idempotencyKey string, now time.Time, mode sendMode) (m *Message, floor string, err error) {
	from, to := string(sender), string(recipient)
	ms := now.UnixMilli()
	id := s.newMessageID(now)
	// Without a client's key, a resent script call (go-redis repeats a command whose reply was
	// lost) finds its message by id: no key is kept.
	idem, ttl := idempotencyKey, int(idempotencyTTL.Seconds())
	if idem == "" {
		ttl = 0
	}
	a, b := pair(from, to)
	gid := messageID(a, b, id)
	var calls []scriptCall
	if n == nil {
		nn, c := s.noteCall(repairConversation + ":" + a + ":" + b)
		n, calls = &nn, append(calls, c)
	}
	first := len(calls) // the message, the mailboxes' steps, the events, and the settle
	// From this process's clock, not the message's time, which a conversation ahead of it
	// (another replica's clock) moved later (see send).
	until := s.now().Add(SendLeaseTTL).UnixMilli()
	lease := []any{"grant", mode.bv, until, mode.budget, mode.sent}
	if mode.use {
		lease = []any{"use", "", 0, 0, "-"}
	}
	maxUnread := s.maxUnread()
	calls = append(calls,
		scriptCall{name: "message_send", keys: []string{s.k.conv(a, b), s.k.convMsgs(a, b), s.k.convMsg(a, b, id), s.k.convLast(a, b),
			s.k.convIdem(a, b, idemDigest(from+"\x00"+idem))},
			args: append(append([]any{id, from, to, body, ms, ttl}, lease...), maxUnread)},
		s.mailboxCall(to, from, "in", id, ms),
		s.mailboxCall(from, to, "out", id, ms),
	)
	for _, uid := range []string{to, from} {
		pc, err := s.publishCall(message{s.k.chanMessages(uid), EventIDs{Message: gid}})
		if err != nil {
			return nil, "", err
		}
		calls = append(calls, pc)
	}
	if !mode.use {
		// A settle is refused when Redis is full (jobs_enqueue.lua), so a mailbox step refused
		// for OOM keeps the note that repairs it. A message on a lease leaves its note to run:
		// should the lease no longer hold, the mailboxes took its steps for nothing, and should
		// the process stop before it derives them again (resync), the repair does, RepairGrace
		// after the conversation's last such note (one repair a conversation's burst of messages).
		calls = append(calls, jobCall(s.jobs.SettleCall(jobRepair+":"+n.item, n.due)))
	}
	limits := len(calls)
	var ls []limit
	if mode.use && s.opts.WriteLimit >= 0 {
		// The message counts in the sender's limits, as the checks would have counted it.
		ls = []limit{{"writes", s.opts.WriteLimit, s.opts.WriteWindow}, {"messages", s.opts.Messages.PerWindow, s.opts.Messages.Window}}
		calls = append(calls, s.rateCall(s.k.userRate(from), ls[0], mode.member), s.rateCall(s.k.msgRate(from), ls[1], mode.member))
	}
	if mode.release != nil {
		calls = append(calls, *mode.release) // last: nothing below looks at its reply
	}
	// A note of this pipeline's own that Redis refused (its job shard full) is not looked at: a
	// step that fails too is derived again now (resync), which notes it again should that fail.
	out, errs, perr := s.runScriptsEach(ctx, calls)
	out, errs = out[first:], errs[first:]
	delivered := perr == nil && errs[0] == nil && errs[1] == nil && errs[2] == nil
	switch {
	case perr != nil || errs[0] != nil:
		// The message was refused (a decline that raced the checks), or the pipeline failed: the
		// mailboxes may have taken their steps for nothing, so derive them again now (noting the
		// repair again should that fail too: the settle may have gone through).
		s.resync(ctx, a, b)
		if errs[0] != nil {
			return nil, "", errs[0]
		}
		return nil, "", perr
	case errs[1] != nil || errs[2] != nil:
		// The message is written; a mailbox missed its step. The note stays: should the resync
		// fail too (Redis full), the repair derives the mailboxes once it can.
		s.opts.Log.WarnContext(ctx, "messages: a mailbox missed a step; derived again", "message", gid, "err", firstError(errs[1:3]))
		s.resync(ctx, a, b)
	case firstError(errs[3:5]) != nil:
		// Written, but not announced: as for every write, a failed publish is logged, not returned.
		s.opts.Log.ErrorContext(ctx, "live event: publish", "message", gid, "err", firstError(errs[3:5]))
	}
	// A failed settle only leaves a repair job that finds nothing to do.
	arr, err := replyArrayLen("message_send", out[0], 6)
	if err != nil {
		return nil, "", err
	}
	word, err := replyString("message_send", arr[0]) // "ok", "again", "full", "late" or "gate"
	if err != nil {
		return nil, "", err
	}
	bv, err := replyString("message_send", arr[3])
	if err != nil {
		return nil, "", err
	}
	var sent [2]int64 // the sender's and the recipient's messages here
	for i := range sent {
		if sent[i], err = replyInt("message_send", arr[4+i]); err != nil {
			return nil, "", err
		}
	}
	// seen keeps what the reply read for the next grants, in both directions.
	seen := func() {
		s.leases.setState(from, to, bv, sent[0])
		s.leases.setState(to, from, bv, sent[1])
	}
	switch word {
	case "gate":
		// No lease held (a block or a ban ended it, or it ran out or ended): the mailboxes took
		// this message's steps for nothing. The conversation's version, read now, lets the
		// checks that follow grant a lease again.
		s.leases.forget(from, to)
		seen()
		s.resync(ctx, a, b)
		return nil, "", errNoLease
	case "again", "full":
		// The mailboxes took this message's steps, but the script wrote no message: the
		// idempotency key names an earlier one ("again"), or the recipient has not read
		// MaxUnread of the sender's messages ("full"). The conversation took the same read
		// position and activity (message_send.lua), so that taking the unread copy back out of
		// the recipient's mailbox is enough — one step, whatever the number of unread messages,
		// as any client may retry at will; where the recipient's lists may have gained the
		// conversation (tidy ""), or that step fails, both mailboxes are derived again.
		tidy, err := replyString("message_send", arr[2])
		if err != nil {
			return nil, "", err
		}
		if tidy != "1" {
			s.resync(ctx, a, b)
		} else if read, err := s.takeBack(ctx, to, from, id); err != nil {
			s.opts.Log.WarnContext(ctx, "messages: could not take a message not written back out of a mailbox; derived again", "message", gid, "err", err)
			s.resync(ctx, a, b)
		} else if read {
			// A read of the recipient's between the steps and now took its position from the
			// unread copy, past the conversation's: a message sent next before it would not
			// count unread.
			s.resync(ctx, a, b)
		}
		if word == "full" {
			return nil, "", s.unreadCapReached()
		}
		// Answer with the first message.
		prior, err := replyString("message_send", arr[1])
		if err != nil {
			return nil, "", err
		}
		m, err := s.NewLoader().Message(ctx, sender, messageID(a, b, prior))
		if err != nil {
			return nil, "", err
		}
		if m == nil {
			return nil, "", notFoundf("the message this idempotency key sent is gone")
		}
		return m, "", nil
	case "late":
		floor, err := replyString("message_send", arr[1])
		if err != nil {
			return nil, "", err
		}
		if len(floor) < 13 || !isDigits(floor[:13]) {
			return nil, "", fmt.Errorf("message_send: malformed position %q", floor)
		}
		s.resync(ctx, a, b)
		return nil, floor, nil
	}
	if perr == nil && errs[0] == nil && errs[2] == nil && out[2] == mailboxGone {
		// The sender's mailbox was marked gone when the message's step reached it: the account
		// was deleted after the message's checks (or its lease's).
		return nil, "", s.sentAcrossDeletion(ctx, from, to, id)
	}
	if granted, err := replyString("message_send", arr[2]); err != nil {
		return nil, "", err
	} else if granted == "end" {
		// The last message the unread cap allows: no lease holds, and the next message meets the
		// checks, which refuse it before its mailbox steps (sendGate).
		s.leases.forget(from, to)
	} else if granted != "" && !mode.use {
		s.leases.put(from, to, atoi64(granted), mode.budget, ms)
	}
	if delivered {
		// The next messages' checks may grant a lease, from what this reply read.
		seen()
	}
	for i, l := range ls {
		if rateResult(out[limits-first+i], l) != nil {
			// Over a limit that other conversations' messages filled: this message is sent (the
			// lease allowed it), the lease goes, and the next message meets the checks.
			if err := s.dropLease(ctx, from, to); err != nil {
				s.opts.Log.WarnContext(ctx, "messages: could not end a send lease over the limit", "from", from, "to", to, "err", err)
			}
			break
		}
	}
	return &Message{ID: gid, Sender: sender, Recipient: recipient, Text: body, CreatedAt: fromMillis(ms)}, "", nil
}

// mailboxGone is the reply of the "out" step of a mailbox marked gone (mailbox.lua): its
// account was deleted.
const mailboxGone = int64(-3)

// sentAcrossDeletion treats the message id, just written from from to to, whose sender's mailbox
// step found the mailbox marked gone — the account was deleted between the message's checks (or
// its lease's) and its write — as the deletion's chain treats the others, and answers
// errDeletedMeanwhile. The chain walks the conversations the mailbox lists and may not find this
// one: a new contact's conversation, or a request the sender answered, never entered the list
// (the step wrote nothing), and a contact's the chain may have walked already. With eraseContent
// the message becomes a tombstone for the other side and leaves their unread messages (as
// eraseMessagesWith does); without, it stays, sent by a deleted user. A lease the message granted
// goes. Only this rare path reads the account: the message's own round trip read the deletion in
// the step, where the mailbox's list is (the mark is set before the chain walks it).
func (s *Store) sentAcrossDeletion(ctx context.Context, from, to, id string) error {
	s.leases.forget(from, to)
	h, err := s.cmd().HMGet(ctx, s.k.user(from), "deleted", "erase").Result()
	if err != nil {
		return fmt.Errorf("read the account of %s: %w", from, err)
	}
	a, b := pair(from, to)
	calls := []scriptCall{{name: "message_lease", keys: []string{s.k.conv(a, b)}, args: []any{"drop", from}}}
	if str(h[1]) == "1" {
		calls = append(calls, s.eraseMessageCalls(from, to, id)...)
	}
	if err := s.runMany(ctx, calls); err != nil {
		return fmt.Errorf("erase a message across its sender's deletion: %w", err)
	}
	return errDeletedMeanwhile
}

// firstError returns the first non-nil error of errs.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// takeBack takes the unread copy of message id, which the conversation did not write, back out
// of uid's mailbox of the conversation with other (mailbox.lua "remove" with X), and reports
// whether the mailbox's read position is that message's: a read or a decline that landed between
// the message's steps and this took it from the copy, and the mailbox must be derived again.
func (s *Store) takeBack(ctx context.Context, uid, other, id string) (bool, error) {
	out, err := s.runScripts(ctx, []scriptCall{s.mailboxCall(uid, other, "remove", id, "x")})
	if err != nil {
		return false, err
	}
	n, err := replyInt("mailbox", out[0])
	return n == -3, err
}

// resync derives both mailboxes of the conversation of a and b again, now, after a write whose
// steps disagreed; should that fail it queues the conversation's repair.
func (s *Store) resync(ctx context.Context, a, b string) {
	ctx = context.WithoutCancel(ctx)
	err := s.syncConversation(ctx, a, b)
	if err == nil {
		return
	}
	_, c := s.noteCall(repairConversation + ":" + a + ":" + b)
	if err := s.runMany(ctx, []scriptCall{c}); err != nil {
		s.opts.Log.WarnContext(ctx, "messages: could not queue the repair of a conversation", "a", a, "b", b, "err", err)
	}
}

// syncAttempts bounds the times syncConversation reads a conversation again because a step
// reached one of its mailboxes, or the conversation changed, while it derived them.
const syncAttempts = 8

// errSyncContended is the failure of a derivation whose mailboxes kept changing under it.
var errSyncContended = errors.New("its mailboxes kept changing")

// syncConversation derives the mailboxes of both participants of the conversation of a and b
// from it (mailbox.lua "sync"): the repair of a conversation, and of a write whose steps
// disagreed. A sync replaces what a mailbox holds of the conversation with what it read, so
// that a step that reaches the mailbox between the read and the sync (a message sent meanwhile)
// would be lost: each sync applies only while the mailbox's version of the conversation is the
// one read before the conversation, and the conversation's revision must not move under the
// derivation either; else it reads again.
func (s *Store) syncConversation(ctx context.Context, a, b string) error {
	if !validUserName(a) || !validUserName(b) {
		return fmt.Errorf("repair conversation %q %q: malformed", a, b)
	}
	for range syncAttempts {
		done, err := s.syncConversationOnce(ctx, a, b)
		if err != nil {
			return fmt.Errorf("repair conversation %s: %w", conversationID(a, b), err)
		}
		if done {
			return nil
		}
	}
	return fmt.Errorf("repair conversation %s: %w", conversationID(a, b), errSyncContended)
}

// syncConversationOnce is one attempt of syncConversation: false when a mailbox or the
// conversation changed while it read, and it wrote nothing that is not current.
func (s *Store) syncConversationOnce(ctx context.Context, a, b string) (bool, error) {
	l := s.NewLoader()
	// The mailboxes' versions of the conversation first, in a round trip of their own, so that
	// every step that reaches a mailbox after them either moves its version before the sync
	// (which then writes nothing) or comes after the sync, which it commutes with: a
	// conversation's write reaches the conversation before its mailboxes' steps, so the
	// conversation read next holds every write whose steps the versions count.
	convRev := s.k.revOf(s.k.conv(a, b))
	vers := l.getAll(ctx, hashFieldRead(s.k.mailbox(a).ver, b), hashFieldRead(s.k.mailbox(b).ver, a))
	if err := waitAll(ctx, vers); err != nil {
		return false, err
	}
	version := map[string]string{a: vers[0].cmd.(*rdb.StringCmd).Val(), b: vers[1].cmd.(*rdb.StringCmd).Val()}
	first := l.getAll(ctx, hashAllRead(s.k.conv(a, b)), hashFieldRead(s.k.user(a), "deleted"), hashFieldRead(s.k.user(b), "deleted"),
		stringRead(convRev))
	if err := waitAll(ctx, first); err != nil {
		return false, err
	}
	conv := first[0].cmd.(*rdb.MapStringStringCmd).Val()
	deleted := map[string]bool{a: first[1].cmd.(*rdb.StringCmd).Val() == "1", b: first[2].cmd.(*rdb.StringCmd).Val() == "1"}
	readRev := first[3].cmd.(*rdb.StringCmd).Val()
	// The messages after the earlier of the two read positions: a position's first 13 digits
	// are the ms of the last message read, so every message after it is scored at or after them.
	since := min(conv["r:"+a], conv["r:"+b])
	minScore := "-inf"
	if len(since) >= 13 {
		minScore = strings.TrimLeft(since[:13], "0")
		if minScore == "" {
			minScore = "0"
		}
	}
	c, err := l.get(ctx, read{key: "zs:" + s.k.convMsgs(a, b), rkey: s.k.convMsgs(a, b),
		fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
			c.cmd = p.ZRangeByScoreWithScores(ctx, s.k.convMsgs(a, b), &rdb.ZRangeBy{Min: minScore, Max: "+inf"})
		}})
	if err != nil {
		return false, err
	}
	zs := c.cmd.(*rdb.ZSliceCmd).Val()
	reads := make([]read, len(zs))
	for i, z := range zs {
		id, _ := z.Member.(string)
		reads[i] = hashFieldsRead(s.k.convMsg(a, b, id), boxed([]string{"f", "d"}))
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return false, err
	}
	at := numField(conv, "at")
	var steps []scriptCall
	for _, u := range []string{a, b} {
		o := b
		if u == b {
			o = a
		}
		if deleted[u] {
			continue // a deleted account keeps no mailbox
		}
		if len(conv) == 0 && version[u] == "" {
			continue // no conversation, and the mailbox never held one: nothing to derive
		}
		r := conv["r:"+u]
		list := "-"
		switch {
		case conv["a:"+u] == "1":
			list = "c"
		case conv["q:"+u] == "1":
			list = "r"
		}
		args := []any{conv["a:"+u], numField(conv, "d:"+u), r, list, at, version[u]}
		if list != "-" {
			for i, z := range zs {
				f := fields(calls[i])
				if id, _ := z.Member.(string); f[0] == o && f[1] != "1" && id > r {
					args = append(args, id)
				}
			}
		}
		steps = append(steps, s.mailboxCall(u, o, "sync", args...))
	}
	// The conversation's revision again, with the syncs: a write to the conversation since it
	// was read, whose steps a cluster ran on the mailboxes before their versions were read,
	// makes the derivation read again.
	var after *rdb.StringCmd
	out, err := s.runScripts(ctx, steps, op{key: convRev, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		after = p.Get(ctx, convRev)
		return after, nil
	}})
	if err != nil {
		return false, err
	}
	for _, v := range out {
		if n, err := replyInt("mailbox", v); err != nil {
			return false, err
		} else if n == -2 {
			return false, nil
		}
	}
	if v, err := after.Result(); (err != nil && !errors.Is(err, rdb.Nil)) || v != readRev {
		return false, nil
	}
	return true, nil
}

// numField reads an integer field of a hash read with hashAll; 0 when absent.
func numField(h map[string]string, field string) int64 {
	n, _ := strconv.ParseInt(h[field], 10, 64)
	return n
}

// hashAllRead reads a whole hash (HGETALL).
func hashAllRead(key string) read {
	return read{key: "ha:" + key, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.HGetAll(ctx, key)
	}}
}

// changeMessage edits or deletes a message of user's (message_change.lua) and returns it as it
// is now, with the steps of the other side in the same pipeline.
func (s *Store) changeMessage(ctx context.Context, user UserKey, gid, step, body string, extra func(a, b, id string, o UserKey) []scriptCall) (*Message, error) {
	a, b, id, err := ParseMessageID(gid)
	if err != nil {
		return nil, err
	}
	o := other(user, a, b)
	if o == "" {
		return nil, notFoundf("no message %s", truncate(gid, 80))
	}
	calls := append([]scriptCall{{name: "message_change",
		keys: []string{s.k.convMsg(string(a), string(b), id), s.k.convLast(string(a), string(b)), s.k.conv(string(a), string(b))},
		args: []any{step, id, string(user), body, s.now().UnixMilli(), string(o)}}}, extra(string(a), string(b), id, o)...)
	out, err := s.runScripts(ctx, calls)
	if err != nil {
		return nil, err
	}
	h, err := replyHash("message_change", out[0])
	if err != nil {
		return nil, err
	}
	m := messageFromHash(string(a), string(b), id, h)
	if m == nil {
		return nil, fmt.Errorf("message_change: message %s missing from reply", gid)
	}
	return m, nil
}

// EditMessage replaces the body of a message the user sent and returns it; another's message is
// KindForbidden, a deleted one KindNotFound. A block either way refuses it (KindForbidden), as
// it refuses sending: an edit writes to the other user as much as a message does. So does the
// recipient's decline of the request that held the message (KindForbidden, until they accept the
// conversation): a declined request is gone for them, and an edit would show it again in the
// conversation they can still open. Deleting such a message stays open (DeleteMessage).
func (s *Store) EditMessage(ctx context.Context, user UserKey, gid, body string) (*Message, error) {
	if err := checkText("body", body, 1, MaxMessageBodyRunes); err != nil {
		return nil, err
	}
	a, b, _, err := ParseMessageID(gid)
	if err != nil {
		return nil, err
	}
	o := other(user, a, b)
	if o == "" {
		return nil, notFoundf("no message %s", truncate(gid, 80))
	}
	blocks, blockErr := s.blockReads(ctx, string(user), string(o))
	if _, err := s.allowWriteWith(ctx, string(user), "", blocks); err != nil {
		return nil, err
	}
	if err := blockErr(); err != nil {
		return nil, err
	}
	body, err = s.checkMessageBody(body)
	if err != nil {
		return nil, err
	}
	return s.changeMessage(ctx, user, gid, "edit", body, func(a, b, id string, o UserKey) []scriptCall { return nil })
}

// DeleteMessage deletes a message the user sent: it stays in the conversation for both as a
// tombstone, and is no longer unread. Deleting it again succeeds; another's message is
// KindForbidden.
func (s *Store) DeleteMessage(ctx context.Context, user UserKey, gid string) error {
	a, b, _, err := ParseMessageID(gid)
	if err != nil {
		return err
	}
	if other(user, a, b) == "" {
		// Checked before the note, which changeMessage would not settle: a repair of a
		// conversation the user is not in would write the mailboxes of names they made up.
		return notFoundf("no message %s", truncate(gid, 80))
	}
	// The note repairs the recipient's mailbox should its step be cut off: settled in its
	// pipeline, which a full Redis refuses with the step.
	n, err := s.allowWrite(ctx, string(user), repairConversation+":"+string(a)+":"+string(b), banFree)
	if err != nil {
		return err
	}
	// The recipient's step removes "<sender>:<id>" from their unread sets: when user is not the
	// sender, no such member exists (ids are unique) and the step changes nothing.
	_, err = s.changeMessage(ctx, user, gid, "delete", "", func(a, b, id string, o UserKey) []scriptCall {
		return []scriptCall{s.mailboxCall(string(o), string(user), "remove", id),
			jobCall(s.jobs.SettleCall(jobRepair+":"+n.item, n.due))}
	})
	return err
}

// MarkConversationRead marks the viewer's conversation with another user read and returns it;
// KindNotFound when there is no such conversation. upTo, when not "", is the global id of the
// newest message of the conversation the viewer has seen: the conversation is read up to it, and
// a message sent after it stays unread whatever the clocks say (KindInvalid for a message of
// another conversation). Without it the conversation is read up to now, or up to its last
// message when that is later: every message whose id's time is this server's millisecond or
// earlier, so that a message sent in the same millisecond, or by a server whose clock is behind
// this one's, counts as read, and every message the conversation holds, so that one sent by a
// server whose clock is ahead does not stay unread until this clock passes it. No position goes
// past the later of the two, upTo included: a made-up id cannot mark read messages not sent yet.
// A read position only moves forward: an upTo older than the viewer's position changes nothing. It is not rate limited: it is
// idempotent and changes nothing but the viewer's read state, and marking read a conversation
// that does not exist writes nothing (neither step does), so that no name a client makes up
// leaves a key or a mailbox entry behind; nor does an account deleted since the request was
// authenticated (KindUnauthenticated, as every write of one). Its one round trip notes the
// conversation for repair, takes both steps and settles the note (a settle that a full Redis
// refuses, as it refuses the mailbox's step: that step cut off is repaired). Should the
// conversation read further than the mailbox (a message whose step is on its way to the mailbox),
// it derives the mailbox again, in a few more round trips that steady traffic never takes.
func (s *Store) MarkConversationRead(ctx context.Context, viewer, with UserKey, upTo string) (*Conversation, error) {
	v, o := string(viewer), string(with)
	if err := checkPeer(v, o); err != nil {
		return nil, err
	}
	a, b := pair(v, o)
	now, seen := readNow(s.now()), ""
	if upTo != "" {
		x, y, id, err := ParseMessageID(upTo)
		if err != nil {
			return nil, err
		}
		if string(x) != a || string(y) != b {
			return nil, invalidf("upTo %s is not a message of your conversation with %s", truncate(upTo, 80), userID(o))
		}
		// The scripts read no further than the conversation's last message, or now when that is
		// later: a position past both would mark read messages not sent yet.
		seen = id
	}
	cr := s.convReads(ctx, v, o)
	n, note := s.noteCall(repairConversation + ":" + a + ":" + b)
	out, err := s.runScripts(ctx, []scriptCall{
		note,
		{name: "message_state", keys: []string{s.k.conv(a, b), s.k.convMsgs(a, b)}, args: []any{"read", v, now, seen}},
		s.mailboxCall(v, o, "read", now, seen),
		jobCall(s.jobs.SettleCall(jobRepair+":"+n.item, n.due)),
	}, cr.ops...)
	if err != nil {
		return nil, err
	}
	st, err := replyArrayLen("message_state", out[1], 2)
	if err != nil {
		return nil, err
	}
	found, err := replyInt("message_state", st[0])
	if err != nil {
		return nil, err
	}
	if found == 0 {
		return nil, notFoundf("no conversation with %s", userID(o))
	}
	convPos, err := replyString("message_state", st[1])
	if err != nil {
		return nil, err
	}
	// The mailbox's reply: a step it refused (a full Redis) leaves the note, which repairs it.
	var known int64
	var mbPos string
	mb, mbErr := replyArrayLen("mailbox", out[2], 2)
	if mbErr == nil {
		known, mbErr = replyInt("mailbox", mb[0])
	}
	if mbErr == nil {
		mbPos, mbErr = replyString("mailbox", mb[1])
	}
	if mbErr == nil && known >= 0 && convPos > mbPos {
		// The conversation read further than the mailbox: it holds a message whose step has not
		// reached the mailbox yet (sent by a replica whose clock is ahead, on another master of a
		// cluster), which would count unread there once it came. Derive the mailbox again from the
		// conversation, read position included, so that the step finds it read.
		s.resync(ctx, a, b)
		return s.NewLoader().ConversationWith(ctx, viewer, with)
	}
	if mbErr == nil && known < 0 {
		// The mailbox knew no conversation with o and wrote nothing: the step of the
		// conversation's first message has not reached it yet, or the viewer's account was
		// deleted (its mailbox dropped) since the request was authenticated. Derive it again,
		// read position included, from the conversation (which leaves a deleted account's
		// mailbox alone), and refuse a deleted account as every write does.
		s.resync(ctx, a, b)
		l := s.NewLoader()
		c, err := l.get(ctx, hashFieldRead(s.k.user(v), "deleted"))
		if err != nil {
			return nil, err
		}
		if c.cmd.(*rdb.StringCmd).Val() == "1" {
			return nil, &Error{Kind: KindUnauthenticated, Msg: "this account was deleted"}
		}
		return l.ConversationWith(ctx, viewer, with)
	}
	return cr.conversation(), nil
}

// checkPeer checks that o names a user other than the viewer v.
func checkPeer(v, o string) error {
	if !validUserName(v) || !validUserName(o) {
		return invalidf("malformed user %q", truncate(o, 40))
	}
	if v == o {
		return invalidf("a conversation is with another user")
	}
	return nil
}

// AcceptMessageRequest accepts the message request of another user: the conversation moves to
// the viewer's conversations and its unread messages count. Accepting an accepted conversation
// returns it; no request from the user is KindNotFound.
func (s *Store) AcceptMessageRequest(ctx context.Context, viewer, with UserKey) (*Conversation, error) {
	return s.answerRequest(ctx, viewer, with, "accept")
}

// DeclineMessageRequest declines the message request of another user: it leaves the viewer's
// requests, what it holds counts as read, and the user's further requests are refused for
// MessageOptions.RequestCooldown (their messages already sent stay in the conversation). An
// accepted conversation cannot be declined (KindInvalid: block the user instead); no request is
// KindNotFound. It returns the conversation's global id.
func (s *Store) DeclineMessageRequest(ctx context.Context, viewer, with UserKey) (string, error) {
	c, err := s.answerRequest(ctx, viewer, with, "decline")
	if err != nil {
		return "", err
	}
	return c.ID, nil
}

// answerRequest accepts or declines a request: the checks, with the request's presence in the
// viewer's mailbox, in one round trip; the conversation's step and the mailbox's in the next.
func (s *Store) answerRequest(ctx context.Context, viewer, with UserKey, step string) (*Conversation, error) {
	v, o := string(viewer), string(with)
	if err := checkPeer(v, o); err != nil {
		return nil, err
	}
	mb := s.k.mailbox(v)
	var pending *rdb.FloatCmd
	var accepted *rdb.StringCmd
	a, b := pair(v, o)
	// The note repairs the mailbox should its step be cut off: settled with it (see SendMessage).
	n, err := s.allowWriteWith(ctx, v, repairConversation+":"+a+":"+b, []op{{key: mb.reqs, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		pending = p.ZScore(ctx, mb.reqs, o)
		accepted = p.HGet(ctx, mb.state, o) // "<a> <d> <r>" (see mailbox.lua)
		return pending, accepted
	}}}, banFree)
	if err != nil {
		return nil, err
	}
	isAccepted := strings.HasPrefix(accepted.Val(), "1 ")
	switch {
	case isAccepted && step == "decline":
		return nil, invalidf("the conversation is accepted: block the user instead")
	case !isAccepted && errors.Is(pending.Err(), rdb.Nil):
		return nil, notFoundf("no message request from %s", userID(o))
	}
	now := s.now()
	until := now.Add(s.opts.Messages.RequestCooldown).UnixMilli()
	cr := s.convReads(ctx, v, o)
	_, err = s.runScripts(ctx, []scriptCall{
		{name: "message_state", keys: []string{s.k.conv(a, b), s.k.convMsgs(a, b)}, args: []any{step, v, readNow(now), until}},
		s.mailboxCall(v, o, step, readNow(now), until),
		jobCall(s.jobs.SettleCall(jobRepair+":"+n.item, n.due)),
	}, cr.ops...)
	if err != nil {
		// The mailbox took a step that the conversation refused (the request changed since the
		// check): derive it again.
		s.resync(ctx, a, b)
		return nil, err
	}
	return cr.conversation(), nil
}

// convReads are the reads of a viewer's conversation with o, sent as plain commands after a
// write in its pipeline: the conversation's state and last message, and the viewer's unread
// messages in it.
type convRead struct {
	v, o            string
	state           *rdb.SliceCmd
	last            *rdb.StringSliceCmd
	unread, runread *rdb.IntCmd
	ops             []op
}

func (s *Store) convReads(ctx context.Context, v, o string) *convRead {
	a, b := pair(v, o)
	mb := s.k.mailbox(v)
	cr := &convRead{v: v, o: o}
	lo, hi := "["+o+":", "("+o+";"
	cr.ops = []op{
		{key: s.k.conv(a, b), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cr.state = p.HMGet(ctx, s.k.conv(a, b), "at", "q:"+v)
			cr.last = hmget(ctx, p, s.k.convLast(a, b), lastFieldArgs)
			return cr.state, cr.last
		}},
		{key: mb.unread, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cr.unread = p.ZLexCount(ctx, mb.unread, lo, hi)
			cr.runread = p.ZLexCount(ctx, mb.runread, lo, hi)
			return cr.unread, cr.runread
		}},
	}
	return cr
}

// conversation builds the conversation the reads found.
func (cr *convRead) conversation() *Conversation {
	vals := cr.state.Val()
	str := func(i int) string {
		if i < len(vals) {
			s, _ := vals[i].(string)
			return s
		}
		return ""
	}
	at, _ := strconv.ParseInt(str(0), 10, 64)
	return buildConversation(cr.v, cr.o, at, str(1) == "1", cr.last.Val(), int(cr.unread.Val()+cr.runread.Val()))
}

// lastFieldArgs are the fields of the copy of a conversation's last message a read asks for:
// its id, then messageFields.
var lastFieldArgs = boxed(append([]string{"id"}, messageFields...))

// buildConversation makes the conversation of viewer v with o.
func buildConversation(v, o string, at int64, request bool, last []string, unread int) *Conversation {
	a, b := pair(v, o)
	c := &Conversation{ID: conversationID(a, b), Viewer: UserKey(v), With: UserKey(o), UpdatedAt: fromMillis(at),
		UnreadCount: unread, IsRequest: request}
	if id := last[0]; validMessageID(id) {
		c.LastMessage = messageFromFields(a, b, id, last[1:])
	}
	return c
}

// Reads.

// UnreadMessageCount returns how many messages of the viewer's accepted conversations are
// unread: requests do not count until accepted.
func (l *Loader) UnreadMessageCount(ctx context.Context, viewer UserKey) (int, error) {
	if !validUserName(string(viewer)) {
		return 0, invalidf("malformed user %q", truncate(string(viewer), 40))
	}
	return l.zcard(ctx, l.s.k.mailbox(string(viewer)).unread)
}

// Cursor tags of the lists of messages.
const (
	convsTag = "cv"
	reqsTag  = "rq"
	msgsTag  = "ms"
)

// Conversations loads a page of the viewer's conversations, newest activity first: each with the
// other user, the last message and the viewer's unread count. A first page costs two round trips
// whatever the number of conversations: the page, then every conversation with its user.
func (l *Loader) Conversations(ctx context.Context, viewer UserKey, w Window) (*Page[*Conversation], error) {
	return l.conversationList(ctx, viewer, w, l.s.k.mailbox(string(viewer)).convs, convsTag)
}

// MessageRequests loads a page of the message requests pending to the viewer, newest first,
// without those of users the viewer blocks (the filter of every listing: see WithoutBlocked).
// Its total counts the requests the viewer can page, those of blocked users left out: the list
// holds a request per user, so the blocked users among its members (ZMSCORE, read with the page,
// in the same round trip) are exactly the requests the filter hides.
func (l *Loader) MessageRequests(ctx context.Context, viewer UserKey, w Window) (*Page[*Conversation], error) {
	key := l.s.k.mailbox(string(viewer)).reqs
	b := l.viewerBlocks()
	var hidden *call
	var also []read
	if b.Len() > 0 && !w.NoTotal {
		also = append(also, blockedMembersRead(key, b))
	}
	p, err := l.conversationList(ctx, viewer, w, key, reqsTag, also...)
	if err != nil {
		return nil, err
	}
	if b.Len() > 0 {
		if len(also) > 0 {
			if hidden, err = l.get(ctx, also[0]); err != nil { // done: it came with the page
				return nil, err
			}
			for _, score := range hidden.cmd.(*rdb.FloatSliceCmd).Val() {
				if score != 0 { // a member's score is its last activity (ms); a missing one reads 0
					p.Total--
				}
			}
			p.Total = max(p.Total, 0)
		}
		p = p.Without(func(c *Conversation) bool { return b.Has(c.With) })
	}
	return p, nil
}

// blockedMembersRead reads the scores in the zset key, whose members are user keys, of the users
// b blocks (ZMSCORE, in the order of their names): 0 for one that is not a member.
func blockedMembersRead(key string, b *Blocks) read {
	users := make([]string, 0, b.Len())
	for u := range b.users {
		users = append(users, string(u))
	}
	slices.Sort(users)
	return read{key: "zm:" + key + "\x00" + strings.Join(users, ","), rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.ZMScore(ctx, key, users...)
	}}
}

// conversationList loads a page of the list of conversations key of the viewer's; the reads also
// go in the page's round trip.
func (l *Loader) conversationList(ctx context.Context, viewer UserKey, w Window, key, tag string, also ...read) (*Page[*Conversation], error) {
	v := string(viewer)
	if !validUserName(v) {
		return nil, invalidf("malformed user %q", truncate(v, 40))
	}
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	calls := l.getAll(ctx, append([]read{l.pageRead(key, true, sp)}, also...)...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	rp, err := pageOf(calls[0], sp)
	if err != nil {
		return nil, err
	}
	cs, err := l.conversations(ctx, v, rp.members)
	if err != nil {
		return nil, err
	}
	return keptItems(rp, tag, cs), nil // nil: no longer there
}

// conversationRead reads, on the conversation's slot, what a conversation shows of it: its
// activity and the request flag of v (HMGET), and its last message (HGETALL).
func (l *Loader) conversationRead(v, o string) read {
	a, b := pair(v, o)
	key := l.s.k.conv(a, b)
	return read{key: "cv:" + key + "\x00" + v, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.HMGet(ctx, key, "at", "q:"+v)
		c.cmd2 = hmget(ctx, p, l.s.k.convLast(a, b), lastFieldArgs)
	}}
}

// unreadRead reads, on v's mailbox, how many of o's messages v has not read.
func (l *Loader) unreadRead(v, o string) read {
	mb := l.s.k.mailbox(v)
	lo, hi := "["+o+":", "("+o+";"
	return read{key: "ur:" + mb.unread + "\x00" + o, rkey: mb.unread, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.ZLexCount(ctx, mb.unread, lo, hi)
		c.cmd2 = p.ZLexCount(ctx, mb.runread, lo, hi)
	}}
}

// conversations loads v's conversations with others, and the users in them, in one round trip; a conversation that has no state (the mailbox lists it before its first message is
// written, or after it is gone) is nil at its index.
func (l *Loader) conversations(ctx context.Context, v string, others []string) ([]*Conversation, error) {
	reads := make([]read, 0, 3*len(others)+1)
	for _, o := range others {
		reads = append(reads, l.conversationRead(v, o), l.unreadRead(v, o), l.userRead(o))
	}
	if len(others) > 0 {
		reads = append(reads, l.userRead(v)) // the sender of last messages the viewer sent
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	out := make([]*Conversation, len(others))
	for i, o := range others {
		cv, ur := calls[3*i], calls[3*i+1]
		vals := cv.cmd.(*rdb.SliceCmd).Val()
		atS, _ := vals[0].(string)
		reqS, _ := vals[1].(string)
		at, err := strconv.ParseInt(atS, 10, 64)
		if err != nil {
			continue
		}
		unread := ur.cmd.(*rdb.IntCmd).Val() + ur.cmd2.(*rdb.IntCmd).Val()
		out[i] = buildConversation(v, o, at, reqS == "1", cv.cmd2.(*rdb.StringSliceCmd).Val(), int(unread))
	}
	return out, nil
}

// Conversation loads a conversation of the viewer's by global id; nil when the viewer is not in
// it (an anonymous viewer is in none) or it has no message.
func (l *Loader) Conversation(ctx context.Context, viewer UserKey, gid string) (*Conversation, error) {
	a, b, err := ParseConversationID(gid)
	if err != nil {
		return nil, err
	}
	o := other(viewer, a, b)
	if viewer == "" || o == "" {
		return nil, nil
	}
	cs, err := l.conversations(ctx, string(viewer), []string{string(o)})
	if err != nil {
		return nil, err
	}
	return cs[0], nil
}

// ConversationWith loads the viewer's conversation with another user; nil when they have none.
func (l *Loader) ConversationWith(ctx context.Context, viewer, with UserKey) (*Conversation, error) {
	if err := checkPeer(string(viewer), string(with)); err != nil {
		return nil, err
	}
	return l.Conversation(ctx, viewer, conversationID(string(viewer), string(with)))
}

// messageRead reads the hash of message id of the conversation of a and b.
func (l *Loader) messageRead(a, b, id string) read {
	return hashFieldsRead(l.s.k.convMsg(a, b, id), messageFieldArgs)
}

// messageOf builds a message from its done read; nil when it has none.
func messageOf(c *call, a, b, id string) *Message { return messageFromFields(a, b, id, fields(c)) }

// messageFieldArgs are messageFields boxed for a read (see hashFieldsRead).
var messageFieldArgs = boxed(messageFields)

// Messages loads a page of the viewer's conversation with another user, in both directions, in
// the order they were sent (oldest first: first pages from the start, last from the newest).
// The cursors stay valid while messages are added and deleted (a deleted message stays as a
// tombstone). A viewer with no conversation with the user gets an empty page. The page costs
// two round trips, and the two users are read in the second.
func (l *Loader) Messages(ctx context.Context, viewer, with UserKey, w Window) (*Page[*Message], error) {
	v, o := string(viewer), string(with)
	if err := checkPeer(v, o); err != nil {
		return nil, err
	}
	sp, err := w.decode(msgsTag)
	if err != nil {
		return nil, err
	}
	a, b := pair(v, o)
	rp, err := l.page(ctx, l.s.k.convMsgs(a, b), false, sp)
	if err != nil {
		return nil, err
	}
	reads := make([]read, 0, len(rp.members)+2)
	for _, id := range rp.members {
		reads = append(reads, l.messageRead(a, b, id))
	}
	if len(rp.members) > 0 {
		reads = append(reads, l.userRead(a), l.userRead(b))
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	return pageItems(rp, msgsTag, calls[:len(rp.members)], func(c *call, id string) *Message { return messageOf(c, a, b, id) }), nil
}

// Message loads a message by global id; nil when the viewer is not in its conversation (an
// anonymous viewer is in none) or there is no such message.
func (l *Loader) Message(ctx context.Context, viewer UserKey, gid string) (*Message, error) {
	a, b, id, err := ParseMessageID(gid)
	if err != nil {
		return nil, err
	}
	if viewer == "" || other(viewer, a, b) == "" {
		return nil, nil
	}
	c, err := l.get(ctx, l.messageRead(string(a), string(b), id))
	if err != nil {
		return nil, err
	}
	return messageOf(c, string(a), string(b), id), nil
}

// eraseBatchMessages bounds the messages one pipeline of an account's erasure reads or writes.
const eraseBatchMessages = 200

// eraseMessagesWith is the deletion of uid's account in its conversation with o: with erase,
// every message uid sent becomes a tombstone for both, and leaves o's unread messages; without,
// the messages stay, shown as sent by a deleted user. The conversation stays for o either way.
func (s *Store) eraseMessagesWith(ctx context.Context, uid, o string, erase bool) error {
	if !erase || !validUserName(o) {
		return nil
	}
	a, b := pair(uid, o)
	l := s.NewLoader()
	c, err := l.get(ctx, read{key: "zr:" + s.k.convMsgs(a, b), rkey: s.k.convMsgs(a, b),
		fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
			c.cmd = p.ZRange(ctx, s.k.convMsgs(a, b), 0, -1)
		}})
	if err != nil {
		return err
	}
	ids := c.cmd.(*rdb.StringSliceCmd).Val()
	for start := 0; start < len(ids); start += eraseBatchMessages {
		batch := ids[start:min(start+eraseBatchMessages, len(ids))]
		reads := make([]read, len(batch))
		for i, id := range batch {
			reads[i] = hashFieldsRead(s.k.convMsg(a, b, id), boxed([]string{"f", "d"}))
		}
		calls := l.getAll(ctx, reads...)
		if err := waitAll(ctx, calls); err != nil {
			return err
		}
		var writes []scriptCall
		for i, id := range batch {
			if f := fields(calls[i]); f[0] == uid && f[1] != "1" {
				writes = append(writes, s.eraseMessageCalls(uid, o, id)...)
			}
		}
		if err := s.runMany(ctx, writes); err != nil {
			return err
		}
	}
	return nil
}

// eraseMessageCalls are the calls that make message id, sent by uid to o, a tombstone, and take
// it out of o's unread messages: a deletion's erasure of it.
func (s *Store) eraseMessageCalls(uid, o, id string) []scriptCall {
	a, b := pair(uid, o)
	return []scriptCall{{name: "message_change",
		keys: []string{s.k.convMsg(a, b, id), s.k.convLast(a, b), s.k.conv(a, b)}, args: []any{"delete", id, uid, "", s.now().UnixMilli(), o}},
		s.mailboxCall(o, uid, "remove", id)}
}

// exportMessage is a private message of an export: the messages of the account's conversations
// and pending requests, both directions, a conversation at a time, oldest first.
type exportMessage struct {
	ID           string     `json:"id"`
	Conversation string     `json:"conversationId"`
	Sender       string     `json:"senderId"`
	Recipient    string     `json:"recipientId"`
	Body         *string    `json:"body"` // null once deleted
	Deleted      bool       `json:"deleted"`
	CreatedAt    time.Time  `json:"createdAt"`
	EditedAt     *time.Time `json:"editedAt"`
}

// messages writes the messages of the account's conversations, then of its pending requests,
// then of the requests it declined: those leave both lists, but their messages stay in the
// conversation, which the account still reads.
//
// Each conversation once, also one that moves while the export runs: an accepted request leaves
// the requests for the conversations (which may have been read already), a declined one leaves
// the requests after they were read, a conversation with new activity moves to the end of its
// list. So the export remembers whom it wrote the conversations with (a name each) and skips them
// when they come again; and the last walk, of the mailbox's state, which holds an entry for every
// conversation that was ever accepted, declined or read (every move between the lists writes it),
// writes every conversation not written yet — the declined ones, and those that moved behind the
// walks of the lists.
func (e *exporter) messages(ctx context.Context) error {
	mb := e.s.k.mailbox(e.uid)
	written := make(map[string]bool)
	for _, list := range []string{mb.convs, mb.reqs} {
		err := e.zpages(ctx, list, func(ctx context.Context, zs []rdb.Z) error {
			for _, z := range zs {
				o := str(z.Member)
				if written[o] {
					continue
				}
				written[o] = true
				if err := e.conversation(ctx, o); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return e.unlistedConversations(ctx, written)
}

// unlistedConversations writes the messages of the account's conversations that the walks of its
// lists did not write (written): those of the requests it declined, which are in neither list,
// and those that moved between the lists behind the walks. The mailbox keeps a state for each of
// them (mailbox.lua), read with HSCAN, a page at a time.
func (e *exporter) unlistedConversations(ctx context.Context, written map[string]bool) error {
	mb := e.s.k.mailbox(e.uid)
	var cursor uint64
	for {
		var scan *rdb.ScanCmd
		err := e.s.pipeline(ctx, []op{{key: mb.state, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			scan = p.HScan(ctx, mb.state, cursor, "", ExportPage)
			return scan, nil
		}}}, false)
		if err == nil {
			err = scan.Err()
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", mb.state, err)
		}
		kv, next := scan.Val()
		for i := 0; i+1 < len(kv); i += 2 {
			if o := kv[i]; validUserName(o) && !written[o] { // HSCAN may return a field twice
				written[o] = true
				if err := e.conversation(ctx, o); err != nil {
					return err
				}
			}
		}
		if err := e.flush(); err != nil {
			return err
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// conversation writes the messages of the account's conversation with o.
func (e *exporter) conversation(ctx context.Context, o string) error {
	a, b := pair(e.uid, o)
	return e.zpages(ctx, e.s.k.convMsgs(a, b), func(ctx context.Context, zs []rdb.Z) error {
		l := e.s.NewLoader()
		reads := make([]read, len(zs))
		for i, z := range zs {
			reads[i] = l.messageRead(a, b, str(z.Member))
		}
		calls := l.getAll(ctx, reads...)
		if err := waitAll(ctx, calls); err != nil {
			return fmt.Errorf("read the messages with %s: %w", o, err)
		}
		for i, z := range zs {
			m := messageOf(calls[i], a, b, str(z.Member))
			if m == nil {
				continue
			}
			e.item(exportMessage{ID: m.ID, Conversation: conversationID(a, b), Sender: m.Sender.ID(),
				Recipient: m.Recipient.ID(), Body: m.Body(), Deleted: m.Deleted, CreatedAt: m.CreatedAt, EditedAt: m.EditedAt})
		}
		return e.err
	})
}

// rebuildMailboxes derives the mailboxes of the participants of every conversation again (for
// `agora rebuild`), and returns how many conversations it found. The conversations' hashes are
// the keys "<prefix>{m:<a>:<b>}" exactly; a conversation's other keys carry a suffix.
func (s *Store) rebuildMailboxes(ctx context.Context) (int, error) {
	n := 0
	err := s.scanKeys(ctx, s.k.prefix+"{m:*}", func(key string) error {
		rest, ok := strings.CutPrefix(key, s.k.prefix+"{m:")
		if !ok || !strings.HasSuffix(rest, "}") {
			return nil
		}
		a, b, ok := splitConversationKey(strings.TrimSuffix(rest, "}"))
		if !ok {
			return nil
		}
		n++
		return s.syncConversation(ctx, a, b)
	})
	return n, err
}
