package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
)

// Watching and muting. A user's watch mode of a post's thread or of a group is REPLIES unless
// they chose another (a post's author too: they watch their own post at REPLIES):
//
//   - ALL: every new comment in the thread is a WATCHED_COMMENT notification, every new post in
//     the group a WATCHED_POST. The watchers with ALL are a set beside the mode hash, in the
//     post's (or group's) slot; a new comment's notification job queues the fan-out, which scans
//     that set in chunks of fanoutBatch, one job per chunk, each queueing the next before it
//     returns: the feed's fan-out (runFeedJob), for watchers.
//   - REPLIES: today's notifications (REPLY, MENTION) and nothing more.
//   - MUTED: no REPLY and no MENTION from the thread, or from any post of the group. A post's own
//     mode, once chosen, wins over its groups': REPLIES or ALL on a post of a muted group is what
//     it says, and so is the REPLIES its author watches it at (a group muted by the author
//     does not silence the replies to their own post in it).
//
// The user's side. The modes live on the watched side, which is what notifications read; each user
// also keeps an index of what they chose a mode for ({u:<name>}:watches, userWatches), written in
// the round trip of the watch's script, ahead of it, like the vote log: an entry may name an
// item the script never reached, which readers skip (the item holds no mode of the user), but no
// mode is ever missing from it — also when two watches of one item cross (see watch). The
// account's export lists the modes through it, its deletion takes the user off every mode it
// names ("watches" step), and Rebuild derives it again from the watched side (rebuildWatchIndex).
// One member per thread or group watched, ~30 bytes.
//
// Exactly once: a notification's id in an inbox is its cause — the comment ("c:17:4") or the
// post ("p:17") — whatever its kind, and notify.lua adds an id once. So a chunk that runs again
// (a retry, a crash mid-chunk, a job queued twice) adds nothing, and a watcher who also gets the
// REPLY or MENTION of the same comment gets one notification, the REPLY or MENTION, which the
// comment's job delivers before it queues the fan-out.

// WatchMode is how closely a user follows a thread or a group.
type WatchMode string

// The watch modes.
const (
	WatchAll     WatchMode = "ALL"
	WatchReplies WatchMode = "REPLIES"
	WatchMuted   WatchMode = "MUTED"
)

// The kinds of notification watching adds.
const (
	// NotificationWatchedComment is a new comment in a thread the recipient watches with ALL.
	NotificationWatchedComment NotificationKind = "WATCHED_COMMENT"
	// NotificationWatchedPost is a new post in a group the recipient watches with ALL.
	NotificationWatchedPost NotificationKind = "WATCHED_POST"
)

const (
	jobWatchComment = "watch-comment" // "<post> <number> <cursor>": a chunk of a comment's WATCHED_COMMENTs
	jobWatchPost    = "watch-post"    // "<group> <post> <cursor>": a chunk of a post's WATCHED_POSTs
)

// watchCode is how a mode is stored: "A", "M", "R". No entry is REPLIES too; a post's "R" says
// the user chose it, which wins over a muted group.
func watchCode(m WatchMode) (string, error) {
	switch m {
	case WatchAll:
		return "A", nil
	case WatchMuted:
		return "M", nil
	case WatchReplies:
		return "R", nil
	}
	return "", invalidf("unknown watch mode %q", m)
}

// watchMode is the mode a stored code names.
func watchMode(code string) WatchMode {
	switch code {
	case "A":
		return WatchAll
	case "M":
		return WatchMuted
	}
	return WatchReplies
}

// MaxWatches is how many posts and groups one user may hold a watch mode for: choosing one more
// is KindLimitReached. REPLIES, the default, takes no place — but on a post of a group the user
// chose a mode for, where it is kept as a choice that wins over the group's — so setting an item
// back to REPLIES frees its place; posts deleted since they were watched, and groups that no
// longer exist, stop counting once the cap is met (see watch).
const MaxWatches = 10_000

