package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
)

// Deleting an account (DeleteAccount, DeleteUser) is one atomic step on the user's slot and then
// a chain of jobs. The step (account_delete.lua) reduces the user's hash to a marker — created,
// deleted = 1, erase — so that the name stays reserved for ever (signup refuses it; ids derive
// from names), every read finds no such user and no session can start (the password hash is
// gone); it drops the private keys of the user's slot (saved posts, blocks, drafts, feeds,
// karma). The sessions, fields of the user's hash, end with it and their live streams with them
// (the step announces them, as sessions_end.lua does), and the notification inbox goes.
//
// The chain (jobEraseUser, "<user> <step> <batch>") then works through the user's lists, a bounded batch
// per job, each job queueing the next before it returns: posts and comments (anonymized, or with
// erase made tombstones that leave every listing, feed and count), follows both ways, group
// memberships, moderator seats (moderated.go), conversations, the watch modes (watch.go), and last the email address, the karma
// leaderboard and the name registry. The posts and comments a moderator removed have left the
// lists: the "removed-posts" and "removed-comments" steps find them in the lists' guards (the
// walk the export uses, removed_content.go), a batch per HSCAN call, the job's batch number the
// scan's cursor, and treat them as the listed ones. Each batch takes the head of its list and leaves the list without it, so a job that runs again, or
// a chain cut off and started again (a repeated deletion), goes on where it stopped. Posts and
// comments kept without erase stay in their lists (a batch is the nth of them, and anonymizing
// twice changes nothing), so that a later deletion with erase — an admin's — still finds them.
//
// Votes the user cast stay counted, without the voter's name: the "votes" step walks the user's
// vote log (votes_log.go) a window per job (its batch number is the window's offset in the log)
// and takes the user off each item's votes hash; the finish drops the log. Comments and posts
// kept without erase read as by a deleted user: a comment's author is null, a post's is
// DeletedUser.

// jobEraseUser is the kind of the deletion's jobs: "<user> <step> <batch>".
const jobEraseUser = "erase-user"

// The steps of a deletion's chain, in order.
// "nsfw-posts" is the NSFW part of the user's post list (nsfw_lists.go); "removed-posts" and
// "removed-comments" are what a moderator removed, which has left the lists (removed_content.go).
// "moderated" takes the user off the moderators of every group (moderated.go).
var eraseSteps = []string{"posts", "nsfw-posts", "comments", "removed-posts", "removed-comments", "votes", "following", "followers", "groups", "moderated", "messages", "watches", "finish"}

// eraseBatch bounds the items one job of a deletion's chain handles.
const eraseBatch = 100

// deletedName is the name DeletedUser shows; no user can have it (see validUserName).
const deletedName = "[deleted]"

// DeletedUser is the author a post of a deleted account shows (Post.author is non-null): a
// placeholder named "[deleted]", the same for every deleted account, that names nobody.
func DeletedUser() *User {
	return &User{ID: DeletedUserID, Name: deletedName, CreatedAt: deletedCreatedAt}
}

// DeletedUserID is the global id of the placeholder DeletedUser returns: a Node, so node(id)
// finds it, although no account can have its name.
const DeletedUserID = TypeUser + ":" + deletedName

// deletedCreatedAt is the creation time DeletedUser shows: the Unix epoch. Not the zero time,
// which GraphQL's Time writes as null, and User.createdAt is non-null.
var deletedCreatedAt = time.Unix(0, 0).UTC()

// IsDeletedUser reports whether u is the placeholder DeletedUser returns, without making one.
func IsDeletedUser(u *User) bool { return u.Name == deletedName }

// DeleteAccount deletes the account of uid, who proves it with password (a wrong one is
// KindForbidden and counts as a failed log-in). erase makes every post and comment of theirs a
// tombstone; without it they stay, without author. See above.
func (s *Store) DeleteAccount(ctx context.Context, uid UserKey, password string, erase bool) error {
	if len(password) > MaxPasswordBytes {
		return &Error{Kind: KindForbidden, Msg: "the password is wrong"}
	}
	if _, _, err := s.checkCredentials(ctx, string(uid), password); err != nil {
		if err == errWrongPassword {
			return &Error{Kind: KindForbidden, Msg: "the password is wrong"}
		}
		return err
	}
	return s.deleteAccount(ctx, string(uid), erase)
}

