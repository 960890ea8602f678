package store

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// The export of an account (GDPR Art. 20): one JSON document of everything the account owns,
// written as it is read. Every list is read a page of ExportPage members at a time — the members
// of a sorted set, then their records in one pipeline — encoded, and flushed to the client before
// the next page is read, so that the memory an export holds does not grow with the account.
//
// Lists are paged by position (score, member), oldest first: a page starts at the last score seen,
// skipping the members of that score already written, so that items added or removed while the
// export runs move no other item in or out of it.
//
// The votes the account cast come from its vote log (votes_log.go), each with the vote the item
// holds now. What a moderator removed has left the lists: the removed posts and comments are
// found in the lists' guards (removedPosts, removedComments), the reports filed in the
// reporter's history (userReportsFiled), and a removal's reason is on the MOD_ACTION notice that
// told the author. What is not exported: when each session started (a session keeps only its
// expiry; its last use follows from it), and who resolved a report.

// ExportPage is how many members of a list one page of an export reads.
const ExportPage = 200

// ExportFormat names the export's document format, written as its "format" field.
const ExportFormat = "agora-export/1"

// exportWindow is the window of the limit on exports (Options.ExportsPerDay).
const exportWindow = 24 * time.Hour

// Flusher is a writer that can push what it buffered to its client (an HTTP response through
// http.ResponseController). Export flushes a Flusher after every page.
type Flusher interface {
	Flush() error
}

// Export writes to w the export of the account user as one JSON document (see docs/API.md,
// "Exporting your account"): the profile, posts, scheduled posts, comments, removed posts and
// comments, reports filed, saved posts, follows, followers, blocks, group memberships,
// notifications, private messages and sessions, ending with "complete":
// true. token is the session the request came with, marked "current" among the sessions; no
// token or digest is written.
//
// An account may export Options.ExportsPerDay times per 24 hours (KindRateLimited beyond,
// with the wait); nothing is written to w before that check and the profile's read have passed,
// so that an error returned while nothing was written can still be answered as an error. An
// error after that leaves the document unfinished (no "complete"): the caller must not present it
// as whole.
func (s *Store) Export(ctx context.Context, user UserKey, token string, w io.Writer) error {
	uid := string(user)
	if s.opts.WriteLimit >= 0 {
		l := limit{"exports", s.opts.ExportsPerDay, exportWindow}
		if err := s.allow(ctx, s.k.userExports(uid), l, true); err != nil {
			return err
		}
	}
	profile, err := s.exportProfile(ctx, uid)
	if err != nil {
		return err
	}
	addr, verified, err := s.Email(ctx, UserKey(uid))
	if err != nil {
		return err
	}
	_, current, _ := parseSession(token)
	e := &exporter{s: s, uid: uid, out: w, bw: bufio.NewWriterSize(w, 32<<10)}
	e.enc = json.NewEncoder(e.bw)
	e.enc.SetEscapeHTML(false)
	e.raw(`{"format":`)
	e.value(ExportFormat)
	e.raw(`,"exportedAt":`)
	e.value(s.now().UTC())
	e.raw(`,"user":`)
	e.value(profile)
	// The account's email address, null when it has none.
	e.raw(`,"email":`)
	if addr == "" {
		e.raw(`null`)
	} else {
		e.value(struct {
			Address  string `json:"address"`
			Verified bool   `json:"verified"`
		}{addr, verified})
	}
	if e.err != nil {
		return fmt.Errorf("export %s: %w", uid, e.err)
	}
	sections := []struct {
		name  string
		write func(context.Context) error
	}{
		{"posts", e.posts},
		{"scheduledPosts", e.scheduled},
		{"comments", e.comments},
		{"removedPosts", e.removedPosts},
		{"removedComments", e.removedComments},
		{"reports", e.reports},
		{"votes", e.votes},
		{"savedPosts", e.zlist(s.k.saved(uid), "postId", "savedAt", postID)},
		{"following", e.zlist(s.k.following(uid), "userId", "since", userID)},
		{"followers", e.zlist(s.k.followers(uid), "userId", "since", userID)},
		{"blocks", e.zlist(s.k.blocks(uid), "userId", "since", userID)},
		{"groups", e.zlist(s.k.userGroups(uid), "groupId", "joinedAt", groupID)},
		{"notifications", e.notifications},
		{"readMarks", e.readMarks},
		{"watches", e.watches},
		{"messages", e.messages},
		{"sessions", func(ctx context.Context) error { return e.sessions(ctx, current) }},
	}
	for _, sec := range sections {
		e.raw(`,"` + sec.name + `":[`)
		e.n = 0
		if err := sec.write(ctx); err != nil {
			return fmt.Errorf("export %s: %s: %w", uid, sec.name, err)
		}
		e.raw("]")
	}
	e.raw(`,"complete":true}` + "\n")
	if err := e.flush(); err != nil {
		return fmt.Errorf("export %s: %w", uid, err)
	}
	return nil
}

