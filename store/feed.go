package store

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
)

// The home feed is a hybrid of fan-out on write and fan-in on read.
//
//   - Push: each user has a push set of at most FanoutLimit followers. Publishing a post adds it
//     to the feed sorted set of each of them ({u:a}:feed, scored by publish time), one small
//     script per follower on the follower's slot. A new follower joins the push set while it has
//     room, and gets the author's latest Backfill posts copied into their feed at once.
//   - Pull: the other followers (the author already pushes to FanoutLimit users) record the author
//     in their pull set instead, and their feed reads the author's own post list at read time.
//     A pull set holds at most MaxPulledAuthors authors: a follower whose pull set is full is
//     pushed to instead, beyond FanoutLimit (follow_mode.lua decides it on the follower's slot,
//     follower.lua "force" adds the follower to the push set on the author's slot; see
//     mirrorFollow). Following itself is capped at MaxFollowing.
//   - Bounds: one publish costs at most FanoutLimit script calls, plus one per follower whose
//     pull set was full when they followed (at most one per follower per followee, so the cost
//     grows with such heavy followers only); one feed holds at most Cap entries (the oldest are
//     trimmed), so its memory is bounded; one feed page costs one page read on the feed plus one
//     (two with NSFW posts shown) per pulled author, at most MaxPulledAuthors of them, in three
//     pipelined round trips at most, whatever the number of followees.
//     Pulled authors' posts older than the oldest entry a full feed keeps are not shown, so the
//     feed reaches back equally far for every author.
//   - Consistency: feed_add runs on the reader's slot and adds nothing unless the reader still
//     follows the author, and unfollowing removes the author's entries in the same script as the
//     relation, so no post of an unfollowed user stays. Deleting a post removes it from the feeds
//     it was pushed to; a post deleted while being pushed is dropped when the page is read.

// FeedOptions bounds the home feed. The zero value of each field selects its default.
type FeedOptions struct {
	// Cap is the most entries one feed keeps. Default 500.
	Cap int
	// FanoutLimit is the most followers a new post is pushed to; followers beyond it read the
	// author's posts at read time. Default 1000.
	FanoutLimit int
	// Backfill is how many of a user's latest posts a new (pushed) follower gets. Default 50.
	Backfill int
	// MaxPulledAuthors is the most authors one feed pulls at read time; a follower whose pull set
	// is full is pushed to instead, beyond FanoutLimit. Default 100.
	MaxPulledAuthors int
}

func (o FeedOptions) withDefaults() FeedOptions {
	if o.Cap <= 0 {
		o.Cap = 500
	}
	if o.FanoutLimit <= 0 {
		o.FanoutLimit = 1000
	}
	if o.Backfill <= 0 {
		o.Backfill = 50
	}
	if o.MaxPulledAuthors <= 0 {
		o.MaxPulledAuthors = 100
	}
	return o
}

// fanoutBatch is how many feed writes go in one pipeline.
const fanoutBatch = 500

// feedTag is the cursor list tag of home feeds.
const feedTag = "pf"

// feedAddCall adds posts of author (pairs of post id and publish time in ms) to reader's feed.
func (s *Store) feedAddCall(reader, author string, pairs []any) scriptCall {
	args := append([]any{author, s.opts.Feed.Cap}, pairs...)
	return scriptCall{name: "feed_add",
		keys: []string{s.k.following(reader), s.k.feed(reader), s.k.feedBy(reader)}, args: args}
}

// The push of a new post to the feeds of its author's push set, and the removal of a deleted post
// from them: feed writes grow with the author's followers, so they run in jobs (runFeedJob), off
// the write path, a bounded chunk per job. A repeat of a queued job adds nothing; a job that runs
// again writes the same absolute entries. A new post queues its push with queuePostJobs.

// unfeedPost queues the removal of a deleted or removed post from the feeds it was pushed to.
func (s *Store) unfeedPost(ctx context.Context, pid, author string) error {
	if author == "" {
		return nil
	}
	return s.enqueueFeedJob(ctx, jobUnfeed, pid+" "+author)
}

func (s *Store) enqueueFeedJob(ctx context.Context, kind, arg string) error {
	if err := s.jobs.Enqueue(ctx, feedJob(kind, arg, "0")); err != nil {
		return fmt.Errorf("queue %s of post %s: %w", kind, arg, err)
	}
	return nil
}

