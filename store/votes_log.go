package store

import (
	"context"
	"fmt"
	"math/bits"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
)

// The votes a user cast are kept on the items voted on — a hash per post keyed by voter, and the
// buckets of a thread's comments keyed by comment and voter (keys.go commentVotes) — which is what
// reads need. For the account's export and deletion, each user also keeps a
// log of the items they voted on, {u:<name>}:voted: a string of entries "p17," (post 17) and
// "c17:4," (comment 4 of post 17), appended in the vote's first round trip, before its script
// runs. So an entry may name an item the vote never reached (refused, or its process stopped),
// which the readers skip (the item holds no vote by the user), but no vote is ever missing from
// it. A vote changed or withdrawn appends again; readers take each item once. It costs ~7 bytes a
// vote.
//
// Compaction. So that a vote changed or withdrawn many times does not grow the log for ever, a
// vote whose append takes the log past a power of two from votedCompactAt bytes up (4 KB, 8 KB,
// 16 KB, …) queues a job (jobCompactVotes) that rewrites it: each item once, and none whose vote
// is withdrawn for good — the item holds no vote of the user and can take none any more (it is
// gone, or its voting closed more than votedCloseSlack ago, so no vote in flight can land on it).
// An entry of an item still open is kept even without a vote: its vote may be in flight (its
// append comes before its script). The rewrite is one script on the user's slot
// (voted_compact.lua): the compacted head, then whatever was appended since the head was read,
// under a compaction count that the readers check (votedEntries: a reader that sees it move
// reads again from the start, remembering what it has written), and never once the account is
// deleted. So the log stays within about twice its compacted size: an entry per item voted on
// that holds a vote, or is still open.

// votedWindow is how many bytes of a vote log one read takes (about 500 entries).
const votedWindow = 4096

// votedCompactAt is the least length of a vote log (bytes) whose growth queues its compaction.
const votedCompactAt = 4096

// votedCloseSlack is how long after an item's voting closed its entry may be dropped from a vote
// log without its vote: longer than any clock skew between servers (a vote's script checks the
// closing time against the clock of the server that sent it).
const votedCloseSlack = 24 * time.Hour

// jobCompactVotes is the job that compacts a user's vote log ("<user>").
const jobCompactVotes = "compact-votes"

// votedOp appends entry (see above) to uid's vote log: an op for the vote's first round trip.
// *dst gets the APPEND, whose reply is the log's length after it (see compactVotedLater).
func (s *Store) votedOp(ctx context.Context, uid, entry string, dst **rdb.IntCmd) op {
	key := s.k.userVoted(uid)
	return op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		*dst = p.Append(ctx, key, entry+",")
		return *dst, nil
	}}
}

// compactVotedLater queues the compaction of uid's vote log when the append (a votedOp's) took it
// past a power of two from votedCompactAt up. A job already waiting is left as it is. It costs a
// round trip only then; a failure to queue is logged, not returned: the vote is done, and the
// next threshold queues it again.
func (s *Store) compactVotedLater(ctx context.Context, uid, entry string, appended *rdb.IntCmd) {
	if appended == nil || appended.Err() != nil {
		return
	}
	n := appended.Val()
	before := max(n-int64(len(entry))-1, 0)
	if n < votedCompactAt || bits.Len64(uint64(before)) == bits.Len64(uint64(n)) { // no power of two passed
		return
	}
	job := jobs.Job{ID: jobCompactVotes + ":" + uid, Kind: jobCompactVotes, Arg: uid}
	if err := s.jobs.Enqueue(ctx, job); err != nil {
		s.opts.Log.WarnContext(ctx, "vote log: compaction not queued", "user", uid, "err", err)
	}
}

// runCompactVotes compacts the vote log of the user the job names (see above).
func (s *Store) runCompactVotes(ctx context.Context, j jobs.Job) error {
	if !validUserName(j.Arg) {
		return fmt.Errorf("%s job: bad argument %q", j.Kind, j.Arg)
	}
	_, _, err := s.compactVoted(ctx, j.Arg)
	return err
}