// exportUser is the profile of an export.
type exportUser struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
	Bio       *string   `json:"bio"`
	AvatarURL *string   `json:"avatarUrl"`
	Admin     bool      `json:"admin"`
	Karma     int64     `json:"karma"`
}

// exportProfile reads the account's profile and karma in one round trip; KindNotFound when the
// account does not exist.
func (s *Store) exportProfile(ctx context.Context, uid string) (*exportUser, error) {
	userKey, karmaKey := s.k.user(uid), s.k.karma(uid)
	var u *rdb.SliceCmd
	var karma *rdb.StringCmd
	err := s.pipeline(ctx, []op{
		{key: userKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			u = p.HMGet(ctx, userKey, userFields...)
			return u, nil
		}},
		{key: karmaKey, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			karma = p.HGet(ctx, karmaKey, "total")
			return karma, nil
		}},
	}, false)
	if err == nil {
		err = rdb.FirstErr([2]rdb.Cmder{u, karma})
	}
	if err != nil {
		return nil, fmt.Errorf("export %s: read the profile: %w", uid, err)
	}
	v := strs(u.Val())
	if v[0] == "" {
		return nil, notFoundf("no user %q", uid)
	}
	p := s.userFromFields(uid, v)
	return &exportUser{ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt, Bio: p.Bio, AvatarURL: p.AvatarURL,
		Admin: p.Admin, Karma: atoi64(karma.Val())}, nil
}

// exporter writes one export: JSON text into bw, flushed to out page by page. The first error
// of a write sticks in err, and makes every later write a no-op.
type exporter struct {
	s   *Store
	uid string
	out io.Writer
	bw  *bufio.Writer
	enc *json.Encoder
	n   int // items written in the current list
	err error
}

// raw writes JSON text as is.
func (e *exporter) raw(text string) {
	if e.err == nil {
		_, e.err = e.bw.WriteString(text)
	}
}

// value writes v as JSON (followed by a newline, which JSON allows between tokens).
func (e *exporter) value(v any) {
	if e.err == nil {
		e.err = e.enc.Encode(v)
	}
}

// item writes v as the next item of the current list.
func (e *exporter) item(v any) {
	if e.n > 0 {
		e.raw(",")
	}
	e.n++
	e.value(v)
}

// flush sends what was written to out, and out's buffer to its client when it has one.
func (e *exporter) flush() error {
	if e.err != nil {
		return e.err
	}
	if e.err = e.bw.Flush(); e.err != nil {
		return e.err
	}
	if f, ok := e.out.(Flusher); ok {
		e.err = f.Flush()
	}
	return e.err
}

// zpages calls page with the members of the sorted set key and their scores, ExportPage at a
// time, lowest score first, and flushes the export after each page.
func (e *exporter) zpages(ctx context.Context, key string, page func(ctx context.Context, zs []rdb.Z) error) error {
	return e.zpagesOf(ctx, page, key)
}

