package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/agora/agora/internal/rdb"
)

// threadNums lists the numbers of the comments of post pid's thread (tombstones included), in
// order: what Rebuild's steps over a thread walk in bounded batches.
func (s *Store) threadNums(ctx context.Context, pid string) ([]string, error) {
	ids := s.k.threadIDs(pid)
	var members *rdb.StringSliceCmd
	if err := s.pipeline(ctx, []op{{key: ids, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		members = p.SMembers(ctx, ids)
		return members, nil
	}}}, false); err != nil {
		return nil, fmt.Errorf("list the comments of post %s: %w", pid, err)
	}
	nums := members.Val()
	for i, n := range nums {
		nums[i] = padNum(n) // kept short (keys.go threadIDs); a layout-2 member is padded already
	}
	slices.Sort(nums) // 12 digits: byte order is number order
	return nums, nil
}

// rescoreBatch bounds the comments one rescore_comments call writes.
const rescoreBatch = 200

// rescoreThread writes every comment in the tree of post pid's thread into its parent's TOP, BEST
// and CONTROVERSIAL reply orders, scored from its votes, where the parent keeps them (it is marked
// or has replyOrdersAt replies, which marks it), and takes it out of them elsewhere: Rebuild's
// backfill and repair of the orders, and layout 6's migration, in bounded batches. The time order
// says which comments are in the tree; it is left as it is. It returns how many comments are in
// the tree.
func (s *Store) rescoreThread(ctx context.Context, pid string) (int, error) {
	nums, err := s.threadNums(ctx, pid)
	if err != nil {
		return 0, err
	}
	scored := 0
	for start := 0; start < len(nums); start += rescoreBatch {
		part := nums[start:min(start+rescoreBatch, len(nums))]
		ops := make([]op, len(part))
		cmds := make([]*rdb.StringCmd, len(part))
		for i, num := range part {
			key := s.k.comment(pid, num)
			ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				cmds[i] = p.HGet(ctx, key, "parent")
				return cmds[i], nil
			}}
		}
		if err := s.pipeline(ctx, ops, false); err != nil {
			return scored, fmt.Errorf("read the comments of post %s: %w", pid, err)
		}
		keys := []string{s.k.post(pid)}
		var args []any
		for i, c := range cmds {
			parent, err := c.Result()
			if err != nil && !isNil(err) {
				return scored, fmt.Errorf("read comment %s: %w", commentID(pid, part[i]), err)
			}
			if parent == "" {
				continue // dropped since it was listed
			}
			keys = append(append(keys, s.k.comment(pid, part[i]), s.k.replyMark(pid, parent)), s.k.replyOrders(pid, parent)...)
			args = append(args, part[i])
		}
		if len(args) == 0 {
			continue
		}
		v, err := s.run(ctx, "rescore_comments", keys, args...)
		if err != nil {
			return scored, fmt.Errorf("score the comments of post %s: %w", pid, err)
		}
		n, _ := v.(int64)
		scored += int(n)
	}
	return scored, nil
}

// replyOrdersAt is how many replies a parent (a comment, or the post for its top-level comments)
// has when it starts keeping its TOP, BEST and CONTROVERSIAL orders (keys.replyOrders) beside its
// time order; below it the reader orders the replies itself (rankReplies). The Lua library
// reply_orders.lua holds the same number. Why 32: a parent has 3.4 replies on average (the memory
// probe's 20,000 comments under 5,886 parents), so almost no parent pays the three orders (about
// 160 bytes a key); the reader of a parent below it reads at most 31 members of its time order
// and their vote counts, little more than a page of the default 20; and 31 members keep a
// time order well inside a listpack (zset-max-listpack-entries 128).
const replyOrdersAt = 32

// replyHashKeys returns the keys of the hashes of the replies in the time order of parent (topLevel
// for the post): what create_comment and moderate_comment declare when they build its orders.
func (s *Store) replyHashKeys(ctx context.Context, pid, parent string) ([]string, error) {
	rt := s.k.repliesByTime(pid, parent)
	var members *rdb.StringSliceCmd
	if err := s.pipeline(ctx, []op{{key: rt, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		members = p.ZRange(ctx, rt, 0, -1)
		return members, nil
	}}}, false); err != nil {
		return nil, fmt.Errorf("list the replies of %s: %w", commentID(pid, parent), err)
	}
	nums := members.Val()
	keys := make([]string, len(nums))
	for i, n := range nums {
		keys[i] = s.k.comment(pid, n)
	}
	return keys, nil
}
