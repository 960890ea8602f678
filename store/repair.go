package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A write is an atomic step (one script on its aggregate's slot) followed by derived writes on
// other slots: rankings, the author's post list, feeds, karma, the name index. If the process
// stops, or Redis's replies are lost, between the two, the write is half-done: stored and
// readable, but missing from the lists derived from it. The repair journal finishes such writes
// by itself:
//
//   - Before its atomic step a write notes its item in the journal (a sorted set on one slot,
//     scored by when the item is due for repair: RepairGrace from now).
//   - When its derived writes are done it takes the note out again — unless the item was noted
//     again meanwhile by a later write of the same item, whose own note must stay.
//   - The process holding the repair lock (RunBackground) takes the items that are due, leases them (a process
//     that dies mid-repair leaves them due again when the lease ends), and derives each one again
//     from its aggregate as it is now: every derived write is absolute and version-guarded, so
//     doing it again is harmless.
//
// A write that fails before its atomic step leaves a note whose repair finds nothing to do.

// RepairGrace is how long a noted write has to finish its derived writes before the repairer
// does them; longer than any write takes, including its retries.
const RepairGrace = 15 * time.Second

// repairLease is how long a repairer holds the items it took.
const repairLease = time.Minute

// repairBatch is the most items one repair pass takes.
const repairBatch = 100

// Items of the repair journal.
const (
	repairPost    = "post"    // post:<id>[:<groups it left>]: rankings, author's list, feeds, karma
	repairComment = "comment" // comment:<post>:<num>: its author's karma
	repairUser    = "user"    // user:<key>: the name index and the leaderboard
	repairFollow  = "follow"  // follow:<a>:<b>: b's followers, a's pull set, a's feed
)

// note is a write's entry in the repair journal.
type note struct {
	item string
	due  string // the score written, to take out exactly this note
}

// noteCall is the script call that notes item in the repair journal before a write's atomic
// step, and the note it makes. allowWrite sends it with the write's rate limit.
func (s *Store) noteCall(item string) (note, scriptCall) {
	due := strconv.FormatInt(s.now().Add(RepairGrace).UnixMilli(), 10)
	return note{item: item, due: due}, scriptCall{name: "journal", keys: []string{s.k.repairs()}, args: []any{"note", item, due}}
}

// noteRepair notes item in the repair journal, for a write whose item is known only after its
// rate limit (a new post's id).
func (s *Store) noteRepair(ctx context.Context, item string) (note, error) {
	n, c := s.noteCall(item)
	if _, err := s.run(ctx, c.name, c.keys, c.args...); err != nil {
		return note{}, fmt.Errorf("note %s for repair: %w", item, err)
	}
	return n, nil
}

// settled takes a write's note out of the journal once its derived writes are done. A failure
// only leaves the repairer one more item to redo, so it is logged, not returned.
func (s *Store) settled(ctx context.Context, n note) {
	if _, err := s.run(ctx, "journal", []string{s.k.repairs()}, "done", n.item, n.due); err != nil {
		s.opts.Log.WarnContext(ctx, "repair journal: take out a finished write", "item", n.item, "err", err)
	}
}

// repairAll finishes every half-done write that is due, a batch at a time. RunBackground runs
// it every RepairInterval in the process that holds the repair lock; the journal's leases would
// let several processes share it, the lock keeps the others from polling the journal's slot.
func (s *Store) repairAll(ctx context.Context) error {
	for {
		n, err := s.Repair(ctx)
		if err != nil || n < repairBatch {
			return err
		}
	}
}

// Repair takes the writes that are due in the repair journal, at most one batch, and derives each
// again from its aggregate. It returns how many it took.
func (s *Store) Repair(ctx context.Context) (int, error) {
	now := s.now()
	reply, err := s.run(ctx, "journal", []string{s.k.repairs()}, "claim",
		now.UnixMilli(), now.Add(repairLease).UnixMilli(), repairBatch)
	if err != nil {
		return 0, fmt.Errorf("take writes to repair: %w", err)
	}
	arr, _ := reply.([]any)
	var errs []error
	for i := 0; i+1 < len(arr); i += 2 {
		n := note{item: fmt.Sprint(arr[i]), due: fmt.Sprint(arr[i+1])}
		if err := s.repair(ctx, n.item); err != nil {
			errs = append(errs, err) // leased: due again when the lease ends
			continue
		}
		s.settled(ctx, n)
	}
	if len(errs) > 0 {
		return len(arr) / 2, fmt.Errorf("repair %d of %d writes failed, first: %w", len(errs), len(arr)/2, errs[0])
	}
	return len(arr) / 2, nil
}

// repair derives one journal item again.
func (s *Store) repair(ctx context.Context, item string) error {
	kind, rest, _ := strings.Cut(item, ":")
	switch kind {
	case repairPost:
		pid, left, _ := strings.Cut(rest, ":")
		return s.repairPost(ctx, pid, splitGroups(left))
	case repairComment:
		pid, num, _ := strings.Cut(rest, ":")
		return s.repairComment(ctx, pid, num)
	case repairUser:
		return s.repairUser(ctx, rest)
	case repairFollow:
		a, b, _ := strings.Cut(rest, ":")
		return s.repairFollow(ctx, a, b)
	}
	s.opts.Log.WarnContext(ctx, "repair journal: unknown item dropped", "item", item)
	return nil
}

// repairPost derives a post's entries from its hash: a live post is indexed (and taken out of
// the groups in left it is no longer in), pushed to its author's followers' feeds, its mentions
// notified, and counted in its author's karma; a deleted one leaves every list and feed and its
// thread is dropped. A post whose hash is gone (it never got created, or its tombstone expired)
// is rebuild's to clean up.
func (s *Store) repairPost(ctx context.Context, pid string, left []string) error {
	h, err := s.rdb.HGetAll(ctx, s.k.post(pid)).Result()
	if err != nil {
		return fmt.Errorf("repair post %s: %w", pid, err)
	}
	if h["deleted"] == "1" {
		if err := s.unindexPost(ctx, pid, h["author"], splitGroups(h["groups"]), atoi64(h["ver"])); err != nil {
			return err
		}
		if err := s.unfeedPost(ctx, pid, h["author"]); err != nil {
			return err
		}
		return s.dropThread(ctx, pid)
	}
	p := s.postFromHash(pid, h)
	if p == nil {
		return nil
	}
	var gone []string
	for _, g := range left {
		if !contains(p.GroupNames, g) {
			gone = append(gone, g)
		}
	}
	if err := s.indexPost(ctx, p, gone); err != nil {
		return err
	}
	if err := s.queuePostJobs(ctx, pid); err != nil {
		return err
	}
	return s.recordKarma(ctx, string(p.Author), p.ID, p.Net(), p.Version)
}

// repairComment records a comment's net votes in its author's karma.
func (s *Store) repairComment(ctx context.Context, pid, num string) error {
	h, err := s.rdb.HGetAll(ctx, s.k.comment(pid, num)).Result()
	if err != nil {
		return fmt.Errorf("repair comment %s: %w", commentID(pid, num), err)
	}
	c := commentFromHash(pid, num, h)
	if c == nil || c.Author == "" {
		return nil
	}
	return s.recordKarma(ctx, string(c.Author), c.ID, c.Upvotes-c.Downvotes, c.Version)
}

// repairUser puts an existing user into the name index and on the leaderboard.
func (s *Store) repairUser(ctx context.Context, uid string) error {
	n, err := s.rdb.Exists(ctx, s.k.user(uid)).Result()
	if err != nil {
		return fmt.Errorf("repair user %s: %w", uid, err)
	}
	if n == 0 {
		return nil
	}
	return s.registerUser(ctx, uid)
}

// repairFollow mirrors the relation a → b as a's side records it now, and for a present one queues
// b's notification of it (a follow cut off before it queued it; the notification is made once).
func (s *Store) repairFollow(ctx context.Context, a, b string) error {
	rel, err := s.followStep(ctx, a, b, followRead)
	if err != nil {
		return err
	}
	if err := s.mirrorFollow(ctx, a, b, rel); err != nil {
		return err
	}
	if rel.present {
		return s.queueFollowNotice(ctx, a, b)
	}
	return nil
}
