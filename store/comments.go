package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// Comment is a comment on a post or a reply to another comment.
type Comment struct {
	ID         string
	PostID     string
	ParentID   string  // "" for a top-level comment
	Author     UserKey // "" once deleted
	Text       string  // "" once deleted
	Deleted    bool
	CreatedAt  time.Time
	EditedAt   *time.Time
	Depth      int
	Upvotes    int
	Downvotes  int
	ReplyCount int
	Version    int64 // grows with every vote that changes the counters, and on deletion
	// Removed is a comment a moderator removed: out of its thread's counts, and a tombstone to
	// everyone but its author and the moderators.
	Removed bool
	// BlockedByViewer is a comment whose author the viewer blocks: Author and Text are empty.
	BlockedByViewer bool

	masked bool // a removed comment as those who may not see it see it: see Masked
	// postNSFW is a comment of an NSFW post, as Loader.Comment reads it; postHidden one read by a
	// viewer who does not show NSFW posts (Post.NSFWHidden): withheld with its post, no body and
	// no replies listed.
	postNSFW, postHidden bool

	authorName string // the author's name as the comment's hash keeps it; see Loader.NamedAuthor

	pid string // the post's key
	num string // the comment's number as stored: 12 digits
}

// OnNSFWPost reports whether the comment, read by id (Loader.Comment), is on an NSFW post: a
// live stream delivers it only to those who show NSFW posts.
func (c *Comment) OnNSFWPost() bool { return c.postNSFW }

// NodeID returns the comment's global id.
func (c *Comment) NodeID() string { return c.ID }

// Body is the text of a comment; nil once it is deleted, when the viewer blocks its author,
// when it was removed and the viewer may not see it, and when its post is NSFW and withheld from
// the viewer.
func (c *Comment) Body() *string {
	if c.Deleted || c.BlockedByViewer || c.masked || c.postHidden {
		return nil
	}
	return &c.Text
}

// Masked returns a removed comment as a viewer who is neither its author nor a moderator sees it:
// a tombstone, without author or text.
func (c *Comment) Masked() *Comment {
	m := *c
	m.Author, m.Text, m.masked = "", "", true
	return &m
}

// Net is upvotes minus downvotes.
func (c *Comment) Net() int { return c.Upvotes - c.Downvotes }

// Score is upvotes minus downvotes (Comment.score), as Post.Score is.
func (c *Comment) Score() int { return c.Net() }

// CommentSort orders a list of comments.
type CommentSort int

// The comment orders of the contract.
const (
	CommentsNew           CommentSort = iota // newest first
	CommentsOld                              // oldest first
	CommentsTop                              // most net votes first, then newest
	CommentsBest                             // highest Wilson lower bound of the upvote share first, then newest
	CommentsControversial                    // most controversial first (see Controversy), then newest
)

// DefaultMaxCommentDepth is the deepest a reply may nest unless Options.MaxCommentDepth says
// otherwise.
const DefaultMaxCommentDepth = 100

// commentNumWidth is how many digits a comment number has inside Redis. Zero-padding makes the
// members of the reply indexes sort by number bytewise, which is what breaks ties newest first.
const commentNumWidth = 12

// topLevel is the parent number of a top-level comment: the post itself.
const topLevel = "0"

// sweepBatch is how many comments one run of sweep_thread drops.
const sweepBatch = 200

// CommentKey returns the post key and the stored (12-digit) comment number of a comment id, or
// KindInvalid.
func CommentKey(id string) (pid, num string, err error) {
	key, err := parseTypedID(id, TypeComment)
	if err != nil {
		return "", "", err
	}
	pid, n, _ := strings.Cut(key, ":")
	if len(n) > commentNumWidth {
		return "", "", invalidf("malformed id %q", truncate(id, 40))
	}
	return pid, padNum(n), nil
}

// padNum writes a comment number ("4") as stored ("000000000004").
func padNum(n string) string {
	return strings.Repeat("0", commentNumWidth-len(n)) + n
}

// shortNum writes a stored comment number ("000000000004") as in ids ("4"); topLevel stays "0".
func shortNum(num string) string {
	i := 0 // strings.TrimLeft by hand: it runs twice a comment read (its id, its parent's)
	for i < len(num) && num[i] == '0' {
		i++
	}
	if i < len(num) {
		return num[i:]
	}
	return topLevel
}

