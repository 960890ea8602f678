package store

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// The reads of reports. Reports are seen by the moderators of their groups and the admins; a
// report is also seen by its reporter (node(id), and what reportPost returns). A post's or a
// comment's open report count is shown to the same moderators and admins only.

// reportRecords loads reports by id in one read (HMGET); a missing one is nil at its index.
func (l *Loader) reportRecords(ctx context.Context, ids []string) ([]*reportRecord, error) {
	out := make([]*reportRecord, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	entries := l.s.k.reportEntries()
	c, err := l.get(ctx, read{key: "rp:" + strings.Join(ids, "\x00"), rkey: entries,
		fields: boxed(ids), fill: fillHMGET})
	if err != nil {
		return nil, err
	}
	for i, v := range fields(c) {
		out[i] = parseReportRecord(v)
	}
	return out, nil
}

// moderatesAny reports whether viewer is an admin or moderates one of groups, reading the
// groups' moderators in one pipeline (one ZSCORE per group, shared with every other such read of
// the request).
func (l *Loader) moderatesAny(ctx context.Context, viewer UserKey, groups []string) (bool, error) {
	if viewer == "" {
		return false, nil
	}
	if l.s.IsAdmin(viewer) {
		return true, nil
	}
	calls := l.getAll(ctx, l.modReads(viewer, groups, nil)...)
	if err := waitAll(ctx, calls); err != nil {
		return false, err
	}
	return moderates(calls), nil
}

// modsAndGens reads, in one round trip, whether viewer moderates each of groups (mods; nil for
// no viewer or an admin) and each group's generation (see reports.go).
func (l *Loader) modsAndGens(ctx context.Context, viewer UserKey, groups []string) (mods []bool, gens []int64, err error) {
	reads := make([]read, 0, 2*len(groups))
	for _, g := range groups {
		reads = append(reads, hashFieldRead(l.s.k.groupInfo(g), "gen"))
	}
	ask := viewer != "" && !l.s.IsAdmin(viewer)
	if ask {
		reads = l.modReads(viewer, groups, reads)
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, nil, err
	}
	gens = make([]int64, len(groups))
	for i := range groups {
		gens[i] = atoi64(calls[i].cmd.(*rdb.StringCmd).Val())
	}
	if ask {
		mods = make([]bool, len(groups))
		for i := range groups {
			mods[i] = moderates(calls[len(groups)+i : len(groups)+i+1])
		}
	}
	return mods, gens, nil
}

// moderatesReport reports whether viewer is an admin or moderates one of the report's groups
// that is still the group it was filed in (see reports.go): one round trip.
func (l *Loader) moderatesReport(ctx context.Context, viewer UserKey, rec *reportRecord) (bool, error) {
	if viewer == "" {
		return false, nil
	}
	if l.s.IsAdmin(viewer) {
		return true, nil
	}
	mods, gens, err := l.modsAndGens(ctx, viewer, rec.groups())
	if err != nil {
		return false, err
	}
	for i, m := range mods {
		if m && rec.sameGen(i, gens) {
			return true, nil
		}
	}
	return false, nil
}

// modReads appends the reads of whether viewer moderates each of groups to reads.
func (l *Loader) modReads(viewer UserKey, groups []string, reads []read) []read {
	for _, g := range groups {
		reads = append(reads, zscoreRead(l.s.k.groupMods(g), string(viewer)))
	}
	return reads
}

// moderates reports whether one of done moderator reads found the viewer.
func moderates(calls []*call) bool {
	for _, c := range calls {
		if c.cmd.(*rdb.FloatCmd).Err() == nil {
			return true
		}
	}
	return false
}

// Report loads a report by global id as viewer sees it: nil when there is none or viewer is
// neither its reporter, nor a moderator of one of its groups, nor an admin.
func (l *Loader) Report(ctx context.Context, viewer UserKey, id string) (*Report, error) {
	key, err := parseTypedID(id, TypeReport)
	if err != nil {
		return nil, err
	}
	recs, err := l.reportRecords(ctx, []string{key})
	if err != nil || recs[0] == nil || viewer == "" {
		return nil, err
	}
	if string(viewer) != recs[0].Reporter {
		if ok, err := l.moderatesReport(ctx, viewer, recs[0]); err != nil || !ok {
			return nil, err
		}
	}
	return recs[0].report(key), nil
}

// ReporterFor returns who made the report r, as viewer may learn it: "" when viewer wrote what
// was reported. A moderator of its groups sees the report of their own post or comment (they may
// not resolve it: ResolveReportAs), but not who made it — as Reddit keeps reporters anonymous,
// the author of what was reported must not learn who reported them, even once they deleted it;
// the other moderators and the admins do. An admin and the reporter always see the reporter.
// A report made before reports recorded their author reads it from its post or comment, while
// they exist (in the loader's reads: prefetchReports makes them with the page's).
func (l *Loader) ReporterFor(ctx context.Context, viewer UserKey, r *Report) (UserKey, error) {
	if viewer == "" || viewer == r.Reporter || l.s.IsAdmin(viewer) {
		return r.Reporter, nil
	}
	author := r.author
	if author == "" {
		var err error
		if author, err = l.reportedAuthor(ctx, &reportRecord{Post: r.PostID, Comment: r.CommentID}); err != nil {
			return "", err
		}
	}
	if author == viewer {
		return "", nil
	}
	return r.Reporter, nil
}

// ReportNeeds says what a response reads of each report of a page, so that a page reads it for
// all its reports in one round trip.
type ReportNeeds struct{ Post, Comment, Reporter, ResolvedBy bool }

// Reports loads one page of reports, newest first, as viewer may see them: those of group, for
// its moderators and the admins (KindForbidden for anyone else); with group "", every report for
// an admin, and for anyone else the reports of the groups they moderate, merged from those
// groups' lists (see MaxReportGroupsScanned; none for a user who moderates nothing). openOnly
// leaves out the resolved ones. The total of a merged list counts a report once per group of the
// viewer's it is in.
func (l *Loader) Reports(ctx context.Context, viewer UserKey, group string, openOnly bool, w Window, needs ReportNeeds) (*Page[*Report], error) {
	if viewer == "" {
		return nil, &Error{Kind: KindUnauthenticated, Msg: "sign in to see reports"}
	}
	tag, admin := "rpa", l.s.IsAdmin(viewer)
	if openOnly {
		tag = "rpo"
	}
	if group != "" {
		var err error
		if group, err = NormalizeGroupName(group); err != nil {
			return nil, err
		}
		tag += ":" + group
	} else if !admin {
		tag += ":*" // the merged list of the viewer's groups; no group is named "*"
	}
	sp, err := w.decode(tag)
	if err != nil {
		return nil, err
	}
	var lists []string
	switch {
	case group != "":
		// The group's reports are those of its generation: a group made anew under the name of
		// one that died does not list the dead one's (the admins see them in the site's list).
		mods, gens, err := l.modsAndGens(ctx, viewer, []string{group})
		if err != nil {
			return nil, err
		}
		if !admin && !mods[0] {
			return nil, &Error{Kind: KindForbidden, Msg: "only the moderators of group " + group + " and the site admins see its reports"}
		}
		lists = []string{l.s.k.reportList(reportScope(group, gens[0]), openOnly)}
	case admin:
		lists = []string{l.s.k.reportList("", openOnly)}
	default:
		groups, err := l.moderatedReportGroups(ctx, viewer)
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			lists = append(lists, l.s.k.reportList(g, openOnly))
		}
	}
	if len(lists) == 0 {
		return &Page[*Report]{}, nil
	}
	rp, err := l.mergedPage(ctx, lists, sp)
	if err != nil {
		return nil, err
	}
	recs, err := l.reportRecords(ctx, rp.members)
	if err != nil {
		return nil, err
	}
	l.prefetchReports(ctx, recs, needs)
	all := rp.cursors(tag)
	p := &Page[*Report]{Total: rp.total, HasNext: rp.hasNext, HasPrev: rp.hasPrev}
	for i, r := range recs {
		if r != nil {
			p.Items, p.Cursors = append(p.Items, r.report(rp.members[i])), append(p.Cursors, all[i])
		}
	}
	return p, nil
}

