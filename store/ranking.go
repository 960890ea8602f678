package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// PostSort orders a list of posts.
type PostSort int

// The post orders of the contract.
const (
	SortHot PostSort = iota
	SortNew
	SortTop
	SortTopHour // SortTop of the posts published within the last hour; see TopWindows
	SortTopDay
	SortTopWeek
	SortTopMonth
	SortTopYear
	SortActive        // by last activity: publish time, or the newest comment's if later
	SortControversial // by Controversy
	SortMostComments  // by comment count
)

// TopWindow is the window of a windowed TOP: the posts published at most Length ago.
type TopWindow struct {
	Sort   PostSort
	Name   string // in the key of its sorted set
	Length time.Duration
}

// TopWindows are the windows of the windowed TOP sorts. A month is 30 days, a year 365.
var TopWindows = [...]TopWindow{
	{SortTopHour, "h", time.Hour},
	{SortTopDay, "d", 24 * time.Hour},
	{SortTopWeek, "w", 7 * 24 * time.Hour},
	{SortTopMonth, "m", 30 * 24 * time.Hour},
	{SortTopYear, "y", 365 * 24 * time.Hour},
}

// window returns the index in TopWindows of a windowed TOP sort, or -1.
func (sort PostSort) window() int {
	for i, w := range TopWindows {
		if w.Sort == sort {
			return i
		}
	}
	return -1
}

// trimLimit bounds how many posts past a window one ranking write takes out of its set: a
// write's cost stays bounded, and reads filter what is left (see windows.lua and page.lua).
const trimLimit = 64

// Controversy is Reddit's controversy of up and down votes: (up+down)^(min/max), 0 when either
// is 0. Many votes split evenly score highest.
func Controversy(up, down int) float64 {
	if up <= 0 || down <= 0 {
		return 0
	}
	lo, hi := float64(min(up, down)), float64(max(up, down))
	return math.Pow(float64(up+down), lo/hi)
}

// indexCall sets (or removes) member in the sorted sets of one hash slot, guarded by version.
func indexCall(verKey, member string, version int64, add bool, sets []string, scores []any) scriptCall {
	keys := append([]string{verKey}, sets...)
	op := "rem"
	if add {
		op = "add"
	}
	args := append([]any{member, version, op}, scores...)
	return scriptCall{name: "index", keys: keys, args: args}
}

// rankingCalls write a post into (or out of) one set of rankings: the rankings other than the
// windowed TOPs (index.lua), which records the version, then the windowed TOPs (windows.lua),
// which apply only when the recorded version is theirs. That order makes the guard hold across
// the calls: two writes' pipelines interleave command by command on the server, and windows
// guarded by a version recorded only after them took an older write's net votes after a newer
// one's (two concurrent votes). Adding a post to a
// group's rankings also records the group's created time in its info (see index.lua): a group
// made by posting into it is as old as its oldest post.
//
// Each set of rankings is in two disjoint parts (see labels.go): the posts that are not NSFW
// under its keys, the NSFW ones under their nsfwKey, one version guard for both. Adding a post
// writes it into its part and takes it out of the other in the same index call; removing it
// takes it out of both.
func (s *Store) rankingCalls(group string, p *Post, pid string, version int64, add bool) []scriptCall {
	r := s.k.ranking(group)
	in, out := r, r.nsfw()
	if add && p.NSFW {
		in, out = out, in
	}
	now := s.now()
	sets := append(in.indexed(), out.indexed()...)
	var scores []any
	if add {
		scores = []any{formatScore(p.HotRank), p.CreatedAt.UnixMilli(), p.ActiveAt.UnixMilli(),
			formatScore(Controversy(p.Upvotes, p.Downvotes)), p.CommentCount, p.Net(), "", "", "", "", "", ""}
	}
	c := indexCall(r.ver, pid, version, add, sets, scores)
	if add && group != "" {
		c.keys = append(c.keys, s.k.groupInfo(group))
		c.args[2] = "add+info"
		c.args = append(c.args, p.CreatedAt.UnixMilli())
	}
	return []scriptCall{c, s.windowsCall(in, p, pid, version, add, now), s.windowsCall(out, nil, pid, version, false, now)}
}

