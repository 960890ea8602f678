package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
)

// Scheduled posts. A post created with a publish time gets its id at once but is not written as
// a post until then: it waits as a draft in its author's aggregate ({u:<author>}:drafts), with
// its id in a sorted set scored by publish time ({u:<author>}:scheduled) that counts the pending
// ones — members past their time expire (seed 003's per-member expiry), so the cap on pending
// posts is exact at any moment without a sweep. A job due at the publish time (publish:<post>)
// then creates the post exactly as CreatePost would have at that moment: created at the publish
// time, in every ranking, group and feed, voting open from then, and announced to postPublished.
//
// Until then only the author sees it (ScheduledPosts, and Loader.ScheduledPost for post(id)); the
// post's hash does not exist, so votes, comments and every list find nothing. Moving a draft
// changes its time in its own script first (the user's slot) and the job's after (the job's
// shard, another slot), and the job only ever moves earlier (jobs.DueBy): so the job is never due
// after the draft's time, however moves interleave — two concurrent moves that each set the job
// to their own time could leave it at the time of the move that lost on the draft, up to 90 days
// late, with the post hidden from its author meanwhile. A job that fires before the draft's time
// finds it later (jobs.Later) and waits for exactly that time, so neither a crash between the two
// steps nor an interleaving can publish early or late. The job takes the draft before it creates
// the post, and a taken draft can be neither moved nor cancelled: a post is published once or not
// at all.

// Bounds of a publish time, from the moment it is set.
const (
	MinScheduleAhead = time.Minute
	MaxScheduleAhead = 90 * 24 * time.Hour
)

// jobPublish is the job that publishes a scheduled post: "<author> <post>".
const jobPublish = "publish"

// draft is a scheduled post as its author's drafts hash keeps it.
type draft struct {
	Title  string `json:"title"`
	Body   string `json:"body,omitempty"`
	URL    string `json:"url,omitempty"`
	Groups string `json:"groups,omitempty"` // comma-separated
	At     string `json:"at"`               // publish time, Unix ms
	Taken  bool   `json:"taken,omitempty"`  // its publish job has begun
	// NSFW and Spoiler are the post's labels (see labels.go).
	NSFW    bool `json:"nsfw,omitempty"`
	Spoiler bool `json:"spoiler,omitempty"`
}

// post returns the draft as the Post its author sees.
func (d *draft) post(pid string, author UserKey, window time.Duration) *Post {
	at := fromMillis(atoi64(d.At))
	p := &Post{ID: postID(pid), Title: d.Title, Body: d.Body, Author: author, CreatedAt: at,
		VotingClosesAt: at.Add(window), GroupNames: splitGroups(d.Groups), PublishAt: &at, NSFW: d.NSFW, Spoiler: d.Spoiler}
	if d.URL != "" {
		p.URL = &d.URL
	}
	return p
}

func parseDraft(raw string) (*draft, error) {
	var d draft
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return nil, fmt.Errorf("parse scheduled post: %w", err)
	}
	return &d, nil
}

// checkPublishAt checks that at is within the bounds of a publish time from now.
func (s *Store) checkPublishAt(at time.Time) error {
	now := s.now()
	if at.Before(now.Add(MinScheduleAhead)) {
		return invalidf("publishAt must be at least %s ahead", MinScheduleAhead)
	}
	if at.After(now.Add(MaxScheduleAhead)) {
		return invalidf("publishAt may be at most %d days ahead", int(MaxScheduleAhead.Hours()/24))
	}
	return nil
}

// scheduleKeys are the keys of schedule.lua for uid's scheduled posts, the user's hash last:
// "add" reads the deletion there, so that a draft whose checks passed just before the account's
// deletion makes none of the keys its step dropped again.
func (s *Store) scheduleKeys(uid string) []string {
	return []string{s.k.scheduled(uid), s.k.drafts(uid), s.k.cancelledDrafts(uid), s.k.user(uid)}
}

