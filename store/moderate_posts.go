package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// Moderation of posts: removal, locks and pins.
//
//   - A removed post leaves every listing, feed and count at once: every path that derives a
//     post's indexes from its hash (indexPost, so writes, repairs and Rebuild alike) takes a
//     removed post out of them, and the lists' reads skip one whose removal is still in flight.
//     Restoring it derives them again from the hash as it is now. Its author and the moderators
//     of its groups still see it (the resolvers decide); it takes no votes and no comments.
//   - A locked post takes no new comments or votes (KindLocked), checked by their scripts.
//   - A group's pins ({g:<group>}:pins) are the authoritative record: one script on the group's
//     slot checks the moderator and the cap. A post that is removed, deleted or leaves the group
//     leaves its pins (unindexPost), and reads skip it meanwhile.
//
// Every action is logged through the moderation outbox of its slot, the post's or the group's
// (see moderation.go).

// MaxModReasonRunes is the longest reason a moderator may give.
const MaxModReasonRunes = 500

// checkModReason validates a moderator's reason; nil is no reason, allowed unless required.
func checkModReason(reason *string, required bool) error {
	if reason == nil {
		if required {
			return invalidf("reason must not be empty")
		}
		return nil
	}
	return checkText("reason", *reason, 1, MaxModReasonRunes)
}

// reasonArgs are the two script arguments of an optional reason: a flag and the text.
func reasonArgs(reason *string) (flag, text string) {
	if reason == nil {
		return "0", ""
	}
	return "1", *reason
}

// undoVia names, for an action that undoes another (a restoration, an unlock), the hash field
// that records the group the undone action came through (removedVia, lockedVia): only that
// group's moderators and the admins undo it, which the script checks. The zero value is any
// other action.
type undoVia struct{ key, field string }

// moderationStart is what a moderation of a post or its thread does before its script: it checks
// the reason, finds the group the actor's authority comes through (via, "*" for an admin) among
// the post's groups — for an undo, the group of the action it undoes first — and counts the
// write, noting the post for repair: the repair of the post logs what the action's outbox holds
// (repairPost), and with announce (a removal or restoration, see placePost) places the post in
// the feeds again.
func (s *Store) moderationStart(ctx context.Context, actor UserKey, pid string, reason *string, required bool, undo undoVia, announce bool) (string, note, error) {
	if err := checkModReason(reason, required); err != nil {
		return "", note{}, err
	}
	// The post and, for an undo, the group of what it undoes, in one round trip (one slot).
	var post *rdb.SliceCmd
	var undone *rdb.StringCmd
	err := s.pipeline(ctx, []op{{key: s.k.post(pid), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		post = p.HMGet(ctx, s.k.post(pid), "author", "groups", "deleted")
		if undo.key == "" {
			return post, nil
		}
		undone = p.HGet(ctx, undo.key, undo.field)
		return post, undone
	}}}, false)
	if err == nil {
		err = post.Err()
	}
	if err == nil && undone != nil && !isNil(undone.Err()) {
		err = undone.Err()
	}
	if err != nil {
		return "", note{}, fmt.Errorf("read post %s: %w", pid, err)
	}
	v := post.Val()
	if str(v[0]) == "" || str(v[2]) == "1" {
		return "", note{}, notFoundf("no such post")
	}
	groups := splitGroups(str(v[1]))
	if undone != nil {
		if i := slices.Index(groups, undone.Val()); i > 0 {
			groups = append([]string{undone.Val()}, slices.Delete(slices.Clone(groups), i, i+1)...)
		}
	}
	via, err := s.authority(ctx, actor, groups)
	if err != nil {
		return "", note{}, err
	}
	if err := s.keepGroups(ctx, groups...); err != nil {
		return "", note{}, err
	}
	item := repairPostChange
	if announce {
		item = repairPost
	}
	n, err := s.allowWrite(ctx, string(actor), item+":"+pid, actingFor(via))
	return via, n, err
}

// RemovePost removes a post, as a moderator of one of its groups or a site admin.
func (s *Store) RemovePost(ctx context.Context, actor UserKey, id, reason string) (*Post, error) {
	return s.moderatePost(ctx, actor, id, ModRemovePost, &reason)
}