// windowsCall writes a post into (add) or out of the windowed TOPs of one part of a set of
// rankings, r, and trims them (windows.lua); p is nil for a removal.
func (s *Store) windowsCall(r ranking, p *Post, pid string, version int64, add bool, now time.Time) scriptCall {
	if add {
		return windowsScript(r, now, pid, version, "add", p.Net(), p.CreatedAt.UnixMilli(), trimLimit)
	}
	return windowsScript(r, now, pid, version, "rem", 0, 0, trimLimit)
}

// windowsScript is the call of windows.lua on one part of a set of rankings, r, with the
// arguments before the cutoffs and the cutoffs of the windows at now.
func windowsScript(r ranking, now time.Time, args ...any) scriptCall {
	for _, w := range TopWindows {
		args = append(args, now.Add(-w.Length).UnixMilli())
	}
	return scriptCall{name: "windows", keys: append([]string{r.ver, r.new, r.trim}, r.windows[:]...), args: args}
}

// rerankPost writes a post's rankings again after a change that its comments made (its count,
// its last activity). A post gone, removed or erased is left as it is.
func (s *Store) rerankPost(ctx context.Context, pid string) error {
	h, err := s.cmd().HGetAll(ctx, s.k.post(pid)).Result()
	if err != nil {
		return fmt.Errorf("rerank post %s: %w", pid, err)
	}
	p := s.postFromHash(pid, h)
	if p == nil || p.Removed || p.Erased {
		return nil
	}
	if err := s.groupLabels(ctx, p); err != nil {
		return err
	}
	calls := s.rankingCalls("", p, pid, p.Version, true)
	for _, g := range p.GroupNames {
		calls = append(calls, s.rankingCalls(g, p, pid, p.Version, true)...)
	}
	if err := s.runMany(ctx, calls); err != nil {
		return fmt.Errorf("rerank post %s: %w", pid, err)
	}
	return nil
}

// indexPost writes the derived structures of a live post: the site and group rankings, the
// author's post list and the group registry. left lists groups the post has just left, whose
// pins it leaves too. A removed or erased post is taken out of all of them instead (see
// moderate_posts.go, account deletion).
// sx, when not nil, is the post's search index (searchWrites), written in the same pipeline; a
// removed post keeps it too (reads check what the post is now).
func (s *Store) indexPost(ctx context.Context, p *Post, left []string, sx ...*searchWrite) error {
	return s.indexPostIn(ctx, p, left, true, nil, sx...)
}

// indexPostIn is indexPost; dir says whether the groups' entries in the directory of groups may
// have changed (not after a vote, which moves no group's order: that saves two round trips).
// also are reads that ride in the round trip of the post's entries, after them (a new post's
// read of its author's deletion: see authorGone), also of a post that leaves them (removed or
// erased).
func (s *Store) indexPostIn(ctx context.Context, p *Post, left []string, dir bool, also []op, sxs ...*searchWrite) error {
	pid := p.Key()
	uid := string(p.Author)
	var sx *searchWrite
	if len(sxs) > 0 {
		sx = sxs[0]
	}
	if p.Removed || p.Erased {
		if sx != nil {
			if err := s.pipeline(ctx, sx.ops(), true); err != nil {
				return fmt.Errorf("index post %s for search: %w", pid, err)
			}
			if err := sx.err(); err != nil {
				return fmt.Errorf("index post %s: %w", pid, err)
			}
			if err := s.finishSearch(ctx, sx); err != nil {
				return err
			}
		}
		return s.unindexPost(ctx, pid, uid, append(append([]string{}, p.GroupNames...), left...), p.Version, also...)
	}
	if err := s.groupLabels(ctx, p); err != nil {
		return err
	}
	calls := append(s.rankingCalls("", p, pid, p.Version, true),
		s.userPostsCall(uid, p, pid, p.Version, true))
	for _, g := range p.GroupNames {
		calls = append(calls, s.rankingCalls(g, p, pid, p.Version, true)...)
	}
	for _, g := range left {
		calls = append(append(calls, s.rankingCalls(g, nil, pid, p.Version, false)...), s.unpinCall(g, pid))
	}
	if _, err := s.runScripts(ctx, calls, slices.Concat(sx.ops(), also)...); err != nil {
		return fmt.Errorf("index post %s: %w", pid, err)
	}
	if err := sx.err(); err != nil {
		return fmt.Errorf("index post %s: %w", pid, err)
	}
	if err := s.finishSearch(ctx, sx); err != nil {
		return err
	}
	if len(p.GroupNames) > 0 {
		if err := s.register(ctx, s.k.groups(), true, p.GroupNames...); err != nil {
			return fmt.Errorf("register groups: %w", err)
		}
	}
	if err := s.pruneGroups(ctx, left); err != nil || !dir {
		return err
	}
	return s.syncDirectory(ctx, append(append([]string{}, p.GroupNames...), left...)...)
}

