package store

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/agora/agora/internal/rdb"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Reports. A signed-in user reports a post or a comment to the moderators of the post's groups
// (the site admins for a post in no group); a moderator of one of those groups, or an admin,
// resolves it.
//
// A report is written in two steps on two slots, in this order:
//
//  1. report_reserve.lua on the reporter's slot counts it against their limit (MaxOpenReports,
//     checked and taken in the same script, so that concurrent reports cannot overrun it) and
//     records it there: userReports(uid) holds the id scored by when it stops counting
//     (ReportLimitWindow after it was made: per-member expiry, exact at the time of each check),
//     userReportTargets(uid) the report itself under its target.
//  2. report_write.lua on {reports} writes the report: its entry, the reporter's open report of
//     the target (reportBy), the target's open count (reportCounts), and the lists — every
//     report's and each of its groups', open and any.
//
// The limit must be taken before the report exists, so the reporter's side goes first. A report
// cut off after step 1 is finished by its repair job (repair:report:<uid>:<target>), which runs
// step 2 from the record step 1 left: no report is lost, and none counts twice, since the
// reporter's side holds one entry per target. Ids come from reportSeq; step 1 binds the target
// to the id of the first attempt, so a retried request reuses it (ids may skip numbers).
//
// A report belongs to its groups as they were when it was made: it records each group's
// generation (the info's "gen", raised by every createGroup of the name: group_create.lua), and
// the lists of a group are kept per generation (reportScope). A group made by posts that lost
// every post no longer exists and may be made anew by anyone with createGroup; its reports — who
// reported what, and why — then stay with the admins: the new group's moderators neither list,
// see nor resolve them (the admins do, in the site's list and by id).
//
// Resolving is one script on {reports} (report_resolve.lua), which records the action in the
// moderation outbox of {reports} (see moderation.go), then a derived write on the reporter's slot
// (report_release.lua) that frees their slot, then the moderation log of what the outbox holds;
// both are repaired by repair:resolve:<id> if cut off.

// MaxReportReasonRunes bounds a report's reason.
const MaxReportReasonRunes = 500

// ReportLimitWindow is how long an open report counts against its reporter's MaxOpenReports at
// most: a report the moderators leave open frees its slot after 30 days.
const ReportLimitWindow = 30 * 24 * time.Hour

// MaxReportGroupsScanned is how many of the groups holding reports, the most recently reported
// first, Query.reports checks for a moderator who names no group; MaxReportGroupsMerged is how
// many of those the viewer moderates it merges. A moderator of a group beyond them lists its
// reports by naming it.
const (
	MaxReportGroupsScanned = 500
	MaxReportGroupsMerged  = 100
)

// reportRecord is a report as {reports}:entries stores it, and as the reporter's side records it
// (with its id). Numbers are strings, so that the scripts' JSON keeps them exact. Author is who
// wrote what was reported, when it was reported: the one moderator who may neither resolve the
// report nor learn who made it, even once they deleted it; "" in reports made before it was
// recorded (then read from the post or comment, while it exists).
type reportRecord struct {
	ID         string `json:"id,omitempty"`
	Post       string `json:"post"`              // global id
	Comment    string `json:"comment,omitempty"` // global id; "" for a post
	Reporter   string `json:"reporter"`
	Author     string `json:"author,omitempty"` // who wrote what was reported, when reported: see below
	Reason     string `json:"reason"`
	At         int64  `json:"at,string"`
	Groups     string `json:"groups"`         // the post's groups when reported, comma-separated
	Gens       string `json:"gens,omitempty"` // their generations, comma-separated; "" when all 0
	Resolved   bool   `json:"resolved"`
	ResolvedAt int64  `json:"resolvedAt,string,omitempty"`
	ResolvedBy string `json:"resolvedBy,omitempty"`
	Resolution string `json:"resolution,omitempty"` // "actioned" or "dismissed" (reportdismissals.go)
	Ver        int64  `json:"ver,string"`           // 1 when open, 2 once resolved
}

// target is the global id of what the report is about.
func (r *reportRecord) target() string {
	if r.Comment != "" {
		return r.Comment
	}
	return r.Post
}

// kind names what the report is about: "post" or "comment".
func (r *reportRecord) kind() string {
	if r.Comment != "" {
		return "comment"
	}
	return "post"
}