// feedJob is the job that does the chunk of a fan-out (or its removal) from a push-set cursor.
func feedJob(kind, arg, cursor string) jobs.Job {
	return jobs.Job{ID: kind + ":" + strings.ReplaceAll(arg, " ", ":") + ":" + cursor, Kind: kind, Arg: arg + " " + cursor}
}

// runFeedJob does one chunk of a fan-out ("<post> <cursor>") or of a removal ("<post> <author>
// <cursor>"): the next fanoutBatch members of the author's push set from the cursor (SSCAN,
// which returns every member present for the whole scan), in one pipeline of feed scripts. It
// queues the next chunk before it returns, so a chain interrupted anywhere goes on from its last
// finished chunk.
func (s *Store) runFeedJob(ctx context.Context, j jobs.Job) error {
	f := strings.Fields(j.Arg)
	if len(f) < 2 {
		return fmt.Errorf("%s job: bad argument %q", j.Kind, j.Arg)
	}
	pid, cursor := f[0], f[len(f)-1]
	var author string
	var created int64
	if j.Kind != jobFanout && len(f) != 3 {
		return fmt.Errorf("%s job: bad argument %q", j.Kind, j.Arg)
	}
	h, err := s.cmd().HMGet(ctx, s.k.post(pid), "author", "created", "deleted", "removed").Result()
	if err != nil {
		return fmt.Errorf("%s of post %s: %w", j.Kind, pid, err)
	}
	a, _ := h[0].(string)
	c, _ := h[1].(string)
	live := a != "" && h[2] != "1" && h[3] != "1"
	if j.Kind == jobFanout {
		if !live {
			return nil // deleted or removed: nothing to push
		}
		author, created = a, atoi64(c)
	} else {
		if live {
			return nil // restored since its removal: it stays (its restoration pushes it again)
		}
		author = f[1]
	}
	at, err := strconv.ParseUint(cursor, 10, 64)
	if err != nil {
		return fmt.Errorf("%s job: bad cursor %q", j.Kind, cursor)
	}
	readers, next, err := s.cmd().SScan(ctx, s.k.push(author), at, "", fanoutBatch).Result()
	if err != nil {
		return fmt.Errorf("%s of post %s: %w", j.Kind, pid, err)
	}
	calls := make([]scriptCall, len(readers))
	for i, a := range readers {
		if j.Kind == jobFanout {
			calls[i] = s.feedAddCall(a, author, []any{pid, created})
		} else {
			calls[i] = scriptCall{name: "feed_remove", keys: []string{s.k.feed(a), s.k.feedBy(a)}, args: []any{pid}}
		}
	}
	if err := s.runMany(ctx, calls); err != nil {
		return fmt.Errorf("%s of post %s: %w", j.Kind, pid, err)
	}
	if next == 0 {
		return nil
	}
	arg := pid
	if j.Kind == jobUnfeed {
		arg += " " + author
	}
	return s.jobs.Enqueue(ctx, feedJob(j.Kind, arg, strconv.FormatUint(next, 10)))
}

// latestPosts returns uid's latest n posts, newest first, from both parts of their post list
// (nsfw_lists.go).
func (s *Store) latestPosts(ctx context.Context, uid string, n int) ([]rdb.Z, error) {
	key := s.k.userPosts(uid)
	var a, b *rdb.ZSliceCmd
	err := s.pipeline(ctx, []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		a, b = p.ZRevRangeWithScores(ctx, key, 0, int64(n-1)), p.ZRevRangeWithScores(ctx, nsfwKey(key), 0, int64(n-1))
		return a, b
	}}}, false)
	if err == nil {
		err = rdb.FirstErr([2]rdb.Cmder{a, b})
	}
	if err != nil {
		return nil, err
	}
	zs := append(a.Val(), b.Val()...)
	sort.Slice(zs, func(i, j int) bool {
		if zs[i].Score != zs[j].Score {
			return zs[i].Score > zs[j].Score
		}
		return str(zs[i].Member) > str(zs[j].Member)
	})
	return zs[:min(n, len(zs))], nil
}

