package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// Bans. A group's moderators ban users from the group; the site admins ban from any group or from
// the whole site. A ban lasts until a time, or for good, and ends at that time to the millisecond
// with nothing running: a ban is in force while its score (when it ends) is after now, checked
// at read time (seed 003: a sorted set scored by expiry). Ended records are dropped by later
// bans of the same scope, but nothing depends on that.
//
//   - The authoritative records live in the scope's slot: groupBans/groupBanInfo, or
//     siteBans/siteBanInfo for site bans. ban.lua writes them, and checks there that the
//     moderator moderates the group unless the server knows them as an admin. It records the
//     action in the scope's moderation outbox (see moderation.go).
//   - Each record is copied to the user's own slot (userBans, ban_mirror.lua), version-guarded,
//     so that a write checks its author's bans in the round trip of its rate limit (allowWrite)
//     with no extra read. A repair note (ban:<scope>:<user>) covers the moment between the two,
//     and logs what the scope's outbox holds if the process stopped before.
//   - What a ban refuses: a site ban refuses every write but taking back what one wrote (deleting
//     one's posts and comments, cancelling a scheduled post, unfollowing) and private
//     bookkeeping (marking notifications read, saving and unsaving posts); logging in and out,
//     and reading, stay open (as on Lemmy). A group ban refuses posting into the group, adding
//     a post to it, and voting, commenting and editing (posts and comments) on the posts in it;
//     the post's groups are read in the same round trip. A scheduled post whose author is
//     banned from its scope when its time comes is cancelled (draftBanned).
//   - Who may be banned: nobody bans themselves (KindInvalid) or a site admin (KindForbidden);
//     a moderator cannot ban another moderator of the same group, nor lift such a ban: only an
//     admin can (remove them as moderator first, or ask an admin). A group ban an admin set is
//     the admins' while in force: a moderator neither lifts nor replaces it (KindForbidden), as
//     only the admins undo an admin's removal.

// MaxBanReasonRunes bounds the reason of a ban.
const MaxBanReasonRunes = 500

// MaxBanLength is how far ahead a ban may end; longer is for good (until null).
const MaxBanLength = 10 * 365 * 24 * time.Hour

// siteScope is the scope of a site ban in the user's copy (userBans); other scopes are group
// names, which never hold "*".
const siteScope = "*"

// permanentScore is the score of a ban that never ends: 2^53 ms (the year 287396), far beyond
// MaxBanLength, exact as a double. Not +inf: the embedded store (miniredis) neither parses "inf"
// in Lua nor honours an exclusive +inf bound.
const permanentScore int64 = 1 << 53

// banKeep is how long an ended record stays before a later ban of its scope drops it: longer than
// RepairGrace, so that a repair always finds the record it derives from.
const banKeep = 24 * time.Hour

// banRecord is a ban as its scope's records hash holds it (see ban.lua). When the ban ends is its
// score in the sorted set.
type banRecord struct {
	Ver    int64  `json:"v,string"`
	By     string `json:"by"`
	At     int64  `json:"at,string"` // when it was set (Unix ms); a lifted ban keeps it
	Reason string `json:"r,omitempty"`
	Off    bool   `json:"off,omitempty"` // lifted by unbanUser
	Nonce  string `json:"n,omitempty"`   // the call that wrote it (see ban.lua)
}

// banScope returns the scope of a ban from group ("" for the site), normalized, and fails unless
// actor may ban there at all: the site is the admins'; a group's moderators are checked by the
// script.
func (s *Store) banScope(actor UserKey, group string) (string, error) {
	if actor == "" {
		return "", &Error{Kind: KindUnauthenticated, Msg: "sign in to moderate"}
	}
	if group == "" {
		if !s.IsAdmin(actor) {
			return "", &Error{Kind: KindForbidden, Msg: "only the site admins may ban from the whole site"}
		}
		return siteScope, nil
	}
	return NormalizeGroupName(group)
}

// banKeys are ban.lua's keys for scope: its records, their info, its moderation outbox and, for a
// group, its moderators.
func (s *Store) banKeys(scope string) []string {
	if scope == siteScope {
		return []string{s.k.siteBans(), s.k.siteBanInfo(), s.banOutbox(scope)}
	}
	return []string{s.k.groupBans(scope), s.k.groupBanInfo(scope), s.banOutbox(scope), s.k.groupMods(scope)}
}

