package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agora/agora/jobs"
)

// A write is an atomic step (one script on its aggregate's slot) followed by derived writes on
// other slots: rankings, the author's post list, feeds, karma, the name index. If the process
// stops, or Redis's replies are lost, between the two, the write is half-done: stored and
// readable, but missing from the lists derived from it. Repair jobs finish such writes by
// themselves:
//
//   - Before its atomic step a write notes its item in a repair job (repair:<item>, see package
//     jobs) due RepairGrace later; a later write of the same item moves it later again.
//   - When its derived writes are done it settles the job — unless the item was noted again
//     meanwhile by a later write of the same item, whose own reminder must stay.
//   - A job left due runs in whichever process claims it, with a lease (a process that dies
//     mid-repair leaves it due again when the lease ends), and derives the item again from its
//     aggregate as it is now: every derived write is absolute and version-guarded, so doing it
//     again is harmless.
//
// A write that fails before its atomic step leaves a job that finds nothing to do.

// RepairGrace is how long a noted write has to finish its derived writes before a repair job
// does them; longer than any write takes, including its retries.
const RepairGrace = 15 * time.Second

// jobRepair is the job that finishes a half-done write: its argument is the item.
const jobRepair = "repair"

// Items of repair jobs.
const (
	repairPost = "post" // post:<id>[:<groups it left>]: rankings, author's list, feeds, karma
	// postchange:<id>[:<groups it left>]: repairPost but the post's announcement (the push to
	// the feeds, the notifications of its mentions and of its groups' watchers), which only its
	// creation and its restoration make: the note of every other change of a post.
	repairPostChange = "postchange"
	repairComment    = "comment" // comment:<post>:<num>: its post's rankings, its author's karma
	repairUser       = "user"    // user:<key>: the name index and the leaderboard
	repairFollow     = "follow"  // follow:<a>:<b>: b's followers, a's pull set, a's feed
	repairDraft      = "draft"   // draft:<user>:<post>: a scheduled post's publish job, at its time
	repairReport     = "report"  // report:<user>:<target global id>: a report's write in {reports}
	repairResolve    = "resolve" // resolve:<report id>: a resolve's reporter side, the {reports} outbox
	repairBan        = "ban"     // ban:<scope>:<user>: the user's copy of the ban, the scope's outbox
)

// note is a write's repair job.
type note struct {
	item string
	due  time.Time // when it was noted to run, to settle exactly this note
}

// noteCall is the script call that notes item for repair before a write's atomic step, and the
// note it makes. allowWrite sends it with the write's rate limit.
func (s *Store) noteCall(item string) (note, scriptCall) {
	// Two writes of one item share its job: the second's note leaves it where neither settles it
	// (jobs.NoteCall), so a write that stopped half-way is repaired even when a later write of
	// the same item finished.
	n := note{item: item, due: s.now().Add(RepairGrace).Truncate(time.Microsecond)}
	c, err := s.jobs.NoteCall(jobs.Job{ID: jobRepair + ":" + item, Kind: jobRepair, Arg: item, At: n.due})
	if err != nil {
		panic("store: bad repair item " + item) // items are built here, without newlines
	}
	call := jobCall(c)
	call.unreplicated = true // see scriptCall
	return n, call
}

// noteRepair notes item for repair, for a write whose item is known only after its rate limit (a
// new post's id).
func (s *Store) noteRepair(ctx context.Context, item string) (note, error) {
	n, c := s.noteCall(item)
	if _, err := s.runScripts(ctx, []scriptCall{c}); err != nil {
		return note{}, fmt.Errorf("note %s for repair: %w", item, err)
	}
	return n, nil
}

// settled settles a write's repair job once its derived writes are done. A failure only leaves
// a repair job that redoes them, so it is logged, not returned.
func (s *Store) settled(ctx context.Context, n note) {
	if n.item == "" {
		return
	}
	if err := s.jobs.Settle(ctx, jobRepair+":"+n.item, n.due); err != nil {
		s.opts.Log.WarnContext(ctx, "settle the repair job of a finished write", "item", n.item, "err", err)
	}
}