// MaxCancelledDrafts is how many of a user's cancelled scheduled posts are remembered, newest
// first: cancelling one of them again returns its id, as a repeated deletion does.
const MaxCancelledDrafts = 1000

// publishJob is the job that publishes uid's post pid at at.
func publishJob(uid, pid string, at time.Time) jobs.Job {
	return jobs.Job{ID: jobPublish + ":" + pid, Kind: jobPublish, Arg: uid + " " + pid, At: at}
}

// jobCall makes one of the engine's calls a script call of the store's, for a write that sends
// it in the pipeline of its own scripts.
func jobCall(c jobs.Call) scriptCall { return scriptCall{name: c.Script, keys: c.Keys, args: c.Args} }

// schedulePost keeps a checked new post as a draft of uid's, to be published at in.PublishAt.
// The publish job is queued in the same pipeline, before the draft: a job with no draft does
// nothing, and a draft always has its job.
func (s *Store) schedulePost(ctx context.Context, uid string, in NewPost, groups []string) (*Post, error) {
	at := in.PublishAt
	raw, err := json.Marshal(draft{Title: in.Title, Body: in.Body, URL: in.URL, Groups: strings.Join(groups, ","),
		At: strconv.FormatInt(at.UnixMilli(), 10), NSFW: in.NSFW, Spoiler: in.Spoiler})
	if err != nil {
		return nil, fmt.Errorf("schedule post: %w", err)
	}
	var earlier *Post
	pid, reply, err := s.allocatePost(ctx, uid, in.IdempotencyKey, true, func(pid, nonce string, repeat, otherKind bool) (any, error) {
		if repeat {
			// The key's first request made pid: scheduled (the draft answers, as "add" would
			// reply), cancelled, or published, at once or from its draft. Only a first request
			// cut off before its write leaves none of these, and is completed.
			var err error
			if earlier, err = s.earlierDraft(ctx, uid, pid); err != nil || earlier != nil {
				return earlier, err
			}
			if n, err := s.cmd().Exists(ctx, s.k.post(pid)).Result(); err != nil {
				return nil, fmt.Errorf("read post %s: %w", pid, err)
			} else if n == 1 {
				// Published: create_post finds it by either nonce and writes nothing (nil: the id
				// names another post, and allocatePost moves on).
				reply, err := s.createPostOnce(ctx, pid, nonce, in.Title, in.Body, in.URL, uid, at, strings.Join(groups, ","), "", in.NSFW, in.Spoiler)
				if err != nil || reply == nil {
					return reply, err
				}
				h, err := replyHash("create_post", reply)
				if err != nil {
					return nil, err
				}
				if earlier = s.postFromHash(pid, h); earlier == nil {
					return nil, notFoundf("post %s was deleted", postID(pid))
				}
				return earlier, nil
			}
		}
		if otherKind {
			// The key's first request publishes the post at once, and has not written it yet.
			return nil, idemInFlight(pid)
		}
		job, err := s.jobs.EnqueueCall(publishJob(uid, pid, at), false)
		if err != nil {
			return nil, err
		}
		out, err := s.runScripts(ctx, []scriptCall{jobCall(job), {name: "schedule", keys: s.scheduleKeys(uid),
			args: []any{"add", pid, string(raw), at.UnixMilli(), s.now().UnixMilli(), s.opts.MaxScheduledPosts}}})
		if err != nil {
			return nil, err
		}
		return out[1], nil
	})
	if err != nil {
		return nil, err
	}
	if earlier != nil {
		return earlier, nil
	}
	s.jobs.Wake()
	stored, err := replyString("schedule", reply)
	if err != nil {
		return nil, err
	}
	d, err := parseDraft(stored)
	if err != nil {
		return nil, err
	}
	return d.post(pid, UserKey(uid), s.opts.VotingWindow), nil
}

