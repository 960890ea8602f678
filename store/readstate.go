package store

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strconv"

	"github.com/agora/agora/internal/rdb"
)

// Read state: what a signed-in reader has not seen of a thread.
//
//   - Every comment gets a creation ordinal when it is written (the post's cord counter, raised by
//     create_comment: 1, 2, … in the order the comments were written, unlike their numbers, which
//     are allocated before the write) and a bit at that ordinal in the thread's live bitmap
//     ({p:17}:c:live). The bit is set while the comment counts in the post's commentCount: the
//     scripts that move that count (create_comment, delete_comment, moderate_comment) move the
//     bit in the same step, so the two cannot drift.
//   - markPostRead records the post's ordinal in the reader's marks ({rd:alice}:marks, post id →
//     ordinal), only ever forwards. The unread count is the number of bits set past the mark: the
//     comments written since that are still there. A comment deleted or removed since stops
//     counting; one restored counts again; one written before the mark never counts.
//   - A post the reader never marked has all its comments unread (its commentCount), and
//     viewerHasRead false.
//   - Reading a thread marks nothing: the client calls markPostRead when it has shown the thread
//     (as mature clients do: a prefetch or a crawler is not a reader).
//   - The marks are bounded: ReadMarkCap marks per reader, those of the newest posts (by id); a
//     trim drops the oldest ReadMarkSlack at a time. The hash stays under Redis's default
//     hash-max-listpack-entries (128), so it is listpack-encoded: 712 bytes for 126 marks of
//     three-digit post ids (MEMORY USAGE, TestReadMarksStayBounded), about 14 bytes a mark with
//     seven-digit ids: under 2 KB per reader.
//   - The bitmap is derived from the comments' own hashes (their ord, deleted and removed): `agora
//     rebuild` writes it again (rebuildLiveBits), bit for bit as the scripts leave it.
//   - The bitmap costs one bit per comment ever written to the thread (an 800-comment thread:
//     100 bytes), and a response that shows unreadCommentCount reads it whole, with the mark, in
//     the pipeline of the post itself: no extra round trip.

// ReadMarkCap is how many read marks one reader keeps: those of the newest posts.
const ReadMarkCap = 112

// ReadMarkSlack is how far past ReadMarkCap the marks grow before a trim takes them back to it.
const ReadMarkSlack = 14

// MarkPostRead records that viewer has read the thread of the post id up to its newest comment.
// A missing or deleted post is KindNotFound. Marking is not a write the rate limit counts: it
// changes nothing anyone else sees, and its cost is bounded by ReadMarkCap. A deleted account
// marks nothing (KindUnauthenticated, as every write of one): its deletion dropped its marks,
// which nothing would drop again. The account is read in the round trip of the post.
func (s *Store) MarkPostRead(ctx context.Context, viewer UserKey, id string) error {
	pid, err := PostKey(id)
	if err != nil {
		return err
	}
	l := s.NewLoader()
	calls := l.getAll(ctx, l.postRead(pid), hashFieldRead(s.k.post(pid), "cord"), hashFieldRead(s.k.user(string(viewer)), "deleted"))
	if err := waitAll(ctx, calls); err != nil {
		return fmt.Errorf("mark post %s read: %w", pid, err)
	}
	if calls[2].cmd.(*rdb.StringCmd).Val() == "1" {
		return &Error{Kind: KindUnauthenticated, Msg: "this account was deleted"}
	}
	if l.postOf(calls[0], pid) == nil {
		return notFoundf("no post %s", truncate(id, 40))
	}
	ord, err := calls[1].cmd.(*rdb.StringCmd).Result()
	if err != nil && !errors.Is(err, rdb.Nil) {
		return fmt.Errorf("mark post %s read: %w", pid, err)
	}
	if ord == "" {
		ord = "0"
	}
	// The deletion is read again after the mark, in its round trip (authorGone): the mark's key
	// is of a slot of its own, which the deletion drops after its step, so that a mark whose
	// check above ran before the deletion may land after the drop and make it again.
	read, gone := s.authorGone(ctx, string(viewer))
	if _, err := s.runScripts(ctx, []scriptCall{{name: "read_mark", keys: []string{s.k.readMarks(string(viewer))},
		args: []any{pid, ord, ReadMarkCap, ReadMarkSlack}}}, read); err != nil {
		return fmt.Errorf("mark post %s read: %w", pid, err)
	}
	deleted, _, err := gone()
	if err != nil {
		return fmt.Errorf("mark post %s read: %w", pid, err)
	}
	if deleted {
		if err := s.dropReadMarks(ctx, string(viewer)); err != nil {
			return fmt.Errorf("mark post %s read: take a mark across the deletion back: %w", pid, err)
		}
		return errDeletedMeanwhile
	}
	return nil
}