// userPostsCall writes a post into (add) or out of its author's post list: into the part that
// is not NSFW or the NSFW part, and out of the other, in one index call (see labels.go); p is
// nil for a removal.
func (s *Store) userPostsCall(uid string, p *Post, pid string, version int64, add bool) scriptCall {
	var scores []any
	if add {
		scores = []any{p.CreatedAt.UnixMilli(), ""}
		if p.NSFW {
			scores[0], scores[1] = "", scores[0]
		}
	}
	return indexCall(s.k.userPostsVer(uid), pid, version, add, []string{s.k.userPosts(uid), s.k.userPostsNSFW(uid)}, scores)
}

// unindexPost takes a deleted or removed post out of every derived structure, its groups' pins
// included. also are reads that ride in the round trip of its entries, after them.
func (s *Store) unindexPost(ctx context.Context, pid, uid string, groups []string, version int64, also ...op) error {
	calls := append(s.rankingCalls("", nil, pid, version, false),
		s.userPostsCall(uid, nil, pid, version, false))
	for _, g := range groups {
		calls = append(append(calls, s.rankingCalls(g, nil, pid, version, false)...), s.unpinCall(g, pid))
	}
	if _, err := s.runScripts(ctx, calls, also...); err != nil {
		return fmt.Errorf("unindex post %s: %w", pid, err)
	}
	if err := s.pruneGroups(ctx, groups); err != nil {
		return err
	}
	return s.syncDirectory(ctx, groups...)
}

// RebuildStats reports what Rebuild did.
type RebuildStats struct {
	Posts   int // live posts re-indexed
	Deleted int // tombstones whose derived entries were removed
	Orphans int // entries of posts that no longer exist at all, removed
	Named   int // posts and comments given their author's name (see Loader.NamedAuthor)
	Scored  int // comments in the tree, each written into its parent's vote orders where the parent keeps them (see rescoreThread)
	Live    int // comments given their bit in their thread's live bitmap (see rebuildLiveBits)
	// Conversations is the private conversations whose participants' mailboxes were derived
	// again (see syncConversation).
	Conversations int
	// Watches is the watch modes found on the watched side, each given its entry in its user's
	// watch index (see rebuildWatchIndex).
	Watches int
	// Seats is the moderator seats of deleted accounts given up (see rebuildModeratorSeats).
	Seats int
}

