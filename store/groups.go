package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// Groups as aggregates, and membership.
//
// A group lives in its hash slot {g:<name>}: its rankings (ranking.go), its info hash (created,
// creator, description, ver), its moderators (groupMods, authoritative) and its members
// (groupMembers, derived).
//
//   - A group exists while it holds posts, or once its info holds a version: createGroup sets it,
//     and so does every moderator's change (group_change.lua). A group made by a post only — it
//     has no creator and no moderators until an admin names some — exists while it holds posts,
//     like the tag groups were, so that a group made by a typo goes away with its post.
//   - createdAt: the creation time for a group made by createGroup; for a group made by posting,
//     the publish time of the oldest post it has held, recorded by every index of a post into it
//     (index.lua), so rebuild and repair record it too. A group that holds posts but was indexed
//     before that record existed shows its oldest post's time, read in the same pipeline.
//   - Moderators and descriptions change only through group_change.lua, which checks the actor
//     (a moderator of the group, or an admin) in the same script, and records each change in
//     the group's moderation outbox (see moderation.go) under the info version it produced.
//   - Membership is authoritative on the member's side ({u:<user>}:groups, at most
//     MaxGroupsJoined, written by follow.lua with its bound) and mirrored to the group's members
//     set by follower.lua, guarded by the member's sequence: exactly how follows work.
//   - A group that stops existing is buried (buryGroups, when its last post leaves it, before
//     createGroup makes one of its name, and in RebuildUsers): its members leave it on both sides
//     and its watch modes and created time go, so that a group made again under the name starts
//     empty, whoever makes it.

// MaxGroupDescription is the longest group description, in characters.
const MaxGroupDescription = 500

// MaxGroupModerators is how many moderators one group may have.
const MaxGroupModerators = 50

// Items of the repair jobs of groups.
const (
	repairGroup  = "group"  // group:<name>: the registry, the group's moderation outbox (changes, pins)
	repairMember = "member" // member:<user>:<group>: the group's members set
)

// CreateGroup makes a group whose first moderator is actor, with an optional description. A
// group that exists already is KindConflict, except for a repeat of actor's own creation, which
// returns the group.
func (s *Store) CreateGroup(ctx context.Context, actor UserKey, name string, description *string) (*Group, error) {
	return s.CreateGroupLabelled(ctx, actor, name, description, false)
}

// CreateGroupLabelled is CreateGroup of a group labelled NSFW (nsfw true) or not: every post in
// an NSFW group is NSFW (see labels.go).
func (s *Store) CreateGroupLabelled(ctx context.Context, actor UserKey, name string, description *string, nsfw bool) (*Group, error) {
	g, err := NormalizeGroupName(name)
	if err != nil {
		return nil, err
	}
	desc, err := groupDescription(description)
	if err != nil {
		return nil, err
	}
	// A new account may not create a group: as its moderator it would be exempt from the
	// new-account limits there (newaccounts.go).
	n, err := s.allowGuarded(ctx, string(actor), repairGroup+":"+g, nil, &writeGuard{group: true})
	if err != nil {
		return nil, err
	}
	if err := s.filterStrict("name", g); err != nil {
		return nil, err
	}
	if desc, err = s.filterText("description", desc); err != nil {
		return nil, err
	}
	// A group of the name that no longer exists but was never buried (it died before burials, or
	// its burial was cut off) is buried first: the new group starts without its members.
	if _, err := s.buryGroups(ctx, []string{g}); err != nil {
		return nil, err
	}
	if _, err := s.run(ctx, "group_create", append(s.groupKeys(g), nsfwKey(s.k.ranking(g).new)), string(actor), desc, s.now().UnixMilli(), flag(nsfw)); err != nil {
		return nil, err
	}
	if err := s.labelGroup(ctx, g); err != nil {
		return nil, err
	}
	if err := s.register(ctx, s.k.groups(), true, g); err != nil {
		return nil, fmt.Errorf("register group %s: %w", g, err)
	}
	// The creator's account may have been deleted since the checks, and its deletion's walk of
	// the groups (moderated.go) may have passed before this one was registered: the deletion is
	// read again in the next round trip, after the registration, so that either the read sees it
	// and the seat is given up here, as the walk does, or the walk finds the group. The group's
	// repair note covers the step down (repairGroupItem drops deleted moderators).
	read, gone := s.authorGone(ctx, string(actor))
	if err := s.syncDirectoryOver(ctx, []string{g}, nil, read); err != nil {
		return nil, err
	}
	if deleted, _, err := gone(); err != nil {
		return nil, err
	} else if deleted {
		if err := s.stepDown(ctx, string(actor), g); err != nil {
			return nil, err
		}
		s.settled(ctx, n)
		return nil, errDeletedMeanwhile
	}
	s.settled(ctx, n)
	return NewGroup(g), nil
}

