package store

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// A user's comments: a sorted set in the user's slot, {u:<user>}:comments, of "<post>:<number>"
// (the number as in ids, "17:4") scored by creation time, with the guard hash
// {u:<user>}:comments:ver of the comment version each entry last applied (index.lua), exactly as
// a user's posts are listed.
//
//   - It holds the user's live comments: written after a comment's atomic step (CreateComment,
//     and its repair note's repairComment), taken out by a deletion (for good: the guard then
//     holds the largest version, so that no late or repeated add brings the entry back), by a
//     moderator's removal (under the comment's version; a restore adds it back under a later
//     one) and by the deletion of the post (dropThread, before the thread's keys go).
//   - So commentCount, its size, counts the comments that are neither deleted nor removed, on
//     posts that are not deleted; a comment on a post a moderator removed still counts, though
//     only those who may read the post see it in the list.
//   - Rebuild re-derives every entry from the threads, and drops the entries whose comment no
//     longer exists (userCommentOrphans).
//
// Cost: per comment, one sorted-set member and one guard field in its author's slot: about 30
// bytes while the user has under 128 comments (listpacks), about 120 beyond (skiplist and
// hashtable), plus the member's text; a deleted comment leaves its guard field.

// finalVersion is the guard version of an entry taken out for good.
const finalVersion = math.MaxInt64

// userCommentMember is the member of comment num (stored form) of post pid in its author's list.
func userCommentMember(pid, num string) string { return pid + ":" + shortNum(num) }

// userCommentCall writes comment c into its author's list when it is live, or out of it.
func (s *Store) userCommentCall(author, pid, num string, c *Comment) scriptCall {
	member := userCommentMember(pid, num)
	sets := []string{s.k.userComments(author)}
	if c == nil {
		return indexCall(s.k.userCommentsVer(author), member, finalVersion, false, sets, nil)
	}
	live := !c.Deleted && !c.Removed && c.Author != ""
	var scores []any
	if live {
		scores = []any{c.CreatedAt.UnixMilli()}
	}
	return indexCall(s.k.userCommentsVer(author), member, c.Version, live, sets, scores)
}

// listComment writes comment c into (or out of) its author's list; a deleted comment has no
// author left, so author names it.
func (s *Store) listComment(ctx context.Context, author string, c *Comment, also ...op) error {
	if author == "" {
		return nil
	}
	call := s.userCommentCall(author, c.pid, c.num, c)
	if c.Deleted {
		call = s.userCommentCall(author, c.pid, c.num, nil)
	}
	if _, err := s.runScripts(ctx, []scriptCall{call}, also...); err != nil {
		return fmt.Errorf("list comment %s of %s: %w", c.ID, author, err)
	}
	return nil
}

// unlistThread takes the comments nums of post pid out of their authors' lists for good when
// the post is deleted (as sweep_thread decides: its hash is gone or a tombstone; a deleted post
// never comes back), and does nothing on a live post. It reads the post and the comments'
// authors in one round trip and writes in another.
func (s *Store) unlistThread(ctx context.Context, pid string, nums []string) error {
	cmds := make([]*rdb.SliceCmd, len(nums))
	ops := make([]op, len(nums), len(nums)+1)
	pk := s.k.post(pid)
	var post *rdb.SliceCmd
	ops = append(ops, op{key: pk, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		post = p.HMGet(ctx, pk, "author", "deleted")
		return post, nil
	}})
	for i, n := range nums {
		key := s.k.comment(pid, n)
		ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cmds[i] = p.HMGet(ctx, key, commentArgNames("author")...)
			return cmds[i], nil
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return fmt.Errorf("read the authors of the comments of post %s: %w", pid, err)
	}
	if v := post.Val(); len(v) == 2 && str(v[0]) != "" && str(v[1]) != "1" {
		return nil // a live post
	}
	var calls []scriptCall
	for i, n := range nums {
		if author := commentValues([]string{"author"}, strs(cmds[i].Val()))[0]; author != "" {
			calls = append(calls, s.userCommentCall(author, pid, n, nil))
		}
	}
	if len(calls) == 0 {
		return nil
	}
	if err := s.runMany(ctx, calls); err != nil {
		return fmt.Errorf("unlist the comments of post %s: %w", pid, err)
	}
	return nil
}