// commentID returns the global id of comment num (stored form) of post pid.
func commentID(pid, num string) string {
	return TypeComment + ":" + pid + ":" + shortNum(num)
}

// NewComment is the input of CreateComment.
type NewComment struct {
	PostID         string
	ParentID       string // "" for a top-level comment
	Body           string
	IdempotencyKey string // optional; a retried request with the same key returns the first comment
}

// CreateComment adds a comment by the user uid to a post, at the top level or as a reply. A
// comment can be added to any live post, also after its voting window has closed, and as a reply
// to a deleted comment that is still in the tree.
func (s *Store) CreateComment(ctx context.Context, user UserKey, in NewComment) (*Comment, error) {
	uid := string(user)
	pid, err := PostKey(in.PostID)
	if err != nil {
		return nil, err
	}
	parent := topLevel
	if in.ParentID != "" {
		ppid, pnum, err := CommentKey(in.ParentID)
		if err != nil {
			return nil, err
		}
		if ppid != pid {
			return nil, invalidf("comment %s is not on post %s", truncate(in.ParentID, 40), postID(pid))
		}
		parent = pnum
	}
	if err := checkText("body", in.Body, 1, MaxCommentBodyRunes); err != nil {
		return nil, err
	}
	if err := checkIdempotencyKey(in.IdempotencyKey); err != nil {
		return nil, err
	}
	// The author's name and the post's groups (for the groups' active users) ride in the round
	// trip of the rate limit and the bans, as allowAuthor reads the name.
	nameOp, authorName := s.nameRead(ctx, uid)
	groupsOp, postGroups := s.postGroupsRead(ctx, pid)
	if _, err := s.allowGuarded(ctx, uid, "", []op{nameOp, groupsOp}, &writeGuard{count: "comments", once: onceMember("c:"+pid, in.IdempotencyKey)}, onPost(pid)); err != nil {
		return nil, err
	}
	if in.Body, err = s.filterText("body", in.Body); err != nil {
		return nil, err
	}
	name, err := authorName()
	if err != nil {
		return nil, err
	}
	// A client's key names the comment for a day. Without one, the comment's number, allocated to
	// this request alone, makes the script safe to resend (go-redis repeats a command whose reply
	// was lost, and the repeat must not add a second comment): nothing more is kept.
	ttl := 0
	if in.IdempotencyKey != "" {
		ttl = int(idempotencyTTL.Seconds())
	}
	// The number comes first, so that create_comment can declare the new comment's key.
	v, err := s.run(ctx, "comment_num", []string{s.k.post(pid)})
	if err != nil {
		return nil, err
	}
	num, err := replyString("comment_num", v)
	if err != nil {
		return nil, err
	}
	// The job of the comment's notifications is queued before the comment is written, due only
	// later, so that no crash between the two can lose it; the write moves it to now once done.
	// The comment's repair note goes with it: it indexes the comment for search if the process
	// stops before this call does.
	n, err := s.queueCommentNotice(ctx, pid, num)
	if err != nil {
		return nil, err
	}
	now := s.now()
	idemKey := s.k.commentIdem(pid, idemDigest(uid+"\x00"+in.IdempotencyKey))
	var replies []string // the hashes of the parent's replies, when this one brings it to replyOrdersAt
	for range 2 + maxChainReads {
		reply, err := s.run(ctx, "create_comment",
			append(append(append([]string{s.k.post(pid), s.k.threadIDs(pid), idemKey, s.k.comment(pid, parent)},
				s.k.replyOrders(pid, parent)...), s.k.comment(pid, num), s.k.commentBodies(pid), s.k.liveComments(pid)),
				replies...),
			num, parent, uid, in.Body, now.UnixMilli(), now.Add(s.opts.VotingWindow).UnixMilli(),
			s.opts.MaxCommentDepth, ttl, name)
		if err != nil {
			return nil, err
		}
		arr, err := replyArrayLen("create_comment", reply, 2)
		if err != nil {
			return nil, err
		}
		// {number, comment}, or {"replies", parent} or {"again", number}.
		word, err := replyString("create_comment", arr[0])
		if err != nil {
			return nil, err
		}
		if word == "replies" {
			// The parent reaches replyOrdersAt replies: the script builds its orders from their
			// hashes, which it must declare (see reply_orders.lua).
			if replies, err = s.replyHashKeys(ctx, pid, parent); err != nil {
				return nil, err
			}
			continue
		}
		if word == "again" {
			// The idempotency key names the comment an earlier attempt made: read that one.
			if num, err = replyString("create_comment", arr[1]); err != nil {
				return nil, err
			}
			continue
		}
		h, err := replyHash("create_comment", arr[1])
		if err != nil {
			return nil, err
		}
		c := commentFromHash(pid, num, h)
		if c == nil {
			return nil, fmt.Errorf("create_comment: comment %s missing from reply", num)
		}
		s.promoteCommentNotice(ctx, pid, num)
		if err := s.indexComment(ctx, c, false); err != nil {
			return nil, err
		}
		if err := s.rerankPost(ctx, pid); err != nil { // its last activity and comment count
			return nil, err
		}
		read, gone := s.authorGone(ctx, uid)
		if err := s.listComment(ctx, string(c.Author), c, read); err != nil {
			return nil, err
		}
		if deleted, erase, err := gone(); err != nil {
			return nil, err
		} else if deleted {
			if err := s.disownComment(ctx, uid, userCommentMember(c.pid, c.num), erase); err != nil {
				return nil, err
			}
			s.settled(ctx, n)
			return nil, errDeletedMeanwhile
		}
		s.recordActivity(ctx, uid, postGroups())
		// Announced (with the post's new comment count) before the note is settled: an
		// announcement that fails leaves the note, whose repair job announces the comment.
		if err := s.announceComment(ctx, pid, c.num); err == nil {
			s.settled(ctx, n)
		}
		return c, nil
	}
	return nil, fmt.Errorf("create_comment: idempotency key of comment %s keeps moving", num)
}