// zpagesOf is zpages of several sorted sets merged: the two parts of a post list
// (nsfw_lists.go), lowest score first, ties by member.
func (e *exporter) zpagesOf(ctx context.Context, page func(ctx context.Context, zs []rdb.Z) error, keys ...string) error {
	rs := make([]*zreader, len(keys))
	for i, k := range keys {
		rs[i] = &zreader{e: e, key: k}
	}
	out := make([]rdb.Z, 0, ExportPage)
	for {
		var next *zreader // the reader whose head comes first
		for _, r := range rs {
			if err := r.fill(ctx); err != nil {
				return err
			}
			if len(r.buf) > 0 && (next == nil || zBefore(r.buf[0], next.buf[0])) {
				next = r
			}
		}
		if next != nil {
			out, next.buf = append(out, next.buf[0]), next.buf[1:]
		}
		if len(out) == ExportPage || (next == nil && len(out) > 0) {
			if err := page(ctx, out); err != nil {
				return err
			}
			if err := e.flush(); err != nil {
				return err
			}
			out = make([]rdb.Z, 0, ExportPage)
		}
		if next == nil {
			return nil
		}
	}
}

// zBefore orders sorted set entries as ZRANGE does: by score, ties by member bytes.
func zBefore(a, b rdb.Z) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return str(a.Member) < str(b.Member)
}

// zreader reads a sorted set ExportPage members at a time, lowest score first, for zpages. Each
// page after the first goes on from the last member read, its score and itself, as every list's
// cursor does (see cursor, page.lua): members that share a score (a millisecond) and come or go
// among the ties between two pages neither skip nor repeat a member, as an offset into the ties
// would.
type zreader struct {
	e     *exporter
	key   string
	after cursor // the last member read; none before the first page
	buf   []rdb.Z
	ended bool
}

// fill reads the next page when the last one is used up.
func (r *zreader) fill(ctx context.Context) error {
	if len(r.buf) > 0 || r.ended {
		return nil
	}
	rp, err := r.e.s.NewLoader().page(ctx, r.key, false, span{n: ExportPage, after: r.after})
	if err != nil {
		return fmt.Errorf("read %s: %w", r.key, err)
	}
	if len(rp.scores) < len(rp.members) {
		return fmt.Errorf("read %s: a page without its scores", r.key)
	}
	r.buf = make([]rdb.Z, len(rp.members))
	for i, m := range rp.members {
		sc, err := strconv.ParseFloat(rp.scores[i], 64)
		if err != nil {
			return fmt.Errorf("read %s: the score %q of %q: %w", r.key, rp.scores[i], m, err)
		}
		r.buf[i] = rdb.Z{Member: m, Score: sc}
	}
	r.ended = !rp.hasNext
	if n := len(rp.members); n > 0 {
		r.after = cursor{score: rp.scores[n-1], member: rp.members[n-1]}
	}
	return nil
}

// zlist returns the writer of a list of the members of the sorted set key, each written as
// {idField: id(member), atField: its score as a time}.
func (e *exporter) zlist(key, idField, atField string, id func(string) string) func(context.Context) error {
	return func(ctx context.Context) error {
		return e.zpages(ctx, key, func(_ context.Context, zs []rdb.Z) error {
			for _, z := range zs {
				e.item(map[string]any{idField: id(str(z.Member)), atField: fromMillis(int64(z.Score))})
			}
			return e.err
		})
	}
}

// exportPost is a post of an export: what its author wrote and what became of it.
type exportPost struct {
	ID           string     `json:"id"`
	Title        string     `json:"title"`
	Body         string     `json:"body"`
	URL          *string    `json:"url"`
	Groups       []string   `json:"groups"`
	CreatedAt    time.Time  `json:"createdAt"`
	EditedAt     *time.Time `json:"editedAt"`
	PublishAt    *time.Time `json:"publishAt,omitempty"`
	Upvotes      int        `json:"upvotes"`
	Downvotes    int        `json:"downvotes"`
	CommentCount int        `json:"commentCount"`
	Removed      bool       `json:"removed"`
	Locked       bool       `json:"locked"`
}