// RestorePost undoes RemovePost.
func (s *Store) RestorePost(ctx context.Context, actor UserKey, id string) (*Post, error) {
	return s.moderatePost(ctx, actor, id, ModRestorePost, nil)
}

// LockPost locks a post (no new comments or votes) or unlocks it, as a moderator of one of its
// groups or a site admin.
func (s *Store) LockPost(ctx context.Context, actor UserKey, id string, locked bool, reason *string) (*Post, error) {
	kind := ModUnlockPost
	if locked {
		kind = ModLockPost
	}
	return s.moderatePost(ctx, actor, id, kind, reason)
}

// moderatePost runs one action of moderate_post.lua and what follows it: the post's indexes and
// feeds for a removal or a restoration, the moderation log, the live event.
func (s *Store) moderatePost(ctx context.Context, actor UserKey, id string, kind ModActionKind, reason *string) (*Post, error) {
	pid, err := PostKey(id)
	if err != nil {
		return nil, err
	}
	var undo undoVia
	switch kind {
	case ModRestorePost:
		undo = undoVia{s.k.post(pid), "removedVia"}
	case ModUnlockPost:
		undo = undoVia{s.k.post(pid), "lockedVia"}
	}
	via, n, err := s.moderationStart(ctx, actor, pid, reason, kind == ModRemovePost, undo, kind == ModRemovePost || kind == ModRestorePost)
	if err != nil {
		return nil, err
	}
	if reason, err = s.filteredReason(reason); err != nil {
		return nil, err
	}
	flag, text := reasonArgs(reason)
	outbox := s.k.postModOutbox(pid)
	reply, err := s.run(ctx, "moderate_post", []string{s.k.post(pid), outbox, s.k.postTexts(pid)},
		string(kind), string(actor), via, flag, text, s.now().UnixMilli(), pid)
	if err != nil {
		return nil, err
	}
	arr, err := replyArray("moderate_post", reply, 2)
	if err != nil {
		return nil, err
	}
	h, err := replyHash("moderate_post", arr[2:])
	if err != nil {
		return nil, err
	}
	entries, err := replyHash("moderate_post", arr[1])
	if err != nil {
		return nil, err
	}
	p := s.postFromHash(pid, h)
	if p == nil {
		return nil, notFoundf("no such post")
	}
	if kind == ModRemovePost || kind == ModRestorePost {
		// Also on a repeat: that completes an attempt cut off before its derived writes.
		if err := s.placePost(ctx, p); err != nil {
			return nil, err
		}
	}
	if err := s.flushModLog(ctx, outbox, entries); err != nil {
		return nil, err
	}
	s.settled(ctx, n)
	s.publishPostChanged(ctx, pid) // a removed post ends its subscribers' streams
	return p, nil
}

// placePost derives what a live post's removal state implies beyond its hash: its indexes
// (indexPost takes a removed post out of them) and the feeds it was pushed to, or, once
// restored, is pushed to again; its mentions are notified once, whenever that happens.
func (s *Store) placePost(ctx context.Context, p *Post) error {
	if err := s.indexPost(ctx, p, nil); err != nil {
		return err
	}
	if p.Removed {
		return s.unfeedPost(ctx, p.Key(), string(p.Author))
	}
	return s.queuePostJobs(ctx, p.Key())
}