// compactVoted rewrites uid's vote log (see above) and returns its length before and after; after
// is -1 when the rewrite was not written (the account is deleted, or another compaction ran
// meanwhile). It reads the log a window per round trip, then the items' votes and closing times
// in one pipeline per window of items.
func (s *Store) compactVoted(ctx context.Context, uid string) (before, after int64, err error) {
	var order []string
	seen := map[string]bool{}
	head, gen := int64(0), int64(-1)
	for from := int64(0); from >= 0; {
		entries, next, g, err := s.votedEntries(ctx, uid, from)
		if err != nil {
			return 0, 0, err
		}
		if gen >= 0 && g != gen {
			return 0, -1, nil // compacted meanwhile: the next threshold comes again
		}
		gen = g
		for _, en := range entries {
			head += int64(len(en)) + 1
			if !seen[en] {
				seen[en] = true
				order = append(order, en)
			}
		}
		from = next
	}
	if head == 0 {
		return 0, 0, nil
	}
	keep, err := s.votedKept(ctx, uid, order)
	if err != nil {
		return 0, 0, err
	}
	var b strings.Builder
	for i, en := range order {
		if keep[i] {
			b.WriteString(en)
			b.WriteByte(',')
		}
	}
	reply, err := s.run(ctx, "voted_compact", []string{s.k.userVoted(uid), s.k.userVotedGen(uid), s.k.user(uid)},
		head, gen, b.String())
	if err != nil {
		return 0, 0, fmt.Errorf("compact the vote log of %s: %w", uid, err)
	}
	n, err := replyInt("voted_compact", reply)
	if err != nil {
		return 0, 0, err
	}
	return head, n, nil
}

// votedKept reports, for each entry of a vote log, whether the compacted log keeps it: the item
// holds a vote of uid, or can still take one (see above). Entries that name nothing go.
func (s *Store) votedKept(ctx context.Context, uid string, entries []string) ([]bool, error) {
	keep := make([]bool, len(entries))
	const batch = 500
	deadline := s.now().Add(-votedCloseSlack).UnixMilli()
	for start := 0; start < len(entries); start += batch {
		part := entries[start:min(start+batch, len(entries))]
		votes := make([]*rdb.StringCmd, len(part))
		legacy := make([]*rdb.StringCmd, len(part))
		closes := make([]*rdb.SliceCmd, len(part))
		var ops []op
		for i, en := range part {
			r, ok := s.votedItem(en, uid)
			if !ok {
				continue
			}
			hk := s.votedItemHash(en)
			ops = append(ops, op{key: r.key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				votes[i], legacy[i] = s.voteRead(ctx, p, r, uid)
				return votes[i], cmder(legacy[i])
			}}, op{key: hk, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				closes[i] = p.HMGet(ctx, hk, commentArgNames("closes")...) // a post's hash has no m
				return closes[i], nil
			}})
		}
		if err := s.pipeline(ctx, ops, false); err != nil && !isNil(err) {
			return nil, fmt.Errorf("read the votes of %s: %w", uid, err)
		}
		for i := range part {
			if votes[i] == nil {
				continue
			}
			if v := voteOf(votes[i], legacy[i]); v == "1" || v == "-1" {
				keep[start+i] = true
				continue
			}
			c := ""
			if v := closes[i].Val(); len(v) == 2 {
				c = commentValues([]string{"closes"}, strs(v))[0]
			}
			keep[start+i] = c != "" && atoi64(c) > deadline
		}
	}
	return keep, nil
}

// votedItemHash is the hash of the item an entry of a vote log names (see votedItem, which checks
// the entry).
func (s *Store) votedItemHash(entry string) string {
	if strings.HasPrefix(entry, "p") {
		return s.k.post(entry[1:])
	}
	pid, num, _ := CommentKey(TypeComment + ":" + entry[1:])
	return s.k.comment(pid, num)
}