// banOutbox is the moderation outbox of scope's slot.
func (s *Store) banOutbox(scope string) string {
	if scope == siteScope {
		return s.k.siteModOutbox()
	}
	return s.k.groupModOutbox(scope)
}

// banGroup is the group of a ban in scope, "" for the site.
func banGroup(scope string) string {
	if scope == siteScope {
		return ""
	}
	return scope
}

// checkBanTarget fails when actor may not ban (or, with lift, unban) user whatever the scope,
// and when user does not exist. Nobody bans a site admin, but a ban an account held before it
// was made one is lifted as any other: it would otherwise refuse the admin's writes for good.
func (s *Store) checkBanTarget(ctx context.Context, actor, user UserKey, lift bool) error {
	if !validUserName(string(user)) {
		return invalidf("malformed user %q", truncate(string(user), 40))
	}
	if user == actor {
		return invalidf("you cannot ban yourself")
	}
	if !lift && s.IsAdmin(user) {
		return &Error{Kind: KindForbidden, Msg: "site admins cannot be banned"}
	}
	n, err := s.cmd().Exists(ctx, s.k.user(string(user))).Result()
	if err != nil {
		return fmt.Errorf("read user %s: %w", user, err)
	}
	if n == 0 {
		return notFoundf("no such user")
	}
	return nil
}

// BanUser bans user from group ("" for the whole site, admins only) until until (nil: for good),
// as actor, replacing any ban they have there. until must be in the future and at most
// MaxBanLength ahead; reason is 1–500 characters.
func (s *Store) BanUser(ctx context.Context, actor, user UserKey, group string, until *time.Time, reason string) (*Ban, error) {
	scope, err := s.banScope(actor, group)
	if err != nil {
		return nil, err
	}
	if err := checkText("reason", reason, 1, MaxBanReasonRunes); err != nil {
		return nil, err
	}
	now := s.now()
	end := permanentScore
	if until != nil {
		end = until.UnixMilli()
		if end <= now.UnixMilli() {
			return nil, invalidf("until must be in the future")
		}
		if until.After(now.Add(MaxBanLength)) {
			return nil, invalidf("until must be at most %d years ahead; leave it out to ban for good", MaxBanLength/(365*24*time.Hour))
		}
	}
	if err := s.checkBanTarget(ctx, actor, user, false); err != nil {
		return nil, err
	}
	n, err := s.allowWrite(ctx, string(actor), banItem(scope, user), banWriteScope(scope))
	if err != nil {
		return nil, err
	}
	if reason, err = s.filterText("reason", reason); err != nil {
		return nil, err
	}
	step, err := s.banStep(ctx, "ban", scope, actor, user, now, end, reason)
	if err != nil {
		return nil, err
	}
	if step.rec == nil {
		return nil, fmt.Errorf("ban %s in %s: no record", user, scope)
	}
	if err := s.applyBan(ctx, scope, string(user), step); err != nil {
		return nil, err
	}
	if scope != siteScope {
		if err := s.keepGroups(ctx, scope); err != nil { // its bans now belong to it
			return nil, err
		}
	}
	s.settled(ctx, n)
	return banFrom(scope, user, step.score, step.rec), nil
}

// UnbanUser lifts the ban of user from group ("" for the site ban, admins only), as actor, and
// returns the ended ban: its reason, moderator and start as they were, ending now. A ban that had
// already ended (lifted before, or run out) and whose record is kept is returned as it ended, so
// that a repeated call answers as the first did; with no record at all it is KindNotFound.
func (s *Store) UnbanUser(ctx context.Context, actor, user UserKey, group string) (*Ban, error) {
	scope, err := s.banScope(actor, group)
	if err != nil {
		return nil, err
	}
	if err := s.checkBanTarget(ctx, actor, user, true); err != nil {
		return nil, err
	}
	n, err := s.allowWrite(ctx, string(actor), banItem(scope, user), banWriteScope(scope))
	if err != nil {
		return nil, err
	}
	step, err := s.banStep(ctx, "unban", scope, actor, user, s.now(), 0, "")
	if err != nil {
		return nil, err
	}
	if err := s.applyBan(ctx, scope, string(user), step); err != nil {
		return nil, err
	}
	s.settled(ctx, n)
	if step.rec == nil {
		where := "group " + scope
		if scope == siteScope {
			where = "the site"
		}
		return nil, notFoundf("%s has no ban from %s", user, where)
	}
	return banFrom(scope, user, step.score, step.rec), nil
}