// moderatedReportGroups returns the report scopes (reportScope) of the groups viewer moderates
// among the MaxReportGroupsScanned most recently reported, at most MaxReportGroupsMerged of
// them, each in the group's present generation: two round trips.
func (l *Loader) moderatedReportGroups(ctx context.Context, viewer UserKey) ([]string, error) {
	key := l.s.k.reportGroups()
	c, err := l.get(ctx, read{key: "zrr:" + key, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.ZRevRange(ctx, key, 0, MaxReportGroupsScanned-1)
	}})
	if err != nil {
		return nil, err
	}
	scopes := c.cmd.(*rdb.StringSliceCmd).Val()
	names, gens := make([]string, len(scopes)), make([]int64, len(scopes))
	for i, sc := range scopes {
		names[i], gens[i] = parseReportScope(sc)
	}
	mods, cur, err := l.modsAndGens(ctx, viewer, names)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, m := range mods {
		if len(out) == MaxReportGroupsMerged {
			break
		}
		if m && gens[i] == cur[i] {
			out = append(out, scopes[i])
		}
	}
	return out, nil
}

// mergedPage reads the page sp names of several sorted sets of report ids scored by time, newest
// first, in one pipeline, and merges them: a report in several of them is listed once, in the
// order of a single sorted set (score, then member, descending), so that the cursors of the
// merged list are stable.
func (l *Loader) mergedPage(ctx context.Context, lists []string, sp span) (rawPage, error) {
	if len(lists) == 1 {
		return l.page(ctx, lists[0], true, sp)
	}
	reads := make([]read, len(lists))
	for i, key := range lists {
		reads[i] = l.pageRead(key, true, sp)
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return rawPage{}, err
	}
	type entry struct {
		member, score string
		at            float64
	}
	var all []entry
	seen := make(map[string]bool)
	var out rawPage
	for _, c := range calls {
		rp, err := pageOf(c, sp)
		if err != nil {
			return rawPage{}, err
		}
		out.total += rp.total
		out.hasNext = out.hasNext || rp.hasNext
		out.hasPrev = out.hasPrev || rp.hasPrev
		for i, m := range rp.members {
			if seen[m] || i >= len(rp.scores) {
				continue
			}
			seen[m] = true
			at, _ := strconv.ParseFloat(rp.scores[i], 64)
			all = append(all, entry{m, rp.scores[i], at})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].at != all[j].at {
			return all[i].at > all[j].at
		}
		return all[i].member > all[j].member
	})
	if len(all) > sp.n {
		if sp.backward {
			all, out.hasPrev = all[len(all)-sp.n:], true
		} else {
			all, out.hasNext = all[:sp.n], true
		}
	}
	for _, e := range all {
		out.members, out.scores = append(out.members, e.member), append(out.scores, e.score)
	}
	return out, nil
}