// votedEntries reads the entries of uid's vote log that start at byte from (the start of an
// entry) and within votedWindow bytes, and returns them with the offset of the next entry and the
// log's compaction count, read with them; next is -1 when the log holds no more. A reader that
// walks the log by offset and sees the count move starts again from 0: the offsets it had are of
// the log before the compaction.
func (s *Store) votedEntries(ctx context.Context, uid string, from int64) (entries []string, next, gen int64, err error) {
	key, genKey := s.k.userVoted(uid), s.k.userVotedGen(uid)
	var rng, g *rdb.StringCmd
	if err := s.pipeline(ctx, []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		rng, g = p.GetRange(ctx, key, from, from+votedWindow-1), p.Get(ctx, genKey)
		return rng, g
	}}}, false); err != nil && !isNil(err) {
		return nil, 0, 0, fmt.Errorf("read the votes of %s: %w", uid, err)
	}
	if err := rng.Err(); err != nil {
		return nil, 0, 0, fmt.Errorf("read the votes of %s: %w", uid, err)
	}
	gen = atoi64(g.Val())
	chunk := rng.Val()
	last := strings.LastIndexByte(chunk, ',')
	if last < 0 {
		if len(chunk) == votedWindow {
			return nil, 0, 0, fmt.Errorf("read the votes of %s: an entry longer than %d bytes at %d", uid, votedWindow, from)
		}
		return nil, -1, gen, nil // the end (an entry cut off by a failed append would end here)
	}
	entries = strings.Split(chunk[:last], ",")
	next = from + int64(last) + 1
	if len(chunk) < votedWindow {
		next = -1
	}
	return entries, next, gen, nil
}

// votedRef is where the vote of one user on the item an entry of a vote log names is kept.
type votedRef struct {
	key, field string // the votes hash and the field of the user's vote: a post's hash, or a comment's bucket
	legacy     string // for a comment, its votes hash of layout 5 (layout_cvotes.go), whose field is the user key
	id         string // the item's global id
}

// votedItem is where uid's vote on the item an entry of a vote log names is kept, or false for an
// entry that names nothing.
func (s *Store) votedItem(entry, uid string) (votedRef, bool) {
	switch {
	case strings.HasPrefix(entry, "p"):
		pid := entry[1:]
		if _, err := PostKey(postID(pid)); err != nil {
			return votedRef{}, false
		}
		return votedRef{key: s.k.postVotes(pid), field: uid, id: postID(pid)}, true
	case strings.HasPrefix(entry, "c"):
		pid, num, err := CommentKey(TypeComment + ":" + entry[1:])
		if err != nil {
			return votedRef{}, false
		}
		key, field := s.k.commentVote(pid, num, uid)
		return votedRef{key: key, field: field, legacy: s.k.legacyCommentVotes(pid, num), id: commentID(pid, num)}, true
	}
	return votedRef{}, false
}

// voteRead adds the read of the vote r names to a pipeline: an HGET, and a second of the
// comment's hash of layout 5 while votes may still be kept there (Store.legacyCommentVotes).
// voteOf gives the vote they found.
func (s *Store) voteRead(ctx context.Context, p rdb.Pipeliner, r votedRef, uid string) (cmd, legacy *rdb.StringCmd) {
	cmd = p.HGet(ctx, r.key, r.field)
	if r.legacy != "" && s.legacyCommentVotes.Load() {
		legacy = p.HGet(ctx, r.legacy, uid)
	}
	return cmd, legacy
}

// voteOf is the vote the commands of a voteRead found: "1", "-1", or "" for none.
func voteOf(cmd, legacy *rdb.StringCmd) string {
	if v := cmd.Val(); v != "" || legacy == nil {
		return v
	}
	return legacy.Val()
}