// backfillFeed copies b's latest posts into a's feed, if a follows b.
func (s *Store) backfillFeed(ctx context.Context, a, b string) error {
	zs, err := s.latestPosts(ctx, b, s.opts.Feed.Backfill)
	if err != nil {
		return fmt.Errorf("backfill feed of %s: %w", a, err)
	}
	if len(zs) == 0 {
		return nil
	}
	pairs := make([]any, 0, 2*len(zs))
	for _, z := range zs {
		pairs = append(pairs, z.Member, formatScore(z.Score))
	}
	if err := s.runMany(ctx, []scriptCall{s.feedAddCall(a, b, pairs)}); err != nil {
		return fmt.Errorf("backfill feed of %s: %w", a, err)
	}
	return nil
}

// feedSource is one sorted set a feed page reads: the pushed entries or a pulled author's posts.
type feedSource struct {
	rp      rawPage
	bounded bool // a pulled author's posts on a full feed: only those within the horizon count
	within  int  // members within the horizon: the first within of the list
}

// prev reports whether members within the horizon precede the source's page: they do when any
// member precedes it and any is within the horizon, since the newest member is the list's first.
func (f feedSource) prev() bool { return f.rp.hasPrev && (!f.bounded || f.within > 0) }

// next reports whether members within the horizon follow the source's page.
func (f feedSource) next() bool {
	return f.rp.hasNext && (!f.bounded || f.rp.start+len(f.rp.members) < f.within)
}

// feedItem is one candidate entry of a feed page.
type feedItem struct {
	member, score string
	at            float64
}

// Feed loads one page of the home feed of the viewer: posts by the users they follow, newest
// first, without those of users the viewer blocks, and what needs says the response reads of
// them. Its cursors stay valid while posts come and go, and work in both directions.
//
// A page is a merge: the same window of the pushed entries and of each pulled author's posts,
// merged in feed order, and the first w.First of them (a forward page) or the last w.Last (a
// backward one): the items of the page are among each source's first (or last) n of the window.
// A backward page is the mirror of a forward one, with one asymmetry: on a full feed, pulled
// posts older than the horizon (the oldest entry the feed keeps) are not in the feed, and a
// backward page that would reach past it (one without a before cursor, or before a cursor that
// newer posts have pushed past it) reads each pulled author's posts up to the horizon instead.
func (l *Loader) Feed(ctx context.Context, viewer UserKey, w Window, needs func() *Needs) (*Page[*Post], error) {
	sp, err := w.decode(feedTag)
	if err != nil {
		return nil, err
	}
	uid := string(viewer)
	k := l.s.k
	// Round one: the pushed entries, the pulled authors and the oldest entry kept. A pull set
	// holds at most MaxPulledAuthors (follow_mode.lua); one from before that bound may hold more
	// until RebuildUsers brings it within it, and only its latest MaxPulledAuthors are read.
	maxPulled := int64(l.s.opts.Feed.MaxPulledAuthors)
	r1 := l.getAll(ctx, l.pageRead(k.feed(uid), true, sp), zrangeRead(k.pull(uid), -maxPulled, -1), zrangeRead(k.feed(uid), 0, 0))
	if err := waitAll(ctx, r1); err != nil {
		return nil, err
	}
	own, err := pageOf(r1[0], sp)
	if err != nil {
		return nil, err
	}
	pulled := zrangeMembers(r1[1])
	oldest := r1[2].cmd.(*rdb.ZSliceCmd).Val()
	// A full feed has dropped older entries; pulled posts older than what it keeps are left out too.
	full := own.total >= l.s.opts.Feed.Cap && len(oldest) == 1
	horizon := "-inf"
	pullSpan := sp
	if full {
		horizon = formatScore(oldest[0].Score)
		if sp.backward && (sp.before.score == "" || parseScore(sp.before.score) < oldest[0].Score) {
			// A backward page of pulled posts ends at the horizon: the posts beyond it are not in
			// the feed, and reading them would leave out newer ones. The bound is after every
			// post at the horizon, since none is ordered after it by the empty member.
			pullSpan.before = cursor{list: feedTag, score: horizon}
		}
	}
	// Round two: a page of each pulled author's posts and how many are within the horizon.
	// Each author's posts are a source, and their NSFW posts another for a viewer who shows them
	// (nsfw_lists.go).
	reads := make([]read, 0, 4*len(pulled))
	for _, a := range pulled {
		key := l.s.k.userPosts(a)
		reads = append(reads, l.pageRead(key, true, pullSpan), zcountRead(key, horizon, "+inf"))
		if nkey := l.nsfwPart(key); nkey != "" {
			reads = append(reads, l.pageRead(nkey, true, pullSpan), zcountRead(nkey, horizon, "+inf"))
		}
	}
	r2 := l.getAll(ctx, reads...)
	if err := waitAll(ctx, r2); err != nil {
		return nil, err
	}
	srcs := make([]feedSource, 0, 1+len(reads)/2)
	srcs = append(srcs, feedSource{rp: own, within: own.total})
	for i := 0; i < len(r2); i += 2 {
		rp, err := pageOf(r2[i], pullSpan)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, feedSource{rp: rp, bounded: full, within: int(r2[i+1].cmd.(*rdb.IntCmd).Val())})
	}

	floor := math.Inf(-1)
	if full {
		floor = oldest[0].Score
	}
	items, total, prev, more := mergeSources(srcs, sp, floor)
	return l.feedPage(ctx, items, feedTag, needs, &Page[*Post]{Total: total, HasNext: more, HasPrev: prev})
}

