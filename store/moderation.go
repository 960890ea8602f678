package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// Who may moderate what. A site admin (Options.Admins) moderates everything; a group's
// moderators (its groupMods set, the authoritative record) moderate the posts in the group, their
// comments, and the group itself. An action on a post checks the post's groups as its write
// script sees them: the caller passes the group its authority comes through ("*" for an admin)
// and the script refuses when the post is no longer in it.

// authority returns how actor may moderate something in groups: "*" for an admin, else the first
// of groups actor moderates and is not banned from (the first they moderate when they are banned
// from all of those), read in one round trip. It fails with KindForbidden when actor
// moderates none of them, and with KindUnauthenticated for an anonymous actor.
func (s *Store) authority(ctx context.Context, actor UserKey, groups []string) (string, error) {
	return s.authorityIn(ctx, actor, groups, false)
}

// authorityOverAll is authority for an action that concerns every one of groups alike (resolving
// a report sent to all of them): an admin, or a moderator of each of groups that has moderators,
// who gets the first they moderate. A moderator of only some of them would decide for the others:
// KindForbidden.
func (s *Store) authorityOverAll(ctx context.Context, actor UserKey, groups []string) (string, error) {
	return s.authorityIn(ctx, actor, groups, true)
}

// authorityIn is authority (all false) or authorityOverAll (all true).
func (s *Store) authorityIn(ctx context.Context, actor UserKey, groups []string, all bool) (string, error) {
	if actor == "" {
		return "", &Error{Kind: KindUnauthenticated, Msg: "sign in to moderate"}
	}
	if s.IsAdmin(actor) {
		return "*", nil
	}
	if len(groups) == 0 {
		return "", &Error{Kind: KindForbidden, Msg: "only the site admins moderate what is in no group"}
	}
	cmds := make([]*rdb.FloatCmd, len(groups))
	sizes := make([]*rdb.IntCmd, len(groups))
	ops := make([]op, len(groups), len(groups)+1)
	for i, g := range groups {
		key := s.k.groupMods(g)
		ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cmds[i], sizes[i] = p.ZScore(ctx, key, string(actor)), p.ZCard(ctx, key)
			return cmds[i], sizes[i]
		}}
	}
	// The actor's bans in force, in the same round trip: a moderator acts through a group they
	// are not banned from, when they moderate one (the write's ban check, actingFor, then
	// refuses only a ban from that group or the site).
	var bans *rdb.StringSliceCmd
	bansKey := s.k.userBans(string(actor))
	ops = append(ops, op{key: bansKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		bans = p.ZRangeByScore(ctx, bansKey, &rdb.ZRangeBy{Min: "(" + strconv.FormatInt(s.now().UnixMilli(), 10), Max: "+inf"})
		return bans, nil
	}})
	if err := s.pipeline(ctx, ops, false); err != nil {
		return "", fmt.Errorf("read the moderators of %s: %w", strings.Join(groups, ", "), err)
	}
	if err := bans.Err(); err != nil {
		return "", fmt.Errorf("read the bans of %s: %w", actor, err)
	}
	banned := bans.Val()
	via := ""
	for i, c := range cmds {
		err := c.Err()
		switch {
		case err == nil && (via == "" || (slices.Contains(banned, via) && !slices.Contains(banned, groups[i]))):
			via = groups[i]
		case errors.Is(err, rdb.Nil) && all && sizes[i].Val() > 0: // a group without moderators is the admins'
			return "", &Error{Kind: KindForbidden, Msg: "only a moderator of every one of " + groupList(groups) + ", or a site admin, may do this"}
		case err != nil && !errors.Is(err, rdb.Nil):
			return "", fmt.Errorf("read the moderators of %s: %w", groups[i], err)
		}
	}
	if via == "" {
		return "", &Error{Kind: KindForbidden, Msg: "only the moderators of " + groupList(groups) + " and the site admins may do this"}
	}
	return via, nil
}

// keepGroups makes groups last (group_keep.lua) and registers them, for a moderation action in
// them: a group made by posts would otherwise vanish with its last post — removed by this very
// action, say — and anyone could make it anew with createGroup, and own its bans, pins and removed
// posts. Keeping a group is harmless if the action then fails.
func (s *Store) keepGroups(ctx context.Context, groups ...string) error {
	if len(groups) == 0 {
		return nil
	}
	calls := make([]scriptCall, len(groups))
	for i, g := range groups {
		calls[i] = scriptCall{name: "group_keep", keys: []string{s.k.groupInfo(g)}, args: []any{s.now().UnixMilli()}}
	}
	if err := s.runMany(ctx, calls); err != nil {
		return fmt.Errorf("keep groups %s: %w", strings.Join(groups, ", "), err)
	}
	if err := s.register(ctx, s.k.groups(), true, groups...); err != nil {
		return fmt.Errorf("register groups %s: %w", strings.Join(groups, ", "), err)
	}
	return nil
}