// settleCalls is the call that settles n's repair job, for a write to send with its last
// derived write (see settled): none for an empty note.
func (s *Store) settleCalls(n note) []scriptCall {
	if n.item == "" {
		return nil
	}
	return []scriptCall{jobCall(s.jobs.SettleCall(jobRepair+":"+n.item, n.due))}
}

// runRepairJob derives a half-done write's item again.
func (s *Store) runRepairJob(ctx context.Context, j jobs.Job) error { return s.repair(ctx, j.Arg) }

// repair derives one item again.
func (s *Store) repair(ctx context.Context, item string) error {
	kind, rest, _ := strings.Cut(item, ":")
	switch kind {
	case repairPost, repairPostChange:
		pid, left, _ := strings.Cut(rest, ":")
		return s.repairPost(ctx, pid, splitGroups(left), kind == repairPost)
	case repairComment:
		pid, num, _ := strings.Cut(rest, ":")
		return s.repairComment(ctx, pid, num)
	case repairUser:
		return s.repairUser(ctx, rest)
	case repairFollow:
		a, b, _ := strings.Cut(rest, ":")
		return s.repairFollow(ctx, a, b)
	case repairDraft:
		uid, pid, _ := strings.Cut(rest, ":")
		return s.syncPublishJob(ctx, uid, pid)
	case repairReport:
		uid, target, _ := strings.Cut(rest, ":")
		return s.repairReport(ctx, uid, target)
	case repairResolve:
		return s.repairResolve(ctx, rest)
	case repairGroup:
		return s.repairGroupItem(ctx, rest)
	case repairMember:
		uid, g, _ := strings.Cut(rest, ":")
		// Its account deleted meanwhile, the membership is taken off as the chain does.
		if err := s.memberChecked(ctx, uid, g, followRead); !errors.Is(err, errDeletedMeanwhile) {
			return err
		}
		return nil
	case repairBan:
		scope, user, _ := strings.Cut(rest, ":")
		return s.repairBan(ctx, scope, user)
	case repairConversation:
		a, b, _ := strings.Cut(rest, ":")
		return s.syncConversation(ctx, a, b)
	}
	s.opts.Log.WarnContext(ctx, "repair: unknown item dropped", "item", item)
	return nil
}

// repairPost derives a post's entries from its hash: a live post is indexed (and taken out of
// the groups in left it is no longer in), with announce pushed to its author's followers' feeds
// and its mentions and its groups' watchers notified, and counted in its author's karma — or,
// its author's account deleted, disowned or erased as the deletion's chain does; a removed one leaves every list and feed; a
// deleted one leaves every list and feed and its thread is dropped. The moderation actions on
// the post and its comments that their writes left unlogged go into the moderation log. A post
// whose hash is gone (it never got created, or its tombstone expired) is rebuild's to clean up.
//
// Only a post's creation and restoration announce it: the repair of a vote, an edit or a label
// that announced the post again would notify of an old post whoever watches its groups now.
func (s *Store) repairPost(ctx context.Context, pid string, left []string, announce bool) error {
	if err := s.flushModOutbox(ctx, s.k.postModOutbox(pid)); err != nil {
		return err
	}
	h, err := s.postHash(ctx, pid) // with its texts, for its search index
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
	// Its author's deletion is read where the post is listed, as CreatePost reads it: a write cut
	// off before its listing, whose author's deletion ran its chain since, is disowned or erased
	// here, as the chain does (authorGone).
	read, authorDeleted := s.authorGone(ctx, string(p.Author))
	if err := s.indexPostIn(ctx, p, gone, true, []op{read}, s.searchWrites(postSearchDoc(p, false)).repairing()); err != nil {
		return err
	}
	if deleted, erase, err := authorDeleted(); err != nil {
		return err
	} else if deleted {
		if err := s.disownPost(ctx, string(p.Author), pid, erase); err != nil {
			return err
		}
		if erase || p.Removed || p.Erased || !announce {
			return nil
		}
		// Kept, as its author's deletion keeps the others: its mentions and its groups' watchers
		// hear of it, as they would have had its write not been cut off. The deleted account has
		// no karma to count it in.
		return s.queuePostJobs(ctx, pid)
	}
	if p.Removed || p.Erased {
		if err := s.unfeedPost(ctx, pid, string(p.Author)); err != nil {
			return err
		}
	} else if announce {
		if err := s.queuePostJobs(ctx, pid); err != nil {
			return err
		}
	}
	if err := s.recordKarma(ctx, string(p.Author), p.ID, p.Net(), p.Version); err != nil {
		return err
	}
	if p.Removed || p.Erased || !announce {
		return nil
	}
	// A creation cut off before its announcement is announced now; any other finds it done.
	return s.announcePost(ctx, pid, p, h)
}

