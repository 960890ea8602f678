package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agora/agora/internal/rdb"
)

// Post is a link or text post.
type Post struct {
	ID             string
	Title          string
	Body           string
	URL            *string
	Author         UserKey
	CreatedAt      time.Time
	Upvotes        int
	Downvotes      int
	HotRank        float64 // the HOT ranking key: publish time in Unix seconds + K × net votes
	VotingClosesAt time.Time
	GroupNames     []string
	CommentCount   int
	// ActiveAt is the post's last activity: its publish time, or its newest comment's creation
	// time if later (a deleted comment leaves it where it is).
	ActiveAt time.Time
	Version  int64
	// PublishAt is when a scheduled post will be published; nil once it is (or if it never was
	// scheduled). Only its author sees a post that has it.
	PublishAt *time.Time
	EditedAt  *time.Time // when its author last edited it; nil if never
	// Removed is a post a moderator removed: out of every listing, feed and count; only its
	// author and its groups' moderators (and admins) see it.
	Removed bool
	Locked  bool // no new comments or votes
	// Erased is a post whose author deleted their account with eraseContent: a tombstone in
	// place ("[deleted]"), out of every listing, feed, count and search, its thread kept.
	Erased bool
	// NSFW is a post labelled not safe for work (see labels.go); Spoiler one labelled a spoiler.
	NSFW, Spoiler bool
	// NSFWHidden is an NSFW post read by a viewer who does not show NSFW posts: its title, body
	// and URL are withheld (empty here, null in the API).
	NSFWHidden bool

	authorName string // the author's name as the post's hash keeps it; see Loader.NamedAuthor
}

// NodeID returns the post's global id.
func (p *Post) NodeID() string { return p.ID }

// Key returns the post's key (its number).
func (p *Post) Key() string { return strings.TrimPrefix(p.ID, TypePost+":") }

// Net is upvotes minus downvotes.
func (p *Post) Net() int { return p.Upvotes - p.Downvotes }

// Score is what clients call a post's score: upvotes minus downvotes (Post.score). The HOT
// ranking key is HotRank.
func (p *Post) Score() int { return p.Net() }

// NewPost is the input of CreatePost.
type NewPost struct {
	Title          string
	Body           string
	URL            string
	Groups         []string
	IdempotencyKey string
	// PublishAt, if set, schedules the post: it is published then (see schedule.go).
	PublishAt time.Time
	// NSFW and Spoiler are the post's labels (see labels.go).
	NSFW, Spoiler bool
}

// idempotencyTTL is how long a client's idempotency key keeps naming the post it created.
const idempotencyTTL = 24 * time.Hour

// tombstoneTTL is how long a deleted post's tombstone answers repeated deletes.
const tombstoneTTL = 24 * time.Hour