// banID is the global id of user's ban in scope: "ban:site:<user>" or "ban:g:<group>:<user>".
// It names the ban of that user in that scope, whichever record holds it: banning again replaces
// the ban under the same id, and lifting it leaves the ended ban there while its record is kept.
func banID(scope string, user UserKey) string {
	if scope == siteScope {
		return TypeBan + ":site:" + string(user)
	}
	return TypeBan + ":g:" + scope + ":" + string(user)
}

// splitBanKey splits the key of a ban id (after "ban:") into its scope and user.
func splitBanKey(key string) (scope string, user UserKey, ok bool) {
	kind, rest, _ := strings.Cut(key, ":")
	switch kind {
	case "site":
		scope, user = siteScope, UserKey(rest)
	case "g":
		var u string
		scope, u, _ = strings.Cut(rest, ":")
		if !validGroupName(scope) {
			return "", "", false
		}
		user = UserKey(u)
	default:
		return "", "", false
	}
	return scope, user, validUserName(string(user))
}

// banItem is the repair item of user's ban in scope.
func banItem(scope string, user UserKey) string { return repairBan + ":" + scope + ":" + string(user) }

// banWriteScope is the scope of the moderator's own write: a moderator banned from a group, or
// from the site, cannot ban there either.
func banWriteScope(scope string) writeScope {
	if scope == siteScope {
		return writeScope{}
	}
	return inGroups(scope)
}

// banReply is what ban.lua leaves: the user's record in the scope, its score, and the scope's
// moderation outbox.
type banReply struct {
	score  int64
	rec    *banRecord // nil: an unban that found no record of a ban
	outbox map[string]string
}

// banStep runs ban.lua (op "ban" or "unban") and returns the user's record as it leaves it.
func (s *Store) banStep(ctx context.Context, op, scope string, actor, user UserKey, now time.Time, end int64, reason string) (banReply, error) {
	admin := "0"
	if s.IsAdmin(actor) {
		admin = "1"
	}
	ms := now.UnixMilli()
	reply, err := s.run(ctx, "ban", s.banKeys(scope), op, string(user), string(actor), admin, ms, randomHex(16),
		ms-banKeep.Milliseconds(), end, reason, banGroup(scope))
	if err != nil {
		return banReply{}, err
	}
	arr, err := replyArrayLen("ban", reply, 2, 4)
	if err != nil {
		return banReply{}, err
	}
	out := banReply{}
	if out.outbox, err = replyHash("ban", arr[1]); err != nil {
		return banReply{}, err
	}
	if len(arr) == 4 {
		score, err := replyString("ban", arr[2])
		if err != nil {
			return banReply{}, err
		}
		raw, err := replyString("ban", arr[3])
		if err != nil {
			return banReply{}, err
		}
		if out.rec, err = parseBanRecord(raw); err != nil {
			return banReply{}, err
		}
		out.score = banEnd(score)
	}
	return out, nil
}

// parseBanRecord reads a record's JSON.
func parseBanRecord(raw string) (*banRecord, error) {
	var rec banRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		return nil, fmt.Errorf("malformed ban record %q: %w", truncate(raw, 80), err)
	}
	return &rec, nil
}

// banEnd reads a ban's score; one that is not a number is permanent.
func banEnd(score string) int64 {
	f, err := strconv.ParseFloat(score, 64)
	if err != nil || f >= float64(permanentScore) {
		return permanentScore
	}
	return int64(f)
}

// untilOf is when a ban scored score ends; nil when permanent.
func untilOf(score int64) *time.Time {
	if score >= permanentScore {
		return nil
	}
	t := fromMillis(score)
	return &t
}

