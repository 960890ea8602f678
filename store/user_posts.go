package store

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// A user's posts in an order other than NEW are ranked at read time from the site's rankings,
// with no per-user copy of them (a post's bytes are the memory floor). Three levels, each one
// pipeline (one per master on a Cluster):
//
//  1. The candidates: the user's newest userRankCap posts from their post list (both parts for a
//     viewer who shows NSFW posts: nsfw_lists.go), with their publish times; for a TOP window,
//     only those published within it (ZRANGE BYSCORE from the cutoff). Walk reads them with the
//     user's hash.
//  2. Their scores: one ZMSCORE of the candidates on the site's ranking of the order, those of the
//     list's NSFW part on the ranking's NSFW part. The post list and the ranking are different
//     aggregates ({u:…} and {r:all}), so no script can read both and the ids must come back
//     before the scores are asked for: this is the level that NEW does not have.
//  3. The page's posts, as every post list reads them (Walk).
//
// A candidate the ranking does not hold (a derived write in flight, or to repair) is left out,
// as the site's listing leaves it out. For a TOP window a post is in the list when its window's
// set holds it and it was published at or after the cutoff (windowCut.within): the site's
// listing's read-time rule. The ranked candidates are sorted and paged here with cursors of the
// site's kind (score and member, ties by member bytes descending as Redis orders them), so a page
// after a cursor is stable while votes land as far as the site's pages are.

// userRankCap bounds the posts a sorted read of a user's posts ranks: the newest userRankCap of
// them (of the window, for a TOP window); and the comments a vote order of a user's comments
// ranks (userCommentsRanked). Reddit's listings stop at 1,000 items too.
const userRankCap = 1000

// rankCap is how many of a user's posts, or comments, a sorted read ranks (userRankCap).
func (s *Store) rankCap() int {
	if s.opts.userRankCap > 0 {
		return s.opts.userRankCap
	}
	return userRankCap
}

// userRanking is what a sorted read of a user's posts reads, for the loader's viewer.
type userRanking struct {
	tag   string    // the cursor tag: "pu:" and the site listing's
	cands read      // level 1: the candidates
	sets  [2]string // the site ranking's parts the scores come from; the second "" when one
	cut   windowCut // a TOP window's read-time filter; zero for other orders
	limit int       // how many posts it ranks (Store.rankCap)
}

// userRanking returns the reads of a user's posts in the order sort (not SortNew).
func (l *Loader) userRanking(uid string, order PostSort) userRanking {
	set, tag := l.rankingList(order, "")
	ur := userRanking{tag: "pu:" + tag, sets: [2]string{set, l.nsfwPart(set)}}
	if i := order.window(); i >= 0 {
		ur.cut = l.rankingCut(order, "")
		ur.cut.cutoff = l.clock().Add(-TopWindows[i].Length).UnixMilli()
	}
	parts := [2]string{l.s.k.userPosts(uid), l.nsfwPart(l.s.k.userPosts(uid))}
	n := l.s.rankCap()
	ur.limit = n
	args := rdb.ZRangeArgs{Start: 0, Stop: n - 1, Rev: true}
	if ur.cut.set != "" {
		// Newest first from +inf down to the cutoff: only the posts of the window.
		args = rdb.ZRangeArgs{Start: "+inf", Stop: ur.cut.cutoff, ByScore: true, Rev: true, Count: int64(n)}
	}
	ck := "uc:" + parts[0] + "\x00" + parts[1] + "\x00" + strconv.FormatInt(ur.cut.cutoff, 10)
	ur.cands = read{key: ck, rkey: parts[0], fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		a := args
		a.Key = parts[0]
		c.cmd = p.ZRangeArgsWithScores(ctx, a)
		if parts[1] != "" {
			a.Key = parts[1]
			c.cmd2 = p.ZRangeArgsWithScores(ctx, a)
		}
	}}
	return ur
}

// pageKey names the page of w among the pages a walk kept.
func (ur userRanking) pageKey(w Window) string {
	return pageKey(ur.cands.key+"\x00"+ur.tag, true, w)
}

// candidate is a post of the user's that a sorted read ranks: its id, publish time (ms) and the
// part of the post list it is in (0, or 1 for the NSFW part).
type candidate struct {
	id        string
	published int64
	part      int
}

// candidates parses a done candidates read: the newest ur.limit posts of both parts, newest
// first.
func (ur userRanking) candidates(c *call) []candidate {
	var out []candidate
	for part, cmd := range [2]rdb.Cmder{c.cmd, c.cmd2} {
		if cmd == nil {
			continue
		}
		for _, z := range cmd.(*rdb.ZSliceCmd).Val() {
			id, _ := z.Member.(string)
			out = append(out, candidate{id: id, published: int64(z.Score), part: part})
		}
	}
	if c.cmd2 != nil {
		slices.SortStableFunc(out, func(a, b candidate) int { return cmp.Compare(b.published, a.published) })
	}
	if len(out) > ur.limit {
		out = out[:ur.limit]
	}
	return out
}