func newExportPost(p *Post) exportPost {
	groups := p.GroupNames
	if groups == nil {
		groups = []string{}
	}
	return exportPost{ID: p.ID, Title: p.Title, Body: p.Body, URL: p.URL, Groups: groups, CreatedAt: p.CreatedAt,
		EditedAt: p.EditedAt, PublishAt: p.PublishAt, Upvotes: p.Upvotes, Downvotes: p.Downvotes,
		CommentCount: p.CommentCount, Removed: p.Removed, Locked: p.Locked}
}

// posts writes the account's published posts (its post list), oldest first.
func (e *exporter) posts(ctx context.Context) error {
	return e.zpagesOf(ctx, func(ctx context.Context, zs []rdb.Z) error {
		pids := make([]string, len(zs))
		for i, z := range zs {
			pids[i] = str(z.Member)
		}
		ps, err := e.s.postRecords(ctx, pids)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p == nil || p.Author != UserKey(e.uid) {
				continue // deleted since it was listed
			}
			e.item(newExportPost(p))
		}
		return e.err
	}, e.s.k.userPosts(e.uid), e.s.k.userPostsNSFW(e.uid))
}

// postRecords reads posts pids (their hashes and texts) in one pipeline; a post that no longer
// exists is nil at its index.
func (s *Store) postRecords(ctx context.Context, pids []string) ([]*Post, error) {
	cmds, texts := make([]*rdb.SliceCmd, len(pids)), make([]*rdb.SliceCmd, len(pids))
	ops := make([]op, len(pids))
	for i, pid := range pids {
		key, tk := s.k.post(pid), s.k.postTexts(pid)
		ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cmds[i] = p.HMGet(ctx, key, postFields...)
			texts[i] = p.HMGet(ctx, tk, postTextBody) // as postTextArgs
			return cmds[i], texts[i]
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return nil, fmt.Errorf("read posts: %w", err)
	}
	out := make([]*Post, len(pids))
	for i, pid := range pids {
		if err := rdb.FirstErr([2]rdb.Cmder{cmds[i], texts[i]}); err != nil {
			return nil, fmt.Errorf("read post %s: %w", pid, err)
		}
		v := strs(cmds[i].Val())
		mergePostTexts(v, strs(texts[i].Val()))
		out[i] = s.postFromFields(pid, v)
	}
	return out, nil
}