// dropReadMarks drops the read marks of uid, a deleted account, and their revision counter: the
// keys of uid's read state, which a deletion drops and a mark across it may make again.
func (s *Store) dropReadMarks(ctx context.Context, uid string) error {
	marks := s.k.readMarks(uid)
	return s.cmd().Unlink(ctx, marks, s.k.revOf(marks)).Err()
}

// ReadState returns the viewer's unread comment count of a post and whether they marked it
// read; 0 and false for an anonymous viewer. Walk reads it for a whole list at once
// (Needs.ReadState).
func (l *Loader) ReadState(ctx context.Context, viewer UserKey, p *Post) (unread int, read bool, err error) {
	if viewer == "" || p == nil {
		return 0, false, nil
	}
	calls := l.getAll(ctx, l.readStateReads(string(viewer), p.Key())...)
	if err := waitAll(ctx, calls); err != nil {
		return 0, false, err
	}
	mark, err := calls[0].cmd.(*rdb.StringCmd).Result()
	if errors.Is(err, rdb.Nil) {
		return p.CommentCount, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	live, err := calls[1].cmd.(*rdb.StringCmd).Bytes()
	if err != nil && !errors.Is(err, rdb.Nil) {
		return 0, false, err
	}
	w, _ := strconv.ParseInt(mark, 10, 64)
	return UnreadAfter(live, w), true, nil
}

// HasRead reports whether the viewer marked the post read; false for an anonymous viewer.
func (l *Loader) HasRead(ctx context.Context, viewer UserKey, pid string) (bool, error) {
	if viewer == "" {
		return false, nil
	}
	c, err := l.get(ctx, hashFieldRead(l.s.k.readMarks(string(viewer)), pid))
	if err != nil {
		return false, err
	}
	err = c.cmd.(*rdb.StringCmd).Err()
	if errors.Is(err, rdb.Nil) {
		return false, nil
	}
	return err == nil, err
}

// readStateReads are the reads of a viewer's read state of post pid: the mark, and the thread's
// live bitmap.
func (l *Loader) readStateReads(viewer, pid string) []read {
	return []read{hashFieldRead(l.s.k.readMarks(viewer), pid), stringRead(l.s.k.liveComments(pid))}
}

// readStateWalkReads adds the read state of a post to a walk's round, when the needs ask for it.
func (l *Loader) readStateWalkReads(it walkItem, reads []read) []read {
	switch {
	case it.kind != ItemPost:
		return reads
	case it.needs.ReadState && it.needs.Viewer != "":
		return append(reads, l.readStateReads(string(it.needs.Viewer), it.key)...)
	case it.needs.LiveComments:
		return append(reads, stringRead(l.s.k.liveComments(it.key)))
	}
	return reads
}

// stringRead reads a string key (GET).
func stringRead(key string) read {
	return read{key: "g:" + key, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.Get(ctx, key)
	}}
}

// UnreadAfter counts the bits of a live bitmap (SETBIT order: bit 0 is the high bit of the first
// byte) set at offsets past mark.
func UnreadAfter(live []byte, mark int64) int {
	n := 0
	from := mark + 1
	if from < 0 {
		from = 0
	}
	for i := int(from / 8); i < len(live); i++ {
		b := live[i]
		if int64(i) == from/8 {
			b &= 0xff >> (from % 8)
		}
		n += bits.OnesCount8(b)
	}
	return n
}

// hideReadRounds bounds how many more pages PageWithoutRead reads: of MaxFirst posts each, they
// reach past more posts than a reader can have marked (ReadMarkCap + ReadMarkSlack).
const hideReadRounds = 2