// repairComment ranks the comment's post again (its comment count and last activity), records the
// comment's net votes in its author's karma, indexes its text and lists it in its author's
// comments.
func (s *Store) repairComment(ctx context.Context, pid, num string) error {
	if err := s.rerankPost(ctx, pid); err != nil {
		return err
	}
	hs, err := s.commentHashes(ctx, pid, []string{num})
	if err != nil {
		return fmt.Errorf("repair comment %s: %w", commentID(pid, num), err)
	}
	h := hs[0]
	c := commentFromHash(pid, num, h)
	if c == nil || c.Author == "" {
		// A deleted comment (a tombstone, or the marker of one removed for good): out of its
		// author's list, the deletion's step.
		if a := h["author"]; a != "" && (h["deleted"] == "1" || h["gone"] == "1") {
			return s.runMany(ctx, []scriptCall{s.userCommentCall(a, pid, num, nil)})
		}
		return nil
	}
	if err := s.indexComment(ctx, c, true); err != nil {
		return err
	}
	read, authorDeleted := s.authorGone(ctx, string(c.Author)) // as repairPost
	if err := s.listComment(ctx, string(c.Author), c, read); err != nil {
		return err
	}
	if deleted, erase, err := authorDeleted(); err != nil {
		return err
	} else if deleted {
		return s.disownComment(ctx, string(c.Author), userCommentMember(pid, num), erase)
	}
	if err := s.recordKarma(ctx, string(c.Author), c.ID, c.Upvotes-c.Downvotes, c.Version); err != nil {
		return err
	}
	// A creation cut off before its announcement is announced now; any other finds it done.
	return s.announceComment(ctx, pid, num)
}

// repairUser puts an existing user into the name index, the users' search index and on the
// leaderboard.
func (s *Store) repairUser(ctx context.Context, uid string) error {
	n, err := s.cmd().Exists(ctx, s.k.user(uid)).Result()
	if err != nil {
		return fmt.Errorf("repair user %s: %w", uid, err)
	}
	if n == 0 {
		return nil
	}
	return s.registerUser(ctx, uid, true)
}

// repairFollow mirrors the relation a → b as a's side records it now, and for a present one queues
// b's notification of it (a follow cut off before it queued it; the notification is made once).
// Either account deleted meanwhile, the relation is taken off as the deletion's chain does
// (followChecked), and nobody is notified.
func (s *Store) repairFollow(ctx context.Context, a, b string) error {
	rel, err := s.followChecked(ctx, a, b, followRead)
	if errors.Is(err, errDeletedMeanwhile) || errors.Is(err, errFolloweeDeleted) {
		return nil
	}
	if err != nil {
		return err
	}
	if rel.present {
		return s.queueFollowNotice(ctx, a, b)
	}
	return nil
}
