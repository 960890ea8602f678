package store

import (
	"context"
	"fmt"

	"github.com/agora/agora/internal/rdb"
)

// Hooks of the group tests.

// FillJoinedGroups records uid as a member of n made-up groups on uid's side only, as joining
// them would.
func (s *Store) FillJoinedGroups(ctx context.Context, uid string, n int) error {
	zs := make([]rdb.Z, n)
	for i := range zs {
		zs[i] = rdb.Z{Score: float64(i), Member: fmt.Sprintf("filler%d", i)}
	}
	return s.rdb.ZAdd(ctx, s.k.userGroups(uid), zs...).Err()
}

// FillFollowing records uid as following n made-up users on uid's side only, as following them
// would.
func (s *Store) FillFollowing(ctx context.Context, uid string, n int) error {
	zs := make([]rdb.Z, n)
	for i := range zs {
		zs[i] = rdb.Z{Score: float64(i), Member: fmt.Sprintf("filler%d", i)}
	}
	return s.rdb.ZAdd(ctx, s.k.following(uid), zs...).Err()
}

// MemberFirstStep runs only the member's side of a join or leave, as a call cut off after its
// first step would.
func (s *Store) MemberFirstStep(ctx context.Context, uid, group string, join bool) error {
	op := followRemove
	if join {
		op = followAdd
	}
	_, err := s.relationStep(ctx, []string{s.k.userGroups(uid), s.k.userGroupsSeq(uid)}, group, op, s.now().UnixMilli(), MaxGroupsJoined, "")
	return err
}

// DropGroupInfo deletes a group's info hash, as a group indexed before groups had one lacks it.
func (s *Store) DropGroupInfo(ctx context.Context, group string) error {
	return s.rdb.Del(ctx, s.k.groupInfo(group)).Err()
}

// GroupChangeScriptOnly runs only the atomic step of a moderator's change of a group (its repair
// note and group_change.lua), as a process that stops right after it would: the group is not
// registered and nothing is logged. kind is ModUpdateGroup (arg: the description),
// ModAddModerator or ModRemoveModerator (arg: the user).
func (s *Store) GroupChangeScriptOnly(ctx context.Context, actor UserKey, group string, kind ModActionKind, arg string) error {
	op := map[ModActionKind]string{ModUpdateGroup: groupEditPage, ModAddModerator: groupAddMod, ModRemoveModerator: groupRemMod}[kind]
	if op == "" {
		return fmt.Errorf("no group change %s", kind)
	}
	if kind == ModUpdateGroup {
		fields, err := GroupEdit{Description: &arg}.fields()
		if err != nil {
			return err
		}
		arg = fields
	}
	if _, err := s.allowWrite(ctx, string(actor), repairGroup+":"+group); err != nil {
		return err
	}
	_, err := s.run(ctx, "group_change", s.groupChangeKeys(group), s.groupChangeArgs(actor, group, op, arg)...)
	return err
}

// MirrorGroupLabel runs the write of labelGroup with a label and info version read earlier, as a
// call that read the group's label before a concurrent change of it and wrote after would.
func (s *Store) MirrorGroupLabel(ctx context.Context, group, nsfw, ver string) error {
	return s.mirrorGroupLabel(ctx, group, nsfw, ver)
}
