package store

import (
	"context"
	"fmt"

	"github.com/agora/agora/internal/rdb"
)

// Blocking. A user's block list is the zset {u:<user>}:blocks, written by block.lua on the
// blocker's slot. Its effects are the blocker's alone:
//
//   - Listings and feeds (posts, a group's posts, the home feed, and every listing that calls
//     Loader.WithoutBlocked) leave out the posts of the users the viewer blocks. A user's own
//     post list, a post read by id and saved posts still show them: the viewer asked for them.
//   - Comments by a blocked user come collapsed: BlockedByViewer, with no author and no text.
//   - A blocked user cannot notify the blocker: each notification job checks, when it runs, that
//     the recipient does not block the actor (see deliver).
//   - Live events: postPublished and feed do not deliver a blocked user's new posts, and
//     commentAdded does not deliver their comments (a thread read later shows them collapsed).
//
// Reads cost no round trip of their own: AuthenticateViewer reads the list with the session, in
// the same pipeline, and the request's Loader filters with it (SetBlocks). For the response cache,
// a response that consulted a non-empty list depends on the viewer, and one that consulted the
// list at all records the viewer's revision, which block.lua raises: a change to the list makes
// the viewer's kept responses stale.

// MaxBlocks is how many users one may block.
const MaxBlocks = 1000

// Blocks is the list of users a viewer blocks, as AuthenticateViewer read it, with the revision of
// the viewer's aggregate read just before it. A nil *Blocks blocks nobody.
type Blocks struct {
	users  map[UserKey]bool
	revKey string // the revision counter of the viewer's aggregate
	rev    string // its value, read before the list
}

func newBlocks(revKey, rev string, users []string) *Blocks {
	b := &Blocks{users: make(map[UserKey]bool, len(users)), revKey: revKey, rev: rev}
	for _, u := range users {
		b.users[UserKey(u)] = true
	}
	return b
}

// Has reports whether u is blocked.
func (b *Blocks) Has(u UserKey) bool { return b != nil && b.users[u] }

// Len returns how many users are blocked.
func (b *Blocks) Len() int {
	if b == nil {
		return 0
	}
	return len(b.users)
}

// with returns a copy of b with u blocked or not.
func (b *Blocks) with(u UserKey, blocked bool) *Blocks {
	c := &Blocks{users: make(map[UserKey]bool, b.Len()+1)}
	if b != nil {
		c.revKey, c.rev = b.revKey, b.rev
		for k := range b.users {
			c.users[k] = true
		}
	}
	if blocked {
		c.users[u] = true
	} else {
		delete(c.users, u)
	}
	return c
}

// Block makes the user uid block the user target and returns that user. It is idempotent.
// Blocking yourself is KindInvalid, an unknown user KindNotFound, and a list of MaxBlocks users
// KindLimitReached.
func (s *Store) Block(ctx context.Context, uid, target UserKey) (*User, error) {
	return s.setBlock(ctx, string(uid), string(target), true)
}

// Unblock makes the user uid stop blocking the user target and returns that user. It is
// idempotent.
func (s *Store) Unblock(ctx context.Context, uid, target UserKey) (*User, error) {
	return s.setBlock(ctx, string(uid), string(target), false)
}

func (s *Store) setBlock(ctx context.Context, uid, target string, block bool) (*User, error) {
	if !validUserName(target) {
		return nil, invalidf("malformed user %q", truncate(target, 40))
	}
	if target == uid {
		return nil, invalidf("you cannot block or unblock yourself")
	}
	// Blocking is a safety tool: a banned user may still block and unblock.
	if _, err := s.allowWrite(ctx, uid, "", banFree); err != nil {
		return nil, err
	}
	u, err := s.existingUser(ctx, target)
	if err != nil {
		return nil, err
	}
	op := "rem"
	if block {
		op = "add"
	}
	// The script reads the deletion in the user's hash (checks that passed just before it).
	if _, err := s.run(ctx, "block", []string{s.k.blocks(uid), s.k.user(uid)}, target, op, s.now().UnixMilli(), MaxBlocks,
		s.k.chanSessions(uid), s.pubSubArg()); err != nil {
		return nil, err
	}
	if block {
		// The send leases of their conversation end after the block is written, so that none is
		// granted after checks that read the list before it (message_leases.go). Should this
		// fail, the block is written and the caller's retry, which finds it so, ends them.
		if err := s.revokeLease(ctx, uid, target); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// LiveFilters are what a viewer's live streams filter their events with: the users the viewer
// blocks and whether they show NSFW posts.
type LiveFilters struct {
	Blocks   *Blocks
	ShowNSFW bool
}

// liveFiltersOps returns the reads of uid's live filters — the block list, with the revision of
// uid's aggregate read just before it as AuthenticateViewer reads it, and the NSFW setting — and
// what they say once they ran: SessionState reads them with the session, for a live stream that
// follows them (live.SessionWatch) when it starts and after a gap in which it may have missed a
// change.
func (s *Store) liveFiltersOps(ctx context.Context, uid string) ([]op, func() (LiveFilters, error)) {
	revKey, blocksKey := s.k.revOf(s.k.user(uid)), s.k.blocks(uid)
	var rev, nsfw *rdb.StringCmd
	var list *rdb.StringSliceCmd
	ops := []op{
		{key: revKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			rev = p.Get(ctx, revKey) // before the list: the revision is never newer than it
			return rev, nil
		}},
		{key: blocksKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			list = p.ZRange(ctx, blocksKey, 0, -1)
			return list, nil
		}},
		s.showNSFWRead(ctx, uid, &nsfw),
	}
	return ops, func() (LiveFilters, error) {
		for _, c := range []rdb.Cmder{rev, list, nsfw} {
			if err := c.Err(); err != nil && !isNil(err) {
				return LiveFilters{}, fmt.Errorf("read the live filters of %s: %w", uid, err)
			}
		}
		return LiveFilters{Blocks: newBlocks(revKey, rev.Val(), list.Val()), ShowNSFW: nsfw.Val() == "1"}, nil
	}
}