// DeleteUser is a site admin's deletion of the account of target, recorded in the moderation
// log. Deleting a deleted account again runs its chain again (and may turn erase on). Another
// site admin's account is KindForbidden, as banning one is.
func (s *Store) DeleteUser(ctx context.Context, actor, target UserKey, erase bool) error {
	if !s.IsAdmin(actor) {
		return &Error{Kind: KindForbidden, Msg: "only site admins can delete an account"}
	}
	if !validUserName(string(target)) {
		return invalidf("malformed user %q", truncate(string(target), 40))
	}
	if target != actor && s.IsAdmin(target) {
		// As nobody bans an admin: the operator ends an admin's grant (agora admin revoke, or
		// the -admins setting), and no admin erases another's account.
		return &Error{Kind: KindForbidden, Msg: "site admins cannot delete another admin's account: the operator revokes the admin first"}
	}
	if err := s.deleteAccount(ctx, string(target), erase); err != nil {
		return err
	}
	mode := "keep"
	if erase {
		mode = "erase"
	}
	return s.logAction(ctx, ModAction{ID: modActionID("delete:" + string(target) + ":" + mode), Action: ModDeleteUser,
		Moderator: actor, TargetID: userID(string(target)), CreatedAt: s.now()})
}

// deleteAccount does the atomic step of a deletion, ends the sessions and starts the chain. The
// chain's first job is queued before the step, due RepairGrace later, and brought forward to now
// after it: a deletion cut off after its step (the process stopping, Redis full) still runs its
// chain, which nothing else would start (the password is gone: the owner cannot delete again).
// The chain does nothing for an account that was not deleted.
func (s *Store) deleteAccount(ctx context.Context, uid string, erase bool) error {
	start := eraseJob(uid, eraseSteps[0], 0)
	later := start
	later.At = s.now().Add(RepairGrace)
	if err := s.jobs.Enqueue(ctx, later); err != nil {
		return fmt.Errorf("delete account %s: %w", uid, err)
	}
	keys := []string{s.k.user(uid), s.k.saved(uid), s.k.blocks(uid), s.k.drafts(uid), s.k.scheduled(uid), s.k.cancelledDrafts(uid),
		s.k.feed(uid), s.k.feedBy(uid), s.k.push(uid), s.k.pull(uid), s.k.pullVer(uid), s.k.karma(uid),
		s.k.karmaItems(uid), s.k.userKnown(uid), s.k.userExports(uid), s.k.userReports(uid), s.k.userReportTargets(uid),
		s.k.userReportsFiled(uid)}
	flag := "0"
	if erase {
		flag = "1"
	}
	if _, err := s.run(ctx, "account_delete", keys, flag, s.k.chanSessions(uid), s.pubSubArg()); err != nil {
		return fmt.Errorf("delete account %s: %w", uid, err)
	}
	// The sessions that earlier layouts kept apart from the user's hash (layout_sessions.go).
	if s.sessionsApart.Load() {
		if err := s.endSessions(ctx, uid, "", "", ""); err != nil {
			return fmt.Errorf("delete account %s: %w", uid, err)
		}
	}
	inbox := []string{s.k.inbox(uid), s.k.legacyInboxUnread(uid), s.k.inboxNotes(uid), s.k.inboxUnannounced(uid)}
	if err := s.cmd().Unlink(ctx, inbox...).Err(); err != nil {
		return fmt.Errorf("delete account %s: drop notifications: %w", uid, err)
	}
	if err := s.dropReadMarks(ctx, uid); err != nil { // what they read (readstate.go)
		return fmt.Errorf("delete account %s: drop read marks: %w", uid, err)
	}
	if err := s.closeMailbox(ctx, uid); err != nil {
		return fmt.Errorf("delete account %s: %w", uid, err)
	}
	if err := s.jobs.DueBy(ctx, start); err != nil {
		return fmt.Errorf("delete account %s: %w", uid, err)
	}
	s.jobs.Wake()
	return nil
}

// closeMailbox closes the mailbox of uid, a deleted account: it marks it gone first, so that no
// step of a conversation's write makes its keys again once they are dropped (mailbox.lua), ends
// the send leases of its conversations, both ways, while the mailbox still lists them
// (message_leases.go), and drops it but its conversations, which the chain's messages step works
// through. The deletion does it, and its chain again before its messages step, should the
// process have stopped (or Redis been full) before it was done.
func (s *Store) closeMailbox(ctx context.Context, uid string) error {
	mb := s.k.mailbox(uid)
	if err := s.cmd().Incr(ctx, mb.gone).Err(); err != nil { // its existence is the mark
		return fmt.Errorf("mark the mailbox: %w", rdb.StorageFull(err))
	}
	if err := s.revokeSendLeases(ctx, uid); err != nil {
		return err
	}
	if err := s.cmd().Unlink(ctx, s.k.mailboxKeysBut(uid)...).Err(); err != nil {
		return fmt.Errorf("drop the mailbox: %w", err)
	}
	return nil
}