// earlierDraft returns, for a creation repeated with its idempotency key, what the key's first
// request made of pid as a scheduled post: the draft as its author sees it while it waits or is
// being published, NOT_FOUND once it was cancelled, or nil when pid was never scheduled or is
// published (its draft goes only after the post is written, so a published draft's post is
// there by the time the draft is found gone).
func (s *Store) earlierDraft(ctx context.Context, uid, pid string) (*Post, error) {
	raw, err := s.cmd().HGet(ctx, s.k.drafts(uid), pid).Result()
	switch {
	case err == nil:
		d, err := parseDraft(raw)
		if err != nil {
			return nil, err
		}
		return d.post(pid, UserKey(uid), s.opts.VotingWindow), nil
	case !errors.Is(err, rdb.Nil):
		return nil, fmt.Errorf("read scheduled post %s: %w", pid, err)
	}
	_, err = s.cmd().ZScore(ctx, s.k.cancelledDrafts(uid), pid).Result()
	switch {
	case err == nil:
		return nil, notFoundf("the scheduled post %s made with this idempotency key was cancelled", postID(pid))
	case !errors.Is(err, rdb.Nil):
		return nil, fmt.Errorf("read cancelled post %s: %w", pid, err)
	}
	return nil, nil
}

// ReschedulePost moves a scheduled post of uid's to a new publish time: the draft first, then its
// job, which only moves earlier (see above). A repair note covers the moment between: should the
// process stop there, the repair brings the job to the draft's time (syncPublishJob).
func (s *Store) ReschedulePost(ctx context.Context, user UserKey, id string, at time.Time) (*Post, error) {
	uid := string(user)
	pid, err := PostKey(id)
	if err != nil {
		return nil, err
	}
	if err := s.checkPublishAt(at); err != nil {
		return nil, err
	}
	n, err := s.allowWrite(ctx, uid, repairDraft+":"+uid+":"+pid)
	if err != nil {
		return nil, err
	}
	reply, err := s.run(ctx, "schedule", s.scheduleKeys(uid), "move", pid, at.UnixMilli(), s.now().UnixMilli(), s.opts.MaxScheduledPosts)
	if err != nil {
		return nil, err
	}
	if err := s.jobs.DueBy(ctx, publishJob(uid, pid, at)); err != nil {
		return nil, err
	}
	s.settled(ctx, n)
	raw, err := replyString("schedule", reply)
	if err != nil {
		return nil, err
	}
	d, err := parseDraft(raw)
	if err != nil {
		return nil, err
	}
	return d.post(pid, user, s.opts.VotingWindow), nil
}

// syncPublishJob makes the publish job of uid's scheduled post pid due by the draft's time, if the
// draft is still waiting: the repair of a reschedule cut off between its two steps, and what
// rebuild does for every draft. Like a reschedule it only moves the job earlier, so that it
// cannot undo a reschedule that ran after it read the draft.
func (s *Store) syncPublishJob(ctx context.Context, uid, pid string) error {
	raw, err := s.cmd().HGet(ctx, s.k.drafts(uid), pid).Result()
	if errors.Is(err, rdb.Nil) {
		return nil // published or cancelled
	}
	if err != nil {
		return fmt.Errorf("read scheduled post %s: %w", pid, err)
	}
	d, err := parseDraft(raw)
	if err != nil {
		return err
	}
	job := publishJob(uid, pid, fromMillis(atoi64(d.At)))
	if d.Taken {
		return s.jobs.Enqueue(ctx, job) // being published: its job must exist, it keeps its place
	}
	return s.jobs.DueBy(ctx, job)
}