// banFrom is the Ban a record of user in scope describes.
func banFrom(scope string, user UserKey, score int64, rec *banRecord) *Ban {
	b := &Ban{ID: banID(scope, user), User: user, Until: untilOf(score), Reason: rec.Reason, CreatedAt: fromMillis(rec.At), Moderator: UserKey(rec.By)}
	if scope != siteScope {
		b.Group = scope
	}
	return b
}

// applyBan does what follows ban.lua: the user's copy of their record, and the moderation log of
// what the scope's outbox holds.
func (s *Store) applyBan(ctx context.Context, scope, user string, step banReply) error {
	if step.rec != nil {
		if err := s.mirrorBan(ctx, scope, user, step.score, step.rec.Ver, step.rec.Nonce); err != nil {
			return err
		}
	}
	return s.flushModLog(ctx, s.banOutbox(scope), step.outbox)
}

// mirrorBan copies a record of version ver, scored score, to user's own slot, unless the copy
// already holds that version or a later one.
func (s *Store) mirrorBan(ctx context.Context, scope, user string, score, ver int64, nonce string) error {
	now := s.now().UnixMilli()
	if _, err := s.run(ctx, "ban_mirror", []string{s.k.userBans(user), s.k.userBansVer(user)},
		scope, ver, score, now, nonce); err != nil {
		return fmt.Errorf("copy the ban of %s in %s: %w", user, scope, err)
	}
	if scope == siteScope && score > now {
		// A site ban stops the user's messages: the send leases they hold, granted by checks
		// that read no ban, end after the copy the checks read (message_leases.go). The ban's
		// repair copies it again, and so ends them, should this fail.
		if err := s.revokeSendLeases(ctx, user); err != nil {
			return fmt.Errorf("ban %s: %w", user, err)
		}
	}
	return nil
}

// repairBan derives user's record in scope again, the user's copy, and logs what the scope's
// outbox holds. A record dropped meanwhile (banKeep after it ended) leaves no copy to make.
func (s *Store) repairBan(ctx context.Context, scope, user string) error {
	keys := s.banKeys(scope)
	var score *rdb.FloatCmd
	var raw *rdb.StringCmd
	var outbox *rdb.MapStringStringCmd
	err := s.pipeline(ctx, []op{{key: keys[0], fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		score, raw, outbox = p.ZScore(ctx, keys[0], user), p.HGet(ctx, keys[1], user), p.HGetAll(ctx, s.banOutbox(scope))
		return score, outbox
	}}}, false)
	if err != nil && !errors.Is(err, rdb.Nil) {
		return fmt.Errorf("repair the ban of %s in %s: %w", user, scope, err)
	}
	step := banReply{outbox: outbox.Val()}
	if score.Err() == nil && raw.Err() == nil {
		if step.rec, err = parseBanRecord(raw.Val()); err != nil {
			return err
		}
		step.score = int64(score.Val())
	}
	return s.applyBan(ctx, scope, user, step)
}

// writeScope names what a write touches, for the bans of its author that refuse it. The zero
// scope is a write on the site, which a site ban refuses.
type writeScope struct {
	groups []string // groups the write puts something into
	post   string   // the post the write is on (its key): a ban from any of its groups refuses it
	free   bool     // no ban refuses it: taking back what one wrote, reading one's inbox
	// posting marks a post into groups: a group whose posting is restricted refuses it unless
	// its author moderates the group or is an admin (KindForbidden).
	posting bool
}

// postingIn is the scope of a post into groups.
func postingIn(groups ...string) writeScope { return writeScope{groups: groups, posting: true} }

// banFree is the scope of the writes a banned user may still make.
var banFree = writeScope{free: true}

// onPost is the scope of a write on post pid.
func onPost(pid string) writeScope { return writeScope{post: pid} }

// inGroups is the scope of a write into groups.
func inGroups(groups ...string) writeScope { return writeScope{groups: groups} }

// actingFor is the scope of a moderator's write made through the group via (authority's answer,
// "*" for a site admin): a moderator acts for that group, so its ban refuses the write, and so
// does a site ban, but not a ban from another group the item is in.
func actingFor(via string) writeScope {
	if via == "*" {
		return writeScope{}
	}
	return inGroups(via)
}