// reportedAuthor returns the author of what the report is about, as the report recorded it;
// for a report made before authors were recorded, as the post or comment says now: "" when it is
// gone, or its author's account was deleted.
func (s *Store) reportedAuthor(ctx context.Context, rec *reportRecord) (UserKey, error) {
	return s.NewLoader().reportedAuthor(ctx, rec)
}

// reportedAuthor is Store.reportedAuthor through the loader's reads.
func (l *Loader) reportedAuthor(ctx context.Context, rec *reportRecord) (UserKey, error) {
	if rec.Author != "" {
		return UserKey(rec.Author), nil
	}
	if rec.Comment != "" {
		c, err := l.Comment(ctx, rec.Comment)
		if err != nil || c == nil {
			return "", err
		}
		return c.Author, nil
	}
	p, err := l.Post(ctx, rec.Post)
	if err != nil || p == nil {
		return "", err
	}
	return p.Author, nil
}

// groups are the report's groups.
func (r *reportRecord) groups() []string { return splitGroups(r.Groups) }

// gens are the generations of the report's groups when it was made, one per group.
func (r *reportRecord) gens() []int64 {
	out := make([]int64, len(r.groups()))
	for i, g := range splitGroups(r.Gens) {
		if i < len(out) {
			out[i] = atoi64(g)
		}
	}
	return out
}

// setGens records the generations of the report's groups.
func (r *reportRecord) setGens(gens []int64) {
	r.Gens = ""
	if !slices.ContainsFunc(gens, func(g int64) bool { return g != 0 }) {
		return
	}
	parts := make([]string, len(gens))
	for i, g := range gens {
		parts[i] = strconv.FormatInt(g, 10)
	}
	r.Gens = strings.Join(parts, ",")
}

// scopes are the report scopes (reportScope) of the report's groups.
func (r *reportRecord) scopes() []string {
	groups, gens := r.groups(), r.gens()
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = reportScope(g, gens[i])
	}
	return out
}

// reportScope names the reports of group g in its generation gen, in the keys of its lists and
// in {reports}:groups: the name for generation 0 (a group made by posts, or before generations
// were kept), else "<name>#<gen>" ('#' is in no group name).
func reportScope(g string, gen int64) string {
	if gen == 0 {
		return g
	}
	return g + "#" + strconv.FormatInt(gen, 10)
}

// parseReportScope splits a report scope into its group and generation.
func parseReportScope(scope string) (g string, gen int64) {
	g, n, _ := strings.Cut(scope, "#")
	return g, atoi64(n)
}

// sameGen reports whether the generation now of the report's i-th group (cur[i]) is the one the
// report recorded: a group's moderators act on its reports only while it is the group they were
// filed in.
func (r *reportRecord) sameGen(i int, cur []int64) bool {
	gens := r.gens()
	return i < len(gens) && i < len(cur) && gens[i] == cur[i]
}

// parseReportRecord decodes a stored report; nil when it is not one.
func parseReportRecord(raw string) *reportRecord {
	if raw == "" {
		return nil
	}
	var r reportRecord
	if err := json.Unmarshal([]byte(raw), &r); err != nil || r.Reporter == "" {
		return nil
	}
	return &r
}

// report builds the Report of a record with id id.
func (r *reportRecord) report(id string) *Report {
	out := &Report{ID: reportID(id), PostID: r.Post, CommentID: r.Comment, Reporter: UserKey(r.Reporter),
		Reason: r.Reason, CreatedAt: fromMillis(r.At), Resolved: r.Resolved, ResolvedBy: UserKey(r.ResolvedBy),
		GroupNames: r.groups(), author: UserKey(r.Author)}
	if r.Resolved {
		t := fromMillis(r.ResolvedAt)
		out.ResolvedAt = &t
		res := ReportActioned
		if r.Resolution == resolutionDismissed {
			res = ReportDismissed
		}
		out.Resolution = &res
	}
	return out
}

func reportID(id string) string { return TypeReport + ":" + id }

// ReportPost reports the post id to its groups' moderators.
func (s *Store) ReportPost(ctx context.Context, user UserKey, id, reason string) (*Report, error) {
	if _, err := PostKey(id); err != nil {
		return nil, err
	}
	return s.report(ctx, user, id, reason)
}

// ReportComment reports the comment id to its post's groups' moderators.
func (s *Store) ReportComment(ctx context.Context, user UserKey, id, reason string) (*Report, error) {
	if _, _, err := CommentKey(id); err != nil {
		return nil, err
	}
	return s.report(ctx, user, id, reason)
}