// removedPosts writes the account's posts that a moderator removed, which have left its post
// list (and every other listing): the walk of removed_content.go finds them in the list's guard.
// In the guard's hash order (HSCAN), each once; the export is flushed after each page.
func (e *exporter) removedPosts(ctx context.Context) error {
	written := map[string]bool{} // HSCAN may return a member twice; removed posts are few
	for cursor := uint64(0); ; {
		next, err := e.s.removedPosts(ctx, e.uid, cursor, func(ctx context.Context, _ []string, ps []*Post) error {
			for _, p := range ps {
				if !written[p.ID] {
					written[p.ID] = true
					e.item(newExportPost(p))
				}
			}
			return e.flush()
		})
		if err != nil {
			return err
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// scheduled writes the account's scheduled posts still pending, in their drafts' hash order.
// The drafts are few (Options.MaxScheduledPosts), and read with HSCAN all the same.
func (e *exporter) scheduled(ctx context.Context) error {
	key := e.s.k.drafts(e.uid)
	now := e.s.now()
	var cursor uint64
	for {
		var cmd *rdb.ScanCmd
		err := e.s.pipeline(ctx, []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cmd = p.HScan(ctx, key, cursor, "", ExportPage)
			return cmd, nil
		}}}, false)
		if err == nil {
			err = cmd.Err()
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		kv, next := cmd.Val()
		for i := 0; i+1 < len(kv); i += 2 {
			d, err := parseDraft(kv[i+1])
			if err != nil {
				return err
			}
			if p := d.post(kv[i], UserKey(e.uid), e.s.opts.VotingWindow); !d.Taken && p.PublishAt.After(now) {
				e.item(newExportPost(p))
			}
		}
		if err := e.flush(); err != nil {
			return err
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// exportComment is a comment of an export.
type exportComment struct {
	ID        string     `json:"id"`
	PostID    string     `json:"postId"`
	ParentID  *string    `json:"parentId"`
	Text      string     `json:"text"`
	CreatedAt time.Time  `json:"createdAt"`
	EditedAt  *time.Time `json:"editedAt"`
	Upvotes   int        `json:"upvotes"`
	Downvotes int        `json:"downvotes"`
	Removed   bool       `json:"removed"`
}

// comments writes the account's live comments (its comment list), oldest first.
func (e *exporter) comments(ctx context.Context) error {
	return e.zpages(ctx, e.s.k.userComments(e.uid), func(ctx context.Context, zs []rdb.Z) error {
		members := make([]string, len(zs))
		for i, z := range zs {
			members[i] = str(z.Member)
		}
		cs, err := e.s.commentRecords(ctx, members)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if c == nil || c.Deleted || c.Author != UserKey(e.uid) {
				continue // deleted since it was listed
			}
			e.item(newExportComment(c))
		}
		return e.err
	})
}

func newExportComment(c *Comment) exportComment {
	ec := exportComment{ID: c.ID, PostID: c.PostID, Text: c.Text, CreatedAt: c.CreatedAt, EditedAt: c.EditedAt,
		Upvotes: c.Upvotes, Downvotes: c.Downvotes, Removed: c.Removed}
	if c.ParentID != "" {
		ec.ParentID = &c.ParentID
	}
	return ec
}

// commentRecords reads the comments named by members of a user's comment list ("17:4") with
// their bodies, in one pipeline; a comment that no longer exists is nil at its index.
func (s *Store) commentRecords(ctx context.Context, members []string) ([]*Comment, error) {
	cmds, bodies := make([]*rdb.SliceCmd, len(members)), make([]*rdb.SliceCmd, len(members))
	ops := make([]op, len(members))
	nums := make([][2]string, len(members))
	for i, m := range members {
		pid, short, _ := strings.Cut(m, ":")
		nums[i] = [2]string{pid, padNum(short)}
		key, bk := s.k.comment(pid, nums[i][1]), s.k.commentBodies(pid)
		ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cmds[i], bodies[i] = p.HMGet(ctx, key, commentArgNames(commentFields[:]...)...), p.HMGet(ctx, bk, shortNum(nums[i][1]))
			return cmds[i], bodies[i]
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return nil, fmt.Errorf("read comments: %w", err)
	}
	out := make([]*Comment, len(members))
	for i, m := range members {
		if err := cmds[i].Err(); err != nil {
			return nil, fmt.Errorf("read comment %s: %w", m, err)
		}
		pid, num := nums[i][0], nums[i][1]
		v := commentValues(commentFields[:], strs(cmds[i].Val()))
		if v[2] == "" { // a body in the hash is newer: only a binary of layout 2 writes it there
			v[2] = str(bodies[i].Val()[0])
		}
		out[i] = commentFromFields(pid, postID(pid), num, v)
	}
	return out, nil
}

// removedComments writes the account's comments that a moderator removed, which have left its
// comment list: the walk of removed_content.go finds them in the list's guard. In the guard's
// hash order, each once. A comment on a post a moderator removed is not removed itself: it is in
// comments.
func (e *exporter) removedComments(ctx context.Context) error {
	written := map[string]bool{}
	for cursor := uint64(0); ; {
		next, err := e.s.removedComments(ctx, e.uid, cursor, func(ctx context.Context, _ []string, cs []*Comment) error {
			for _, c := range cs {
				if !written[c.ID] {
					written[c.ID] = true
					e.item(newExportComment(c))
				}
			}
			return e.flush()
		})
		if err != nil {
			return err
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// exportReport is a report the account filed, with what became of it: status OPEN, or how a
// moderator resolved it (ACTIONED, DISMISSED), and when. Who resolved it is not the reporter's.
type exportReport struct {
	ID         string     `json:"id"`
	PostID     string     `json:"postId"`
	CommentID  *string    `json:"commentId"`
	Reason     string     `json:"reason"`
	CreatedAt  time.Time  `json:"createdAt"`
	Status     string     `json:"status"`
	ResolvedAt *time.Time `json:"resolvedAt"`
}

// reports writes the reports the account filed (its history, userReportsFiled), oldest first,
// each as {reports} holds it now; an id whose report was never written, or is another's (an
// attempt that lost its id), is skipped.
func (e *exporter) reports(ctx context.Context) error {
	entries := e.s.k.reportEntries()
	return e.zpages(ctx, e.s.k.userReportsFiled(e.uid), func(ctx context.Context, zs []rdb.Z) error {
		ids := make([]string, len(zs))
		for i, z := range zs {
			ids[i] = str(z.Member)
		}
		var cmd *rdb.SliceCmd
		err := e.s.pipeline(ctx, []op{{key: entries, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cmd = p.HMGet(ctx, entries, ids...)
			return cmd, nil
		}}}, false)
		if err == nil {
			err = cmd.Err()
		}
		if err != nil {
			return fmt.Errorf("read reports: %w", err)
		}
		for i, raw := range strs(cmd.Val()) {
			rec := parseReportRecord(raw)
			if rec == nil || rec.Reporter != e.uid {
				continue
			}
			r := rec.report(ids[i])
			er := exportReport{ID: r.ID, PostID: r.PostID, Reason: r.Reason, CreatedAt: r.CreatedAt, Status: "OPEN",
				ResolvedAt: r.ResolvedAt}
			if r.CommentID != "" {
				er.CommentID = &r.CommentID
			}
			if r.Resolution != nil {
				er.Status = string(*r.Resolution)
			}
			e.item(er)
		}
		return e.err
	})
}

// exportNotification is a notification of an export.
type exportNotification struct {
	ID        string           `json:"id"`
	Kind      NotificationKind `json:"kind"`
	CreatedAt time.Time        `json:"createdAt"`
	Read      bool             `json:"read"`
	ActorID   string           `json:"actorId"`
	PostID    *string          `json:"postId"`
	CommentID *string          `json:"commentId"`
	// ModAction is the moderation log's entry a MOD_ACTION tells of — the moderator's reason of a
	// removal among it — as the notice shows it; absent for the other kinds, and for an entry no
	// longer in the log.
	ModAction *exportModAction `json:"modAction,omitempty"`
}

// exportModAction is the moderation log's entry of a MOD_ACTION notification of an export.
type exportModAction struct {
	ID        string        `json:"id"`
	Action    ModActionKind `json:"action"`
	TargetID  string        `json:"targetId"`
	GroupID   *string       `json:"groupId"`
	Reason    *string       `json:"reason"`
	CreatedAt time.Time     `json:"createdAt"`
}

// modActions reads the moderation log's entries of the MOD_ACTION notifications ns in one round
// trip: the entry of ns[i] at index i, nil for the other kinds and for entries no longer logged.
func (e *exporter) modActions(ctx context.Context, ns []*Notification) ([]*exportModAction, error) {
	out := make([]*exportModAction, len(ns))
	var keys []string
	var at []int
	for i, n := range ns {
		if n != nil && n.ModActionID != "" {
			keys, at = append(keys, strings.TrimPrefix(n.ModActionID, TypeModAction+":")), append(at, i)
		}
	}
	if len(keys) == 0 {
		return out, nil
	}
	entries := e.s.k.modLogEntries()
	var cmd *rdb.SliceCmd
	err := e.s.pipeline(ctx, []op{{key: entries, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		cmd = p.HMGet(ctx, entries, keys...)
		return cmd, nil
	}}}, false)
	if err == nil {
		err = cmd.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("read the moderation log: %w", err)
	}
	for j, raw := range strs(cmd.Val()) {
		a := modActionFromRecord(keys[j], raw)
		if a == nil {
			continue
		}
		ea := &exportModAction{ID: a.ID, Action: a.Action, TargetID: a.TargetID, Reason: a.Reason, CreatedAt: a.CreatedAt}
		if a.Group != "" {
			g := groupID(a.Group)
			ea.GroupID = &g
		}
		out[at[j]] = ea
	}
	return out, nil
}

// notifications writes the account's inbox, oldest first, with each notification's read state,
// which its record holds (noticesRead: an inbox of layout 6, beside the migration, is read whole
// by a script).
func (e *exporter) notifications(ctx context.Context) error {
	l := e.s.NewLoader()
	return e.zpages(ctx, e.s.k.inbox(e.uid), func(ctx context.Context, zs []rdb.Z) error {
		causes := make([]string, len(zs))
		for i, z := range zs {
			causes[i] = str(z.Member)
		}
		ns, err := l.notices(ctx, e.uid, causes)
		if err != nil {
			return fmt.Errorf("read notifications: %w", err)
		}
		acts, err := e.modActions(ctx, ns)
		if err != nil {
			return err
		}
		for i, n := range ns {
			if n == nil {
				continue
			}
			en := exportNotification{ID: n.ID, Kind: n.Kind, CreatedAt: n.CreatedAt, Read: n.Read, ActorID: userID(string(n.Actor)),
				ModAction: acts[i]}
			if n.PostID != "" {
				en.PostID = &n.PostID
			}
			if n.CommentID != "" {
				en.CommentID = &n.CommentID
			}
			e.item(en)
		}
		return e.err
	})
}

// exportSession is a session of an export: never its token nor the token's digest.
type exportSession struct {
	Current    bool      `json:"current"`
	LastUsedAt time.Time `json:"lastUsedAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// sessions writes the account's live sessions, those to expire first first; current is the id
// of the session the export was asked with. A session's expiry is moved to SessionTTL from each
// use, so its last use is its expiry less SessionTTL. A user keeps at most MaxSessions sessions,
// fields of the user's hash: one scan of the hash's session fields, in one call while it is a
// listpack, takes them all.
func (e *exporter) sessions(ctx context.Context, current string) error {
	if e.s.legacySessions.Load() {
		if _, err := e.s.moveUserSessions(ctx, e.uid, nil); err != nil {
			return err
		}
	}
	if e.s.sessionsApart.Load() { // layouts 5 to 7's hash first into the user's (layout_sessions.go)
		if _, err := e.s.run(ctx, "sessions_fold", e.s.sessionKeys(e.uid, ""), e.s.foldSessionsArgs(e.uid, e.s.now().UnixMilli())...); err != nil {
			return fmt.Errorf("read sessions: %w", err)
		}
	}
	stored, err := e.s.userSessions(ctx, e.uid)
	if err != nil {
		return fmt.Errorf("read sessions: %w", err)
	}
	type live struct {
		id  string
		exp int64
	}
	now := e.s.now().UnixMilli()
	var sessions []live
	for id, exp := range stored {
		if exp > now {
			sessions = append(sessions, live{id, exp})
		}
	}
	slices.SortFunc(sessions, func(a, b live) int { return cmp.Or(cmp.Compare(a.exp, b.exp), strings.Compare(a.id, b.id)) })
	for _, l := range sessions {
		exp := fromMillis(l.exp).UTC()
		e.item(exportSession{Current: l.id == current, LastUsedAt: exp.Add(-e.s.opts.SessionTTL), ExpiresAt: exp})
	}
	return e.err
}

// exportReadMark is one read mark of an export: the post marked read and how many of its comments
// had been written then (the post's comment ordinal; see readstate.go).
type exportReadMark struct {
	PostID   string `json:"postId"`
	Comments int64  `json:"commentsWritten"`
}

// readMarks writes the account's read marks (at most Options.ReadMarks: one small hash, read in
// one round trip), by post id.
func (e *exporter) readMarks(ctx context.Context) error {
	marks, err := e.s.cmd().HGetAll(ctx, e.s.k.readMarks(e.uid)).Result()
	if err != nil {
		return fmt.Errorf("read marks: %w", err)
	}
	for _, pid := range slices.Sorted(maps.Keys(marks)) {
		e.item(exportReadMark{PostID: postID(pid), Comments: atoi64(marks[pid])})
	}
	return e.flush()
}