// banCheck reads, in the pipeline of a write's rate limit, its author's bans in force and the
// groups of the post it is on, and tells whether one refuses the write.
type banCheck struct {
	scope  writeScope
	now    int64
	bans   *rdb.ZSliceCmd
	groups *rdb.StringCmd
	// For a post into groups by one who is not an admin: each group's restricted flag and the
	// author's moderator score in it.
	restricted []*rdb.StringCmd
	moderates  []*rdb.FloatCmd
	// author is the author's fields deleted and emailv, read with the bans: a deleted account
	// writes nothing (a request authenticated before the deletion, or the mutations after
	// deleteAccount in one request), and emailv is checked under Options.RequireEmail unless
	// the author is a site admin (email).
	author *rdb.SliceCmd
	email  bool
}

// banReads returns the check of uid's write in scope (the first of scopes; none is the site's)
// and the reads to send with its rate limit; for a write no ban refuses (banFree), only whether
// the account was deleted; nil and none without a user.
func (s *Store) banReads(ctx context.Context, uid string, scopes []writeScope) (*banCheck, []op) {
	c := &banCheck{now: s.now().UnixMilli()}
	if len(scopes) > 0 {
		c.scope = scopes[0]
	}
	if uid == "" {
		return nil, nil
	}
	if c.scope.free {
		// No ban refuses it, but a deleted account writes nothing (see author): its deletion's
		// step dropped the keys of its slot, which such a write would make again.
		key := s.k.user(uid)
		return c, []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			c.author = p.HMGet(ctx, key, "deleted", "emailv")
			return c.author, nil
		}}}
	}
	key := s.k.userBans(uid)
	c.email = s.opts.RequireEmail && !s.IsAdmin(UserKey(uid))
	ops := []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		c.bans = p.ZRangeByScoreWithScores(ctx, key, &rdb.ZRangeBy{Min: "(" + strconv.FormatInt(c.now, 10), Max: "+inf"})
		c.author = p.HMGet(ctx, s.k.user(uid), "deleted", "emailv") // the same slot, the same round trip
		return c.bans, c.author
	}}}
	if c.scope.post != "" {
		pk := s.k.post(c.scope.post)
		ops = append(ops, op{key: pk, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			c.groups = p.HGet(ctx, pk, "groups")
			return c.groups, nil
		}})
	}
	if c.scope.posting && !s.IsAdmin(UserKey(uid)) {
		c.restricted = make([]*rdb.StringCmd, len(c.scope.groups))
		c.moderates = make([]*rdb.FloatCmd, len(c.scope.groups))
		for i, g := range c.scope.groups {
			info := s.k.groupInfo(g)
			ops = append(ops, op{key: info, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				c.restricted[i] = p.HGet(ctx, info, "restricted")
				c.moderates[i] = p.ZScore(ctx, s.k.groupMods(g), uid)
				return c.restricted[i], c.moderates[i]
			}})
		}
	}
	return c, ops
}

// restrictedErr refuses a post into a group whose posting is restricted by one who does not
// moderate it (KindForbidden).
func (c *banCheck) restrictedErr() error {
	for i, g := range c.scope.groups[:len(c.restricted)] {
		v, err := c.restricted[i].Result()
		if err != nil && !errors.Is(err, rdb.Nil) {
			return fmt.Errorf("read the posting rule of group %s: %w", g, err)
		}
		if v != "1" {
			continue
		}
		if err := c.moderates[i].Err(); err == nil {
			continue
		} else if !errors.Is(err, rdb.Nil) {
			return fmt.Errorf("read the moderators of group %s: %w", g, err)
		}
		return &Error{Kind: KindForbidden, Msg: "only the moderators of group " + g + " may post in it"}
	}
	return nil
}

// err returns the refusal of the write (KindUnauthenticated for a deleted account; KindBanned,
// until the ban that ends last; then KindForbidden, KindEmailUnverified), or nil.
func (c *banCheck) err() error {
	if c == nil {
		return nil
	}
	author, err := c.author.Result()
	if err != nil {
		return fmt.Errorf("read the author: %w", err)
	}
	if str(author[0]) == "1" {
		return &Error{Kind: KindUnauthenticated, Msg: "this account was deleted"}
	}
	if c.scope.free {
		return nil
	}
	if err := c.banErr(); err != nil {
		return err
	}
	return c.emailErr(str(author[1]))
}