// Rebuild re-derives the rankings, group indexes, the directory of groups and user post lists from the post hashes, for
// recovery after a crash between a write and its derived writes, or after changing HotK; it also
// drops the comments left behind by a post deletion that was cut off, gives posts and comments
// written before names were kept their author's name, and writes every comment into its parent's
// vote orders (TOP, BEST, CONTROVERSIAL) from its votes, which backfills the orders added after
// the comment was written, and derives every private conversation's mailboxes again. It scans the keyspace (SCAN, never KEYS) and is meant for
// maintenance, not request paths; it is safe to run beside live traffic. Ranking entries whose post hash has expired entirely are skipped by reads.
func (s *Store) Rebuild(ctx context.Context) (RebuildStats, error) {
	var st RebuildStats
	// The labels of groups first: indexing a post reads them.
	if err := s.relabelGroups(ctx); err != nil {
		return st, err
	}
	// Texts a process of layout 4 wrote into post hashes after the migration moved them go apart
	// again (the migration's step, idempotent).
	if _, err := s.movePostTexts(ctx); err != nil {
		return st, err
	}
	// The comment keys such a process named by the padded number are renamed (layout_shortkeys.go),
	// first: the steps below find comments by their short names.
	if _, err := s.shortenCommentKeys(ctx); err != nil {
		return st, err
	}
	// So do the votes a process of layout 5 wrote into a comment's own hash (layout_cvotes.go).
	if _, err := s.bucketCommentVotes(ctx); err != nil {
		return st, err
	}
	// And the comments such a process wrote unpacked are packed (layout_comments.go).
	if _, err := s.packComments(ctx); err != nil {
		return st, err
	}
	// And those it wrote with decimal times and counts of 0 are compacted (layout_compact.go).
	if _, err := s.compactComments(ctx); err != nil {
		return st, err
	}
	// The search index is written anew, compact: the posts' loop below indexes every post.
	if err := s.dropSearch(ctx, searchPosts, searchComments, searchGroupsKind); err != nil {
		return st, err
	}
	err := s.scanKeys(ctx, s.k.prefix+"{p:*}", func(key string) error {
		pid, ok := postKeyFromHashKey(s.k.prefix, key)
		if !ok {
			return nil
		}
		// Bump the version and read the hash in one script on the post's slot: the rebuilt entries
		// then carry a version newer than any the guards have seen, so they win, and any vote that
		// lands afterwards carries a newer one still, so the rebuild can never overwrite it.
		reply, err := s.run(ctx, "bump", []string{key, s.k.postTexts(pid)})
		if err != nil {
			return err
		}
		h, err := replyHash("bump", reply)
		if err != nil {
			return err
		}
		if h["deleted"] == "1" {
			st.Deleted++
			return s.unindexPost(ctx, pid, h["author"], splitGroups(h["groups"]), atoi64(h["ver"]))
		}
		p := s.postFromHash(pid, h)
		if p == nil {
			return nil
		}
		st.Posts++
		named, err := s.nameAuthors(ctx, pid, h)
		if err != nil {
			return err
		}
		st.Named += named
		if err := s.indexPost(ctx, p, nil, s.searchWrites(postSearchDoc(p, true))); err != nil {
			return err
		}
		if err := s.indexThread(ctx, pid); err != nil {
			return err
		}
		// The thread's live bitmap (read state), from the comments; h's cord was read before
		// the comments are listed.
		live, err := s.rebuildLiveBits(ctx, pid, atoi64(h["cord"]))
		st.Live += live
		if err != nil {
			return err
		}
		scored, err := s.rescoreThread(ctx, pid)
		st.Scored += scored
		if err != nil {
			return err
		}
		return s.recordKarma(ctx, string(p.Author), p.ID, p.Net(), p.Version)
	})
	if err != nil {
		return st, err
	}
	if st.Orphans, err = s.dropOrphans(ctx); err != nil {
		return st, err
	}
	// The NSFW-free copies of layout 3 that a replica of that release wrote during an upgrade.
	if _, err := s.dropSFWCopies(ctx); err != nil {
		return st, err
	}
	if err := s.reindexGroups(ctx); err != nil {
		return st, err
	}
	n, err := s.userCommentOrphans(ctx)
	if err != nil {
		return st, err
	}
	st.Orphans += n
	// Groups made by createGroup (or a moderator's change) that hold no post: a creation cut off
	// before it registered its group.
	if _, err = s.registerLastingGroups(ctx); err != nil {
		return st, err
	}
	// The directory of groups, from the groups' own slots: those it names that no longer exist
	// leave it.
	if _, err = s.rebuildDirectory(ctx); err != nil {
		return st, err
	}
	// The moderator seats deleted accounts still hold: accounts deleted before deletions gave
	// them up (moderated.go).
	if st.Seats, err = s.rebuildModeratorSeats(ctx); err != nil {
		return st, err
	}
	// The dismissed reports that count against their reporters (reportdismissals.go).
	if err := s.rebuildDismissals(ctx); err != nil {
		return st, err
	}
	// The reporters' histories (userReportsFiled), for the reports a replica of layout 5 filed
	// during an upgrade.
	if _, err := s.fileReports(ctx); err != nil {
		return st, err
	}
	// The unread ids a process of layout 6 kept apart after the migration folded its inbox
	// (layout_unread.go).
	if _, err := s.foldInboxes(ctx); err != nil {
		return st, err
	}
	// The sessions a process of layout 7 started in a hash of their own after the migration moved
	// the others into the users' hashes (layout_sessions.go).
	if _, err := s.foldSessions(ctx); err != nil {
		return st, err
	}
	// The comments of posts deleted by a process that stopped before dropping them all; the sweep
	// does nothing on a live post.
	err = s.scanKeys(ctx, s.k.threadIDs("*"), func(key string) error {
		if pid, ok := threadPostKey(s.k.prefix, key); ok {
			return s.dropThread(ctx, pid)
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	if st.Conversations, err = s.rebuildMailboxes(ctx); err != nil {
		return st, err
	}
	st.Watches, err = s.rebuildWatchIndex(ctx)
	return st, err
}

// scanScriptsBatch bounds the script calls one pipeline of scanScripts sends.
const scanScriptsBatch = 100

// scanScripts runs, for every key that matches pattern (scanKeys), the script call that call makes
// of it (none when it answers false), in pipelines of scanScriptsBatch calls, and returns the sum
// of their integer replies: the one loop of a migration step that is a script per key. what names
// the step in its errors.
func (s *Store) scanScripts(ctx context.Context, pattern, what string, call func(key string) (scriptCall, bool)) (int, error) {
	var calls []scriptCall
	total := 0
	flush := func() error {
		if len(calls) == 0 {
			return nil
		}
		vals, err := s.runScripts(ctx, calls)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		for i, v := range vals {
			n, err := replyInt(calls[i].name, v)
			if err != nil {
				return err
			}
			total += int(n)
		}
		calls = calls[:0]
		return nil
	}
	err := s.scanKeys(ctx, pattern, func(key string) error {
		c, ok := call(key)
		if !ok {
			return nil
		}
		if calls = append(calls, c); len(calls) < scanScriptsBatch {
			return nil
		}
		return flush()
	})
	if err != nil {
		return total, err
	}
	return total, flush()
}

// scanKeys calls fn for every key matching pattern, on every master of a cluster. The masters are
// scanned in parallel but fn is called for one key at a time.
func (s *Store) scanKeys(ctx context.Context, pattern string, fn func(key string) error) error {
	var mu sync.Mutex
	scan := func(ctx context.Context, c rdb.Cmdable) error {
		iter := c.Scan(ctx, 0, pattern, 500).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			err := fn(iter.Val())
			mu.Unlock()
			if err != nil {
				return err
			}
		}
		return iter.Err()
	}
	if cc, ok := s.rdb.(*rdb.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *rdb.Client) error { return scan(ctx, c) })
	}
	return scan(ctx, s.rdb)
}