// groupList names groups for a message: "golang", "golang or rust".
func groupList(groups []string) string {
	if len(groups) == 1 {
		return "group " + groups[0]
	}
	return "groups " + strings.Join(groups, " or ")
}

// modRecord is an action as the moderation log stores it, as compact JSON.
type modRecord struct {
	Action    ModActionKind `json:"a"`
	Moderator string        `json:"m"`
	Group     string        `json:"g,omitempty"`
	Target    string        `json:"t"`           // global id
	Reason    *string       `json:"r,omitempty"` // nil: none given
	Until     int64         `json:"u,omitempty"` // BAN_USER: Unix ms; 0 when permanent
	Label     ContentLabel  `json:"l,omitempty"` // LABEL_* and UNLABEL_*: the label
	At        int64         `json:"at"`          // Unix ms
}

// maxModKey bounds the key of an action's id.
const maxModKey = 160

// modActionID returns the global id of the action with key key. Keys derive from the action —
// what it did, to what, and the version of its target after it — so that a retried request
// names the action it already logged.
func modActionID(key string) string { return TypeModAction + ":" + key }

// validModKey reports whether key can be the key of an action's id: 1–160 of A-Z a-z 0-9 and
// : _ - . (user keys, group names, numbers and the separators between them).
func validModKey(key string) bool {
	if key == "" || len(key) > maxModKey {
		return false
	}
	for _, r := range key {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":_-.", r)
		if !ok {
			return false
		}
	}
	return true
}

// The moderation log holds every action once, also when its request is retried or the process
// stops between the action and its log entry. Every action gets there the same way, through the
// moderation outbox of the slot it is written in:
//
//   - The action's script writes its entry (a modRecord as JSON) into the outbox of its own slot,
//     in the same atomic step as the action: postModOutbox for the removals and locks of a post
//     and its comments, groupModOutbox for a group's pins, its moderators' changes and its bans,
//     siteModOutbox for site bans, reportModOutbox for resolved reports. The entry's key derives
//     from the action — what it did, to what, and the version of its target after it — so that
//     the action's id (modActionID) is its own, and a repeat of the script, which changes
//     nothing, writes no second entry.
//   - The script replies with all that the outbox holds, and the write copies it into the log
//     (flushModLog; logAction records an id once) and deletes what it copied.
//   - A repeat of the request copies what an earlier attempt left, and so does the repair job of
//     the write's item, noted before its script, when the process stopped in between: every
//     repair of a moderation item flushes the outbox of its slot (flushModOutbox).

// logAction records a in the moderation log: the site's and, when a.Group is set, the group's.
// a.ID must be an id made by modActionID from a key derived from the action (see there): a
// second call with the same id records nothing. Writes log through their outbox (see above).
func (s *Store) logAction(ctx context.Context, a ModAction) error {
	c, err := s.logCall(a)
	if err != nil {
		return err
	}
	if err := s.runMany(ctx, []scriptCall{c}); err != nil {
		return fmt.Errorf("log action %s: %w", a.ID, err)
	}
	return nil
}

// logCall is the script call that records a in the moderation log (see logAction).
func (s *Store) logCall(a ModAction) (scriptCall, error) {
	key, err := parseTypedID(a.ID, TypeModAction)
	if err != nil {
		return scriptCall{}, fmt.Errorf("log action: %w", err)
	}
	rec := modRecord{Action: a.Action, Moderator: string(a.Moderator), Group: a.Group, Target: a.TargetID,
		Reason: a.Reason, At: a.CreatedAt.UnixMilli()}
	if a.Label != nil {
		rec.Label = *a.Label
	}
	if a.Until != nil {
		rec.Until = a.Until.UnixMilli()
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return scriptCall{}, fmt.Errorf("log action: %w", err)
	}
	keys := []string{s.k.modLogEntries(), s.k.modLog("")}
	if a.Group != "" {
		keys = append(keys, s.k.modLog(a.Group))
	}
	return scriptCall{name: "modlog", keys: keys, args: []any{key, string(raw), rec.At}}, nil
}

