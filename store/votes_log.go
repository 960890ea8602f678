package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// The votes a user cast are kept on the items voted on — a hash per post and per comment, keyed by
// voter — which is what reads need. For the account's export and deletion, each user also keeps a
// log of the items they voted on, {u:<name>}:voted: a string of entries "p17," (post 17) and
// "c17:4," (comment 4 of post 17), appended in the vote's first round trip, before its script
// runs. So an entry may name an item the vote never reached (refused, or its process stopped),
// which the readers skip (the item holds no vote by the user), but no vote is ever missing from
// it. A vote changed or withdrawn appends again; readers take each item once. It costs ~7 bytes a
// vote, and the log is never compacted (an account that votes a million times keeps ~7 MB).

// votedWindow is how many bytes of a vote log one read takes (about 500 entries).
const votedWindow = 4096

// votedOp appends entry (see above) to uid's vote log: an op for the vote's first round trip.
func (s *Store) votedOp(ctx context.Context, uid, entry string) op {
	key := s.k.userVoted(uid)
	return op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		return p.Append(ctx, key, entry+","), nil
	}}
}

// votedEntries reads the entries of uid's vote log that start at byte from (the start of an
// entry) and within votedWindow bytes, and returns them with the offset of the next entry; next is
// -1 when the log holds no more.
func (s *Store) votedEntries(ctx context.Context, uid string, from int64) (entries []string, next int64, err error) {
	key := s.k.userVoted(uid)
	var rng *rdb.StringCmd
	if err := s.pipeline(ctx, []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		rng = p.GetRange(ctx, key, from, from+votedWindow-1)
		return rng, nil
	}}}, false); err != nil {
		return nil, 0, fmt.Errorf("read the votes of %s: %w", uid, err)
	}
	chunk := rng.Val()
	last := strings.LastIndexByte(chunk, ',')
	if last < 0 {
		if len(chunk) == votedWindow {
			return nil, 0, fmt.Errorf("read the votes of %s: an entry longer than %d bytes at %d", uid, votedWindow, from)
		}
		return nil, -1, nil // the end (an entry cut off by a failed append would end here)
	}
	entries = strings.Split(chunk[:last], ",")
	next = from + int64(last) + 1
	if len(chunk) < votedWindow {
		next = -1
	}
	return entries, next, nil
}

// votedItem is the votes hash of the item an entry of a vote log names and its global id, or false
// for an entry that names nothing.
func (s *Store) votedItem(entry string) (votesKey, id string, ok bool) {
	switch {
	case strings.HasPrefix(entry, "p"):
		pid := entry[1:]
		if _, err := PostKey(postID(pid)); err != nil {
			return "", "", false
		}
		return s.k.postVotes(pid), postID(pid), true
	case strings.HasPrefix(entry, "c"):
		pid, num, err := CommentKey(TypeComment + ":" + entry[1:])
		if err != nil {
			return "", "", false
		}
		return s.k.commentVotes(pid, num), commentID(pid, num), true
	}
	return "", "", false
}

// commentVoteEntry is the vote-log entry of comment num (stored form) of post pid.
func commentVoteEntry(pid, num string) string { return "c" + pid + ":" + shortNum(num) }

// exportVote is one vote of an export: the item voted on and the vote, 1 or -1.
type exportVote struct {
	ItemID string `json:"itemId"`
	Vote   int    `json:"vote"`
}

// votes writes the account's votes: each item of its vote log once, with the vote it holds now
// (withdrawn votes, and entries of votes that never landed, are left out), a window of the log
// per round trip, flushed after each. The items already written are remembered, ~50 bytes each.
func (e *exporter) votes(ctx context.Context) error {
	seen := map[string]bool{}
	for from := int64(0); from >= 0; {
		entries, next, err := e.s.votedEntries(ctx, e.uid, from)
		if err != nil {
			return err
		}
		from = next
		ids := make([]string, 0, len(entries))
		cmds := make([]*rdb.StringCmd, 0, len(entries))
		ops := make([]op, 0, len(entries))
		for _, en := range entries {
			key, id, ok := e.s.votedItem(en)
			if !ok || seen[en] {
				continue
			}
			seen[en] = true
			i := len(cmds)
			ids, cmds = append(ids, id), append(cmds, nil)
			ops = append(ops, op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				cmds[i] = p.HGet(ctx, key, e.uid)
				return cmds[i], nil
			}})
		}
		if len(ops) == 0 {
			continue
		}
		if err := e.s.pipeline(ctx, ops, false); err != nil && !isNil(err) {
			return fmt.Errorf("read votes: %w", err)
		}
		for i, c := range cmds {
			switch c.Val() {
			case "1":
				e.item(exportVote{ItemID: ids[i], Vote: 1})
			case "-1":
				e.item(exportVote{ItemID: ids[i], Vote: -1})
			}
		}
		if err := e.flush(); err != nil {
			return err
		}
	}
	return nil
}

// eraseVotes takes the deleted account uid's name off the votes of the window of its vote log
// that starts at byte from (account deletion's "votes" step), and returns the offset of the next
// window, -1 after the last. The votes stay counted.
func (s *Store) eraseVotes(ctx context.Context, uid string, from int64) (int64, error) {
	entries, next, err := s.votedEntries(ctx, uid, from)
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	var calls []scriptCall
	for _, en := range entries {
		key, _, ok := s.votedItem(en)
		if !ok || seen[en] {
			continue
		}
		seen[en] = true
		calls = append(calls, scriptCall{name: "unvote_voter", keys: []string{key}, args: []any{uid}})
	}
	if len(calls) > 0 {
		if err := s.runMany(ctx, calls); err != nil {
			return 0, fmt.Errorf("take the name off the votes of %s: %w", uid, err)
		}
	}
	return next, nil
}