// mergeSources merges the pages of sources read with the span sp into one page of sp.n items:
// newest (highest score) first, ties by member bytes descending — the order every source's page
// follows — each member once, leaving out members scored below floor. It returns the items,
// the total of the sources' members within their horizon, and whether items precede and follow
// the page. The items of a page are among each source's first (or last) sp.n of the window, so
// reading sp.n of each is enough; a source that has more says so itself.
func mergeSources(srcs []feedSource, sp span, floor float64) (items []feedItem, total int, prev, more bool) {
	items = make([]feedItem, 0, sp.n)
	seen := make(map[string]bool)
	for _, src := range srcs {
		total += src.within
		prev, more = prev || src.prev(), more || src.next()
		for i, m := range src.rp.members {
			at := parseScore(src.rp.scores[i])
			if at < floor || seen[m] {
				continue
			}
			seen[m] = true
			items = append(items, feedItem{member: m, score: src.rp.scores[i], at: at})
		}
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].at != items[j].at {
			return items[i].at > items[j].at
		}
		return items[i].member > items[j].member
	})
	if len(items) > sp.n {
		if sp.backward {
			items, prev = items[len(items)-sp.n:], true
		} else {
			items, more = items[:sp.n], true
		}
	}
	return items, total, prev, more
}

// feedPage loads the posts of merged items and what needs says the response reads of them into
// page (its totals already set), with cursors of the list tagged tag; posts gone since their
// entries were read are left out.
func (l *Loader) feedPage(ctx context.Context, items []feedItem, tag string, needs func() *Needs, page *Page[*Post]) (*Page[*Post], error) {
	pids := make([]string, len(items))
	for i, it := range items {
		pids[i] = it.member
	}
	n := evalNeeds(needs)
	l.Walk(ctx, Items{Kind: ItemPost, Keys: pids}, n)
	posts, kept, err := l.postsByKey(ctx, pids, n.ReadsPostBody())
	if err != nil {
		return nil, err
	}
	page.Items, page.Cursors = posts, make([]string, len(kept))
	for i, j := range kept {
		page.Cursors[i] = cursor{list: tag, score: items[j].score, member: items[j].member}.encode()
	}
	return withoutRemoved(l.WithoutBlocked(page), nil)
}

// zrangeRead reads the members of a sorted set from rank start to stop, lowest score first, with
// their scores (ZRANGE WITHSCORES).
func zrangeRead(key string, start, stop int64) read {
	ck := "zw:" + key + "\x00" + strconv.FormatInt(start, 10) + "\x00" + strconv.FormatInt(stop, 10)
	return read{key: ck, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.ZRangeWithScores(ctx, key, start, stop)
	}}
}

// zrangeMembers returns the members a done zrangeRead read.
func zrangeMembers(c *call) []string {
	zs := c.cmd.(*rdb.ZSliceCmd).Val()
	out := make([]string, len(zs))
	for i, z := range zs {
		out[i], _ = z.Member.(string)
	}
	return out
}

// zcountRead reads how many members of a sorted set score between min and max (Redis range
// syntax).
func zcountRead(key, min, max string) read {
	return read{key: "zn:" + key + "\x00" + min + "\x00" + max, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.ZCount(ctx, key, min, max)
	}}
}
