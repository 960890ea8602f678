package store

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// New-account limits, as Discourse's trust levels and Reddit's age and karma gates: an account
// younger than NewAccountLimits.Age, or with less karma than NewAccountLimits.Karma, makes at most
// Posts posts and Comments comments per sliding Window, and no post with a link (a URL post, or
// an http(s):// or www. link in its body or an edit of it). Each window is a sorted set in the
// user's slot ({u:<user>}:new:posts, …:new:comments) with one member per write scored by its
// time (one for a creation and its retries with an idempotency key), exact at read time (newaccount.lua); the check rides in the write's first round trip
// with its rate limit and bans. A new account also sends at most Requests message requests per
// Window — private messages to someone who has not accepted its messages (see
// SendMessage): the sign-up limits let one address make ten accounts an hour, and each could
// otherwise write to thirty strangers a minute. Refusals are KindRateLimited with the time until the window has
// room (or, for a link, until the account is old enough). Site admins are exempt everywhere and
// moderators in their groups: a post into groups that they all moderate, a comment on a post in a
// group they moderate. So a new account may not create a group (refused as a link is, until it
// is old enough): its creator would moderate it, and post there — and so on the site's own
// listings — without limit. Off, like every limit, with a negative Options.WriteLimit.

// NewAccountLimits are the limits on new accounts (-new-account-*). The zero value of each field
// selects its default.
type NewAccountLimits struct {
	// Age is how long an account is new after signing up; negative: never by age. Default 24 h.
	Age time.Duration
	// Karma is the karma below which an account is new, whatever its age; 0 (the default)
	// disables the karma gate.
	Karma int
	// Posts and Comments are how many of each a new account makes per Window. Defaults 3 and 20.
	Posts, Comments int
	// Requests is how many message requests a new account sends per Window: messages to users
	// who have not accepted its messages (who have not written to it, nor accepted its request).
	// Default 5.
	Requests int
	// Window is the sliding window of Posts, Comments and Requests. Default 1 hour.
	Window time.Duration
}

func (o NewAccountLimits) withDefaults() NewAccountLimits {
	if o.Age == 0 {
		o.Age = 24 * time.Hour
	}
	if o.Posts <= 0 {
		o.Posts = 3
	}
	if o.Comments <= 0 {
		o.Comments = 20
	}
	if o.Requests <= 0 {
		o.Requests = 5
	}
	if o.Window <= 0 {
		o.Window = time.Hour
	}
	return o
}

// writeGuard is what a write of text asks its first round trip beyond the rate limit and bans:
// the new-account limit it counts against.
type writeGuard struct {
	count string // "posts", "comments" or "requests": the window the write counts in; "" for none (an edit)
	links bool   // the write carries a link
	// reporting marks a report: refused while the reporter's dismissed reports fill their window
	// (reportdismissals.go).
	reporting bool
	// messaging marks a private message: it counts in the sender's message limit too
	// (MessageOptions.PerWindow).
	messaging bool
	// group marks a group's creation, which a new account may not make: its creator moderates
	// it, and moderators are exempt from these limits in their groups.
	group bool
	// once names the write across its repeats when the client gave an idempotency key (see
	// onceMember), "" otherwise: a repeat counts once in the window, as it creates nothing new.
	once string
	// member, when set, names the attempt in the write and message limits in place of a random
	// one: a message sent through its checks after its send lease stopped holding was counted by
	// the lease's pipeline already (see SendMessage).
	member string
	// also are calls of the write's own that its checks' round trip runs before their reads (a
	// message's note of the conversation where its send lease may be granted: lease_note.lua).
	also []scriptCall
	// A message's count in "requests" is decided with what the checks read beside it (whether
	// the recipient accepted the conversation): newAccountResult leaves a refusal in refused, for
	// the caller to return should the message be a request, and says in recorded whether the
	// message was counted by this attempt, under the member newAccountCall gave it (counted), for
	// the caller to take back (releaseCall) should it be none.
	refused  error
	recorded bool
	counted  string
}

// onceMember names a creation of kind ("p" a post, "c" a comment, with the post it is on) made
// with the idempotency key idemKey, for writeGuard.once: "" without a key.
func onceMember(kind, idemKey string) string {
	if idemKey == "" {
		return ""
	}
	return kind + ":" + idemDigest(idemKey)
}

