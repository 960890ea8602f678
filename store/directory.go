package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/agora/agora/internal/rdb"
)

// The directory of groups: every group that exists, in four orders (Query.groups).
//
// NAME is the registry of groups ({groups}, all scores 0, so rank order is name order); POPULAR,
// NEW and ACTIVE are sorted sets beside it in the same slot (keys.groupDir), derived from the
// groups' own slots like every ranking: syncDirectory reads a group's member count, creation time
// and latest post in one script on the group's slot (group_stat.lua) that raises the group's
// revision, then writes the absolute scores with index.lua, guarded by that revision. A later
// read carries a later revision and saw at least as much, so however the writes of two
// concurrent joins interleave, the last read wins and no score moves backwards. A group that no
// longer exists is taken out of all four the same way.
//
// Every change of what the directory orders by syncs the group: membership (syncMember, its
// repairs included), a post indexed into or out of the group (indexPost, unindexPost, so
// creation, deletion, removal, group changes, repairs and Rebuild), createGroup. Rebuild syncs
// every group the directory or the group keys name (rebuildDirectory).
//
// NSFW groups. The directory has an NSFW-free copy (sfwGroupDir: the same four orders and a guard
// hash of its own, in the same slot), written by the same sync: group_stat.lua reads the group's
// label from its info with the rest, and the copy's index call adds the group, or takes it out
// when it is labelled NSFW, under the same revision. A reader who does not show NSFW posts
// (Loader.HideNSFW) reads the copy: NSFW groups are in none of their pages, and totalCount counts
// what they see, at the same cost as the directory itself. A label change syncs the group
// (changeGroupWith), so the copy follows it in the request that made it (its repair too).
//
// Cost: per group, one member in each of the three sorted sets (about 60 bytes plus the name in
// a skiplist, far less while the directory holds under 128 groups) and one field in the guard
// hash, and as much again in the NSFW-free copy for a group that is not NSFW; one more script on
// the group's slot and two on {groups} per join, leave and post write (in one pipeline).

// GroupSort orders the directory of groups.
type GroupSort int

// The orders of the directory of groups.
const (
	GroupsPopular GroupSort = iota // most members first
	GroupsNew                      // most recently created first
	GroupsActive                   // most recent post first
	GroupsName                     // by name
)

// directoryKey is the sorted set of the directory in order sort, and its cursor tag: the whole
// directory's, or with sfw its NSFW-free copy's. A cursor names a place (score and name) that
// means the same in both.
func (s *Store) directoryKey(sort GroupSort, sfw bool) (key, tag string) {
	d := s.k.groupDir()
	if sfw {
		d = s.k.sfwGroupDir()
	}
	switch sort {
	case GroupsNew:
		return d.new, "gdn"
	case GroupsActive:
		return d.active, "gda"
	case GroupsName:
		return d.name, "gdl"
	default:
		return d.pop, "gdp"
	}
}

// syncDirectory brings the directory's entries of groups up to date from the groups' slots: two
// round trips, one pipeline each, for any number of groups.
func (s *Store) syncDirectory(ctx context.Context, groups ...string) error {
	if len(groups) == 0 {
		return nil
	}
	return s.syncDirectoryOver(ctx, groups, nil)
}

// syncDirectoryOver is syncDirectory with each group's revision raised past floors[i] first (see
// group_stat.lua), when floors is not nil and floors[i] is not "": the version the directory's
// guards hold for the group, read just before, for a rebuild (rebuildDirectory). The reads in
// extra ride in its first round trip (see runScripts).
func (s *Store) syncDirectoryOver(ctx context.Context, groups, floors []string, extra ...op) error {
	calls, err := s.directoryCalls(ctx, groups, floors, extra...)
	if err != nil {
		return err
	}
	if err := s.runMany(ctx, calls); err != nil {
		return fmt.Errorf("write the directory entries of groups: %w", err)
	}
	return nil
}

// directoryCalls reads what the directory orders groups by, under their revisions, and returns
// the guarded writes of their entries; floors, when not nil, and extra are syncDirectoryOver's.
func (s *Store) directoryCalls(ctx context.Context, groups, floors []string, extra ...op) ([]scriptCall, error) {
	stats := make([]scriptCall, len(groups))
	for i, g := range groups {
		stats[i] = scriptCall{name: "group_stat", keys: []string{s.k.groupInfo(g), s.k.groupMembers(g), s.k.ranking(g).new,
			nsfwKey(s.k.ranking(g).new)}}
		if floors != nil && floors[i] != "" {
			stats[i].args = []any{floors[i]}
		}
	}
	replies, err := s.runScripts(ctx, stats, extra...)
	if err != nil {
		return nil, fmt.Errorf("read the directory entries of groups: %w", err)
	}
	d, sfw := s.k.groupDir(), s.k.sfwGroupDir()
	sets := []string{d.pop, d.new, d.active, d.name}
	sfwSets := []string{sfw.pop, sfw.new, sfw.active, sfw.name}
	calls := make([]scriptCall, 0, 2*len(groups))
	for i, g := range groups {
		st, err := decodeGroupStat(replies[i])
		if err != nil {
			return nil, err
		}
		if !st.exists {
			calls = append(calls, indexCall(d.ver, g, st.ver, false, sets, nil), indexCall(sfw.ver, g, st.ver, false, sfwSets, nil))
			continue
		}
		scores := []any{-st.members, "-" + st.created, "-" + st.latest, 0}
		calls = append(calls, indexCall(d.ver, g, st.ver, true, sets, scores),
			indexCall(sfw.ver, g, st.ver, st.nsfw != "1", sfwSets, scores))
	}
	return calls, nil
}