// report files user's report of the post or comment target. Reporting a target again while the
// user's report of it is open returns that report. A user banned from one of the post's groups
// is KindBanned.
func (s *Store) report(ctx context.Context, user UserKey, target, reason string) (*Report, error) {
	if user == "" {
		return nil, &Error{Kind: KindUnauthenticated, Msg: "sign in to report"}
	}
	if err := checkText("reason", reason, 1, MaxReportReasonRunes); err != nil {
		return nil, err
	}
	rec, err := s.reportTarget(ctx, user, target)
	if err != nil {
		return nil, err
	}
	// Reports are in a group ban's scope: a user banned from one of the post's groups may not
	// report in it (nor flood its moderators with reports).
	n, err := s.allowGuarded(ctx, string(user), repairReport+":"+string(user)+":"+target, nil, &writeGuard{reporting: true}, inGroups(rec.groups()...))
	if err != nil {
		return nil, err
	}
	if reason, err = s.filterText("reason", reason); err != nil {
		return nil, err
	}
	rec.Reporter, rec.Reason, rec.At, rec.Ver = string(user), reason, s.now().UnixMilli(), 1
	r, err := s.fileReport(ctx, rec, "")
	if err != nil {
		return nil, err
	}
	s.settled(ctx, n)
	return r, nil
}

// reportTarget reads what target names and returns a record of it: its post, its comment and the
// post's groups. It fails with KindNotFound when the target does not exist or user may not see it
// (deleted, or removed and user is neither its author nor a moderator of its groups).
func (s *Store) reportTarget(ctx context.Context, user UserKey, target string) (reportRecord, error) {
	l := s.NewLoader()
	var p *Post
	var c *Comment
	var err error
	if strings.HasPrefix(target, TypeComment+":") {
		if c, err = l.Comment(ctx, target); err != nil {
			return reportRecord{}, err
		}
		if c == nil || c.Deleted {
			return reportRecord{}, notFoundf("no such comment")
		}
		p, err = l.Post(ctx, c.PostID)
	} else {
		p, err = l.Post(ctx, target)
	}
	if err != nil {
		return reportRecord{}, err
	}
	if p == nil {
		return reportRecord{}, notFoundf("no such post")
	}
	removed, author := p.Removed, p.Author
	if c != nil {
		removed, author = p.Removed || c.Removed, c.Author
	}
	if removed && author != user {
		if ok, err := l.moderatesAny(ctx, user, p.GroupNames); err != nil || !ok {
			if err == nil {
				err = notFoundf("no such %s", strings.SplitN(target, ":", 2)[0])
			}
			return reportRecord{}, err
		}
	}
	rec := reportRecord{Post: p.ID, Author: string(author), Groups: strings.Join(p.GroupNames, ",")}
	if c != nil {
		rec.Comment = c.ID
	}
	_, gens, err := l.modsAndGens(ctx, "", p.GroupNames)
	if err != nil {
		return reportRecord{}, err
	}
	rec.setGens(gens)
	return rec, nil
}

// fileReport runs both steps of a report (see above) and returns the report filed: rec, or the
// reporter's report of the same target already open. stale is an id a step 2 found taken.
func (s *Store) fileReport(ctx context.Context, rec reportRecord, stale string) (*Report, error) {
	for range maxIDAttempts {
		seq, err := s.cmd().Incr(ctx, s.k.reportSeq()).Result()
		if err != nil {
			return nil, fmt.Errorf("allocate report id: %w", rdb.StorageFull(err))
		}
		rec.ID = strconv.FormatInt(seq, 10)
		raw, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		uid := rec.Reporter
		v, err := s.run(ctx, "report_reserve", []string{s.k.userReports(uid), s.k.userReportTargets(uid), s.k.userReportsFiled(uid)},
			s.now().UnixMilli(), fromMillis(rec.At).Add(ReportLimitWindow).UnixMilli(), MaxOpenReports,
			rec.target(), string(raw), rec.ID, stale, rec.At)
		if err != nil {
			return nil, err
		}
		stored, err := replyString("report_reserve", v)
		if err != nil {
			return nil, err
		}
		pending := parseReportRecord(stored)
		if pending == nil {
			return nil, fmt.Errorf("report_reserve: unreadable report record %q", truncate(stored, 80))
		}
		r, status, err := s.writeReport(ctx, pending)
		switch {
		case err != nil:
			return nil, err
		case status == "resolved":
			stale = ""
		case status == "taken":
			stale = pending.ID
		default:
			return r, nil
		}
	}
	return nil, fmt.Errorf("allocate report id: %d ids in a row were taken", maxIDAttempts)
}