// emailErr refuses the write of an author whose email address is not verified (emailv, their
// field) with KindEmailUnverified, under Options.RequireEmail.
func (c *banCheck) emailErr(emailv string) error {
	if !c.email || emailv == "1" {
		return nil
	}
	return &Error{Kind: KindEmailUnverified, Msg: "verify your email address first: setEmail mails you a link"}
}

// banErr returns the refusal of the write by a ban or a restricted group, or nil.
func (c *banCheck) banErr() error {
	bans, err := c.bans.Result()
	if err != nil {
		return fmt.Errorf("read bans: %w", err)
	}
	if len(bans) == 0 {
		return c.restrictedErr()
	}
	groups := c.scope.groups
	if c.groups != nil {
		g, err := c.groups.Result()
		if err != nil && !errors.Is(err, rdb.Nil) {
			return fmt.Errorf("read the groups of post %s: %w", c.scope.post, err)
		}
		groups = append(splitGroups(g), groups...)
	}
	var scope string
	var end int64
	for _, z := range bans {
		m, _ := z.Member.(string)
		if (m == siteScope || contains(groups, m)) && int64(z.Score) > end {
			scope, end = m, int64(z.Score)
		}
	}
	if scope == "" {
		return c.restrictedErr()
	}
	where := "group " + scope
	if scope == siteScope {
		where = "the site"
	}
	until := untilOf(end)
	if until == nil {
		return bannedError(nil, "you are banned from "+where+" for good")
	}
	return bannedError(until, "you are banned from "+where+" until "+until.Format(time.RFC3339))
}

// bansTag is the cursor tag of a group's bans.
func bansTag(group string) string { return "bans:" + group }