// groupStat is the reply of group_stat: {ver, 0} for a group that is gone, or {ver, 1, members,
// created, latest, nsfw}.
type groupStat struct {
	ver                   int64
	exists                bool
	members               int64
	created, latest, nsfw string
}

// decodeGroupStat reads a reply of group_stat; one of another shape is a ReplyError.
func decodeGroupStat(v any) (groupStat, error) {
	const script = "group_stat"
	arr, err := replyArrayLen(script, v, 2, 6)
	if err != nil {
		return groupStat{}, err
	}
	var st groupStat
	if st.ver, err = replyInt(script, arr[0]); err != nil {
		return groupStat{}, err
	}
	exists, err := replyInt(script, arr[1])
	if err != nil {
		return groupStat{}, err
	}
	if exists == 0 {
		return st, nil
	}
	if arr, err = replyArrayLen(script, v, 6); err != nil {
		return groupStat{}, err
	}
	st.exists = true
	if st.members, err = replyInt(script, arr[2]); err != nil {
		return groupStat{}, err
	}
	for i, f := range []*string{&st.created, &st.latest, &st.nsfw} {
		if *f, err = replyString(script, arr[3+i]); err != nil {
			return groupStat{}, err
		}
	}
	return st, nil
}

// rebuildDirectory syncs every group the directory names or that has an info hash or a ranking
// (SCAN, for maintenance), and returns how many it synced.
func (s *Store) rebuildDirectory(ctx context.Context) (int, error) {
	seen := map[string]bool{}
	var groups []string
	add := func(names []string) {
		for _, g := range names {
			if validGroupName(g) && !seen[g] {
				seen[g] = true
				groups = append(groups, g)
			}
		}
	}
	// The directory and the registry, in one round trip (one slot).
	var dir, sfwDir, registry *rdb.StringSliceCmd
	err := s.pipeline(ctx, []op{{key: s.k.groups(), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		dir, registry = p.HKeys(ctx, s.k.groupDir().ver), p.ZRange(ctx, s.k.groups(), 0, -1)
		sfwDir = p.HKeys(ctx, s.k.sfwGroupDir().ver)
		return dir, sfwDir
	}}}, false)
	if err == nil {
		err = dir.Err()
	}
	if err != nil {
		return 0, fmt.Errorf("list the directory: %w", err)
	}
	if err := registry.Err(); err != nil {
		return 0, fmt.Errorf("list the registry of groups: %w", err)
	}
	if err := sfwDir.Err(); err != nil {
		return 0, fmt.Errorf("list the directory's NSFW-free copy: %w", err)
	}
	add(dir.Val())
	add(sfwDir.Val())
	add(registry.Val())
	for _, suffix := range []string{":info", ":new", ":n:new", ":members"} {
		names, err := s.scanGroups(ctx, suffix)
		if err != nil {
			return 0, err
		}
		add(names)
	}
	const batch = 200
	for i := 0; i < len(groups); i += batch {
		part := groups[i:min(i+batch, len(groups))]
		floors, err := s.directoryGuards(ctx, part)
		if err != nil {
			return i, err
		}
		if err := s.syncDirectoryOver(ctx, part, floors); err != nil {
			return i, err
		}
	}
	return len(groups), nil
}

// directoryGuards returns, for each of groups, the newest revision the directory's guards (its
// own and its NSFW-free copy's) hold for it, "" for none, in one round trip. The rebuild writes
// each group's entries over it: after a restore or a failover that lost writes of the group's
// slot and kept the directory's entries of them, the guards hold a revision the group's slot
// has not reached, and the entries written from the slot would lose to them.
func (s *Store) directoryGuards(ctx context.Context, groups []string) ([]string, error) {
	var dir, sfw *rdb.SliceCmd
	err := s.pipeline(ctx, []op{{key: s.k.groups(), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		dir, sfw = p.HMGet(ctx, s.k.groupDir().ver, groups...), p.HMGet(ctx, s.k.sfwGroupDir().ver, groups...)
		return dir, sfw
	}}}, false)
	if err == nil {
		err = dir.Err()
	}
	if err == nil {
		err = sfw.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("read the directory's guards: %w", err)
	}
	floors := make([]string, len(groups))
	for i := range groups {
		var best int64 = -1
		for _, v := range []any{dir.Val()[i], sfw.Val()[i]} {
			if n := atoi64(str(v)); str(v) != "" && n > best {
				best = n
			}
		}
		if best >= 0 {
			floors[i] = strconv.FormatInt(best, 10)
		}
	}
	return floors, nil
}

// Groups loads one page of the directory of groups in order sort, and what needs says the
// response reads of them.
func (l *Loader) Groups(ctx context.Context, sort GroupSort, w Window, needs func() *Needs) (*Page[*Group], error) {
	key, tag := l.s.directoryKey(sort, l.hidesNSFW())
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	rp, err := l.page(ctx, key, false, sp)
	if err != nil {
		return nil, err
	}
	l.Walk(ctx, Items{Kind: ItemGroup, Keys: rp.members}, evalNeeds(needs))
	p := &Page[*Group]{Total: rp.total, HasNext: rp.hasNext, HasPrev: rp.hasPrev, Cursors: rp.cursors(tag),
		Items: make([]*Group, len(rp.members))}
	for i, g := range rp.members {
		p.Items[i] = NewGroup(g)
	}
	return p, nil
}