// CreatePost publishes a post by the user uid, or schedules it when in.PublishAt is set.
func (s *Store) CreatePost(ctx context.Context, user UserKey, in NewPost) (*Post, error) {
	uid := string(user)
	if err := checkText("title", in.Title, 1, MaxTitleRunes); err != nil {
		return nil, err
	}
	if err := checkText("body", in.Body, 0, MaxPostBodyRunes); err != nil {
		return nil, err
	}
	if in.URL != "" {
		if err := checkURL(in.URL); err != nil {
			return nil, err
		}
	}
	groups, err := normalizeGroups(in.Groups)
	if err != nil {
		return nil, err
	}
	if len(groups) > MaxGroupsPerPost {
		return nil, invalidf("a post can be in at most %d groups", MaxGroupsPerPost)
	}
	if err := checkIdempotencyKey(in.IdempotencyKey); err != nil {
		return nil, err
	}
	if !in.PublishAt.IsZero() {
		if err := s.checkPublishAt(in.PublishAt); err != nil {
			return nil, err
		}
	}
	links := in.URL != "" || hasLink(in.Title) || hasLink(in.Body)
	name, err := s.allowAuthor(ctx, uid, &writeGuard{count: "posts", links: links, once: onceMember("p", in.IdempotencyKey)}, postingIn(groups...))
	if err != nil {
		return nil, err
	}
	if err := s.filterPost(&in.Title, &in.Body, &in.URL, groups); err != nil {
		return nil, err
	}
	if !in.PublishAt.IsZero() {
		return s.schedulePost(ctx, uid, in, groups)
	}
	now := s.now()
	var n note
	var draft *Post
	pid, reply, err := s.allocatePost(ctx, uid, in.IdempotencyKey, false, func(pid, nonce string, repeat, otherKind bool) (any, error) {
		var err error
		if repeat {
			// The key's first request may have scheduled the post: then that is the answer.
			if draft, err = s.earlierDraft(ctx, uid, pid); err != nil || draft != nil {
				return draft, err
			}
		}
		if otherKind {
			// It scheduled the post: published since, create_post finds it by the nonce of its
			// publication; not written yet, it is not this request's to write.
			if n, err := s.cmd().Exists(ctx, s.k.post(pid)).Result(); err != nil {
				return nil, fmt.Errorf("read post %s: %w", pid, err)
			} else if n == 0 {
				return nil, idemInFlight(pid)
			}
		}
		if n, err = s.noteRepair(ctx, repairPost+":"+pid); err != nil {
			return nil, err
		}
		return s.createPostOnce(ctx, pid, nonce, in.Title, in.Body, in.URL, uid, now, strings.Join(groups, ","), name, in.NSFW, in.Spoiler)
	})
	if err != nil {
		return nil, err
	}
	if draft != nil {
		return draft, nil
	}
	h, err := replyHash("create_post", reply)
	if err != nil {
		return nil, err
	}
	p := s.postFromHash(pid, h)
	if p == nil {
		return nil, notFoundf("post %s was deleted", postID(pid))
	}
	read, gone := s.authorGone(ctx, uid)
	if err := s.indexPostIn(ctx, p, nil, true, []op{read}, s.searchWrites(postSearchDoc(p, true))); err != nil {
		return nil, err
	}
	if deleted, erase, err := gone(); err != nil {
		return nil, err
	} else if deleted {
		if err := s.disownPost(ctx, uid, pid, erase); err != nil {
			return nil, err
		}
		s.settled(ctx, n)
		return nil, errDeletedMeanwhile
	}
	if err := s.queuePostJobs(ctx, pid); err != nil {
		return nil, err
	}
	s.recordActivity(ctx, uid, p.GroupNames)
	// Announced before the note is settled, in the round trip that takes the post's mark: an
	// announcement that fails leaves the note, whose repair job announces the post.
	if err := s.announcePost(ctx, pid, p, h, s.settleCalls(n)...); err != nil {
		s.opts.Log.WarnContext(ctx, "announce a new post and settle its repair job", "post", p.ID, "err", err)
	}
	return p, nil
}

// queuePostJobs queues, in one round trip, what a new post causes beyond its own writes: its push
// to the feeds of its author's followers (runFeedJob) and the notifications of its mentions
// (runNotifyPost). CreatePost calls it after the atomic step; the post's repair note makes the
// repairer call it again if the process stopped before (repairPost); both jobs are idempotent.
func (s *Store) queuePostJobs(ctx context.Context, pid string) error {
	if err := s.jobs.Enqueue(ctx, feedJob(jobFanout, pid, "0"), postNoticeJob(pid)); err != nil {
		return fmt.Errorf("queue the fan-out and notifications of post %s: %w", pid, err)
	}
	return nil
}

// maxIDAttempts bounds how many post ids CreatePost tries before giving up.
const maxIDAttempts = 100