// The limits of a group's page.
const (
	MaxGroupTitle = 100  // characters of a group's title
	MaxGroupRules = 5000 // characters of a group's rules
)

// GroupEdit is a change to what a group's page shows: a nil field is left as it is, "" clears a
// text field. The fields live in the group's info hash (title, icon, banner, rules, restricted);
// a value over 64 bytes turns that one hash from listpack to hashtable encoding (about 200
// bytes more per group), as a long description already does.
type GroupEdit struct {
	Description *string
	Title       *string
	IconURL     *string // an https URL (checkImageURL)
	BannerURL   *string // an https URL (checkImageURL)
	Rules       *string
	// PostingRestricted lets only the group's moderators (and the site admins) post into it.
	PostingRestricted *bool
	// NSFW labels the group NSFW, or takes the label off (see labels.go).
	NSFW *bool
}

// fields checks the edit and returns the info fields it sets, "" for one it clears, as JSON for
// group_change.lua; invalid values are KindInvalid.
func (e GroupEdit) fields() (string, error) {
	out := map[string]string{}
	if e.Description != nil {
		d, err := groupDescription(e.Description)
		if err != nil {
			return "", err
		}
		out["description"] = d
	}
	if e.Title != nil {
		if err := checkText("title", *e.Title, 0, MaxGroupTitle); err != nil {
			return "", err
		}
		out["title"] = *e.Title
	}
	for _, u := range []struct {
		arg, field string
		v          *string
	}{{"iconUrl", "icon", e.IconURL}, {"bannerUrl", "banner", e.BannerURL}} {
		if u.v == nil {
			continue
		}
		if *u.v != "" {
			if err := checkImageURL(u.arg, *u.v); err != nil {
				return "", err
			}
		}
		out[u.field] = *u.v
	}
	if e.Rules != nil {
		if err := checkText("rules", *e.Rules, 0, MaxGroupRules); err != nil {
			return "", err
		}
		out["rules"] = *e.Rules
	}
	if e.PostingRestricted != nil {
		out["restricted"] = ""
		if *e.PostingRestricted {
			out["restricted"] = "1"
		}
	}
	if e.NSFW != nil {
		out["nsfw"] = flag(*e.NSFW)
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// UpdateGroup changes what a group's page shows (see GroupEdit), in one script on the group's
// slot. Moderators of the group and admins only (KindForbidden); a change is logged as
// UPDATE_GROUP once, however often it is repeated, and an edit that changes nothing is not.
func (s *Store) UpdateGroup(ctx context.Context, actor UserKey, name string, edit GroupEdit) (*Group, error) {
	if _, err := edit.fields(); err != nil {
		return nil, err
	}
	g, err := s.changeGroupWith(ctx, actor, name, groupEditPage, func() (string, error) {
		// After the write's first round trip, which brings the site filters up to date.
		if err := s.filterTexts(map[string]*string{"description": edit.Description, "title": edit.Title, "rules": edit.Rules}); err != nil {
			return "", err
		}
		for arg, u := range map[string]*string{"iconUrl": edit.IconURL, "bannerUrl": edit.BannerURL} {
			if u != nil {
				if err := s.filterStrict(arg, *u); err != nil {
					return "", err
				}
			}
		}
		return edit.fields()
	}, nil)
	if err != nil {
		return nil, err
	}
	if edit.Description != nil || edit.Title != nil { // the words searchGroups finds it by
		if err := s.indexNames(ctx, searchGroupsKind, []string{g.Name}, false, false); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// AddModerator makes the user target a moderator of a group. Moderators of the group and admins
// only (KindForbidden); an unknown user, or a deleted account, is KindNotFound; more than MaxGroupModerators is
// KindLimitReached. It is idempotent and logged as ADD_MODERATOR once.
func (s *Store) AddModerator(ctx context.Context, actor UserKey, group string, target UserKey) (*Group, error) {
	return s.changeModerator(ctx, actor, group, target, groupAddMod)
}

// RemoveModerator takes the user target's moderation of a group away; a moderator may remove
// themselves. Admins remove anyone; a moderator of the group removes only the moderators added
// after them (seniority, the creator first: group_change.lua), so that no co-moderator can take
// the group over; anyone else is KindForbidden. It is idempotent and logged as REMOVE_MODERATOR
// once.
func (s *Store) RemoveModerator(ctx context.Context, actor UserKey, group string, target UserKey) (*Group, error) {
	return s.changeModerator(ctx, actor, group, target, groupRemMod)
}

// The changes group_change.lua makes.
const (
	groupEditPage = "page"
	groupAddMod   = "addmod"
	groupRemMod   = "remmod"
)

func (s *Store) changeModerator(ctx context.Context, actor UserKey, group string, target UserKey, op string) (*Group, error) {
	if !validUserName(string(target)) {
		return nil, invalidf("malformed user %q", truncate(string(target), 40))
	}
	if op == groupAddMod {
		// A deleted account (its marker, see DeleteAccount) names nobody: made a moderator, it
		// would take a seat, rank above those added after it and be logged, while no one can
		// see or act as it.
		if _, err := s.existingUser(ctx, string(target)); err != nil {
			return nil, err
		}
		// The account may have been deleted since the check, and its deletion's walk of the
		// groups (moderated.go) may have passed this one before the seat was added: checked
		// again after the script, before the group's repair job is settled (whose repair does
		// the same, should the process stop in between), the seat is given up here or found by
		// the walk.
		var gone bool
		g, err := s.changeGroupThen(ctx, actor, group, op, string(target), func(g string) error {
			n, err := s.dropDeletedModerators(ctx, g, string(target))
			gone = n > 0
			return err
		})
		if err != nil {
			return nil, err
		}
		if gone {
			return nil, notFoundf("no such user %s", truncate(target.ID(), 40))
		}
		return g, nil
	}
	// A removal still finds a deleted account's marker: the deletion's chain takes the account
	// off every group's moderators (moderated.go), and an admin may remove it before that.
	exists, err := s.cmd().Exists(ctx, s.k.user(string(target))).Result()
	if err != nil {
		return nil, fmt.Errorf("load user %s: %w", target, err)
	}
	if exists == 0 {
		return nil, notFoundf("no such user %s", truncate(target.ID(), 40))
	}
	return s.changeGroup(ctx, actor, group, op, string(target))
}

// changeGroup runs one change of group_change.lua, then registers the group and logs what the
// group's moderation outbox holds; the group's repair note covers both.
func (s *Store) changeGroup(ctx context.Context, actor UserKey, name, op, arg string) (*Group, error) {
	return s.changeGroupThen(ctx, actor, name, op, arg, nil)
}

// changeGroupThen is changeGroup that runs then, when not nil, with the group's name after the
// change is logged and before its repair job is settled.
func (s *Store) changeGroupThen(ctx context.Context, actor UserKey, name, op, arg string, then func(g string) error) (*Group, error) {
	return s.changeGroupWith(ctx, actor, name, op, func() (string, error) { return arg, nil }, then)
}

// changeGroupWith is changeGroupThen with the change's argument made by argOf after the write's
// first round trip.
func (s *Store) changeGroupWith(ctx context.Context, actor UserKey, name, op string, argOf func() (string, error), then func(g string) error) (*Group, error) {
	g, err := NormalizeGroupName(name)
	if err != nil {
		return nil, err
	}
	n, err := s.allowWrite(ctx, string(actor), repairGroup+":"+g, inGroups(g)) // a moderator banned from the group cannot act in it
	if err != nil {
		return nil, err
	}
	arg, err := argOf()
	if err != nil {
		return nil, err
	}
	reply, err := s.run(ctx, "group_change", s.groupChangeKeys(g), s.groupChangeArgs(actor, g, op, arg)...)
	if err != nil {
		return nil, err
	}
	arr, err := replyArrayLen("group_change", reply, 2)
	if err != nil {
		return nil, err
	}
	if err := s.register(ctx, s.k.groups(), true, g); err != nil {
		return nil, fmt.Errorf("register group %s: %w", g, err)
	}
	entries, err := replyHash("group_change", arr[1])
	if err != nil {
		return nil, err
	}
	if err := s.flushModLog(ctx, s.k.groupModOutbox(g), entries); err != nil {
		return nil, err
	}
	if op == groupEditPage && strings.Contains(arg, `"nsfw"`) {
		// The set of NSFW groups follows the label (labels.go); the repair of the group does it
		// if the process stops first.
		if err := s.labelGroup(ctx, g); err != nil {
			return nil, err
		}
		// And the directory's NSFW-free copy (directory.go).
		if err := s.syncDirectory(ctx, g); err != nil {
			return nil, err
		}
	}
	if then != nil {
		if err := then(g); err != nil {
			return nil, err
		}
	}
	s.settled(ctx, n)
	return NewGroup(g), nil
}

// groupChangeKeys are the keys of group_change.lua: the group scripts' and its moderation outbox.
func (s *Store) groupChangeKeys(g string) []string {
	return append(s.groupKeys(g), s.k.groupModOutbox(g), nsfwKey(s.k.ranking(g).new))
}

// groupChangeArgs are the arguments of group_change.lua for actor's change op (arg) of group g.
func (s *Store) groupChangeArgs(actor UserKey, g, op, arg string) []any {
	admin := "0"
	if s.IsAdmin(actor) {
		admin = "1"
	}
	return []any{string(actor), admin, op, arg, s.now().UnixMilli(), MaxGroupModerators, g}
}

// groupKeys are the keys of the group scripts: its info, its moderators and its NEW ranking.
func (s *Store) groupKeys(g string) []string {
	return []string{s.k.groupInfo(g), s.k.groupMods(g), s.k.ranking(g).new}
}

// groupDescription checks a description; nil is none ("").
func groupDescription(d *string) (string, error) {
	if d == nil || *d == "" {
		return "", nil
	}
	if err := checkText("description", *d, 1, MaxGroupDescription); err != nil {
		return "", err
	}
	return *d, nil
}

// repairGroupItem registers a group that exists, syncs its directory entries and logs what the group's moderation outbox
// holds: a moderator's change whose request was cut off before it logged it. An item of an older
// form, with more after the group's name, repairs the group the same way.
func (s *Store) repairGroupItem(ctx context.Context, rest string) error {
	g, _, _ := strings.Cut(rest, ":")
	if !validGroupName(g) {
		return nil
	}
	in, err := s.groupsInUse(ctx, []string{g}, true)
	if err != nil {
		return err
	}
	if len(in) == 1 {
		if err := s.registerRepair(ctx, s.k.groups(), g); err != nil {
			return fmt.Errorf("register group %s: %w", g, err)
		}
	}
	if err := s.syncDirectory(ctx, g); err != nil {
		return err
	}
	if err := s.labelGroup(ctx, g); err != nil {
		return err
	}
	if _, err := s.dropDeletedModerators(ctx, g); err != nil { // an addModerator racing a deletion
		return err
	}
	return s.flushModOutbox(ctx, s.k.groupModOutbox(g))
}

// groupsInUse returns those of groups that exist (in) or do not (!in): a group exists while it
// holds posts or once its info holds a version (see above).
func (s *Store) groupsInUse(ctx context.Context, groups []string, in bool) ([]string, error) {
	counts, ncounts := make([]*rdb.IntCmd, len(groups)), make([]*rdb.IntCmd, len(groups))
	vers := make([]*rdb.BoolCmd, len(groups))
	ops := make([]op, len(groups))
	for i, g := range groups {
		ops[i] = op{key: s.k.groupInfo(g), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			counts[i], ncounts[i] = p.ZCard(ctx, s.k.ranking(g).new), p.ZCard(ctx, nsfwKey(s.k.ranking(g).new))
			vers[i] = p.HExists(ctx, s.k.groupInfo(g), "ver")
			return counts[i], ncounts[i]
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return nil, fmt.Errorf("count group posts: %w", err)
	}
	var out []string
	for i, g := range groups {
		if (counts[i].Val()+ncounts[i].Val() > 0 || vers[i].Val()) == in {
			out = append(out, g)
		}
	}
	return out, nil
}

// JoinGroup makes user a member of a group. It is idempotent; a group that does not exist is
// KindNotFound; joining more than MaxGroupsJoined groups is KindLimitReached.
func (s *Store) JoinGroup(ctx context.Context, user UserKey, name string) (*Group, error) {
	return s.setMember(ctx, string(user), name, true)
}

// LeaveGroup makes user leave a group. It is idempotent; a group that does not exist, and that
// user is not a member of, is KindNotFound.
func (s *Store) LeaveGroup(ctx context.Context, user UserKey, name string) (*Group, error) {
	return s.setMember(ctx, string(user), name, false)
}

func (s *Store) setMember(ctx context.Context, uid, name string, join bool) (*Group, error) {
	g, err := NormalizeGroupName(name)
	if err != nil {
		return nil, err
	}
	in, err := s.groupsInUse(ctx, []string{g}, true)
	if err != nil {
		return nil, err
	}
	if len(in) == 0 {
		// A member may still leave a group made by posts that has lost them all and is not buried
		// yet (buryGroups: a burial cut off, or a group that died before burials).
		err := s.cmd().ZScore(ctx, s.k.userGroups(uid), g).Err()
		if join || isNil(err) {
			return nil, notFoundf("no such group %s", g)
		}
		if err != nil {
			return nil, fmt.Errorf("read groups of %s: %w", uid, err)
		}
	}
	scope := banFree // leaving is always allowed; joining a group one is banned from is not
	if join {
		scope = inGroups(g)
	}
	n, err := s.allowWrite(ctx, uid, repairMember+":"+uid+":"+g, scope)
	if err != nil {
		return nil, err
	}
	if join {
		err = s.memberChecked(ctx, uid, g, followAdd)
	} else {
		err = s.syncMember(ctx, uid, g, followRemove)
	}
	if errors.Is(err, errDeletedMeanwhile) {
		s.settled(ctx, n) // taken off again: nothing is left to repair
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	s.settled(ctx, n)
	return NewGroup(g), nil
}

// syncMember sets, clears or (followRead) reads uid's membership of group g on uid's side and
// mirrors it into the group's members. Each step is idempotent and version-guarded, so running
// it again completes a cut-off run.
func (s *Store) syncMember(ctx context.Context, uid, g, op string) error {
	return s.syncMemberOver(ctx, uid, g, op, "")
}

// syncMemberOver is syncMember with uid's groups sequence raised past floor first (see
// follow.lua), when floor is not "": the version the group's members last applied for uid, read
// just before, for a rebuild (memberGuard).
func (s *Store) syncMemberOver(ctx context.Context, uid, g, op, floor string) error {
	rel, err := s.relationStep(ctx, []string{s.k.userGroups(uid), s.k.userGroupsSeq(uid)}, g, op, s.now().UnixMilli(), MaxGroupsJoined, floor)
	if err != nil {
		return joinLimit(err)
	}
	return s.mirrorMember(ctx, uid, g, rel)
}

// memberChecked is syncMember of a membership that may cross the deletion of uid's account: a
// join (change followAdd) whose checks passed just before, or a repair (followRead) of one cut
// off. The deletion's chain walks uid's groups once: a membership written after the walk passed
// would leave the deleted account among the group's members, and in its count, for good. So the
// deletion is read in the round trip of uid's side, after follow.lua (authorGone): either the
// read sees it, or the deletion — and the chain after it — comes after the membership, which the
// chain then finds. Deleted, the membership is taken off as the chain does, and the answer is
// errDeletedMeanwhile.
func (s *Store) memberChecked(ctx context.Context, uid, g, change string) error {
	read, gone := s.authorGone(ctx, uid)
	rel, err := s.relationStep(ctx, []string{s.k.userGroups(uid), s.k.userGroupsSeq(uid)}, g, change, s.now().UnixMilli(), MaxGroupsJoined, "", read)
	if err != nil {
		return joinLimit(err)
	}
	deleted, _, err := gone()
	if err != nil {
		return err
	}
	if !deleted {
		return s.mirrorMember(ctx, uid, g, rel)
	}
	if err := s.syncMember(ctx, uid, g, followRemove); err != nil {
		return fmt.Errorf("take a membership across a deletion off: %w", err)
	}
	return errDeletedMeanwhile
}

// joinLimit words a full groups set's KindLimitReached for the member.
func joinLimit(err error) error {
	if IsKind(err, KindLimitReached) {
		return &Error{Kind: KindLimitReached, Msg: fmt.Sprintf("you may join at most %d groups", MaxGroupsJoined)}
	}
	return err
}

// mirrorMember writes a state of uid's membership of g, read on uid's side, into the group's
// members and its directory entries.
func (s *Store) mirrorMember(ctx context.Context, uid, g string, rel relation) error {
	if _, err := s.mirrorRelation(ctx, []string{s.k.groupMembers(g), s.k.groupMembersVer(g)}, uid, rel, 0); err != nil {
		return err
	}
	return s.syncDirectory(ctx, g)
}

// buryChunk is how many members of a group buryGroups takes out in one round trip.
const buryChunk = 500

// buryGroups ends the life of those of groups that no longer exist (see above: a group made by
// posts that lost them all), so that a group made again under the name, by a post or by
// createGroup, starts empty: its members leave it (each membership made before the burial, on the
// member's authoritative side and then in the group's members, so that RebuildUsers derives the
// same; buryChunk at a time), and its watch modes and the created time of its posts go (group_bury.lua, which leaves a
// group that came back since as it is). A membership made after the burial started is of a group
// made again since, and stays. It returns how many groups it buried; running it again, or on a
// group that exists, changes nothing.
func (s *Store) buryGroups(ctx context.Context, groups []string) (int, error) {
	dead, err := s.groupsInUse(ctx, groups, false)
	if err != nil || len(dead) == 0 {
		return 0, err
	}
	at := s.now().UnixMilli()
	for _, g := range dead {
		members, err := s.NewLoader().zrangeAll(ctx, s.k.groupMembers(g))
		if err != nil {
			return 0, fmt.Errorf("list the members of %s: %w", g, err)
		}
		// memberStep for buryChunk members at a time: their sides in one pipeline, then the
		// mirrors of what those replied in another.
		for len(members) > 0 {
			chunk := members[:min(buryChunk, len(members))]
			members = members[len(chunk):]
			calls := make([]scriptCall, len(chunk))
			for i, uid := range chunk {
				calls[i] = relationCall([]string{s.k.userGroups(uid), s.k.userGroupsSeq(uid)}, g, followDrop, at, MaxGroupsJoined, "")
			}
			replies, err := s.runScripts(ctx, calls)
			if err != nil {
				return 0, fmt.Errorf("take the members out of group %s, which no longer exists: %w", g, err)
			}
			for i, uid := range chunk {
				rel, err := relationOf(replies[i])
				if err != nil {
					return 0, err
				}
				calls[i] = mirrorCall([]string{s.k.groupMembers(g), s.k.groupMembersVer(g)}, uid, rel, 0)
			}
			if err := s.runMany(ctx, calls); err != nil {
				return 0, fmt.Errorf("take the members out of group %s, which no longer exists: %w", g, err)
			}
		}
		if _, err := s.run(ctx, "group_bury", []string{s.k.groupInfo(g), s.k.groupWatch(g), s.k.groupWatchAll(g),
			s.k.ranking(g).new, nsfwKey(s.k.ranking(g).new), s.k.revOf(s.k.groupWatch(g))}); err != nil {
			return 0, fmt.Errorf("bury group %s: %w", g, err)
		}
	}
	return len(dead), s.syncDirectory(ctx, dead...)
}

// resyncMembers brings the members sets of every group uid joined up to date from uid's
// authoritative groups set, and returns how many memberships it synced.
func (s *Store) resyncMembers(ctx context.Context, uid string) (int, error) {
	groups, err := s.cmd().ZRange(ctx, s.k.userGroups(uid), 0, -1).Result()
	if err != nil {
		return 0, fmt.Errorf("list groups of %s: %w", uid, err)
	}
	for _, g := range groups {
		if err := s.resyncMember(ctx, uid, g); err != nil {
			return 0, err
		}
	}
	return len(groups), nil
}

// resyncMember mirrors uid's membership of g, as uid's groups set holds it, into g's members,
// over the guard the group's copy holds: after a restore or a failover that lost writes of uid's
// slot and kept the group's, that guard holds a version uid's sequence has not reached, and the
// write would lose to it.
func (s *Store) resyncMember(ctx context.Context, uid, g string) error {
	guard, err := s.guardVersion(ctx, s.k.groupMembersVer(g), uid, "membership "+uid+" of "+g)
	if err != nil {
		return err
	}
	return s.syncMemberOver(ctx, uid, g, followRead, guard)
}

// dropStaleMembers removes from every group's members set the users whose groups set no longer
// names the group (a leave cut off before its mirror), and returns how many it removed. A group
// that no longer exists is buried first (buryGroups): its members leave it on both sides.
func (s *Store) dropStaleMembers(ctx context.Context) (int, error) {
	groups, err := s.scanGroups(ctx, ":members")
	if err != nil {
		return 0, err
	}
	if _, err := s.buryGroups(ctx, groups); err != nil {
		return 0, err
	}
	n := 0
	for _, g := range groups {
		iter := s.cmd().ZScanIterator(s.k.groupMembers(g), "", 500)
		var members []string
		for i := 0; iter.Next(ctx); i++ {
			if i%2 == 0 {
				members = append(members, iter.Val())
			}
		}
		if err := iter.Err(); err != nil {
			return n, fmt.Errorf("scan members of %s: %w", g, err)
		}
		for _, uid := range members {
			err := s.cmd().ZScore(ctx, s.k.userGroups(uid), g).Err()
			if err == nil {
				continue
			}
			if !isNil(err) {
				return n, fmt.Errorf("check membership %s of %s: %w", uid, g, err)
			}
			if err := s.resyncMember(ctx, uid, g); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// registerLastingGroups puts every group whose info holds a version into the registry (a
// creation cut off before it registered the group).
func (s *Store) registerLastingGroups(ctx context.Context) (int, error) {
	groups, err := s.scanGroups(ctx, ":info")
	if err != nil || len(groups) == 0 {
		return 0, err
	}
	in, err := s.groupsInUse(ctx, groups, true)
	if err != nil || len(in) == 0 {
		return 0, err
	}
	if err := s.register(ctx, s.k.groups(), true, in...); err != nil {
		return 0, fmt.Errorf("register groups: %w", err)
	}
	return len(in), nil
}

// scanGroups lists the groups that have a key "{g:<name>}<suffix>" (SCAN, for maintenance).
func (s *Store) scanGroups(ctx context.Context, suffix string) ([]string, error) {
	var groups []string
	err := s.scanKeys(ctx, s.k.prefix+"{g:*}"+suffix, func(key string) error {
		if g, ok := strings.CutSuffix(strings.TrimPrefix(key, s.k.prefix+"{g:"), "}"+suffix); ok && validGroupName(g) {
			groups = append(groups, g)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list groups with %s: %w", suffix, err)
	}
	return groups, nil
}