// PinPost pins a post in one of its groups, or unpins it, as a moderator of that group or a site
// admin. A group holds at most MaxPins pins (KindLimitReached); only a live post in the group
// can be pinned (KindInvalid), while unpinning always succeeds.
func (s *Store) PinPost(ctx context.Context, actor UserKey, id, group string, pinned bool, reason *string) (*Post, error) {
	if actor == "" {
		return nil, &Error{Kind: KindUnauthenticated, Msg: "sign in to moderate"}
	}
	pid, err := PostKey(id)
	if err != nil {
		return nil, err
	}
	g, err := NormalizeGroupName(group)
	if err != nil {
		return nil, err
	}
	if err := checkModReason(reason, false); err != nil {
		return nil, err
	}
	h, err := s.postHash(ctx, pid)
	if err != nil {
		return nil, err
	}
	p := s.postFromHash(pid, h)
	if p == nil {
		return nil, notFoundf("no such post")
	}
	if pinned && !contains(p.GroupNames, g) {
		return nil, invalidf("post %s is not in group %s", p.ID, g)
	}
	if pinned && p.Removed {
		return nil, invalidf("post %s was removed: restore it before pinning it", p.ID)
	}
	n, err := s.allowWrite(ctx, string(actor), repairGroup+":"+g, inGroups(g))
	if err != nil {
		return nil, err
	}
	if reason, err = s.filteredReason(reason); err != nil {
		return nil, err
	}
	admin := "0"
	if s.IsAdmin(actor) {
		admin = "1"
	}
	flag, text := reasonArgs(reason)
	outbox := s.k.groupModOutbox(g)
	pin := func() (any, error) {
		return s.run(ctx, "pin_post", []string{s.k.groupPins(g), s.k.groupMods(g), outbox},
			pid, boolArg(pinned), string(actor), admin, MaxPins, s.now().UnixMilli(), flag, text, g)
	}
	reply, err := pin()
	if pinned && IsKind(err, KindLimitReached) {
		// A full group may hold pins that no longer hold (their post deleted, removed or moved
		// out of the group after a pin's checks read it): they free their places.
		freed, serr := s.unpinStale(ctx, g)
		if serr != nil {
			return nil, serr
		}
		if freed {
			reply, err = pin()
		}
	}
	if err != nil {
		return nil, err
	}
	arr, err := replyArrayLen("pin_post", reply, 2)
	if err != nil {
		return nil, err
	}
	entries, err := replyHash("pin_post", arr[1])
	if err != nil {
		return nil, err
	}
	if err := s.flushModLog(ctx, outbox, entries); err != nil {
		return nil, err
	}
	if err := s.keepGroups(ctx, g); err != nil { // its pins now belong to it
		return nil, err
	}
	s.settled(ctx, n)
	s.publishPostChanged(ctx, pid) // its pinnedIn changed
	return p, nil
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// unpinStale takes out of group's pins those whose post is gone, deleted, removed or no longer in
// the group — a pin whose script ran after the post changed, which reads skip but which would
// keep its place among the MaxPins — and reports whether it took any. Two round trips: the pins,
// then their posts.
func (s *Store) unpinStale(ctx context.Context, group string) (bool, error) {
	key := s.k.groupPins(group)
	var pins *rdb.StringSliceCmd
	err := s.pipeline(ctx, []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		pins = p.ZRange(ctx, key, 0, -1)
		return pins, nil
	}}}, false)
	if err == nil {
		err = pins.Err()
	}
	if err != nil {
		return false, fmt.Errorf("read the pins of %s: %w", group, err)
	}
	ids := pins.Val()
	if len(ids) == 0 {
		return false, nil
	}
	posts := make([]*rdb.SliceCmd, len(ids))
	ops := make([]op, len(ids))
	for i, pid := range ids {
		pk := s.k.post(pid)
		ops[i] = op{key: pk, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			posts[i] = p.HMGet(ctx, pk, "author", "groups", "deleted", "removed")
			return posts[i], nil
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return false, fmt.Errorf("read the pinned posts of %s: %w", group, err)
	}
	var calls []scriptCall
	for i, pid := range ids {
		v, err := posts[i].Result()
		if err != nil {
			return false, fmt.Errorf("read pinned post %s: %w", pid, err)
		}
		if str(v[0]) == "" || str(v[2]) == "1" || str(v[3]) == "1" || !contains(splitGroups(str(v[1])), group) {
			calls = append(calls, s.unpinCall(group, pid))
		}
	}
	if len(calls) == 0 {
		return false, nil
	}
	if err := s.runMany(ctx, calls); err != nil {
		return false, fmt.Errorf("unpin the stale pins of %s: %w", group, err)
	}
	return true, nil
}

// unpinCall takes a post out of a group's pins (a post that left the group, or was removed or
// deleted).
func (s *Store) unpinCall(group, pid string) scriptCall {
	return scriptCall{name: "unpin", keys: []string{s.k.groupPins(group)}, args: []any{pid}}
}

// CanModerate reports whether viewer moderates one of groups or is a site admin, reading the
// groups' moderators through the loader in one round trip (none for an admin or no viewer).
func (l *Loader) CanModerate(ctx context.Context, viewer UserKey, groups []string) (bool, error) {
	if viewer == "" {
		return false, nil
	}
	if l.s.IsAdmin(viewer) {
		return true, nil
	}
	reads := make([]read, len(groups))
	for i, g := range groups {
		reads[i] = zscoreRead(l.s.k.groupMods(g), string(viewer))
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return false, err
	}
	for _, c := range calls {
		if c.cmd.Err() == nil {
			return true, nil
		}
	}
	return false, nil
}