// WatchPost sets how user follows the thread of the post id. A missing or deleted post is
// KindNotFound; a mode for more than MaxWatches posts and groups is KindLimitReached.
func (s *Store) WatchPost(ctx context.Context, user UserKey, id string, mode WatchMode) error {
	pid, err := PostKey(id)
	if err != nil {
		return err
	}
	code, err := watchCode(mode)
	if err != nil {
		return err
	}
	// The post's groups, with the rate limit: REPLIES on the post is kept as a choice only where
	// it wins over a mode chosen for one of them.
	var groups *rdb.StringCmd
	read := op{key: s.k.post(pid), fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		groups = p.HGet(ctx, s.k.post(pid), "groups")
		return groups, nil
	}}
	if _, err := s.allowWriteWith(ctx, string(user), "", []op{read}, banFree); err != nil {
		return err
	}
	if err := groups.Err(); err != nil && !isNil(err) {
		return fmt.Errorf("read the groups of post %s: %w", pid, err)
	}
	return s.watch(ctx, string(user), "p:"+pid, code, splitGroups(groups.Val()), scriptCall{name: "watch",
		keys: []string{s.k.postWatch(pid), s.k.postWatchAll(pid), s.k.post(pid)}})
}

// WatchGroup sets how user follows the group name. A group that does not exist is KindNotFound;
// a mode for more than MaxWatches posts and groups is KindLimitReached.
func (s *Store) WatchGroup(ctx context.Context, user UserKey, name string, mode WatchMode) error {
	g, err := NormalizeGroupName(name)
	if err != nil {
		return err
	}
	code, err := watchCode(mode)
	if err != nil {
		return err
	}
	ok, err := s.NewLoader().groupExists(ctx, []string{g})
	if err != nil {
		return err
	}
	if !ok[0] {
		return notFoundf("no group %q", g)
	}
	if _, err := s.allowWriteWith(ctx, string(user), "", nil, banFree); err != nil {
		return err
	}
	return s.watch(ctx, string(user), "g:"+g, code, nil, scriptCall{name: "watch",
		keys: []string{s.k.groupWatch(g), s.k.groupWatchAll(g)}})
}

// watch sets uid's mode code of item with call (watch.lua, its keys without the arguments),
// keeping uid's index of what they watch: a mode is recorded in the index, within MaxWatches
// (watch_index.lua), before it is set, so that no mode is ever missing from the index; a mode
// set back to the default leaves the index after it is cleared. REPLIES (code "R") is the
// default: it is cleared like no mode, but on a post one of whose groups (groups, "" for a
// group) the user chose a mode for, where it is kept as a choice. A watch refused by its script
// (a post deleted since, or never there) takes its entry out of the index again, so that refused
// watches leave nothing behind; a rate limit or ban refuses the watch before anything is written.
//
// The index and the mode are in two slots, so two watches of one item by one user may cross: a
// clearing one taking the entry out after a setting one recorded it, and before or after that
// one's mode lands. Each therefore checks the other's side once its own step is done: a mode set
// records its entry again (within MaxWatches: over it, the mode is cleared again and the watch is
// KindLimitReached), and a mode cleared reads the mode after taking the entry out and records the
// entry again when another watch set one meanwhile. Whichever of the two steps of the clearing
// watch comes last, one of these checks comes after it (TestWatchIndexHoldsEveryModeUnderConcurrentWatches).
func (s *Store) watch(ctx context.Context, uid, item, code string, groups []string, call scriptCall) error {
	key := s.k.userWatches(uid)
	args := []any{item, s.now().UnixMilli(), MaxWatches}
	if code == "R" {
		for _, g := range groups {
			args = append(args, "g:"+g)
		}
		if len(groups) == 0 {
			code = ""
		}
	}
	if code != "" {
		recorded, err := s.recordWatch(ctx, uid, key, args)
		if IsKind(err, KindLimitReached) {
			// Posts deleted since they were watched still count: drop them, and try again if
			// that made room.
			dropped, derr := s.dropGoneWatches(ctx, uid)
			if derr != nil {
				return derr
			}
			if dropped > 0 {
				recorded, err = s.recordWatch(ctx, uid, key, args)
			}
		}
		if err != nil {
			return err
		}
		if !recorded {
			code = "" // REPLIES where it means no more than the default
		}
	}
	call.args = []any{uid, code}
	_, err := s.runScripts(ctx, []scriptCall{call})
	switch {
	case err != nil && IsKind(err, KindNotFound):
		if rerr := s.cmd().ZRem(ctx, key, item).Err(); rerr != nil {
			return fmt.Errorf("%w (and taking it out of the watch index: %v)", err, rerr)
		}
	case err != nil:
	case code == "":
		if err := s.cmd().ZRem(ctx, key, item).Err(); err != nil {
			return fmt.Errorf("take %s out of %s's watch index: %w", item, uid, err)
		}
		// A watch of the same item that set a mode meanwhile may have recorded its entry before
		// this took it out.
		mode, err := s.cmd().HGet(ctx, call.keys[0], uid).Result()
		if err != nil && !isNil(err) {
			return fmt.Errorf("read %s's watch mode of %s: %w", uid, item, err)
		}
		if mode != "" {
			// Over MaxWatches, reindexWatch clears the mode again: what this watch asked for,
			// so that is no LIMIT_REACHED of this watch's.
			if err := s.reindexWatch(ctx, uid, key, item, call); !IsKind(err, KindLimitReached) {
				return err
			}
			return nil
		}
	default:
		// A watch of the same item that cleared its mode may have taken the entry out after
		// this recorded it.
		return s.reindexWatch(ctx, uid, key, item, call)
	}
	return err
}

