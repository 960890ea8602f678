package store

import (
	"context"
	"fmt"
)

// Hooks of the moderation of content for the external tests of package store_test.

// ModeratePostScriptOnly runs only the atomic step of a moderation of a post (its repair note and
// its script), as a process that stops right after it would: nothing derived, nothing logged.
func (s *Store) ModeratePostScriptOnly(ctx context.Context, actor UserKey, id string, kind ModActionKind, reason string) error {
	pid, err := PostKey(id)
	if err != nil {
		return err
	}
	via, _, err := s.moderationStart(ctx, actor, pid, &reason, true, undoVia{}, false)
	if err != nil {
		return err
	}
	_, err = s.run(ctx, "moderate_post", []string{s.k.post(pid), s.k.postModOutbox(pid), s.k.postTexts(pid)},
		string(kind), string(actor), via, "1", reason, s.now().UnixMilli(), pid)
	return err
}

// PinScriptOnly is ModeratePostScriptOnly for a pin.
func (s *Store) PinScriptOnly(ctx context.Context, actor UserKey, id, group string) error {
	pid, err := PostKey(id)
	if err != nil {
		return err
	}
	if _, err := s.allowWrite(ctx, string(actor), repairGroup+":"+group); err != nil {
		return err
	}
	_, err = s.run(ctx, "pin_post", []string{s.k.groupPins(group), s.k.groupMods(group), s.k.groupModOutbox(group)},
		pid, "1", string(actor), "0", MaxPins, s.now().UnixMilli(), "0", "", group)
	return err
}

// CheckThread checks the counters and indexes of a post's thread against its comments: the
// post's live count, each comment's replies (the size of its reply indexes) and held (its direct
// replies kept out of the tree), and that the reply indexes hold exactly the comments in the
// tree — those live or with replies there.
func (s *Store) CheckThread(ctx context.Context, pid string) error {
	nums, err := s.threadNums(ctx, pid)
	if err != nil {
		return err
	}
	type node struct {
		h        map[string]string
		children []string
	}
	nodes := map[string]*node{topLevel: {h: map[string]string{}}}
	for _, n := range nums {
		h, err := s.rdb.HGetAll(ctx, s.k.comment(pid, n)).Result()
		if err != nil {
			return err
		}
		h = unpackCommentHash(h)
		if h["created"] == "" {
			return fmt.Errorf("comment %s in the ids has no hash: %v", n, h)
		}
		nodes[n] = &node{h: h}
	}
	live := 0
	for n, nd := range nodes {
		if n == topLevel {
			continue
		}
		if nd.h["deleted"] != "1" && nd.h["removed"] != "1" {
			live++
		}
		parent, ok := nodes[nd.h["parent"]]
		if !ok {
			return fmt.Errorf("comment %s: parent %s missing", n, nd.h["parent"])
		}
		parent.children = append(parent.children, n)
	}
	inTree := func(n string) bool {
		h := nodes[n].h
		return h["deleted"] != "1" && h["removed"] != "1" || atoi64(h["replies"]) > 0
	}
	post, err := s.rdb.HGet(ctx, s.k.post(pid), "comments").Result()
	if err != nil {
		return err
	}
	if atoi64(post) != int64(live) {
		return fmt.Errorf("post %s counts %s live comments, there are %d", pid, post, live)
	}
	for n, nd := range nodes {
		rt, err := s.rdb.ZRange(ctx, s.k.repliesByTime(pid, n), 0, -1).Result()
		if err != nil {
			return err
		}
		// A parent keeps its other orders once marked (reply_orders.lua), and is marked from
		// replyOrdersAt replies on; they then hold what its time order holds, and nothing before.
		mark, err := s.rdb.HGet(ctx, s.k.replyMark(pid, n), "o").Result()
		if err != nil && !isNil(err) {
			return err
		}
		if len(rt) >= replyOrdersAt && mark != "1" {
			return fmt.Errorf("comment %s: %d replies, not marked", n, len(rt))
		}
		for _, k := range s.k.replyOrders(pid, n)[1:] {
			card, err := s.rdb.ZCard(ctx, k).Result()
			if err != nil {
				return err
			}
			want := len(rt)
			if mark != "1" {
				want = 0
			}
			if int(card) != want {
				return fmt.Errorf("comment %s: %s holds %d replies, want %d (the time order %d, mark %q)", n, k, card, want, len(rt), mark)
			}
		}
		want := map[string]bool{}
		held := 0
		for _, c := range nd.children {
			if inTree(c) {
				want[c] = true
			} else {
				held++
			}
		}
		got := map[string]bool{}
		for _, c := range rt {
			got[c] = true
		}
		if len(got) != len(want) {
			return fmt.Errorf("comment %s: indexes hold %v, want %v", n, rt, want)
		}
		for c := range want {
			if !got[c] {
				return fmt.Errorf("comment %s: reply %s missing from its indexes %v", n, c, rt)
			}
		}
		if n == topLevel {
			continue
		}
		if r := atoi64(nd.h["replies"]); r != int64(len(want)) { // missing: 0 (layout_counts.go)
			return fmt.Errorf("comment %s counts %d replies, its indexes hold %d", n, r, len(want))
		}
		if h := atoi64(nd.h["held"]); h != int64(held) {
			return fmt.Errorf("comment %s holds %d out of the tree, counts %d", n, held, h)
		}
		if !inTree(n) && nd.h["removed"] != "1" && held == 0 {
			return fmt.Errorf("comment %s is a deleted comment out of the tree that holds nothing", n)
		}
	}
	return nil
}