// allocatePost takes the next post id and runs create (the create_post script) on it. The id
// counter is one key, on one node of a cluster; if a failover lost its last increments, ids it
// hands out again already name posts on other nodes, and create replies nil for those: the next
// id is tried. A creation with an idempotency key keeps one nonce across its repeats and binds
// the key to the id it finally gets.
//
// create is told whether the key was bound before (repeat): the id is then the first request's,
// which may have been scheduled, published or cancelled since, and whose nonce may be the one
// of a scheduled post's publication (createPostOnce accepts both).
//
// The key is bound to the id and to what the first request does with it (scheduled: schedule it,
// or publish it at once): the binding is the id, and a mark of its own for a scheduled post
// (claim.lua), which the claim's reply gives as idemScheduled after the id.
// create is told when a repeat does the other (otherKind). Such a repeat answers with what the
// first request made, but must write nothing itself: should it find nothing yet, because the
// first request is still under way, its write would make the post a second way — a post
// published at once with a draft of the same id pending, or a scheduled post published early.
// It is then KindConcurrentChange (idemInFlight).
func (s *Store) allocatePost(ctx context.Context, uid, idemKey string, scheduled bool, create func(pid, nonce string, repeat, otherKind bool) (any, error)) (string, any, error) {
	nonce := randomHex(16)
	var idem, idemMark string
	if idemKey != "" {
		idem, idemMark = s.k.userIdem(uid, idemDigest(idemKey)), s.k.userIdemScheduled(uid, idemDigest(idemKey))
		nonce = "i:" + uid + ":" + idemDigest(idemKey)
	}
	flag := ""
	if scheduled {
		flag = "s"
	}
	stale := ""
	for range maxIDAttempts {
		seq, err := s.cmd().Incr(ctx, s.k.postSeq()).Result()
		if err != nil {
			return "", nil, fmt.Errorf("allocate post id: %w", rdb.StorageFull(err))
		}
		pid := strconv.FormatInt(seq, 10)
		repeat, otherKind := false, false
		if idem != "" {
			// The first request with this key binds it to its post id; a repeat gets that id back
			// and re-runs the (idempotent) creation, which completes a first attempt that was cut
			// off.
			v, err := s.run(ctx, "claim", []string{idem, idemMark}, pid, int(idempotencyTTL.Seconds()), stale, flag)
			if err != nil {
				return "", nil, err
			}
			bound, err := replyString("claim", v)
			if err != nil {
				return "", nil, err
			}
			first, firstScheduled := strings.CutSuffix(bound, idemScheduled)
			repeat, otherKind, pid = first != pid, firstScheduled != scheduled, first
		}
		reply, err := create(pid, nonce, repeat, otherKind)
		if err != nil || reply != nil {
			return pid, reply, err
		}
		stale = pid
	}
	return "", nil, fmt.Errorf("allocate post id: %d ids in a row were taken", maxIDAttempts)
}

// idemScheduled ends the claim's reply for an idempotency key whose first request scheduled its
// post (see allocatePost). A binding without the mark is a post published at once, as every
// binding made before the mark was added reads.
const idemScheduled = " s"

// idemInFlight is the error of a repeat of a creation that does otherwise than its first request
// (scheduling the post, or publishing it at once) while that request has written nothing yet.
func idemInFlight(pid string) error {
	return busyf("the first request with this idempotency key (post %s) has not finished; retry", postID(pid))
}

// createPostOnce runs create_post: the post pid, created at now, or the post an earlier run with
// the same nonce made; nil when pid names another post. The nonce of the post's publication as
// a scheduled post (runPublishJob) is accepted too: a creation repeated with its idempotency key
// after the first request scheduled the post, and it was published, finds that post.
func (s *Store) createPostOnce(ctx context.Context, pid, nonce, title, body, url, uid string, now time.Time, groups, name string, nsfw, spoiler bool) (any, error) {
	return s.run(ctx, "create_post", []string{s.k.post(pid), s.k.postTexts(pid)},
		title, body, url, uid, now.UnixMilli(), now.Add(s.opts.VotingWindow).UnixMilli(),
		groups, nonce, name, flag(nsfw), flag(spoiler), scheduledNonce(uid, pid))
}