// orphanFields are the fields of a comment userCommentOrphans reads, and orphanArgs the HMGET
// arguments that read them in either shape.
var orphanFields = []string{"author", "deleted", "removed"}

var orphanArgs = commentArgNames(orphanFields...)

// userCommentOrphans drops from every user's comment list the entries whose comment no longer
// exists, is deleted or removed, or is another user's (SCAN, for Rebuild), and returns how many.
func (s *Store) userCommentOrphans(ctx context.Context) (int, error) {
	var users []string
	err := s.scanKeys(ctx, s.k.prefix+"{u:*}:comments", func(key string) error {
		if u, ok := strings.CutSuffix(strings.TrimPrefix(key, s.k.prefix+"{u:"), "}:comments"); ok && validUserName(u) {
			users = append(users, u)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("list user comment lists: %w", err)
	}
	dropped := 0
	for _, u := range users {
		members, err := s.cmd().ZRange(ctx, s.k.userComments(u), 0, -1).Result()
		if err != nil {
			return dropped, fmt.Errorf("read the comments of %s: %w", u, err)
		}
		cmds := make([]*rdb.SliceCmd, len(members))
		ops := make([]op, 0, len(members))
		for i, m := range members {
			pid, n, ok := strings.Cut(m, ":")
			if !ok {
				continue
			}
			key := s.k.comment(pid, padNum(n))
			ops = append(ops, op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				cmds[i] = p.HMGet(ctx, key, orphanArgs...)
				return cmds[i], nil
			}})
		}
		if err := s.pipeline(ctx, ops, false); err != nil {
			return dropped, fmt.Errorf("check the comments of %s: %w", u, err)
		}
		var calls []scriptCall
		for i, m := range members {
			var v []string
			if cmds[i] != nil && len(cmds[i].Val()) == len(orphanArgs) {
				v = commentValues(orphanFields, strs(cmds[i].Val()))
			}
			if len(v) == 3 && v[0] == u && v[1] != "1" && v[2] == "" {
				continue
			}
			pid, n, _ := strings.Cut(m, ":")
			calls = append(calls, s.userCommentCall(u, pid, padNum(n), nil))
		}
		if len(calls) > 0 {
			if err := s.runMany(ctx, calls); err != nil {
				return dropped, fmt.Errorf("drop comments of %s: %w", u, err)
			}
			dropped += len(calls)
		}
	}
	return dropped, nil
}

// UserCommentCount loads how many live comments user wrote (see above).
func (l *Loader) UserCommentCount(ctx context.Context, user UserKey) (int, error) {
	return l.zcard(ctx, l.s.k.userComments(string(user)))
}

// UserPostCount loads how many published posts user has that are neither deleted nor removed.
func (l *Loader) UserPostCount(ctx context.Context, user UserKey) (int, error) {
	return l.postCount(ctx, l.s.k.userPosts(string(user)))
}

// userCommentTags are the cursor tags of a user's comments in each CommentSort: a cursor of one
// order is refused by another (Window.decode).
var userCommentTags = [...]string{
	CommentsNew:           "uc",
	CommentsOld:           "uco",
	CommentsTop:           "uct",
	CommentsBest:          "ucb",
	CommentsControversial: "ucc",
}

