package store

import (
	"context"
	"fmt"
	"math"
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
		cmds := make([]*rdb.StringSliceCmd, len(part))
		for i, num := range part {
			key := s.k.comment(pid, num)
			ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				cmds[i] = hmgetComment(ctx, p, key, "parent")
				return cmds[i], nil
			}}
		}
		if err := s.pipeline(ctx, ops, false); err != nil {
			return scored, fmt.Errorf("read the comments of post %s: %w", pid, err)
		}
		keys := []string{s.k.post(pid)}
		var args []any
		for i, c := range cmds {
			v, err := c.Result()
			if err != nil {
				return scored, fmt.Errorf("read comment %s: %w", commentID(pid, part[i]), err)
			}
			parent := commentValues([]string{"parent"}, v)[0]
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
		n, err := replyInt("rescore_comments", v)
		if err != nil {
			return scored, err
		}
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

// A reply list in TOP, BEST or CONTROVERSIAL order is read with the first replyOrdersAt members
// of the parent's time order beside its page of the sorted set (replyListRead), in the same
// pipeline, because the reader learns only from them whether the parent keeps that order: with
// replyOrdersAt members or more it does (the script that adds the replyOrdersAt-th reply builds
// the orders), and the sorted set's page is the page; with fewer the time order holds every reply,
// which the reader then reads whole — their hashes, with their vote counts, in the pipeline that
// reads the page's comments anyway — and ranks as the sorted set would (rankReplies): the same
// scores, computed as comment_scores.lua computes them, the same ties, the same cursors, so that
// a cursor stays valid when the parent starts keeping the order. A parent below replyOrdersAt
// that keeps its orders (it had more replies once) is ranked by the reader all the same: the
// orders it keeps say the same.

// replyListRead is the read of the page sp of the direct replies of parent (topLevel for the
// post) in sort, whose sorted set is key (see commentList): for NEW and OLD the page alone; for
// the other sorts, the page and the first replyOrdersAt members of the time order.
func (l *Loader) replyListRead(pid, parent string, sort CommentSort, key string, desc bool, sp span, w Window) read {
	page := l.shownPageRead(key, desc, sp, w)
	if sort == CommentsNew || sort == CommentsOld {
		return page
	}
	rt := l.s.k.repliesByTime(pid, parent)
	return read{key: "rl:" + page.key, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		parts := [2]call{{r: page}, {r: read{rkey: rt}}}
		c.parts = []*call{&parts[0], &parts[1]}
		// The time order first: a reply that brings the parent to replyOrdersAt between the two
		// reads builds the sorted set before the page reads it; read after the page, the time
		// order would show the parent past the threshold beside the page of a sorted set not yet
		// built (an empty page). The sorted set, once built, stays while the parent lives.
		c.parts[1].cmd = sendZRange(ctx, p, &c.parts[1].r.rkey, 0, replyOrdersAt-1, false, false)
		page.fill(ctx, p, c.parts[0])
		// The commands a retry looks at (see pipeline): the page's range or script, and the
		// time order's range.
		c.cmd, c.cmd2 = lastCmd(c.parts[0]), c.parts[1].cmd
	}}
}

// fewReplies returns the members of the time order a done reply list read (replyListRead) read,
// when they are all the parent's replies (fewer than replyOrdersAt), in time order; ok is false
// for a read of NEW or OLD, and for a parent with replyOrdersAt replies or more, whose page is
// the sorted set's (pageOf).
func fewReplies(c *call) (members []string, ok bool) {
	if len(c.parts) != 2 || c.r.merge != nil {
		return nil, false
	}
	cmd, _ := c.parts[1].cmd.(*rdb.StringSliceCmd)
	if cmd == nil || len(cmd.Val()) >= replyOrdersAt {
		return nil, false
	}
	return cmd.Val(), true
}

// withVotes returns fs with the vote counts, which ranking replies needs (zero reads them all).
func withVotes(fs CommentFields) CommentFields {
	if fs == 0 {
		return 0
	}
	return fs | CommentUp | CommentDown
}

// replyScore returns the score of a reply with up and down votes in its parent's order sort
// (TOP, BEST or CONTROVERSIAL): what comment_scores.lua writes, computed in the same order of
// operations, so that it is the same float64 (every conversion is explicit, which keeps the
// compiler from fusing a multiplication and an addition, as Lua does not).
func replyScore(sort CommentSort, up, down int) float64 {
	switch sort {
	case CommentsBest:
		if up <= 0 {
			return 0
		}
		n, z := float64(up+down), 1.96
		p := float64(up) / n
		zz := float64(z * z)
		root := math.Sqrt((float64(p*(1-p)) + zz/(4*n)) / n)
		return (p + zz/(2*n) - float64(z*root)) / (1 + zz/n)
	case CommentsControversial:
		if up <= 0 || down <= 0 {
			return 0
		}
		return replyPow(float64(up+down), float64(min(up, down))/float64(max(up, down)))
	}
	return float64(up - down)
}

// replyLn2 is the float64 nearest ln 2.
const replyLn2 = 0.6931471805599453

// replyPow returns n ^ x for an integer n >= 1 and 0 <= x <= 1 as comment_scores.lua's replyPow
// does, operation for operation, so that CONTROVERSIAL's scores are the same float64 in the reply
// orders and in the reader (math.Pow and C's pow differ in the last bit for some votes). It is
// within a few units in the last place of math.Pow (TestReplyPow).
func replyPow(n, x float64) float64 {
	m, e := n, 0.0
	for m >= 2 {
		m, e = m/2, e+1
	}
	s := (m - 1) / (m + 1)
	s2, term, sum := float64(s*s), s, 0.0
	for k := range 20 {
		sum += term / float64(2*k+1)
		term = float64(term * s2)
	}
	y := float64(x * (float64(e*replyLn2) + float64(2*sum)))
	k := math.Floor(y / replyLn2)
	r := y - float64(k*replyLn2)
	t, ex := 1.0, 1.0
	for i := 1; i <= 20; i++ {
		t = float64(t*r) / float64(i)
		ex += t
	}
	for ; k > 0; k-- {
		ex *= 2
	}
	return ex
}

// rankReplies ranks the replies of a parent with fewer than replyOrdersAt replies in sort and
// returns the page of the span sp, as a page read of the parent's sorted set would: members are
// the whole time order, cs their comments as read (nil for one gone since), w what the response
// shows (a page read without the total or the cursors has neither). It returns too where each
// of the page's members is in members.
func rankReplies(sort CommentSort, members []string, cs []*Comment, sp span, w Window) (rawPage, []int) {
	ranked := make([]rankedEntry, 0, len(members))
	for i, m := range members {
		if c := cs[i]; c != nil {
			ranked = append(ranked, rankedEntry{id: m, score: replyScore(sort, c.Upvotes, c.Downvotes), at: i})
		}
	}
	rp, page := rankPage(ranked, sp)
	if w.NoTotal && sp.open() {
		rp.total = 0
	}
	if w.NoCursors && sp.open() {
		rp.scores = nil
	}
	at := make([]int, len(page))
	for i, e := range page {
		at[i] = e.at
	}
	return rp, at
}