// scheduledNonce is the nonce of uid's scheduled post pid, published by runPublishJob.
func scheduledNonce(uid, pid string) string { return "s:" + uid + ":" + pid }

// DeletePost deletes a post of uid's: its thread and votes go, and it leaves every ranking.
func (s *Store) DeletePost(ctx context.Context, user UserKey, id string) error {
	uid := string(user)
	pid, err := PostKey(id)
	if err != nil {
		return err
	}
	n, err := s.allowWrite(ctx, uid, repairPostChange+":"+pid, banFree)
	if err != nil {
		return err
	}
	keys := append(append([]string{s.k.post(pid)}, s.postSubKeys(pid)...), s.k.postTexts(pid))
	reply, err := s.run(ctx, "delete_post", keys, uid, int(tombstoneTTL.Seconds()))
	if err != nil {
		return err
	}
	h, err := replyHash("delete_post", reply)
	if err != nil {
		return err
	}
	if err := s.unindexPost(ctx, pid, h["author"], splitGroups(h["groups"]), atoi64(h["ver"])); err != nil {
		return err
	}
	if err := s.unfeedPost(ctx, pid, h["author"]); err != nil {
		return err
	}
	s.publishPostDeleted(ctx, pid) // subscribers find it gone and end their streams
	// The thread can be large: its comments go in bounded steps after the atomic delete, which
	// already hides them (every comment read checks the post). The repairer finishes an
	// interrupted sweep.
	if err := s.dropThread(ctx, pid); err != nil {
		return err
	}
	s.settled(ctx, n)
	return nil
}

// postSubKeys lists the keys of a post's aggregate other than its hash and its comments, for
// deletion: the post's votes, its watch modes (with their revision counter: the deletion raises
// the post's, which every answer that read a mode recorded too) and the orders of its top-level
// comments.
func (s *Store) postSubKeys(pid string) []string {
	return append([]string{s.k.postVotes(pid), s.k.liveComments(pid), s.k.postWatch(pid), s.k.postWatchAll(pid), s.k.revOf(s.k.postWatch(pid))},
		s.k.replyOrders(pid, topLevel)...)
}

// VotePost records uid's vote on a post: dir is 1 (up), -1 (down) or 0 (withdraw).
func (s *Store) VotePost(ctx context.Context, user UserKey, id string, dir int) (*Post, error) {
	uid := string(user)
	pid, err := PostKey(id)
	if err != nil {
		return nil, err
	}
	if dir < -1 || dir > 1 {
		return nil, invalidf("direction must be 1, -1 or 0")
	}
	var appended *rdb.IntCmd
	n, err := s.allowWriteWith(ctx, uid, repairPostChange+":"+pid, []op{s.votedOp(ctx, uid, "p"+pid, &appended)}, onPost(pid))
	if err != nil {
		return nil, err
	}
	reply, err := s.run(ctx, "vote_post", []string{s.k.post(pid), s.k.postVotes(pid), s.k.postTexts(pid)}, uid, dir, s.now().UnixMilli())
	if err != nil {
		return nil, err
	}
	arr, err := replyArray("vote_post", reply, 1)
	if err != nil {
		return nil, err
	}
	h, err := replyHash("vote_post", arr[1:])
	if err != nil {
		return nil, err
	}
	p := s.postFromHash(pid, h)
	if p == nil {
		return nil, notFoundf("no such post")
	}
	// Re-index even when this vote changed nothing: that completes an earlier vote whose derived
	// writes were cut off, and the version guard makes it free otherwise. The voter's deletion
	// rides along (afterVote).
	read, gone := s.authorGone(ctx, uid)
	if err := s.indexPostIn(ctx, p, nil, false, []op{read}); err != nil {
		return nil, err
	}
	// Likewise for the author's karma: the post's version guards it. It follows a vote cast
	// across its voter's deletion too, which stays counted, before the repair note is settled.
	if err := s.recordKarma(ctx, string(p.Author), p.ID, p.Net(), p.Version); err != nil {
		return nil, err
	}
	if err := s.afterVote(ctx, uid, "p"+pid, gone); err != nil {
		s.settled(ctx, n)
		if errors.Is(err, errDeletedMeanwhile) {
			s.publishPostChanged(ctx, pid) // the vote stays counted: its subscribers see it
		}
		return nil, err
	}
	s.recordActivity(ctx, uid, p.GroupNames)
	s.settled(ctx, n)
	s.compactVotedLater(ctx, uid, "p"+pid, appended)
	// Published even when the vote changed nothing, like the re-index above: a repeat completes
	// an earlier attempt that was cut off before it could publish.
	s.publishPostChanged(ctx, pid)
	return p, nil
}