// CancelScheduledPost deletes a scheduled post of uid's before it is published.
func (s *Store) CancelScheduledPost(ctx context.Context, user UserKey, id string) error {
	uid := string(user)
	pid, err := PostKey(id)
	if err != nil {
		return err
	}
	if _, err := s.allowWrite(ctx, uid, "", banFree); err != nil {
		return err
	}
	if _, err := s.run(ctx, "schedule", s.scheduleKeys(uid), "cancel", pid, s.now().UnixMilli(), MaxCancelledDrafts); err != nil {
		return err
	}
	// A job left behind finds no draft and does nothing.
	if err := s.jobs.Cancel(ctx, jobPublish+":"+pid); err != nil {
		s.opts.Log.WarnContext(ctx, "cancel the publish job of a cancelled post", "post", pid, "err", err)
	}
	return nil
}

// runPublishJob publishes a scheduled post when its time has come. Every step is idempotent, so
// a run cut off anywhere is finished by the next: the draft is taken (it can no longer move), the
// post is created with a nonce of its own (a second run finds it), its derived writes and event
// follow, and the draft goes last.
func (s *Store) runPublishJob(ctx context.Context, j jobs.Job) error {
	uid, pid, ok := strings.Cut(j.Arg, " ")
	if !ok {
		return fmt.Errorf("publish job: bad argument %q", j.Arg)
	}
	if refused, err := s.draftRefused(ctx, uid, pid); err != nil || refused {
		return err
	}
	reply, err := s.run(ctx, "schedule", s.scheduleKeys(uid), "take", pid, s.now().UnixMilli())
	if err != nil {
		return err
	}
	if reply == nil {
		return nil // cancelled, or published by an earlier run
	}
	arr, err := replyArrayLen("schedule", reply, 2) // {"later", publish time} or {"take", draft}
	if err != nil {
		return err
	}
	word, err := replyWord("schedule", arr[0], "later", "take")
	if err != nil {
		return err
	}
	val, err := replyString("schedule", arr[1])
	if err != nil {
		return err
	}
	if word == "later" {
		return jobs.Later{At: fromMillis(atoi64(val))}
	}
	d, err := parseDraft(val)
	if err != nil {
		return err
	}
	at := fromMillis(atoi64(d.At))
	name, err := s.userName(ctx, uid)
	if err != nil {
		return err
	}
	created, err := s.createPostOnce(ctx, pid, scheduledNonce(uid, pid), d.Title, d.Body, d.URL, uid, at, d.Groups, name, d.NSFW, d.Spoiler)
	if err != nil {
		return err
	}
	if created == nil {
		// The id names another post: a failover lost the id counter's last increments after this
		// post was scheduled (without -redis-wait-replicas). The draft cannot be published under
		// its id; it is dropped, loudly, rather than left stuck.
		s.opts.Log.ErrorContext(ctx, "a scheduled post's id was taken by another post after a failover: the scheduled post is dropped",
			"post", pid, "author", uid, "title", d.Title)
		_, err := s.run(ctx, "schedule", s.scheduleKeys(uid), "done", pid)
		return err
	}
	h, err := replyHash("create_post", created)
	if err != nil {
		return err
	}
	p := s.postFromHash(pid, h)
	if p == nil { // published, then deleted by its author: nothing more to do
		_, err := s.run(ctx, "schedule", s.scheduleKeys(uid), "done", pid)
		return err
	}
	// The author's account may have been deleted since draftRefused read it, and its chain may
	// have been through the author's lists before this post was listed: read again where it is
	// listed, as createPost does (authorGone), the post is disowned, or erased, as the chain does.
	read, gone := s.authorGone(ctx, uid)
	if err := s.indexPostIn(ctx, p, nil, true, []op{read}, s.searchWrites(postSearchDoc(p, true))); err != nil {
		return err
	}
	if deleted, erase, err := gone(); err != nil {
		return err
	} else if deleted {
		if err := s.disownPost(ctx, uid, pid, erase); err != nil {
			return err
		}
		_, err := s.run(ctx, "schedule", s.scheduleKeys(uid), "done", pid)
		return err
	}
	if err := s.queuePostJobs(ctx, pid); err != nil {
		return err
	}
	if err := s.announcePost(ctx, pid, p, h); err != nil {
		return err
	}
	if _, err := s.run(ctx, "schedule", s.scheduleKeys(uid), "done", pid); err != nil {
		return err
	}
	return nil
}