// EditComment replaces the body of a comment of uid's and sets its editedAt.
func (s *Store) EditComment(ctx context.Context, user UserKey, id, body string) (*Comment, error) {
	uid := string(user)
	pid, num, err := CommentKey(id)
	if err != nil {
		return nil, err
	}
	if err := checkText("body", body, 1, MaxCommentBodyRunes); err != nil {
		return nil, err
	}
	n, err := s.allowWrite(ctx, uid, repairComment+":"+pid+":"+num, onPost(pid))
	if err != nil {
		return nil, err
	}
	if body, err = s.filterText("body", body); err != nil {
		return nil, err
	}
	reply, err := s.run(ctx, "edit_comment", []string{s.k.post(pid), s.k.comment(pid, num), s.k.commentBodies(pid)},
		uid, body, s.now().UnixMilli(), num)
	if err != nil {
		return nil, err
	}
	h, err := replyHash("edit_comment", reply)
	if err != nil {
		return nil, err
	}
	c := commentFromHash(pid, num, h)
	if c == nil {
		return nil, notFoundf("no such comment")
	}
	if err := s.indexComment(ctx, c, false); err != nil {
		return nil, err
	}
	s.settled(ctx, n)
	return c, nil
}

// DeleteComment deletes a comment of uid's. A comment with replies stays in the tree as a
// tombstone; one without is removed, together with any deleted ancestors left without replies.
// Deleting it again succeeds and changes nothing.
func (s *Store) DeleteComment(ctx context.Context, user UserKey, id string) error {
	uid := string(user)
	pid, num, err := CommentKey(id)
	if err != nil {
		return err
	}
	// The deletion's derived writes (the post's rankings, the author's list) are finished by the
	// comment's repair if the process stops, or Redis refuses them, after the atomic step.
	n, err := s.allowWrite(ctx, uid, repairComment+":"+pid+":"+num, banFree)
	if err != nil {
		return err
	}
	if err := s.deleteComment(ctx, uid, pid, num); err != nil {
		return err
	}
	s.settled(ctx, n)
	return nil
}