// SetPostGroups adds a post of uid's to the groups in add and removes it from those in remove.
func (s *Store) SetPostGroups(ctx context.Context, user UserKey, id string, add, remove []string) (*Post, error) {
	uid := string(user)
	pid, err := PostKey(id)
	if err != nil {
		return nil, err
	}
	addN, err := normalizeGroups(add)
	if err != nil {
		return nil, err
	}
	remN, err := normalizeGroups(remove)
	if err != nil {
		return nil, err
	}
	n, err := s.allowWrite(ctx, uid, repairPostChange+":"+pid+":"+strings.Join(remN, ","), postingIn(addN...))
	if err != nil {
		return nil, err
	}
	if err := s.filterPost(nil, nil, nil, addN); err != nil {
		return nil, err
	}
	args := []any{uid, MaxGroupsPerPost, len(addN)}
	for _, g := range addN {
		args = append(args, g)
	}
	for _, g := range remN {
		args = append(args, g)
	}
	reply, err := s.run(ctx, "set_groups", []string{s.k.post(pid), s.k.postTexts(pid)}, args...)
	if err != nil {
		return nil, err
	}
	arr, err := replyArray("set_groups", reply, 1)
	if err != nil {
		return nil, err
	}
	before, err := replyString("set_groups", arr[0])
	if err != nil {
		return nil, err
	}
	h, err := replyHash("set_groups", arr[1:])
	if err != nil {
		return nil, err
	}
	p := s.postFromHash(pid, h)
	if p == nil {
		return nil, notFoundf("no such post")
	}
	// The groups to leave are those the script dropped and, for a repeat of a request whose
	// derived writes were cut off (the script then finds nothing to change), those asked to be
	// left; removal is version-guarded, so removing again is free.
	var left []string
	for _, g := range append(splitGroups(before), remN...) {
		if !contains(p.GroupNames, g) && !contains(left, g) {
			left = append(left, g)
		}
	}
	// The post's new groups go into its search index too (an old group's mark stays; reads check
	// the post's groups as they are now).
	if err := s.indexPost(ctx, p, left, s.searchWrites(postSearchDoc(p, false))); err != nil {
		return nil, err
	}
	s.settled(ctx, n)
	s.publishPostChanged(ctx, pid)
	return p, nil
}

// hotScore is publish time in Unix seconds + K × net votes.
func (s *Store) hotScore(createdMillis int64, net int) float64 {
	return float64(createdMillis/1000) + s.opts.HotK*float64(net)
}

func splitGroups(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func atoi64(s string) int64 {
	if s == "" {
		return 0 // a field the read left out; ParseInt would allocate its error
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func checkIdempotencyKey(k string) error {
	switch {
	case !utf8.ValidString(k):
		return invalidf("idempotencyKey must be valid UTF-8")
	case utf8.RuneCountInString(k) > 64:
		return invalidf("idempotencyKey must be at most 64 characters")
	}
	return nil
}

func idemDigest(k string) string {
	sum := sha256.Sum256([]byte(k))
	return hex.EncodeToString(sum[:16])
}