// PageWithoutRead is a page of posts without those the viewer marked read (hideRead): it loads
// the window with load, leaves out the read posts, and while that leaves it short and the list
// goes on, loads the next MaxFirst posts past it (before it, paging backwards) and takes what it
// needs of them. A reader has at most ReadMarkCap + ReadMarkSlack marks, so the page is full
// unless the list ends. The cursors are the posts' own: paging on from them skips and repeats
// nothing, whatever comments arrive (they do not change what is read). Total is the whole list's.
func (l *Loader) PageWithoutRead(ctx context.Context, viewer UserKey, w Window, load func(Window) (*Page[*Post], error)) (*Page[*Post], error) {
	if viewer == "" {
		return load(w)
	}
	w.NoCursors = false // the rounds after the first start from a cursor
	p, err := load(w)
	if err != nil {
		return nil, err
	}
	first := p
	out, err := l.WithoutRead(ctx, viewer, p)
	if err != nil {
		return nil, err
	}
	backward, n := w.Last != 0, w.First
	if backward {
		n = w.Last
	}
	for range hideReadRounds {
		more, from := p.HasNext, p.EndCursor()
		if backward {
			more, from = p.HasPrev, p.StartCursor()
		}
		if len(out.Items) >= n || !more || from == "" {
			break
		}
		next := w
		if backward {
			next.Last, next.Before = MaxFirst, from
		} else {
			next.First, next.After = MaxFirst, from
		}
		if p, err = load(next); err != nil {
			return nil, err
		}
		kept, err := l.WithoutRead(ctx, viewer, p)
		if err != nil {
			return nil, err
		}
		need := n - len(out.Items)
		items, cursors := kept.Items, kept.Cursors
		if backward {
			out.HasPrev = p.HasPrev
			if len(items) > need {
				items, cursors = items[len(items)-need:], cursors[len(cursors)-need:]
				out.HasPrev = true
			}
			out.Items = append(items[:len(items):len(items)], out.Items...)
			out.Cursors = append(cursors[:len(cursors):len(cursors)], out.Cursors...)
		} else {
			out.HasNext = p.HasNext
			if len(items) > need {
				items, cursors = items[:need], cursors[:need]
				out.HasNext = true
			}
			out.Items = append(out.Items, items...)
			out.Cursors = append(out.Cursors, cursors...)
		}
		// A page that holds no post yet ends where the rounds' examination did, so that paging
		// goes on from there (see Page.Without); one that does, at its posts.
		out.start, out.end = "", ""
		if len(out.Items) == 0 {
			out.start, out.end = first.StartCursor(), p.EndCursor()
			if backward {
				out.start, out.end = p.StartCursor(), first.EndCursor()
			}
		}
	}
	return out, nil
}

// WithoutRead leaves out of a page the posts the viewer marked read. The marks are read in one
// pipeline (or were, with the posts, when the response shows read state). It keeps every
// remaining item's cursor.
func (l *Loader) WithoutRead(ctx context.Context, viewer UserKey, p *Page[*Post]) (*Page[*Post], error) {
	if p == nil || viewer == "" || len(p.Items) == 0 {
		return p, nil
	}
	reads := make([]read, len(p.Items))
	for i, it := range p.Items {
		reads[i] = hashFieldRead(l.s.k.readMarks(string(viewer)), it.Key())
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	read := make(map[*Post]bool, len(p.Items))
	for i, it := range p.Items {
		err := calls[i].cmd.(*rdb.StringCmd).Err()
		if err != nil && !errors.Is(err, rdb.Nil) {
			return nil, err
		}
		read[it] = err == nil
	}
	return p.Without(func(it *Post) bool { return read[it] }), nil
}

// liveBatch bounds the comments one live_bits call reads.
const liveBatch = 200

// rebuildLiveBits derives the live bitmap of post pid's thread again from its comments (Rebuild):
// every comment with an ordinal gets its bit as its hash says now (live_bits.lua, a batch per
// call, each bit read and written in one step), then the ordinals up to cord — the post's
// ordinal counter, read before the comments were listed — that no comment holds any longer
// (deleted without replies, so dropped) are cleared, and a thread that counts no comment drops
// its bitmap. A comment written after cord was read sets its own bit. It returns how many
// comments it gave a bit.
func (s *Store) rebuildLiveBits(ctx context.Context, pid string, cord int64) (int, error) {
	nums, err := s.threadNums(ctx, pid)
	if err != nil {
		return 0, err
	}
	post, live := s.k.post(pid), s.k.liveComments(pid)
	seen := make(map[int64]bool, len(nums))
	for start := 0; start < len(nums); start += liveBatch {
		part := nums[start:min(start+liveBatch, len(nums))]
		keys := []string{post, live}
		for _, n := range part {
			keys = append(keys, s.k.comment(pid, n))
		}
		reply, err := s.run(ctx, "live_bits", keys, "set")
		if err != nil {
			return 0, fmt.Errorf("derive the live bitmap of post %s: %w", pid, err)
		}
		ords, err := replyArray("live_bits", reply, 0)
		if err != nil {
			return 0, fmt.Errorf("derive the live bitmap of post %s: %w", pid, err)
		}
		for _, o := range ords {
			ord, err := replyString("live_bits", o)
			if err != nil {
				return 0, fmt.Errorf("derive the live bitmap of post %s: %w", pid, err)
			}
			if v, err := strconv.ParseInt(ord, 10, 64); err == nil {
				seen[v] = true
			}
		}
	}
	clear := []any{"clear"}
	flush := func() error {
		if _, err := s.run(ctx, "live_bits", []string{post, live}, clear...); err != nil {
			return fmt.Errorf("derive the live bitmap of post %s: %w", pid, err)
		}
		clear = clear[:1]
		return nil
	}
	for ord := int64(1); ord <= cord; ord++ {
		if seen[ord] {
			continue
		}
		if clear = append(clear, ord); len(clear) > 1000 {
			if err := flush(); err != nil {
				return 0, err
			}
		}
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return len(seen), nil
}