// pinReads are the reads of whether p is pinned in each of its groups.
func (l *Loader) pinReads(pid string, groups []string) []read {
	reads := make([]read, len(groups))
	for i, g := range groups {
		reads[i] = zscoreRead(l.s.k.groupPins(g), pid)
	}
	return reads
}

// PinnedIn loads the groups of p in which it is pinned, in one round trip for all its groups (none
// when Walk read them with the post's level); none for a removed post.
func (l *Loader) PinnedIn(ctx context.Context, p *Post) ([]*Group, error) {
	if p.Removed || len(p.GroupNames) == 0 {
		return []*Group{}, nil
	}
	calls := l.getAll(ctx, l.pinReads(p.Key(), p.GroupNames)...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	out := []*Group{}
	for i, c := range calls {
		if c.cmd.Err() == nil {
			out = append(out, NewGroup(p.GroupNames[i]))
		}
	}
	return out, nil
}

// A group's listings show its pinned posts first: the first forward page without a cursor
// starts with them, most recently pinned first, and the ranked part that follows — on that page
// and every other — leaves them out, so that no post shows twice. A pinned post's cursor stands
// for its place among the pins: after it come the pins pinned before it, then the ranked part
// from its start. The cursor holds when its pin was made, so that it keeps its place when its own
// pin is gone by the next page (unpinned, its post removed or moved out of the group): the pins
// pinned before it still follow it. Backward pages (last, before) page the ranked part only, pins
// left out; a before cursor of a pin is the start of the ranked part, so nothing precedes it
// there. Pins that no longer hold (a post removed, deleted or out of the group since) are skipped.

// pinScore is the score of a pinned post's cursor: it orders before every ranked post, so that
// the page script reads the ranked part from its start after it, and nothing before it.
var pinScore = strconv.FormatFloat(1.7976931348623157e308, 'g', -1, 64)

// pinMember marks the member of a pinned post's cursor: "pin:<post>@<when pinned, ms>" (or
// "pin:<post>", the cursors made before they held the time).
const pinMember = "pin:"

// pinAt is a pin's place among the pins, which are listed most recently pinned first (ties by
// post key bytes, descending, as ZREVRANGE orders them): the post and when it was pinned ("" when
// a cursor did not say).
type pinAt struct{ pid, at string }

// pinCursorMember is the member of the cursor of the pin pid made at at.
func pinCursorMember(pid, at string) string { return pinMember + pid + "@" + at }

// pinnedCursor reports whether c is the cursor of a pinned post, and which.
func pinnedCursor(c cursor) (pinAt, bool) {
	if c.score != pinScore || len(c.member) <= len(pinMember) || c.member[:len(pinMember)] != pinMember {
		return pinAt{}, false
	}
	pid, at, _ := strings.Cut(c.member[len(pinMember):], "@")
	return pinAt{pid: pid, at: at}, pid != ""
}

// pinsAfter returns the pins, most recently pinned first, that follow the cursor's pin: those after
// it when it is still there, or else those pinned before the time it holds (none for a cursor that
// holds no time).
func pinsAfter(pins []pinAt, c pinAt) []pinAt {
	for i, p := range pins {
		if p.pid == c.pid {
			return pins[i+1:]
		}
	}
	if c.at == "" {
		return nil
	}
	at := parseScore(c.at)
	for i, p := range pins {
		if t := parseScore(p.at); t < at || (t == at && p.pid < c.pid) {
			return pins[i:]
		}
	}
	return nil
}

// groupPosts loads one page of a group's posts in sort order with its pins first (see above), in
// the round trips of any page of posts: the pins and the ranked page, then the posts.
func (l *Loader) groupPosts(ctx context.Context, sort PostSort, group string, w Window, needs func() *Needs) (*Page[*Post], error) {
	key, tag := l.rankingList(sort, group)
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	afterPin, pinAfter := pinnedCursor(sp.after)
	showPins := !sp.backward && sp.before.score == "" && (sp.after.score == "" || pinAfter)
	// The ranked part, read with room for the pins it leaves out.
	rsp := sp
	rsp.n += MaxPins
	rsp.cut = l.rankingCut(sort, group)
	if pinAfter {
		rsp.after = cursor{list: tag}
	}
	calls := l.getAll(ctx, zrangeRead(l.s.k.groupPins(group), 0, -1), l.postListRead(key, rsp, true, true))
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	members, zs := zrangeMembers(calls[0]), calls[0].cmd.(*rdb.ZSliceCmd).Val()
	rp, err := pageOf(calls[1], rsp)
	if err != nil {
		return nil, err
	}
	l.trimBacklog(ctx, rsp.cut, rp.backlog)
	pinned := make(map[string]bool, len(zs))
	var all []pinAt // most recently pinned first
	for i := len(zs) - 1; i >= 0; i-- {
		pinned[members[i]] = true
		all = append(all, pinAt{pid: members[i], at: formatScore(zs[i].Score)})
	}
	if !showPins {
		all = nil
	} else if pinAfter {
		all = pinsAfter(all, afterPin)
	}
	pins := make([]string, len(all))
	for i, p := range all {
		pins[i] = p.pid
	}
	var ranked, scores []string
	for i, m := range rp.members {
		if !pinned[m] {
			ranked, scores = append(ranked, m), append(scores, rp.scores[i])
		}
	}
	// The most that can show: every pin and the first (or last) sp.n ranked posts.
	cands := ranked
	if len(cands) > sp.n {
		if sp.backward {
			cands, scores = cands[len(cands)-sp.n:], scores[len(scores)-sp.n:]
		} else {
			cands, scores = cands[:sp.n], scores[:sp.n]
		}
	}
	more := len(ranked) > len(cands)
	keys := append(append([]string{}, pins...), cands...)
	n := evalNeeds(needs)
	l.Walk(ctx, Items{Kind: ItemPost, Keys: keys}, n)
	reads := make([]read, len(keys))
	for i, k := range keys {
		reads[i] = l.postReadOf(k, n.ReadsPostBody())
	}
	pcalls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, pcalls); err != nil {
		return nil, err
	}
	page := &Page[*Post]{Total: rp.total, HasPrev: rp.hasPrev || pinAfter}
	for i, k := range pins {
		p := l.listedPost(pcalls[i], k)
		if p == nil || !contains(p.GroupNames, group) {
			continue
		}
		if len(page.Items) == sp.n {
			more = true
			break
		}
		page.Items = append(page.Items, p)
		page.Cursors = append(page.Cursors, cursor{list: tag, score: pinScore, member: pinCursorMember(k, all[i].at)}.encode())
	}
	var rest []*Post
	var restCursors []string
	for i, k := range cands {
		if p := l.listedPost(pcalls[len(pins)+i], k); p != nil && p.CreatedAt.UnixMilli() >= rsp.cut.cutoff {
			rest = append(rest, p)
			restCursors = append(restCursors, cursor{list: tag, score: scores[i], member: k}.encode())
		}
	}
	room := sp.n - len(page.Items)
	if len(rest) > room {
		if sp.backward {
			rest, restCursors = rest[len(rest)-room:], restCursors[len(restCursors)-room:]
		} else {
			rest, restCursors = rest[:room], restCursors[:room]
		}
		more = true
	}
	page.Items, page.Cursors = append(page.Items, rest...), append(page.Cursors, restCursors...)
	if sp.backward {
		page.HasPrev = rp.hasPrev || more
		page.HasNext = rp.hasNext
	} else {
		page.HasNext = rp.hasNext || more
	}
	return page, nil
}

// withoutRemoved leaves the removed and the erased posts out of a page of a listing: removals
// and account deletions take them out of every index, and this skips one whose removal is still
// in flight, or that a list no deletion walks (saved posts) still holds.
func withoutRemoved(p *Page[*Post], err error) (*Page[*Post], error) {
	if err != nil {
		return nil, err
	}
	return p.Without(func(it *Post) bool { return it.Removed || it.Erased }), nil
}

// listedPost parses a done post read for a list: nil for a post that is gone or removed, which
// lists leave out even while its removal is in flight.
func (l *Loader) listedPost(c *call, pid string) *Post {
	if p := l.postOf(c, pid); p != nil && !p.Removed && !p.NSFWHidden {
		return p
	}
	return nil
}