// UserComments loads one page of user's live comments: newest first (CommentsNew) or oldest
// first (CommentsOld) from the user's list, or ranked by votes (CommentsTop, CommentsBest,
// CommentsControversial: see userCommentsRanked). A comment the viewer may not read — on a post
// that is removed or deleted, on an NSFW post the viewer does not show, by a user the viewer
// blocks — is left out of the page (its cursor with it), so a page may hold fewer than asked.
func (l *Loader) UserComments(ctx context.Context, user UserKey, sort CommentSort, w Window) (*Page[*Comment], error) {
	if sort < 0 || int(sort) >= len(userCommentTags) {
		return nil, invalidf("unknown comment order %d", int(sort))
	}
	tag := userCommentTags[sort]
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	var rp rawPage
	if sort == CommentsNew || sort == CommentsOld {
		rp, err = l.page(ctx, l.s.k.userComments(string(user)), sort == CommentsNew, sp)
	} else {
		rp, err = l.userCommentsRanked(ctx, string(user), sort, sp)
	}
	if err != nil {
		return nil, err
	}
	reads := make([]read, 0, 2*len(rp.members))
	type ref struct{ pid, num string }
	refs := make([]ref, len(rp.members))
	for i, m := range rp.members {
		pid, n, _ := strings.Cut(m, ":")
		refs[i] = ref{pid, padNum(n)}
		reads = append(reads, l.postRead(pid), l.commentRead(pid, refs[i].num, AllCommentFields))
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	blocks := l.viewerBlocks()
	all := rp.cursors(tag)
	p := &Page[*Comment]{Total: rp.total, HasNext: rp.hasNext, HasPrev: rp.hasPrev}
	for i, r := range refs {
		post := l.postOf(calls[2*i], r.pid)
		c := l.commentOf(calls[2*i+1], r.pid, r.num, AllCommentFields)
		if post == nil || post.Removed || post.NSFWHidden || blocks.Has(post.Author) ||
			c == nil || c.Deleted || c.Removed || c.BlockedByViewer || c.Author != user {
			continue
		}
		p.Items = append(p.Items, c)
		p.Cursors = append(p.Cursors, all[i])
	}
	return p, nil
}

// userCommentsRanked returns the page of the span sp of user's comments in sort (TOP, BEST or
// CONTROVERSIAL), ranked at read time as User.posts ranks a user's posts (user_posts.go), with
// no copy of the list per order: the user's newest rankCap comments (one ZREVRANGE of their list,
// in their slot), the vote counts of each (one HMGET each, in one pipeline: on a Cluster, one per
// master), scored as the reply orders score them (replyScore) and paged by rankPage as Redis
// pages a sorted set, ties by member bytes descending, cursors included. A comment whose hash is
// gone since it was listed is not ranked; one deleted or removed since stays in the ranking and
// is left out of the page by UserComments, as NEW leaves it out.
func (l *Loader) userCommentsRanked(ctx context.Context, user string, sort CommentSort, sp span) (rawPage, error) {
	key := l.s.k.userComments(user)
	n := l.s.rankCap()
	cands, err := l.get(ctx, read{key: "ucr:" + key + "\x00" + strconv.Itoa(n), rkey: key,
		fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
			c.cmd = p.ZRevRange(ctx, key, 0, int64(n-1))
		}})
	if err != nil {
		return rawPage{}, err
	}
	members := cands.cmd.(*rdb.StringSliceCmd).Val()
	type ref struct{ member, pid, num string }
	refs := make([]ref, 0, len(members))
	reads := make([]read, 0, len(members))
	for _, m := range members {
		pid, num, ok := strings.Cut(m, ":")
		if !ok {
			continue // not a comment's member: Rebuild drops it (userCommentOrphans)
		}
		refs = append(refs, ref{m, pid, padNum(num)})
		reads = append(reads, l.commentRead(pid, padNum(num), CommentUp|CommentDown))
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return rawPage{}, err
	}
	ranked := make([]rankedEntry, 0, len(refs))
	for i, r := range refs {
		if c := l.commentOf(calls[i], r.pid, r.num, CommentUp|CommentDown); c != nil {
			ranked = append(ranked, rankedEntry{id: r.member, score: replyScore(sort, c.Upvotes, c.Downvotes)})
		}
	}
	rp, _ := rankPage(ranked, sp)
	return rp, nil
}