// Changed returns f with the change a live event announces (EventIDs.Blocks or NSFW) applied,
// and false when the event announces none.
func (f LiveFilters) Changed(ev EventIDs) (LiveFilters, bool) {
	changed := false
	if b, ok := f.Blocks.Changed(ev.Blocks); ok {
		f.Blocks, changed = b, true
	}
	if ev.NSFW == "0" || ev.NSFW == "1" {
		f.ShowNSFW, changed = ev.NSFW == "1", true
	}
	return f, changed
}

// Changed returns b with the change of a Blocks event (EventIDs.Blocks: "+<user>" or "-<user>")
// applied, and false when the event is not one.
func (b *Blocks) Changed(event string) (*Blocks, bool) {
	if len(event) < 2 || (event[0] != '+' && event[0] != '-') {
		return b, false
	}
	return b.with(UserKey(event[1:]), event[0] == '+'), true
}

// undeliverableNotices reports, for each notice, whether it must not be delivered: its
// recipient blocks its actor, or is a deleted account (whose kept post or comment can still be
// replied to, and whose name mentioned). One pipeline of a ZSCORE and an HGET on each
// recipient's slot.
func (s *Store) undeliverableNotices(ctx context.Context, ns []notice) ([]bool, error) {
	l := s.NewLoader()
	reads := make([]read, 0, 2*len(ns))
	for _, n := range ns {
		reads = append(reads, zscoreRead(s.k.blocks(n.to), n.rec.Actor), hashFieldRead(s.k.user(n.to), "deleted"))
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	out := make([]bool, len(ns))
	for i := range ns {
		blocked := calls[2*i].cmd.Err() == nil
		deleted := calls[2*i+1].cmd.(*rdb.StringCmd).Val() == "1"
		out[i] = blocked || deleted
	}
	return out, nil
}

// SetBlocks makes the loader read for a viewer who blocks the users b lists (nil: an anonymous
// viewer, or one whose list was not read). Call it before the first read. A Loader shared by
// viewers (a live event's) must not have one.
func (l *Loader) SetBlocks(b *Blocks) {
	l.mu.Lock()
	l.blocks = b
	l.mu.Unlock()
}

// SetBlocked changes the viewer's block list of the loader, after a write that changed it.
func (l *Loader) SetBlocked(u UserKey, blocked bool) {
	l.mu.Lock()
	l.blocks = l.blocks.with(u, blocked)
	l.mu.Unlock()
}

// viewerBlocks returns the viewer's block list, and tells the response's record that the
// response consulted it.
func (l *Loader) viewerBlocks() *Blocks {
	l.mu.Lock()
	b := l.blocks
	l.mu.Unlock()
	if b != nil && l.revs != nil {
		l.revs.blocksRead(b.revKey, b.rev, b.Len() > 0)
	}
	return b
}

// ViewerBlocks reports whether the viewer blocks u.
func (l *Loader) ViewerBlocks(u UserKey) bool { return l.viewerBlocks().Has(u) }

// WithoutBlocked returns the page without the posts whose author the viewer blocks: the one
// filter of every listing and feed. A page may then hold fewer items than asked for; its cursors,
// and whether more follow or precede, are those of the full page, so paging goes on unchanged
// (see Page.Without). Its total still counts the posts left out.
func (l *Loader) WithoutBlocked(p *Page[*Post]) *Page[*Post] {
	b := l.viewerBlocks()
	if p == nil || b.Len() == 0 {
		return p
	}
	return p.Without(func(it *Post) bool { return b.Has(it.Author) })
}

// collapseBlocked makes a comment whose author b blocks collapsed: BlockedByViewer, no author, no
// text.
func collapseBlocked(c *Comment, b *Blocks) {
	if c != nil && c.Author != "" && b.Has(c.Author) {
		c.BlockedByViewer, c.Author, c.Text = true, "", ""
	}
}