// scoresRead is the read of the candidates' scores in the site's ranking: one ZMSCORE on each
// part of it, of the candidates from the same part of the user's list (a post is in the same
// part of both: see userPostsCall and rankingCalls). The candidates read is done; its key names
// the candidates in the loader's cache.
func (ur userRanking) scoresRead(cands *call) read {
	var args [2][]any
	for _, c := range ur.candidates(cands) {
		if args[c.part] == nil {
			args[c.part] = append(make([]any, 0, 64), "zmscore", ur.sets[c.part])
		}
		args[c.part] = append(args[c.part], c.id)
	}
	return read{key: "us:" + ur.sets[0] + "\x00" + cands.r.key, rkey: ur.sets[0], fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		cmds := [2]rdb.Cmder{}
		for part, a := range args {
			if a != nil {
				cmd := rdb.NewStringSliceCmd(ctx, a...)
				_ = p.Process(ctx, cmd) // a pipeline only queues the command; its error comes with the reply
				cmds[part] = cmd
			}
		}
		if cmds[0] == nil && cmds[1] == nil {
			cmds[0] = p.ZCard(ctx, ur.sets[0]) // no candidates: a command all the same, for the pipeline
		}
		c.cmd, c.cmd2 = cmds[0], cmds[1]
	}}
}

// rankedPage ranks the candidates by the scores read and returns the page of the span sp: the
// candidates the ranking holds (and, for a TOP window, published within it), highest score
// first, ties by member bytes descending. ZMSCORE replies with strings here, "" for a member the
// set does not hold (go-redis's ZMScore gives 0 for those, which is a score).
func (ur userRanking) rankedPage(cands, scores *call, sp span) rawPage {
	var replies [2][]string
	for part, cmd := range [2]rdb.Cmder{scores.cmd, scores.cmd2} {
		if sc, ok := cmd.(*rdb.StringSliceCmd); ok {
			replies[part] = sc.Val()
		}
	}
	all := ur.candidates(cands)
	ranked := make([]rankedEntry, 0, len(all))
	var at [2]int // the next reply of each part
	for _, c := range all {
		i := at[c.part]
		at[c.part]++
		if i >= len(replies[c.part]) {
			continue
		}
		if s := replies[c.part][i]; s != "" && ur.cut.within(c.published) {
			ranked = append(ranked, rankedEntry{id: c.id, score: parseScore(s)})
		}
	}
	rp, _ := rankPage(ranked, sp)
	return rp
}

// rankedEntry is a member of a list ranked in Go, its score, and where the caller has it.
type rankedEntry struct {
	id    string
	score float64
	at    int
}

// rankPage sorts ranked as Redis orders a sorted set read highest score first (ties by member
// bytes descending) and returns the page of the span sp, with the total and every member's score:
// the page a page read of the same sorted set returns, cursors included; and the page's entries.
func rankPage(ranked []rankedEntry, sp span) (rawPage, []rankedEntry) {
	slices.SortFunc(ranked, func(a, b rankedEntry) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return -strings.Compare(a.id, b.id)
	})
	// follows reports whether the entry e comes after the cursor cu in the list.
	follows := func(e rankedEntry, cu cursor) bool {
		f := parseScore(cu.score)
		if e.score != f {
			return e.score < f
		}
		return e.id < cu.member
	}
	lo, hi := 0, len(ranked)
	if sp.after.score != "" {
		lo = sort.Search(len(ranked), func(i int) bool { return follows(ranked[i], sp.after) })
	}
	if sp.before.score != "" {
		hi = sort.Search(len(ranked), func(i int) bool {
			e := ranked[i]
			return follows(e, sp.before) || (e.id == sp.before.member && e.score == parseScore(sp.before.score))
		})
	}
	hi = max(hi, lo)
	start, stop := lo, min(lo+sp.n, hi)
	if sp.backward {
		start, stop = max(hi-sp.n, lo), hi
	}
	rp := rawPage{total: len(ranked), start: start, members: make([]string, 0, stop-start),
		scores: make([]string, 0, stop-start)}
	for _, e := range ranked[start:stop] {
		rp.members, rp.scores = append(rp.members, e.id), append(rp.scores, formatScore(e.score))
	}
	rp.hasPrev, rp.hasNext = start > 0, stop < len(ranked)
	return rp, ranked[start:stop]
}

// clock is the loader's time for the windows of TOP: the time it first asked, so that every
// read of a response (Walk's and its resolvers') cuts its windows at the same millisecond.
func (l *Loader) clock() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at.IsZero() {
		l.at = l.s.now()
	}
	return l.at
}

// userPostsRanked loads one page of a user's posts in the order sort (not SortNew), and what
// needs says of them.
func (l *Loader) userPostsRanked(ctx context.Context, uid UserKey, order PostSort, w Window, needs func() *Needs) (*Page[*Post], error) {
	ur := l.userRanking(string(uid), order)
	sp, err := w.decode(ur.tag)
	if err != nil {
		return nil, err
	}
	if p := keptPage[*Post](l, ur.pageKey(w)); p != nil {
		return p, nil
	}
	cands, err := l.get(ctx, ur.cands)
	if err != nil {
		return nil, err
	}
	scores, err := l.get(ctx, ur.scoresRead(cands))
	if err != nil {
		return nil, err
	}
	rp := ur.rankedPage(cands, scores, sp)
	n := evalNeeds(needs)
	l.Walk(ctx, Items{Kind: ItemPost, Keys: rp.members}, n)
	posts, kept, err := l.postsByKey(ctx, rp.members, n.ReadsPostBody())
	if err != nil {
		return nil, err
	}
	all := rp.cursors(ur.tag)
	cursors := make([]string, len(kept))
	for i, k := range kept {
		cursors[i] = all[k]
	}
	return &Page[*Post]{Items: posts, Cursors: cursors, Total: rp.total, HasNext: rp.hasNext, HasPrev: rp.hasPrev}, nil
}