// eraseJob is the job of batch n of a step of uid's deletion; each batch's job is queued by the
// one before.
func eraseJob(uid, step string, n int) jobs.Job {
	return eraseJobAt(uid, step, strconv.Itoa(n))
}

// eraseJobAt is the job of the batch of a step of uid's deletion that batch names: a number, or
// the cursor of the "moderated" step.
func eraseJobAt(uid, step, batch string) jobs.Job {
	arg := uid + " " + step + " " + batch
	return jobs.Job{ID: jobEraseUser + ":" + strings.ReplaceAll(arg, " ", ":"), Kind: jobEraseUser, Arg: arg}
}

// runEraseJob does one batch of a deletion's step and queues what follows: the same step while
// its list holds items, else the next step.
func (s *Store) runEraseJob(ctx context.Context, j jobs.Job) error {
	f := strings.Fields(j.Arg)
	if len(f) != 3 || !validUserName(f[0]) {
		return fmt.Errorf("%s job: bad argument %q", j.Kind, j.Arg)
	}
	uid, step, n := f[0], f[1], int(atoi64(f[2]))
	h, err := s.cmd().HMGet(ctx, s.k.user(uid), "deleted", "erase").Result()
	if err != nil {
		return fmt.Errorf("delete account %s: %w", uid, err)
	}
	if str(h[0]) != "1" {
		return nil // not a deleted account
	}
	if step == "moderated" {
		// The batch is a cursor in the group registry (eraseModerated), not a number.
		next, err := s.eraseModerated(ctx, uid, f[2])
		if err != nil {
			return fmt.Errorf("delete account %s, %s: %w", uid, step, err)
		}
		if next != "" {
			return s.jobs.Enqueue(ctx, eraseJobAt(uid, step, next))
		}
	} else if step == "votes" || step == "removed-posts" || step == "removed-comments" {
		// n is the offset in the vote log of the window to do, or the cursor in the guard of a
		// list (eraseRemoved).
		var next int64
		if step == "votes" {
			next, err = s.eraseVotes(ctx, uid, int64(n))
		} else {
			next, err = s.eraseRemoved(ctx, uid, step, uint64(n), str(h[1]) == "1")
		}
		if err != nil {
			return fmt.Errorf("delete account %s, %s: %w", uid, step, err)
		}
		if next >= 0 {
			return s.jobs.Enqueue(ctx, eraseJob(uid, step, int(next)))
		}
	} else {
		more, err := s.eraseStep(ctx, uid, step, n, str(h[1]) == "1")
		if err != nil {
			return fmt.Errorf("delete account %s, %s: %w", uid, step, err)
		}
		if more {
			return s.jobs.Enqueue(ctx, eraseJob(uid, step, n+1))
		}
	}
	i := indexOf(eraseSteps, step)
	if i < 0 || i == len(eraseSteps)-1 {
		return nil
	}
	return s.jobs.Enqueue(ctx, eraseJob(uid, eraseSteps[i+1], 0))
}

func indexOf(list []string, v string) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return -1
}