// newAccountCall returns the call that checks and records uid's write against the new-account
// limits, and false when none applies (limits off, an admin, nothing to check).
func (s *Store) newAccountCall(uid string, g *writeGuard) (scriptCall, bool) {
	o := s.opts.NewAccount
	if g == nil || uid == "" || s.opts.WriteLimit < 0 || (g.count == "" && !g.links && !g.group) || s.IsAdmin(UserKey(uid)) {
		return scriptCall{}, false
	}
	if o.Age < 0 && o.Karma <= 0 {
		return scriptCall{}, false
	}
	limit, member, what := o.Posts, "", g.count
	switch what {
	case "comments":
		limit = o.Comments
	case "requests":
		limit = o.Requests
	}
	if what == "" {
		what = "posts"
	} else {
		member = cmp.Or(g.once, g.member, randomHex(8))
		g.counted = member
	}
	return scriptCall{name: "newaccount",
		keys: []string{s.k.user(uid), s.k.karma(uid), s.k.userNewWrites(uid, what)},
		args: []any{s.now().UnixMilli(), max(o.Age.Milliseconds(), 0), o.Karma, limit, o.Window.Milliseconds(), member, boolArg(g.links || g.group)}}, true
}

// releaseCall is the call that takes the write g counted in uid's new-account window back out of
// it (newaccount.lua "release"): a message counted as a request that was none.
// It names the member newAccountCall recorded.
func (s *Store) releaseCall(uid string, g *writeGuard) scriptCall {
	return scriptCall{name: "newaccount", keys: []string{s.k.user(uid), s.k.karma(uid), s.k.userNewWrites(uid, g.count)},
		args: []any{0, 0, 0, 0, 0, g.counted, "0", "release"}}
}

// newAccountResult turns the reply of newaccount.lua into KindRateLimited, unless uid moderates
// where the write goes (check: the write's bans check, which read the groups). For a message (g
// counting "requests"), it notes the outcome in g instead (writeGuard.refused, recorded).
func (s *Store) newAccountResult(ctx context.Context, uid string, g *writeGuard, reply any, check *banCheck) error {
	v, err := replyArrayLen("newaccount", reply, 2)
	if err != nil {
		return err
	}
	wait, err := replyInt("newaccount", v[0])
	if err != nil {
		return err
	}
	why, err := replyInt("newaccount", v[1])
	if err != nil {
		return err
	}
	if wait <= 0 {
		// A member already in the window (why 4) was recorded by this write when it is the
		// write's own (a resent call), but by an earlier attempt when it names the write across
		// its retries (once): that attempt's count, a request's, is not this one's to take back.
		g.recorded = why == 3 || why == 4 && g.once == ""
		return nil
	}
	if g.count == "requests" {
		retry := time.Duration(wait) * time.Millisecond
		secs := int((retry + time.Second - 1) / time.Second)
		g.refused = &Error{Kind: KindRateLimited, RetryAfter: time.Duration(secs) * time.Second,
			Msg: fmt.Sprintf("new accounts send at most %d message requests an hour; retry in %d s", s.opts.NewAccount.Requests, secs)}
		return nil
	}
	if !g.group {
		mod, err := s.moderatesWhere(ctx, uid, check)
		if err != nil || mod {
			return err
		}
	}
	retry := time.Duration(wait) * time.Millisecond
	secs := int((retry + time.Second - 1) / time.Second)
	msg := fmt.Sprintf("new accounts make at most %d %s an hour; retry in %d s", s.opts.NewAccount.Posts, g.count, secs)
	if g.count == "comments" {
		msg = fmt.Sprintf("new accounts make at most %d comments an hour; retry in %d s", s.opts.NewAccount.Comments, secs)
	}
	if why == 2 {
		msg = fmt.Sprintf("new accounts cannot post links; retry in %d s", secs)
		if g.group {
			msg = fmt.Sprintf("new accounts cannot create groups; retry in %d s", secs)
		}
	}
	return &Error{Kind: KindRateLimited, Msg: msg, RetryAfter: time.Duration(secs) * time.Second}
}

// moderatesWhere reports whether uid moderates where a write goes: every group of a post into
// groups (read with the write's bans), or a group of the post the write is on (read now: this
// runs only for a write the new-account limits would refuse).
func (s *Store) moderatesWhere(ctx context.Context, uid string, check *banCheck) (bool, error) {
	if check == nil {
		return false, nil
	}
	if check.scope.posting {
		if len(check.moderates) == 0 {
			return false, nil
		}
		for _, m := range check.moderates {
			if m == nil || m.Err() != nil {
				return false, nil
			}
		}
		return true, nil
	}
	if check.groups == nil {
		return false, nil
	}
	var groups []string
	for g := range strings.SplitSeq(check.groups.Val(), ",") {
		if g != "" {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return false, nil
	}
	cmds := make([]*rdb.FloatCmd, len(groups))
	ops := make([]op, len(groups))
	for i, g := range groups {
		key := s.k.groupMods(g)
		ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cmds[i] = p.ZScore(ctx, key, uid)
			return cmds[i], nil
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil && !isNil(err) {
		return false, fmt.Errorf("read the moderators: %w", err)
	}
	for _, c := range cmds {
		if c.Err() == nil {
			return true, nil
		}
	}
	return false, nil
}
