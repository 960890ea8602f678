package store

import (
	"context"
	"strconv"

	"github.com/agora/agora/internal/rdb"
)

// Post lists in two parts. Every post list — each sort and TOP window of the site's and each
// group's rankings, each user's post list — keeps the posts that are not NSFW under its key and
// the NSFW posts apart, under nsfwKey of it, in the same slot (see labels.go). A viewer who does
// not show NSFW posts reads the first part alone; any other reads both in the same pipeline and
// merges them here: one more command in the same round trip, no copy of the list.

// pageMerge is how a read of both parts of a post list merges them (see mergePages).
type pageMerge struct {
	counted bool // the parts' totals were read: the merged page's position is known
	scores  bool // the response shows the items' cursors
}

// postListRead is the read of a page of a post list (highest score first) as the loader's viewer
// sees it: the part that is not NSFW for a viewer who does not show NSFW posts, both parts
// merged for the others. total and scores are pageRead's.
func (l *Loader) postListRead(key string, sp span, total, scores bool) read {
	sc := l.s.scripts.get("page")
	if l.hidesNSFW() {
		return pageRead(key, true, sp, total, scores, sc)
	}
	nsp := sp
	if sp.cut.set != "" {
		nsp.cut = windowCut{times: nsfwKey(sp.cut.times), marks: sp.cut.marks, set: nsfwKey(sp.cut.set), cutoff: sp.cut.cutoff, group: sp.cut.group}
	}
	// The parts are read with their scores, which order the merge.
	a, b := pageRead(key, true, sp, total, true, sc), pageRead(nsfwKey(key), true, nsp, total, true, sc)
	m := &pageMerge{counted: total || !sp.open() || sp.cut.set != "", scores: scores}
	return read{key: "u" + a.key + "\x00" + strconv.FormatBool(scores), rkey: key, merge: m,
		fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
			parts := [2]call{{r: a}, {r: b}}
			c.parts = []*call{&parts[0], &parts[1]}
			for _, pc := range c.parts {
				pc.r.fill(ctx, p, pc)
			}
			// The commands a retry looks at (see pipeline): each part's range or script.
			c.cmd, c.cmd2 = lastCmd(c.parts[0]), lastCmd(c.parts[1])
		}}
}

// lastCmd is the command of a page read that reads its members.
func lastCmd(c *call) rdb.Cmder {
	if c.cmd2 != nil {
		return c.cmd2
	}
	return c.cmd
}

// mergePages merges the pages of the two parts of a post list, read with the span sp, into the
// page of the span of the whole list: in list order (highest score first, ties by member bytes
// descending, as Redis orders them), each member once. Each part's page holds its first (or
// last) sp.n members of the window, so the first (or last) sp.n of the merge are the whole
// list's. The position of the page is the sum of the parts' positions: a forward page starts
// after the members of both parts before the window, a backward one ends before those after it.
func mergePages(a, b rawPage, sp span, m pageMerge) rawPage {
	out := rawPage{members: make([]string, 0, len(a.members)+len(b.members)),
		scores: make([]string, 0, len(a.members)+len(b.members))}
	i, j := 0, 0
	seen := map[string]bool{}
	for i < len(a.members) || j < len(b.members) {
		var mem, sc string
		if j >= len(b.members) || (i < len(a.members) && ranksFirst(a.scores[i], a.members[i], b.scores[j], b.members[j])) {
			mem, sc = a.members[i], a.scores[i]
			i++
		} else {
			mem, sc = b.members[j], b.scores[j]
			j++
		}
		if seen[mem] { // in both parts: a post moving between them during a migration
			continue
		}
		seen[mem] = true
		out.members, out.scores = append(out.members, mem), append(out.scores, sc)
	}
	cut := len(out.members) - sp.n
	if cut > 0 {
		if sp.backward {
			out.members, out.scores = out.members[cut:], out.scores[cut:]
		} else {
			out.members, out.scores = out.members[:sp.n], out.scores[:sp.n]
		}
	}
	if m.counted {
		out.total = a.total + b.total
		out.start = a.start + b.start
		if sp.backward {
			out.start = a.start + len(a.members) + b.start + len(b.members) - len(out.members)
		}
		out.hasPrev = out.start > 0
		out.hasNext = out.start+len(out.members) < out.total
	} else {
		out.hasPrev = a.hasPrev || b.hasPrev || (sp.backward && cut > 0)
		out.hasNext = a.hasNext || b.hasNext || (!sp.backward && cut > 0)
	}
	if !m.scores {
		out.scores = nil
	}
	out.backlog = a.backlog + b.backlog
	return out
}

// ranksFirst reports whether the member m1 scored s1 comes before m2 scored s2 in a list read
// highest score first: a higher score, or the same score and a member later in byte order.
func ranksFirst(s1, m1, s2, m2 string) bool {
	f1, f2 := parseScore(s1), parseScore(s2)
	if f1 != f2 {
		return f1 > f2
	}
	return m1 > m2
}

// postCountReads are the reads of how many posts a post list holds that the loader's viewer
// sees: the size of the part that is not NSFW, and of the NSFW part for a viewer who shows NSFW
// posts (postCount adds them up). They are the reads of the sizes of the parts any other read
// makes (groupNeeds, groupExists), so that a response reads each once.
func (l *Loader) postCountReads(key string) []read {
	if l.hidesNSFW() {
		return []read{zcardRead(key)}
	}
	return partCountReads(key)
}

// partCountReads are the reads of the sizes of both parts of a post list.
func partCountReads(key string) []read {
	return []read{zcardRead(key), zcardRead(nsfwKey(key))}
}

// countOf adds up the sizes that done zcardReads read.
func countOf(calls ...*call) int {
	n := int64(0)
	for _, c := range calls {
		n += c.cmd.(*rdb.IntCmd).Val()
	}
	return int(n)
}

// postCount loads the count of postCountReads.
func (l *Loader) postCount(ctx context.Context, key string) (int, error) {
	calls := l.getAll(ctx, l.postCountReads(key)...)
	if err := waitAll(ctx, calls); err != nil {
		return 0, err
	}
	return countOf(calls...), nil
}

// nsfwPart is the NSFW part of the post list key for a viewer who shows NSFW posts, "" for one
// who does not.
func (l *Loader) nsfwPart(key string) string {
	if l.hidesNSFW() {
		return ""
	}
	return nsfwKey(key)
}