// eraseStep does batch n of step for the deleted user uid and reports whether its list holds
// more. Every list it pages is of the user's slot; what a batch handled leaves the list, except
// the posts and comments kept without erase: their lists stay whole (batch n is the nth
// eraseBatch of them), so that a later deletion with erase finds them.
func (s *Store) eraseStep(ctx context.Context, uid, step string, n int, erase bool) (bool, error) {
	var list string
	var each func(member string) error
	keep := false
	switch step {
	case "posts", "nsfw-posts":
		list, each, keep = s.k.userPosts(uid), func(pid string) error { return s.disownPost(ctx, uid, pid, erase) }, !erase
		if step == "nsfw-posts" {
			list = s.k.userPostsNSFW(uid)
		}
	case "comments":
		list, each, keep = s.k.userComments(uid), func(m string) error { return s.disownComment(ctx, uid, m, erase) }, !erase
	case "following":
		list, each = s.k.following(uid), func(b string) error { return s.syncFollow(ctx, uid, b, false) }
	case "followers":
		list, each = s.k.followers(uid), func(a string) error { return s.syncFollow(ctx, a, uid, false) }
	case "groups":
		list, each = s.k.userGroups(uid), func(g string) error { return s.syncMember(ctx, uid, g, followRemove) }
	case "messages":
		if n == 0 {
			if err := s.closeMailbox(ctx, uid); err != nil {
				return false, err
			}
		}
		list, each = s.k.mailbox(uid).convs, func(o string) error { return s.eraseMessagesWith(ctx, uid, o, erase) }
	case "watches":
		list, each = s.k.userWatches(uid), func(item string) error { return s.unwatch(ctx, uid, item) }
	case "finish":
		return false, s.eraseFinish(ctx, uid)
	default:
		return false, fmt.Errorf("unknown step %q: %w", step, jobs.ErrNotHere)
	}
	start := int64(0)
	if keep {
		start = int64(n) * eraseBatch
	}
	batch, err := s.cmd().ZRange(ctx, list, start, start+eraseBatch-1).Result()
	if err != nil {
		return false, err
	}
	for _, m := range batch {
		if err := each(m); err != nil {
			return false, err
		}
	}
	if len(batch) == 0 || keep {
		return len(batch) == eraseBatch, nil
	}
	members := make([]any, len(batch))
	for i, m := range batch {
		members[i] = m
	}
	if err := s.cmd().ZRem(ctx, list, members...).Err(); err != nil {
		return false, err
	}
	return len(batch) == eraseBatch, nil
}

// eraseRemoved does the batch at cursor of a step that walks what a moderator removed of uid's
// ("removed-posts", "removed-comments"; removed_content.go): each removed post or comment is
// disowned, or with erase erased, exactly as one still listed is (disownPost, disownComment). It
// returns the cursor of the next batch, -1 when the step is done. A batch run again finds what
// it erased already and changes nothing more; an erased comment is out of the walk for good (its
// guard holds finalVersion).
func (s *Store) eraseRemoved(ctx context.Context, uid, step string, cursor uint64, erase bool) (int64, error) {
	var next uint64
	var err error
	switch step {
	case "removed-posts":
		next, err = s.removedPosts(ctx, uid, cursor, func(ctx context.Context, pids []string, _ []*Post) error {
			for _, pid := range pids {
				if err := s.disownPost(ctx, uid, pid, erase); err != nil {
					return err
				}
			}
			return nil
		})
	case "removed-comments":
		next, err = s.removedComments(ctx, uid, cursor, func(ctx context.Context, members []string, _ []*Comment) error {
			for _, m := range members {
				if err := s.disownComment(ctx, uid, m, erase); err != nil {
					return err
				}
			}
			return nil
		})
	default:
		return -1, fmt.Errorf("unknown step %q: %w", step, jobs.ErrNotHere)
	}
	if err != nil {
		return -1, err
	}
	if next == 0 {
		return -1, nil
	}
	return int64(next), nil
}

// disownPost takes uid's name off post pid; with erase it makes it a tombstone that leaves every
// ranking, listing and feed and the search index's matches, its thread kept.
func (s *Store) disownPost(ctx context.Context, uid, pid string, erase bool) error {
	mode := "anon"
	if erase {
		mode = "erase"
	}
	reply, err := s.run(ctx, "disown", []string{s.k.post(pid), s.k.postTexts(pid)}, uid, mode)
	if err != nil {
		return err
	}
	if arr, _ := reply.([]any); len(arr) == 2 {
		arr := strs(arr)
		if err := s.unindexPost(ctx, pid, uid, splitGroups(arr[0]), atoi64(arr[1])); err != nil {
			return err
		}
		if err := s.unfeedPost(ctx, pid, uid); err != nil {
			return err
		}
	}
	if erase {
		// The index drops the old words; a repeat indexes "[deleted]" again, which changes nothing.
		h, err := s.cmd().HGetAll(ctx, s.k.post(pid)).Result()
		if err != nil {
			return err
		}
		if p := s.postFromHash(pid, h); p != nil {
			if err := s.writeSearch(ctx, postSearchDoc(p, false)); err != nil {
				return err
			}
		}
	}
	s.publishPostChanged(ctx, pid)
	return nil
}

// disownComment takes uid's name off the comment member of their list ("<post>:<number>"); with
// erase it deletes it as its author would (a tombstone while it has live replies).
func (s *Store) disownComment(ctx context.Context, uid, member string, erase bool) error {
	pid, short, ok := strings.Cut(member, ":")
	if !ok {
		return nil
	}
	num := padNum(short)
	if erase {
		err := s.deleteComment(ctx, uid, pid, num)
		if IsKind(err, KindNotFound) || IsKind(err, KindForbidden) {
			return nil // gone already, or no longer theirs
		}
		return err
	}
	_, err := s.run(ctx, "disown", []string{s.k.comment(pid, num)}, uid, "anon")
	return err
}