// writeReport runs step 2 of the report the reporter's side recorded, and returns the status
// report_write replied and the report filed: the recorded one ("new", "open"), or the reporter's
// other open report of the target ("other"). For "other" and "resolved" (the recorded report was
// resolved meanwhile: the caller files anew) it takes the recorded report out of the reporter's
// side; for "taken" (no report) the reporter's side keeps it, to be given the next id.
func (s *Store) writeReport(ctx context.Context, rec *reportRecord) (r *Report, status string, err error) {
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, "", fmt.Errorf("report: %w", err)
	}
	scopes := rec.scopes()
	keys := []string{s.k.reportEntries(), s.k.reportBy(), s.k.reportCounts(), s.k.reportGroups()}
	for _, g := range append([]string{""}, scopes...) {
		keys = append(keys, s.k.reportList(g, true), s.k.reportList(g, false))
	}
	args := []any{rec.ID, string(raw), rec.Reporter, rec.target(), rec.At}
	for _, g := range scopes {
		args = append(args, g)
	}
	v, err := s.run(ctx, "report_write", keys, args...)
	if err != nil {
		return nil, "", err
	}
	arr, err := replyArray("report_write", v, 1)
	if err != nil {
		return nil, "", err
	}
	if status, err = replyWord("report_write", arr[0], "taken", "new", "open", "other", "resolved"); err != nil {
		return nil, "", err
	}
	if status == "taken" {
		return nil, status, nil
	}
	// {status, id, the report's record}
	if arr, err = replyArrayLen("report_write", v, 3); err != nil {
		return nil, "", err
	}
	id, err := replyString("report_write", arr[1])
	if err != nil {
		return nil, "", err
	}
	stored, err := replyString("report_write", arr[2])
	if err != nil {
		return nil, "", err
	}
	got := parseReportRecord(stored)
	if got == nil {
		return nil, "", fmt.Errorf("report_write: unreadable record of report %s: %q", id, truncate(stored, 80))
	}
	if status == "other" || status == "resolved" {
		err = s.releaseReport(ctx, rec.Reporter, rec.ID, rec.target())
	}
	return got.report(id), status, err
}

// releaseReport takes a report out of its reporter's open reports.
func (s *Store) releaseReport(ctx context.Context, uid, id, target string) error {
	_, err := s.run(ctx, "report_release", []string{s.k.userReports(uid), s.k.userReportTargets(uid)}, id, target)
	if err != nil {
		return fmt.Errorf("release report %s of %s: %w", id, uid, err)
	}
	return nil
}

// repairReport finishes the report of target by uid that the reporter's side recorded, if any:
// it writes it in {reports}, or takes it out of the reporter's side when it was resolved or
// another report of the target is open.
func (s *Store) repairReport(ctx context.Context, uid, target string) error {
	v, err := s.cmd().HGet(ctx, s.k.userReportTargets(uid), "t:"+target).Result()
	if err != nil {
		if isNil(err) {
			return nil
		}
		return fmt.Errorf("repair report of %s by %s: %w", target, uid, err)
	}
	rec := parseReportRecord(v)
	if rec == nil {
		return nil
	}
	_, status, err := s.writeReport(ctx, rec)
	if err != nil || status != "taken" {
		return err
	}
	if _, err := s.fileReport(ctx, *rec, rec.ID); err != nil && !IsKind(err, KindLimitReached) {
		return err
	}
	return nil
}

// ResolveReport marks a report resolved, as actor: a moderator of one of its groups or an admin.
// Resolving a resolved report changes nothing and returns it.
func (s *Store) ResolveReport(ctx context.Context, actor UserKey, id string) (*Report, error) {
	return s.ResolveReportAs(ctx, actor, id, ReportActioned)
}