// prefetchReports reads what needs says the response reads of the reports, in one round trip.
// Errors are left to the resolvers, which meet them again when they read the same data.
func (l *Loader) prefetchReports(ctx context.Context, recs []*reportRecord, needs ReportNeeds) {
	var reads []read
	for _, r := range recs {
		if r == nil {
			continue
		}
		// The reporter of a report that did not record its author is shown after a read of the
		// post or comment reported (ReporterFor).
		byAuthor := needs.Reporter && r.Author == ""
		if needs.Post || (needs.Comment || byAuthor) && r.Comment != "" || byAuthor {
			if pid, err := PostKey(r.Post); err == nil {
				reads = append(reads, l.postRead(pid))
			}
		}
		if (needs.Comment || byAuthor) && r.Comment != "" {
			if pid, num, err := CommentKey(r.Comment); err == nil {
				reads = append(reads, l.commentRead(pid, num, AllCommentFields))
			}
		}
		if needs.Reporter {
			reads = append(reads, l.userRead(r.Reporter))
		}
		if needs.ResolvedBy && r.ResolvedBy != "" {
			reads = append(reads, l.userRead(r.ResolvedBy))
		}
	}
	if len(reads) > 0 {
		_ = waitAll(ctx, l.getAll(ctx, reads...))
	}
}

// ReportCount returns the number of open reports of the post or comment target (a global id) in
// a post in groups, as viewer sees it: nil unless viewer moderates one of the groups or is an
// admin. The count and the viewer's moderation of the groups are read together, in one round trip
// (none when Walk has read them).
func (l *Loader) ReportCount(ctx context.Context, viewer UserKey, groups []string, target string) (*int, error) {
	if viewer == "" {
		return nil, nil
	}
	reads := []read{hashFieldRead(l.s.k.reportCounts(), target)}
	admin := l.s.IsAdmin(viewer)
	if !admin {
		reads = l.modReads(viewer, groups, reads)
	}
	calls := l.getAll(ctx, reads...)
	if err := waitAll(ctx, calls); err != nil {
		return nil, err
	}
	if !admin && !moderates(calls[1:]) {
		return nil, nil
	}
	n := int(atoi64(calls[0].cmd.(*rdb.StringCmd).Val()))
	return &n, nil
}

// reportCountReads adds the reads of an item's open report count that its key decides, when the
// needs ask for it: the count, and for a comment its post (read before, as a rule), whose groups
// decide who sees it.
func (l *Loader) reportCountReads(it walkItem, reads []read) []read {
	if !it.needs.ReportCount || it.needs.Viewer == "" {
		return reads
	}
	switch it.kind {
	case ItemPost:
		return append(reads, hashFieldRead(l.s.k.reportCounts(), postID(it.key)))
	case ItemComment:
		return append(reads, hashFieldRead(l.s.k.reportCounts(), commentID(it.pid, it.key)), l.postRead(it.pid))
	}
	return reads
}

// reportAuthorityReads adds the reads of whether the viewer moderates the groups of a post whose
// hash is read, when the needs ask for report counts: one per group, shared by the whole level.
func (l *Loader) reportAuthorityReads(n *Needs, groups []string, reads []read) []read {
	if !n.ReportCount || n.Viewer == "" || l.s.IsAdmin(n.Viewer) {
		return reads
	}
	return l.modReads(n.Viewer, groups, reads)
}

// readPost returns the post of a read of it already done in this loader; nil when there is
// none, it is not done, or the post is missing.
func (l *Loader) readPost(pid string) *Post {
	r := l.postRead(pid)
	l.mu.Lock()
	c, ok := l.cache[r.key]
	l.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-c.done:
	default:
		return nil
	}
	if c.err != nil {
		return nil
	}
	return l.postOf(c, pid)
}