// cmder is c as a Cmder: nil for a nil c (a typed nil in an interface is not nil).
func cmder(c *rdb.StringCmd) rdb.Cmder {
	if c == nil {
		return nil
	}
	return c
}

// unvoteCall is the call of unvote_voter that takes uid's name off the vote r names.
func unvoteCall(r votedRef, uid string) scriptCall {
	if r.legacy == "" {
		return scriptCall{name: "unvote_voter", keys: []string{r.key}, args: []any{r.field}}
	}
	return scriptCall{name: "unvote_voter", keys: []string{r.key, r.legacy}, args: []any{r.field, uid}}
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
	gen := int64(-1)
	for from := int64(0); from >= 0; {
		entries, next, g, err := e.s.votedEntries(ctx, e.uid, from)
		if err != nil {
			return err
		}
		if gen >= 0 && g != gen && from > 0 {
			gen, from = g, 0 // compacted meanwhile: again from the start; seen skips what is written
			continue
		}
		gen, from = g, next
		ids := make([]string, 0, len(entries))
		cmds := make([]*rdb.StringCmd, 0, len(entries))
		legacy := make([]*rdb.StringCmd, 0, len(entries))
		ops := make([]op, 0, len(entries))
		for _, en := range entries {
			r, ok := e.s.votedItem(en, e.uid)
			if !ok || seen[en] {
				continue
			}
			seen[en] = true
			i := len(cmds)
			ids, cmds, legacy = append(ids, r.id), append(cmds, nil), append(legacy, nil)
			ops = append(ops, op{key: r.key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				cmds[i], legacy[i] = e.s.voteRead(ctx, p, r, e.uid)
				return cmds[i], cmder(legacy[i])
			}})
		}
		if len(ops) == 0 {
			continue
		}
		if err := e.s.pipeline(ctx, ops, false); err != nil && !isNil(err) {
			return fmt.Errorf("read votes: %w", err)
		}
		for i, c := range cmds {
			switch voteOf(c, legacy[i]) {
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

// afterVote settles a vote of uid's, on the item of its vote log entry, against the deletion of
// uid's account, which gone reads (authorGone) in a round trip after the vote's script. A
// deletion that landed after the vote's checks may have had its chain walk the vote log before the
// vote landed (eraseVotes found no vote to take the name off): the vote then takes the name off
// itself, as the chain does — the vote stays counted, as a deleted account's votes do — and is
// answered errDeletedMeanwhile. Either the read sees the deletion, or the chain's walk, on the
// same slot, comes after it, and so after the vote.
func (s *Store) afterVote(ctx context.Context, uid, entry string, gone func() (bool, bool, error)) error {
	deleted, _, err := gone()
	if err != nil || !deleted {
		return err
	}
	if r, ok := s.votedItem(entry, uid); ok {
		if err := s.runMany(ctx, []scriptCall{unvoteCall(r, uid)}); err != nil {
			return fmt.Errorf("take the name of %s off a vote cast across its deletion: %w", uid, err)
		}
	}
	return errDeletedMeanwhile
}

// eraseVotes takes the deleted account uid's name off the votes of the window of its vote log
// that starts at byte from (account deletion's "votes" step), and returns the offset of the next
// window, -1 after the last. The votes stay counted.
func (s *Store) eraseVotes(ctx context.Context, uid string, from int64) (int64, error) {
	// No compaction runs once the account is deleted (voted_compact.lua), so the offsets hold.
	entries, next, _, err := s.votedEntries(ctx, uid, from)
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	var calls []scriptCall
	for _, en := range entries {
		r, ok := s.votedItem(en, uid)
		if !ok || seen[en] {
			continue
		}
		seen[en] = true
		calls = append(calls, unvoteCall(r, uid))
	}
	if len(calls) > 0 {
		if err := s.runMany(ctx, calls); err != nil {
			return 0, fmt.Errorf("take the name off the votes of %s: %w", uid, err)
		}
	}
	return next, nil
}