// ResolveReportAs is ResolveReport with how the report was resolved: ReportActioned, or
// ReportDismissed, which counts against its reporter (reportdismissals.go). The first resolution
// stays: resolving again changes nothing. A moderator may not resolve a report of their own post
// or comment (KindForbidden); an admin may.
func (s *Store) ResolveReportAs(ctx context.Context, actor UserKey, id string, resolution ReportResolution) (*Report, error) {
	res, err := resolution.stored()
	if err != nil {
		return nil, err
	}
	key, err := parseTypedID(id, TypeReport)
	if err != nil {
		return nil, err
	}
	if actor == "" {
		return nil, &Error{Kind: KindUnauthenticated, Msg: "sign in to moderate"}
	}
	recs, err := s.NewLoader().reportRecords(ctx, []string{key})
	if err != nil {
		return nil, err
	}
	rec := recs[0]
	if rec == nil {
		return nil, notFoundf("no such report")
	}
	groups := rec.groups()
	if !s.IsAdmin(actor) {
		// Nobody judges their own case: a moderator's dismissal of a report of their own post or
		// comment would close it for the other moderators and count against its reporter.
		author, err := s.reportedAuthor(ctx, rec)
		if err != nil {
			return nil, err
		}
		if author == actor {
			return nil, &Error{Kind: KindForbidden, Msg: "the report is about your own " + rec.kind() + ": the other moderators or the site admins resolve it"}
		}
	}
	// The reports of a group that died and was made anew are the admins' (see above).
	if !s.IsAdmin(actor) {
		_, gens, err := s.NewLoader().modsAndGens(ctx, "", groups)
		if err != nil {
			return nil, err
		}
		for i := range groups {
			if !rec.sameGen(i, gens) {
				return nil, &Error{Kind: KindForbidden, Msg: "the report was made in an earlier group named " + groups[i] + "; only the site admins may resolve it"}
			}
		}
	}
	// A report goes to the moderators of all its groups: one who moderates only some of them
	// (maybe a group of the post's own author) may not close it for the others.
	via, err := s.authorityOverAll(ctx, actor, groups)
	if err != nil {
		return nil, err
	}
	if via == "*" {
		via = ""
		if len(groups) > 0 {
			via = groups[0]
		}
	}
	// A moderator banned from one of the report's groups cannot resolve it, as they cannot act
	// on its post.
	n, err := s.allowWrite(ctx, string(actor), repairResolve+":"+key, inGroups(groups...))
	if err != nil {
		return nil, err
	}
	v, err := s.run(ctx, "report_resolve", s.resolveKeys(rec.scopes()), key, string(actor), s.now().UnixMilli(), via, res)
	if err != nil {
		return nil, err
	}
	arr, err := replyArrayLen("report_resolve", v, 3)
	if err != nil {
		return nil, err
	}
	raw, err := replyString("report_resolve", arr[2])
	if err != nil {
		return nil, err
	}
	if rec = parseReportRecord(raw); rec == nil {
		return nil, fmt.Errorf("report_resolve: unreadable record of report %s: %q", key, truncate(raw, 80))
	}
	if err := s.releaseResolved(ctx, key, rec); err != nil {
		return nil, err
	}
	entries, err := replyHash("report_resolve", arr[1])
	if err != nil {
		return nil, err
	}
	if err := s.flushModLog(ctx, s.k.reportModOutbox(), entries); err != nil {
		return nil, err
	}
	s.settled(ctx, n)
	return rec.report(key), nil
}

// resolveKeys are the keys of report_resolve.lua for a report in the report scopes scopes.
func (s *Store) resolveKeys(scopes []string) []string {
	keys := []string{s.k.reportEntries(), s.k.reportBy(), s.k.reportCounts(), s.k.reportModOutbox()}
	for _, g := range append([]string{""}, scopes...) {
		keys = append(keys, s.k.reportList(g, true))
	}
	return keys
}

// releaseResolved takes a resolved report out of its reporter's open reports and, when it was
// dismissed, counts the dismissal against the reporter (reportdismissals.go).
func (s *Store) releaseResolved(ctx context.Context, id string, rec *reportRecord) error {
	if rec == nil || !rec.Resolved {
		return nil
	}
	if err := s.releaseReport(ctx, rec.Reporter, id, rec.target()); err != nil {
		return err
	}
	return s.recordDismissal(ctx, id, rec)
}

// repairResolve finishes a resolve cut off after its atomic step: the reporter's side, and the
// log of what the outbox of {reports} holds.
func (s *Store) repairResolve(ctx context.Context, id string) error {
	recs, err := s.NewLoader().reportRecords(ctx, []string{id})
	if err != nil {
		return err
	}
	if err := s.releaseResolved(ctx, id, recs[0]); err != nil {
		return err
	}
	return s.flushModOutbox(ctx, s.k.reportModOutbox())
}