// reindexWatch records item in uid's watch index (key) again, after a watch found it may hold a
// mode the index no longer names. Over MaxWatches, the mode is cleared again (call, watch.lua)
// and the watch is KindLimitReached: a mode never stays without its entry.
//
// It comes after the mode is set, in uid's slot, so it reads there the deletion of uid's account
// too (authorGone), which a watch whose checks passed just before may cross: the deletion's
// chain walks the index once ("watches" step), and a mode set after the walk passed would leave
// the deleted account among the item's watchers for good. Either the read sees the deletion, and
// the mode and its entry are taken off as the chain does (errDeletedMeanwhile), or the deletion
// — and the chain after it — comes after this entry, which the chain then finds.
func (s *Store) reindexWatch(ctx context.Context, uid, key, item string, call scriptCall) error {
	read, gone := s.authorGone(ctx, uid)
	_, err := s.recordWatch(ctx, uid, key, []any{item, s.now().UnixMilli(), MaxWatches}, read)
	if err == nil {
		deleted, _, err := gone()
		if err != nil || !deleted {
			return err
		}
		if err := s.unwatch(ctx, uid, item); err != nil {
			return fmt.Errorf("take a watch across a deletion off: %w", err)
		}
		if err := s.cmd().ZRem(ctx, key, item).Err(); err != nil {
			return fmt.Errorf("take a watch across a deletion out of %s's watch index: %w", uid, err)
		}
		return errDeletedMeanwhile
	}
	if !IsKind(err, KindLimitReached) {
		return err
	}
	call.args = []any{uid, ""}
	if _, cerr := s.runScripts(ctx, []scriptCall{call}); cerr != nil {
		return fmt.Errorf("%w (and clearing the mode again: %v)", err, cerr)
	}
	return err
}

// recordWatch runs watch_index.lua with args on uid's index key, and reports whether the item is
// recorded. The reads in extra ride in its round trip, after it (see runScripts).
func (s *Store) recordWatch(ctx context.Context, uid, key string, args []any, extra ...op) (bool, error) {
	v, err := s.runScripts(ctx, []scriptCall{{name: "watch_index", keys: []string{key}, args: args}}, extra...)
	if err != nil {
		return false, fmt.Errorf("record in %s's watch index: %w", uid, err)
	}
	n, err := replyInt("watch_index", v[0])
	return n == 1, err
}

// dropGoneWatches takes the posts deleted since, and the groups that no longer exist, out of
// uid's watch index (their modes went with them), and returns how many it took out. It reads
// every post and group the index names (at most MaxWatches) in two round trips, so it runs only
// when the cap is met. A deleted post never comes back, so taking it out cannot race a watch,
// which its script refuses; a group can be made again, and a watch of it by uid made between the
// read and the removal would lose its entry (rebuild's rebuildWatchIndex gives it back).
func (s *Store) dropGoneWatches(ctx context.Context, uid string) (int, error) {
	key := s.k.userWatches(uid)
	l := s.NewLoader()
	items, err := l.zrangeAll(ctx, key)
	if err != nil {
		return 0, err
	}
	var pids, posts, groups []string
	for _, it := range items {
		if pid, ok := strings.CutPrefix(it, "p:"); ok {
			if _, err := PostKey(postID(pid)); err == nil {
				pids, posts = append(pids, pid), append(posts, it)
			}
		} else if g, ok := strings.CutPrefix(it, "g:"); ok && validGroupName(g) {
			groups = append(groups, g)
		}
	}
	// Groups that no longer exist (their modes went with them, buryGroups): none can be watched
	// until it is made again.
	dead, err := s.groupsInUse(ctx, groups, false)
	if err != nil {
		return 0, err
	}
	reads := make([]read, len(pids))
	for i, pid := range pids {
		reads[i] = l.postReadOf(pid, false)
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return 0, err
	}
	var gone []any
	for i, c := range calls {
		if l.postOf(c, pids[i]) == nil { // missing or deleted; a removed post keeps its modes
			gone = append(gone, posts[i])
		}
	}
	for _, g := range dead {
		gone = append(gone, "g:"+g)
	}
	if len(gone) == 0 {
		return 0, nil
	}
	n, err := s.cmd().ZRem(ctx, key, gone...).Result()
	if err != nil {
		return 0, fmt.Errorf("drop deleted posts from %s's watch index: %w", uid, err)
	}
	return int(n), nil
}