// draftsRead reads uid's drafts hash.
func (l *Loader) draftsRead(uid string) read {
	key := l.s.k.drafts(uid)
	return read{key: "h:" + key, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.HGetAll(ctx, key)
	}}
}

// pendingDrafts returns uid's scheduled posts still pending at now, soonest first. A response
// that reads them changes when a publish time passes, with no write to mark it: it is not cached.
func (l *Loader) pendingDrafts(ctx context.Context, uid string) ([]*Post, error) {
	c, err := l.get(ctx, l.draftsRead(uid))
	if err != nil {
		return nil, err
	}
	if l.revs != nil {
		l.revs.timeDependent()
	}
	h, err := c.cmd.(*rdb.MapStringStringCmd).Result()
	if err != nil {
		return nil, fmt.Errorf("read scheduled posts: %w", err)
	}
	now := l.s.now()
	var out []*Post
	for pid, raw := range h {
		d, err := parseDraft(raw)
		if err != nil {
			return nil, err
		}
		if p := d.post(pid, UserKey(uid), l.s.opts.VotingWindow); !d.Taken && p.PublishAt.After(now) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *Post) int {
		if c := a.PublishAt.Compare(*b.PublishAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// scheduledTag is the cursor list tag of scheduled posts.
const scheduledTag = "sp"

// ScheduledPosts returns a page of viewer's pending scheduled posts, soonest first. The list is
// read whole (it is bounded by the cap on pending posts) and paged here with the same rules as a
// sorted set's pages: a cursor is a position (publish time, post), so it bounds a page in either
// direction and stays valid while posts are scheduled, published or cancelled.
func (l *Loader) ScheduledPosts(ctx context.Context, viewer UserKey, w Window) (*Page[*Post], error) {
	sp, err := w.decode(scheduledTag)
	if err != nil {
		return nil, err
	}
	all, err := l.pendingDrafts(ctx, string(viewer))
	if err != nil {
		return nil, err
	}
	// before counts the posts ordered before the cursor c, and whether c's post is among them
	// at c's place.
	before := func(c cursor) (n int, at bool) {
		ms := atoi64(c.score)
		for _, p := range all {
			t := p.PublishAt.UnixMilli()
			if t > ms || (t == ms && p.Key() >= c.member) {
				return n, t == ms && p.Key() == c.member
			}
			n++
		}
		return n, false
	}
	lo, hi := 0, len(all)
	if sp.after.score != "" {
		n, at := before(sp.after)
		if lo = n; at {
			lo++
		}
	}
	if sp.before.score != "" {
		hi, _ = before(sp.before)
	}
	hi = max(hi, lo)
	start, stop := lo, min(lo+sp.n, hi)
	if sp.backward {
		start, stop = max(hi-sp.n, lo), hi
	}
	page := &Page[*Post]{Total: len(all), HasPrev: start > 0, HasNext: stop < len(all)}
	for _, p := range all[start:stop] {
		page.Items = append(page.Items, p)
		page.Cursors = append(page.Cursors, cursor{list: scheduledTag,
			score: strconv.FormatInt(p.PublishAt.UnixMilli(), 10), member: p.Key()}.encode())
	}
	return page, nil
}

// ScheduledPost returns viewer's scheduled post id while it is pending, or nil: what post(id)
// shows the author of a post that is not published yet.
func (l *Loader) ScheduledPost(ctx context.Context, viewer UserKey, id string) (*Post, error) {
	pid, err := PostKey(id)
	if err != nil {
		return nil, err
	}
	all, err := l.pendingDrafts(ctx, string(viewer))
	if err != nil {
		return nil, err
	}
	for _, p := range all {
		if p.Key() == pid {
			return p, nil
		}
	}
	return nil, nil
}