// postKeyFromHashKey returns "17" for "<prefix>{p:17}" and false for any other key.
func postKeyFromHashKey(prefix, key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, prefix+"{p:")
	if !ok {
		return "", false
	}
	pid, ok := strings.CutSuffix(rest, "}")
	return pid, ok && isDigits(pid)
}

func formatScore(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// dropOrphans removes from the site and group rankings and the users' post lists every entry of a
// post that does not belong there: one whose hash no longer exists at all, one in a group the post
// is not in, one in the list of a user who is not its author. A failover without WAIT leaves them
// when it loses a post's creation while its derived entries, on other masters, survive — and the
// post id, handed out again by a counter that lost its increments, may by then name another post.
// Reads skip missing posts, but such entries count in totals and show in the wrong lists.
func (s *Store) dropOrphans(ctx context.Context) (int, error) {
	type list struct {
		ver   string
		sets  []string // both parts of the list (see labels.go)
		scan  []string // the sets whose members are checked: the TOPs, or a user's two parts
		group string   // a group's ranking
		user  string   // a user's post list
	}
	rankings := func(r ranking, group string) list {
		n := r.nsfw()
		return list{ver: r.ver, sets: append(r.sets(), n.sets()...), scan: []string{r.top, n.top}, group: group}
	}
	lists := []list{rankings(s.k.ranking(""), "")}
	// Every group ranking and user post list there is, registered or not (SCAN on every master).
	seen := map[string]bool{}
	for _, suffix := range []string{":new", ":n:new"} { // a group may hold NSFW posts only
		groups, err := s.scanGroups(ctx, suffix)
		if err != nil {
			return 0, fmt.Errorf("list group rankings: %w", err)
		}
		for _, g := range groups {
			if !seen[g] {
				seen[g] = true
				lists = append(lists, rankings(s.k.ranking(g), g))
			}
		}
	}
	users := map[string]bool{}
	for _, suffix := range []string{"}:posts", "}:n:posts"} {
		err := s.scanKeys(ctx, s.k.prefix+"{u:*"+suffix, func(key string) error {
			if u, ok := strings.CutSuffix(strings.TrimPrefix(key, s.k.prefix+"{u:"), suffix); ok && validUserName(u) {
				users[u] = true
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("list user post lists: %w", err)
		}
	}
	for u := range users {
		sets := []string{s.k.userPosts(u), s.k.userPostsNSFW(u)}
		lists = append(lists, list{ver: s.k.userPostsVer(u), sets: sets, scan: sets, user: u})
	}
	dropped := 0
	for _, l := range lists {
		var pids []string
		for _, set := range l.scan {
			iter := s.cmd().ZScanIterator(set, "", 500)
			for i := 0; iter.Next(ctx); i++ {
				if i%2 == 0 { // members and scores alternate
					pids = append(pids, iter.Val())
				}
			}
			if err := iter.Err(); err != nil {
				return dropped, fmt.Errorf("scan %s: %w", set, err)
			}
		}
		// Every post of the list is checked in one pipeline.
		cmds := make([]*rdb.SliceCmd, len(pids))
		ops := make([]op, len(pids))
		for i, pid := range pids {
			key := s.k.post(pid)
			ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				cmds[i] = p.HMGet(ctx, key, "author", "groups")
				return cmds[i], nil
			}}
		}
		if err := s.pipeline(ctx, ops, false); err != nil {
			return dropped, fmt.Errorf("check the posts of %s: %w", l.sets[0], err)
		}
		for i, pid := range pids {
			vals, err := cmds[i].Result()
			if err != nil {
				return dropped, fmt.Errorf("check post %s: %w", pid, err)
			}
			author, groups := str(vals[0]), splitGroups(str(vals[1]))
			belongs := author != "" && (l.user == "" || l.user == author) && (l.group == "" || contains(groups, l.group))
			if belongs {
				continue
			}
			guard, err := s.cmd().HGet(ctx, l.ver, pid).Result()
			if err != nil && !errors.Is(err, rdb.Nil) {
				return dropped, fmt.Errorf("read guard of %s: %w", pid, err)
			}
			v, err := s.run(ctx, "unindex_missing", append([]string{l.ver}, l.sets...), pid, guard)
			if err != nil {
				return dropped, err
			}
			n, err := replyInt("unindex_missing", v)
			if err != nil {
				return dropped, err
			}
			if n == 1 {
				dropped++
			}
		}
	}
	return dropped, nil
}