// modActionFromRecord builds a ModAction from its stored JSON; nil when there is none.
func modActionFromRecord(key string, raw string) *ModAction {
	if raw == "" {
		return nil
	}
	var rec modRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		return nil
	}
	a := &ModAction{ID: modActionID(key), Action: rec.Action, Moderator: UserKey(rec.Moderator), Group: rec.Group,
		TargetID: rec.Target, Reason: rec.Reason, CreatedAt: fromMillis(rec.At)}
	if rec.Until != 0 {
		t := fromMillis(rec.Until)
		a.Until = &t
	}
	if rec.Label != "" {
		l := rec.Label
		a.Label = &l
	}
	return a
}

// modActions loads actions by key, in one read; an unknown key is nil at its index.
func (l *Loader) modActions(ctx context.Context, keys []string) ([]*ModAction, error) {
	out := make([]*ModAction, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	entries := l.s.k.modLogEntries()
	c, err := l.get(ctx, read{key: "ma:" + strings.Join(keys, "\x00"), rkey: entries,
		fields: boxed(keys), fill: fillHMGET})
	if err != nil {
		return nil, err
	}
	for i, v := range fields(c) {
		out[i] = modActionFromRecord(keys[i], v)
	}
	return out, nil
}

// ModAction loads an action of the moderation log by global id; nil when there is none. The log
// is public.
func (l *Loader) ModAction(ctx context.Context, id string) (*ModAction, error) {
	key, err := parseTypedID(id, TypeModAction)
	if err != nil {
		return nil, err
	}
	as, err := l.modActions(ctx, []string{key})
	if err != nil {
		return nil, err
	}
	return as[0], nil
}

// modLogTag is the cursor tag of the moderation log: the site's, or one group's.
func modLogTag(group string) string {
	if group == "" {
		return "ml"
	}
	return "ml:" + group
}

// ModLog loads one page of the moderation log, newest first: the whole site's (group "") or one
// group's. It costs two round trips: the page, then the actions.
func (l *Loader) ModLog(ctx context.Context, group string, w Window) (*Page[*ModAction], error) {
	if group != "" {
		var err error
		if group, err = NormalizeGroupName(group); err != nil {
			return nil, err
		}
	}
	tag := modLogTag(group)
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	rp, err := l.page(ctx, l.s.k.modLog(group), true, sp)
	if err != nil {
		return nil, err
	}
	as, err := l.modActions(ctx, rp.members)
	if err != nil {
		return nil, err
	}
	return keptItems(rp, tag, as), nil
}

// flushModLog copies the entries of a moderation outbox (action key → action JSON, as the
// action's script replied with them) into the moderation log, then deletes them from the outbox.
// Logging is idempotent by key, so copying an entry twice logs it once.
func (s *Store) flushModLog(ctx context.Context, outbox string, entries map[string]string) error {
	if len(entries) == 0 {
		return nil
	}
	done := make([]string, 0, len(entries))
	var calls []scriptCall
	for key, raw := range entries {
		done = append(done, key)
		a := modActionFromRecord(key, raw)
		if a == nil {
			s.opts.Log.WarnContext(ctx, "moderation outbox: malformed entry dropped", "outbox", outbox, "key", key)
			continue
		}
		c, err := s.logCall(*a)
		if err != nil {
			return err
		}
		calls = append(calls, c)
		notices, err := s.modNoticeCalls(key, a)
		if err != nil {
			return err
		}
		calls = append(calls, notices...)
	}
	if len(calls) > 0 {
		if err := s.runMany(ctx, calls); err != nil { // one pipeline, however many entries
			return fmt.Errorf("log the moderation outbox %s: %w", outbox, err)
		}
	}
	var del *rdb.IntCmd
	err := s.pipeline(ctx, []op{{key: outbox, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		del = p.HDel(ctx, outbox, done...)
		return del, nil
	}}}, false)
	if err == nil {
		err = del.Err()
	}
	if err != nil {
		return fmt.Errorf("empty moderation outbox: %w", err)
	}
	return nil
}

// flushModOutbox reads a moderation outbox and copies what it holds into the log: what a write
// cut off after its script left there, for repairs.
func (s *Store) flushModOutbox(ctx context.Context, outbox string) error {
	var all *rdb.MapStringStringCmd
	err := s.pipeline(ctx, []op{{key: outbox, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		all = p.HGetAll(ctx, outbox)
		return all, nil
	}}}, false)
	if err == nil {
		err = all.Err()
	}
	if err != nil {
		return fmt.Errorf("read moderation outbox: %w", err)
	}
	return s.flushModLog(ctx, outbox, all.Val())
}