// eraseFinish releases the deleted user's email address and takes them off the karma
// leaderboard (for good: a late vote on a kept post cannot bring them back) and out of the name
// registry (autocomplete); the user search index finds no such user at read time.
func (s *Store) eraseFinish(ctx context.Context, uid string) error {
	v, err := s.cmd().HMGet(ctx, s.k.user(uid), "email", "emailv").Result()
	if err != nil {
		return err
	}
	if addr := str(v[0]); addr != "" {
		// An unverified address's claim keeps its time, as for any address released unverified:
		// an account made to hold an address and deleted does not hand it on to another for a
		// new link's life. A verified one is released whole, so that the next claim (its owner's
		// new account, say) has a link's life, not the time of the old claim, lapsed long ago.
		if err := s.releaseEmail(ctx, uid, strings.ToLower(addr), str(v[1]) != "1"); err != nil {
			return err
		}
	}
	if err := s.unlistDeleted(ctx, uid); err != nil {
		return err
	}
	// The vote log and the address go in one round trip (one slot).
	var voted, email *rdb.IntCmd
	err = s.pipeline(ctx, []op{{key: s.k.user(uid), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		voted, email = p.Del(ctx, s.k.userVoted(uid)), p.HDel(ctx, s.k.user(uid), "email", "emailv")
		return voted, email
	}}}, false)
	if err != nil {
		return err
	}
	return rdb.FirstErr([2]rdb.Cmder{voted, email})
}

// unlistDeleted takes a deleted account off the karma leaderboard, for good (its guard holds
// deletedVersion, above any karma version), and out of the name registry: the end of its
// deletion's chain, and what RebuildUsers does for an account deleted while it walked it.
func (s *Store) unlistDeleted(ctx context.Context, uid string) error {
	if err := s.runMany(ctx, []scriptCall{indexCall(s.k.leaderboardVer(), uid, deletedVersion, false, []string{s.k.leaderboard()}, nil)}); err != nil {
		return err
	}
	return s.register(ctx, s.k.userNames(), false, uid)
}

// authorGone returns the read of whether the account of uid is deleted, for a round trip on
// uid's slot that lists a new post or comment of theirs, after the listing; and gone, called once
// the round trip ran, which answers it and whether the deletion erases their content (not
// deleted when the read was not sent: a write that listed nothing).
//
// A write checks its author's deletion in its first round trip, with its limits and bans, and
// its own writes come after: a deletion in between, whose chain went through the author's lists
// before the new item was listed, would leave it for good (with eraseContent, text the author
// had erased). Read after the listing, on the list's slot, the deletion either ran before the
// read, which then sees it, or after the listing, whose item its chain then finds. That holds of
// a read that ran after the script: one the runner sent again (NOSCRIPT, a slot on the move) is
// followed by the read again (op.follows, rereads).
func (s *Store) authorGone(ctx context.Context, uid string) (op, func() (gone, erase bool, err error)) {
	key := s.k.user(uid)
	var cmd *rdb.SliceCmd
	return op{key: key, follows: true, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cmd = p.HMGet(ctx, key, "deleted", "erase")
			return cmd, nil
		}}, func() (bool, bool, error) {
			if cmd == nil {
				return false, false, nil // not sent: nothing was listed (a comment deleted since, say)
			}
			if err := cmd.Err(); err != nil {
				return false, false, fmt.Errorf("read the account of %s: %w", uid, err)
			}
			v := cmd.Val()
			return str(v[0]) == "1", str(v[1]) == "1", nil
		}
}

// errDeletedMeanwhile answers a post or comment whose author's account was deleted between the
// write's checks and its listing (see authorGone): it was disowned, or erased, as the deletion's
// chain does to the others.
var errDeletedMeanwhile = &Error{Kind: KindUnauthenticated, Msg: "this account was deleted"}

// deletedVersion is the leaderboard version of a deleted user: above any karma version, so that
// no later karma write puts them back (index.lua keeps the highest version applied).
const deletedVersion = int64(1) << 52

// DeletedAccount reports whether uid names a deleted account (its marker; see above).
func (l *Loader) DeletedAccount(ctx context.Context, uid UserKey) (bool, error) {
	v, err := l.hashField(ctx, l.s.k.user(string(uid)), "deleted")
	return v == "1", err
}