// deleteComment deletes comment num of post pid, whose author is uid: DeleteComment's work once
// the write is allowed, and an account deletion's for each comment it erases.
func (s *Store) deleteComment(ctx context.Context, uid, pid, num string) error {
	for range maxChainReads {
		chain, err := s.removalChain(ctx, pid, num)
		if err != nil {
			return err
		}
		keys := []string{s.k.post(pid), s.k.threadIDs(pid), s.k.commentBodies(pid)}
		args := []any{uid, int(tombstoneTTL.Seconds())}
		for _, n := range chain {
			keys = s.k.appendCommentKeys(keys, pid, n)
			args = append(args, n)
		}
		keys = append(keys, s.k.liveComments(pid))
		reply, err := s.run(ctx, "delete_comment", keys, args...)
		if err != nil {
			return err
		}
		arr, err := replyArray("delete_comment", reply, 1)
		if err != nil {
			return err
		}
		if arr[0] != "again" {
			if err := s.rerankPost(ctx, pid); err != nil {
				return err
			}
			// Out of its author's list for good (only its author deletes a comment).
			if err := s.runMany(ctx, []scriptCall{s.userCommentCall(uid, pid, num, nil)}); err != nil {
				return fmt.Errorf("unlist comment %s: %w", commentID(pid, num), err)
			}
			s.publishPostChanged(ctx, pid) // the comment count moved
			return nil
		}
	}
	return busyf("the thread of comment %s kept changing while it was being deleted; retry", commentID(pid, num))
}

// maxChainReads bounds how often DeleteComment reads the chain of ancestors again because the
// thread changed under it.
const maxChainReads = 5

// removalChain reads the numbers of the comments a removal of num may take out of the tree: num,
// its parent, and so on up to the first ancestor that is not a tombstone (deleted or removed)
// about to lose its last reply, or up to the post ("0"). delete_comment checks the chain and asks
// for it again when the thread changed meanwhile. Parents never change, so only where the chain
// ends can be stale.
func (s *Store) removalChain(ctx context.Context, pid, num string) ([]string, error) {
	return s.ancestorChain(ctx, pid, num, func(replies int64, tomb bool) bool { return tomb && replies <= 1 })
}

// ancestorChain reads num, its parent, and so on up to the post ("0") or the first ancestor for
// which climb, given its replies and whether it is a tombstone (deleted or removed), is false.
func (s *Store) ancestorChain(ctx context.Context, pid, num string, climb func(replies int64, tomb bool) bool) ([]string, error) {
	chain := []string{num}
	if err := s.shortenThreadOf(ctx, pid, num); err != nil { // read alone (layout_shortkeys.go)
		return nil, err
	}
	v, err := s.commentFieldsNow(ctx, pid, num, "parent")
	if err != nil {
		return nil, err
	}
	parent := v[0]
	if parent == "" {
		return append(chain, topLevel), nil // no such comment: the script says so
	}
	for {
		chain = append(chain, parent)
		if parent == topLevel {
			return chain, nil
		}
		v, err := s.commentFieldsNow(ctx, pid, parent, "parent", "replies", "deleted", "removed")
		if err != nil {
			return nil, err
		}
		next := v[0]
		if next == "" || !climb(atoi64(v[1]), v[2] == "1" || v[3] == "1") {
			return chain, nil
		}
		parent = next
	}
}