// GroupBans loads one page of the bans in force in group, soonest to end first, permanent ones
// last, for viewer: a moderator of the group or a site admin (KindForbidden otherwise). The
// moderators and the page go in one round trip, the records in a second. The answer changes
// when a ban ends, with no write to mark it, so a response that reads it is not cached.
func (l *Loader) GroupBans(ctx context.Context, viewer UserKey, group string, w Window) (*Page[*Ban], error) {
	group, err := NormalizeGroupName(group)
	if err != nil {
		return nil, err
	}
	tag := bansTag(group)
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	if l.revs != nil {
		l.revs.timeDependent()
	}
	key := l.s.k.groupBans(group)
	reads := []read{l.bansPageRead(key, sp, l.s.now().UnixMilli())}
	admin := l.s.IsAdmin(viewer)
	if !admin {
		reads = append(reads, zscoreRead(l.s.k.groupMods(group), string(viewer)))
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	if !admin && (viewer == "" || errors.Is(calls[1].cmd.Err(), rdb.Nil)) {
		return nil, &Error{Kind: KindForbidden, Msg: "only the moderators of group " + group + " and the site admins see its bans"}
	}
	rp, err := parsePage(calls[0].cmd.(*rdb.Cmd).Val(), false)
	if err != nil {
		return nil, err
	}
	p := &Page[*Ban]{Total: rp.total, HasNext: rp.hasNext, HasPrev: rp.hasPrev}
	if len(rp.members) == 0 {
		return p, nil
	}
	info := l.s.k.groupBanInfo(group)
	c, err := l.get(ctx, read{key: "bi:" + info + "\x00" + strings.Join(rp.members, "\x00"), rkey: info,
		fields: boxed(rp.members), fill: fillHMGET})
	if err != nil {
		return nil, err
	}
	all := rp.cursors(tag)
	for i, raw := range fields(c) {
		if raw == "" {
			continue // lifted or dropped between the two reads
		}
		rec, err := parseBanRecord(raw)
		if err != nil {
			return nil, err
		}
		if rec.Off {
			continue
		}
		p.Items = append(p.Items, banFrom(group, UserKey(rp.members[i]), banEnd(rp.scores[i]), rec))
		p.Cursors = append(p.Cursors, all[i])
	}
	return p, nil
}

// Ban loads the ban a global id names (see banID), in force or ended less than banKeep ago, for
// viewer: a site ban for the site admins, a group ban for them and the group's moderators. For
// anyone else, and when there is no such ban, it is nil. One round trip.
func (l *Loader) Ban(ctx context.Context, viewer UserKey, id string) (*Ban, error) {
	key, err := parseTypedID(id, TypeBan)
	if err != nil {
		return nil, err
	}
	scope, user, _ := splitBanKey(key)
	admin := l.s.IsAdmin(viewer)
	if viewer == "" || (!admin && scope == siteScope) {
		return nil, nil
	}
	if l.revs != nil {
		l.revs.timeDependent()
	}
	keys := l.s.banKeys(scope)
	reads := []read{zscoreRead(keys[0], string(user)), hashFieldRead(keys[1], string(user))}
	if !admin {
		reads = append(reads, zscoreRead(l.s.k.groupMods(scope), string(viewer)))
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	for _, c := range calls {
		if errors.Is(c.cmd.Err(), rdb.Nil) {
			return nil, nil // no record, or a viewer who does not moderate the group
		}
	}
	end := int64(calls[0].cmd.(*rdb.FloatCmd).Val())
	if end <= l.s.now().Add(-banKeep).UnixMilli() {
		return nil, nil // ended too long ago: the next ban of the scope drops it
	}
	rec, err := parseBanRecord(calls[1].cmd.(*rdb.StringCmd).Val())
	if err != nil {
		return nil, err
	}
	return banFrom(scope, user, end, rec), nil
}

// bansPageRead reads the page sp of a scope's bans in force at now: the page script, with the
// bans that ended by now below its floor.
func (l *Loader) bansPageRead(key string, sp span, now int64) read {
	sc := l.s.scripts.get("page")
	dir := "first"
	if sp.backward {
		dir = "last"
	}
	floor := strconv.FormatInt(now, 10)
	return read{key: "bp:" + key + "\x00" + sp.key() + "\x00" + floor, rkey: key,
		fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
			c.cmd = sc.EvalSha(ctx, p, []string{key}, "asc", sp.n, dir,
				sp.after.score, sp.after.member, sp.before.score, sp.before.member, floor)
		}}
}

// draftRefused cancels a scheduled post of uid's, not yet taken by its publish job, that
// createPost would refuse when its time comes: its author is banned from the site or from one of
// its groups, one of its groups now lets only its moderators post (and the author is not one),
// the site now requires a verified email address the author lacks, or the account is deleted. A
// post they could not make now is not published either; nor is its publish job failed, to be
// retried until it is set aside with the draft kept. It reports whether it cancelled the post.
func (s *Store) draftRefused(ctx context.Context, uid, pid string) (bool, error) {
	raw, err := s.cmd().HGet(ctx, s.k.drafts(uid), pid).Result()
	if isNil(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read scheduled post %s: %w", pid, err)
	}
	d, err := parseDraft(raw)
	if err != nil || d.Taken {
		return false, err
	}
	check, reads := s.banReads(ctx, uid, []writeScope{postingIn(splitGroups(d.Groups)...)})
	if _, err := s.runScripts(ctx, nil, reads...); err != nil {
		return false, err
	}
	refusal := check.err()
	if !slices.ContainsFunc([]Kind{KindBanned, KindForbidden, KindEmailUnverified, KindUnauthenticated},
		func(k Kind) bool { return IsKind(refusal, k) }) {
		return false, refusal
	}
	if _, err := s.run(ctx, "schedule", s.scheduleKeys(uid), "cancel", pid, s.now().UnixMilli(), MaxCancelledDrafts); err != nil {
		return false, err
	}
	s.opts.Log.InfoContext(ctx, "a scheduled post was cancelled: its author may no longer post it", "post", pid, "author", uid, "why", refusal)
	return true, nil
}

// rebuildBans derives again, from the records of every scope (each group's and the site's), the
// users' copies of their bans and the moderation log entries the scopes' outboxes still hold, and
// returns how many bans it went through. It is repairBan for every ban there is, for rebuild.
func (s *Store) rebuildBans(ctx context.Context) (int, error) {
	groups, err := s.scanGroups(ctx, ":bans")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, scope := range append(groups, siteScope) {
		users, err := s.cmd().ZRange(ctx, s.banKeys(scope)[0], 0, -1).Result()
		if err != nil {
			return n, fmt.Errorf("list the bans of %s: %w", scope, err)
		}
		for _, u := range users {
			if err := s.repairBan(ctx, scope, u); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