// watchKeys are the mode hash and the ALL set of an entry of a user's watch index; false for an
// entry that names nothing.
func (s *Store) watchKeys(item string) (mode, all string, ok bool) {
	typ, name, _ := strings.Cut(item, ":")
	switch typ {
	case "p":
		if _, err := PostKey(postID(name)); err != nil {
			return "", "", false
		}
		return s.k.postWatch(name), s.k.postWatchAll(name), true
	case "g":
		if !validGroupName(name) {
			return "", "", false
		}
		return s.k.groupWatch(name), s.k.groupWatchAll(name), true
	}
	return "", "", false
}

// unwatch takes the deleted user uid off the modes of item, an entry of their watch index (the
// deletion's "watches" step): no mode, as if they never chose one.
func (s *Store) unwatch(ctx context.Context, uid, item string) error {
	mode, all, ok := s.watchKeys(item)
	if !ok {
		return nil
	}
	_, err := s.run(ctx, "watch", []string{mode, all}, uid, "")
	return err
}

// exportWatch is one watch mode of an export: the thread (postId) or group (groupId) and the mode
// chosen for it.
type exportWatch struct {
	PostID  string    `json:"postId,omitempty"`
	GroupID string    `json:"groupId,omitempty"`
	Mode    WatchMode `json:"mode"`
	Since   time.Time `json:"since"`
}

// watches writes the modes the account chose, a page of its watch index per round trip with the
// modes of that page in the next: each entry whose item holds a mode of the user (an entry whose
// watch never landed, or whose mode went back to the default, is left out).
func (e *exporter) watches(ctx context.Context) error {
	return e.zpages(ctx, e.s.k.userWatches(e.uid), func(ctx context.Context, zs []rdb.Z) error {
		items := make([]rdb.Z, 0, len(zs))
		cmds := make([]*rdb.StringCmd, 0, len(zs))
		ops := make([]op, 0, len(zs))
		for _, z := range zs {
			key, _, ok := e.s.watchKeys(str(z.Member))
			if !ok {
				continue
			}
			i := len(cmds)
			items, cmds = append(items, z), append(cmds, nil)
			ops = append(ops, op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				cmds[i] = p.HGet(ctx, key, e.uid)
				return cmds[i], nil
			}})
		}
		if len(ops) == 0 {
			return nil
		}
		if err := e.s.pipeline(ctx, ops, false); err != nil && !isNil(err) {
			return fmt.Errorf("read watch modes: %w", err)
		}
		for i, c := range cmds {
			if c.Val() == "" {
				continue
			}
			w := exportWatch{Mode: watchMode(c.Val()), Since: fromMillis(int64(items[i].Score))}
			typ, name, _ := strings.Cut(str(items[i].Member), ":")
			if typ == "p" {
				w.PostID = postID(name)
			} else {
				w.GroupID = groupID(name)
			}
			e.item(w)
		}
		return e.err
	})
}