// VoteComment records uid's vote on a comment: dir is 1 (up), -1 (down) or 0 (withdraw). The
// rules are those of posts: one vote per user, the author cannot vote, votes close VotingWindow
// after the comment was written, and a repeated vote changes nothing.
func (s *Store) VoteComment(ctx context.Context, user UserKey, id string, dir int) (*Comment, error) {
	uid := string(user)
	pid, num, err := CommentKey(id)
	if err != nil {
		return nil, err
	}
	if dir < -1 || dir > 1 {
		return nil, invalidf("direction must be 1, -1 or 0")
	}
	// The script moves the comment in its parent's vote orders, so it must name those keys: the
	// parent is read in the write's first round trip, with the entry of the voter's vote log.
	key := s.k.comment(pid, num)
	var parentCmd *rdb.StringSliceCmd
	readParent := op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		parentCmd = hmgetComment(ctx, p, key, "parent")
		return parentCmd, nil
	}}
	var appended *rdb.IntCmd
	n, err := s.allowWriteWith(ctx, uid, repairComment+":"+pid+":"+num,
		[]op{s.votedOp(ctx, uid, commentVoteEntry(pid, num), &appended), readParent}, onPost(pid))
	if err != nil {
		return nil, err
	}
	var arr []any
	for i := range 2 {
		if i > 0 { // asked again: the parent read did not find the comment yet
			if err := s.pipeline(ctx, []op{readParent}, false); err != nil && !isNil(err) {
				return nil, fmt.Errorf("read comment %s: %w", commentID(pid, num), err)
			}
		}
		v, err := parentCmd.Result()
		if err != nil {
			return nil, fmt.Errorf("read comment %s: %w", commentID(pid, num), err)
		}
		parent := commentValues([]string{"parent"}, v)[0]
		if parent == "" {
			parent = topLevel // no such comment (yet): the script says so, or asks again
		}
		reply, err := s.run(ctx, "vote_comment",
			[]string{s.k.post(pid), s.k.comment(pid, num), s.k.commentVotes(pid, num), s.k.repliesByTop(pid, parent),
				s.k.repliesByBest(pid, parent), s.k.repliesByControversy(pid, parent), s.k.commentBodies(pid),
				s.k.legacyCommentVotes(pid, num)},
			parent, num, uid, dir, s.now().UnixMilli())
		if err != nil {
			return nil, err
		}
		if arr, err = replyArray("vote_comment", reply, 1); err != nil {
			return nil, err
		}
		if arr[0] != "again" {
			break
		}
	}
	if arr[0] == "again" {
		return nil, fmt.Errorf("vote_comment: the parent of comment %s keeps changing", commentID(pid, num))
	}
	h, err := replyHash("vote_comment", arr[1:])
	if err != nil {
		return nil, err
	}
	c := commentFromHash(pid, num, h)
	if c == nil {
		return nil, notFoundf("no such comment")
	}
	// The author's karma follows the comment's net votes; recorded even when this vote changed
	// nothing, which completes an earlier vote whose karma write was cut off. The voter's
	// deletion rides along (afterVote), in a round trip of its own for a comment without author.
	read, gone := s.authorGone(ctx, uid)
	if c.Author != "" {
		if err := s.recordKarma(ctx, string(c.Author), c.ID, c.Upvotes-c.Downvotes, c.Version, read); err != nil {
			return nil, err
		}
	} else if err := s.pipeline(ctx, []op{read}, false); err != nil && !isNil(err) {
		return nil, fmt.Errorf("read the account of %s: %w", uid, err)
	}
	if err := s.afterVote(ctx, uid, commentVoteEntry(pid, num), gone); err != nil {
		s.settled(ctx, n)
		return nil, err
	}
	s.settled(ctx, n)
	s.compactVotedLater(ctx, uid, commentVoteEntry(pid, num), appended)
	return c, nil
}

// dropThread removes the comment keys of a deleted post in bounded steps. It does nothing on a
// live post, so it is safe to call on any post.
func (s *Store) dropThread(ctx context.Context, pid string) error {
	for {
		nums, err := s.cmd().SRandMemberN(ctx, s.k.threadIDs(pid), sweepBatch).Result()
		if err != nil {
			return fmt.Errorf("drop thread of post %s: %w", pid, err)
		}
		for i, n := range nums {
			nums[i] = padNum(n) // kept short (keys.go threadIDs)
		}
		if len(nums) == 0 {
			return nil
		}
		// The comments leave their authors' lists before their keys go, so that a sweep cut off
		// between the two leaves nothing to find them by.
		if err := s.unlistThread(ctx, pid, nums); err != nil {
			return err
		}
		keys := []string{s.k.post(pid), s.k.threadIDs(pid), s.k.commentBodies(pid)}
		args := make([]any, len(nums))
		for i, n := range nums {
			keys = s.k.appendCommentKeys(keys, pid, n)
			args[i] = n
		}
		v, err := s.run(ctx, "sweep_thread", keys, args...)
		if err != nil {
			return fmt.Errorf("drop thread of post %s: %w", pid, err)
		}
		left, err := replyInt("sweep_thread", v)
		if err != nil {
			return fmt.Errorf("drop thread of post %s: %w", pid, err)
		}
		if left <= 0 {
			return nil
		}
	}
}

// threadPostKey returns "17" for "<prefix>{p:17}:c:ids" and false for any other key.
func threadPostKey(prefix, key string) (string, bool) {
	rest, ok := strings.CutSuffix(key, ":c:ids")
	if !ok {
		return "", false
	}
	return postKeyFromHashKey(prefix, rest)
}