// rebuildWatchIndex derives every user's watch index from the watched side (SCAN of the mode
// hashes, for Rebuild): each mode a user holds gets its entry, with the time it already had or,
// when missing, the rebuild's. A deleted account's mode (data restored from a backup taken before
// its chain's "watches" step) is taken off instead, as that step does (unwatch), so that the
// rebuild makes no key of the account again. It returns how many modes it found.
func (s *Store) rebuildWatchIndex(ctx context.Context) (int, error) {
	n := 0
	at := float64(s.now().UnixMilli())
	for _, pat := range []string{"{p:*}:watch", "{g:*}:watch"} {
		err := s.scanKeys(ctx, s.k.prefix+pat, func(key string) error {
			inner := strings.TrimPrefix(key, s.k.prefix+"{")
			tag, _, ok := strings.Cut(inner, "}")
			if !ok {
				return nil
			}
			item := tag // "p:17" or "g:golang"
			if mode, _, ok := s.watchKeys(item); !ok || mode != key {
				return nil
			}
			users, err := s.cmd().HKeys(ctx, key).Result()
			if err != nil {
				return fmt.Errorf("read the watchers of %s: %w", item, err)
			}
			gone, err := s.deletedAmong(ctx, users)
			if err != nil {
				return err
			}
			ops := make([]op, 0, len(users))
			for _, u := range users {
				if slices.Contains(gone, u) {
					if err := s.unwatch(ctx, u, item); err != nil {
						return fmt.Errorf("take the deleted %s off the watchers of %s: %w", u, item, err)
					}
					continue
				}
				idx := s.k.userWatches(u)
				ops = append(ops, op{key: idx, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
					return p.ZAddNX(ctx, idx, rdb.Z{Score: at, Member: item}), nil
				}})
			}
			n += len(users)
			if err := s.pipeline(ctx, ops, false); err != nil {
				return fmt.Errorf("index the watchers of %s: %w", item, err)
			}
			return nil
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// PostWatch returns the viewer's watch mode of a post's thread; "" for an anonymous viewer.
func (l *Loader) PostWatch(ctx context.Context, viewer UserKey, pid string) (WatchMode, error) {
	return l.watchOf(ctx, viewer, l.s.k.postWatch(pid))
}

// GroupWatch returns the viewer's watch mode of a group; "" for an anonymous viewer.
func (l *Loader) GroupWatch(ctx context.Context, viewer UserKey, group string) (WatchMode, error) {
	return l.watchOf(ctx, viewer, l.s.k.groupWatch(group))
}

func (l *Loader) watchOf(ctx context.Context, viewer UserKey, key string) (WatchMode, error) {
	if viewer == "" {
		return "", nil
	}
	c, err := l.get(ctx, hashFieldRead(key, string(viewer)))
	if err != nil {
		return "", err
	}
	v, err := c.cmd.(*rdb.StringCmd).Result()
	if err != nil && !errors.Is(err, rdb.Nil) {
		return "", err
	}
	return watchMode(v), nil
}

// watchWalkReads adds the viewer's watch mode of a post or group to a walk's round, when the
// needs ask for it.
func (l *Loader) watchWalkReads(it walkItem, reads []read) []read {
	if !it.needs.Watch || it.needs.Viewer == "" {
		return reads
	}
	switch it.kind {
	case ItemPost:
		return append(reads, hashFieldRead(l.s.k.postWatch(it.key), string(it.needs.Viewer)))
	case ItemGroup:
		return append(reads, hashFieldRead(l.s.k.groupWatch(it.key), string(it.needs.Viewer)))
	}
	return reads
}

// withoutMuted leaves out the notices whose recipients muted the post pid (by author, in
// groups), or, with no mode of the post, one of its groups — but for the post's author, who
// watches their own post at REPLIES, a mode of the post that wins over its groups'; and reports
// whether the post (with comment true) or any of its groups (comment false) has watchers with
// ALL. One round trip.
func (s *Store) withoutMuted(ctx context.Context, l *Loader, pid string, author UserKey, groups []string, ns []notice, comment bool) ([]notice, []bool, error) {
	var reads []read
	for _, n := range ns {
		reads = append(reads, hashFieldRead(s.k.postWatch(pid), n.to))
		for _, g := range groups {
			reads = append(reads, hashFieldRead(s.k.groupWatch(g), n.to))
		}
	}
	fanKeys := []string{}
	if comment {
		fanKeys = append(fanKeys, s.k.postWatchAll(pid))
	} else {
		for _, g := range groups {
			fanKeys = append(fanKeys, s.k.groupWatchAll(g))
		}
	}
	base := len(reads)
	for _, k := range fanKeys {
		reads = append(reads, scardRead(k))
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, nil, err
	}
	val := func(c *call) string { return c.cmd.(*rdb.StringCmd).Val() }
	kept := ns[:0:0]
	i := 0
	for _, n := range ns {
		muted := false
		if m := val(calls[i]); m != "" {
			muted = m == "M"
		} else if UserKey(n.to) != author {
			for j := range groups {
				muted = muted || val(calls[i+1+j]) == "M"
			}
		}
		i += 1 + len(groups)
		if !muted {
			kept = append(kept, n)
		}
	}
	fans := make([]bool, len(fanKeys))
	for j := range fanKeys {
		fans[j] = calls[base+j].cmd.(*rdb.IntCmd).Val() > 0
	}
	return kept, fans, nil
}

// scardRead reads the size of a set (SCARD).
func scardRead(key string) read {
	return read{key: "sc:" + key, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.SCard(ctx, key)
	}}
}

// watchJob is the job of the chunk of a watchers' fan-out that starts at cursor.
func watchJob(kind, arg, cursor string) jobs.Job {
	return jobs.Job{ID: kind + ":" + strings.ReplaceAll(arg, " ", ":") + ":" + cursor, Kind: kind, Arg: arg + " " + cursor}
}

// queueWatchComment queues the fan-out of a new comment to the thread's watchers with ALL.
func (s *Store) queueWatchComment(ctx context.Context, pid, num string) error {
	if err := s.jobs.Enqueue(ctx, watchJob(jobWatchComment, pid+" "+num, "0")); err != nil {
		return fmt.Errorf("queue the watchers of comment %s: %w", commentID(pid, num), err)
	}
	return nil
}

// queueWatchPost queues the fan-out of a new post to the watchers of its group with ALL.
func (s *Store) queueWatchPost(ctx context.Context, group, pid string) error {
	if err := s.jobs.Enqueue(ctx, watchJob(jobWatchPost, group+" "+pid, "0")); err != nil {
		return fmt.Errorf("queue the watchers of post %s in %s: %w", pid, group, err)
	}
	return nil
}

// runWatchJob delivers one chunk of a fan-out to watchers with ALL: "<post> <number> <cursor>" for
// a comment, "<group> <post> <cursor>" for a post. It reads the item again: nothing goes out for
// one that left its watchers' view since (a comment deleted or removed, or its post removed; a
// post removed, or erased with its author's account), so that moderation stops a fan-out under
// way. It takes the next fanoutBatch members of the watchers' set from the cursor
// (SSCAN returns every member present for the whole scan), delivers to them, and queues the
// next chunk before it returns, so an interrupted chain goes on from its last finished chunk.
func (s *Store) runWatchJob(ctx context.Context, j jobs.Job) error {
	f := strings.Fields(j.Arg)
	if len(f) != 3 {
		return fmt.Errorf("%s job: bad argument %q", j.Kind, j.Arg)
	}
	at, err := strconv.ParseUint(f[2], 10, 64)
	if err != nil {
		return fmt.Errorf("%s job: bad cursor %q", j.Kind, f[2])
	}
	l := s.NewLoader()
	var set, cause string
	var rec noticeRecord
	switch j.Kind {
	case jobWatchComment:
		pid, num := f[0], f[1]
		c, err := l.Comment(ctx, commentID(pid, num))
		if err != nil {
			return fmt.Errorf("watchers of comment %s: %w", commentID(pid, num), err)
		}
		if c == nil || c.Deleted || c.Removed || c.Author == "" {
			return nil
		}
		p, err := l.Post(ctx, c.PostID) // read with the comment
		if err != nil {
			return fmt.Errorf("watchers of comment %s: %w", commentID(pid, num), err)
		}
		if p == nil || p.Removed {
			return nil // a moderator removed the post since: its thread left its watchers' view
		}
		set, cause = s.k.postWatchAll(pid), commentCause(pid, num)
		rec = noticeRecord{Kind: NotificationWatchedComment, At: c.CreatedAt.UnixMilli(), Actor: string(c.Author), Post: pid, Comment: shortNum(num)}
	default:
		group, pid := f[0], f[1]
		p, err := l.Post(ctx, postID(pid))
		if err != nil {
			return fmt.Errorf("watchers of post %s: %w", pid, err)
		}
		if p == nil || p.Removed || p.Erased {
			return nil // removed, or erased with its author's account: no new post to tell of
		}
		set, cause = s.k.groupWatchAll(group), postCause(pid)
		rec = noticeRecord{Kind: NotificationWatchedPost, At: p.CreatedAt.UnixMilli(), Actor: string(p.Author), Post: pid}
	}
	watchers, next, err := s.cmd().SScan(ctx, set, at, "", fanoutBatch).Result()
	if err != nil {
		return fmt.Errorf("%s %s: %w", j.Kind, j.Arg, err)
	}
	ns := make([]notice, 0, len(watchers))
	for _, w := range watchers {
		if w != rec.Actor {
			ns = append(ns, notice{to: w, cause: cause, rec: rec})
		}
	}
	if err := s.deliver(ctx, ns); err != nil {
		return err
	}
	if next == 0 {
		return nil
	}
	return s.jobs.Enqueue(ctx, watchJob(j.Kind, f[0]+" "+f[1], strconv.FormatUint(next, 10)))
}
