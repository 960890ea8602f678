package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// Live events, the write side. Every write publishes, after it has succeeded, a small JSON
// message of ids on Redis pub/sub; subscribers (package live) read the current data themselves
// through a Loader, so they always see fresh values and the viewer's own fields. Any number of
// server processes share one Redis: a write on one reaches the subscribers of all.
//
// Channels carry the hash tag of the aggregate they are about, so that they can move to sharded
// pub/sub (SPUBLISH/SSUBSCRIBE) on a cluster unchanged (see Channels in keys.go):
//
//	<prefix>{p:<post>}:ev:changed   {"post":"post:17"}                            postChanged
//	<prefix>{p:<post>}:ev:comments  {"post":"post:17","comment":"comment:17:4"}   commentAdded
//	<prefix>{r:all}:ev:posts        {"post":"post:17","author":"user:alice"}      postPublished, feed
//	<prefix>{g:<group>}:ev:posts    {"post":"post:17","author":"user:alice"}      postPublished(group)
//	<prefix>{n:<user>}:ev:notifications  {"notification":"notification:alice:c:17:4"}  notificationAdded
//	<prefix>{mb:<user>}:ev:messages  {"message":"message:alice:bob:<id>"}  messageAdded (sent and received)
//	<prefix>{u:<user>}:ev:sessions  {"sessions":"<id> <id> ..."}                sessions ended (no log)
//
// Each event is also appended to its channel's log, a stream beside the channel
// (<channel>:log), in the same script that publishes it (publish.lua): its id in the log is the
// event's cursor, published with it as "id". A subscriber that resumes from a cursor replays the
// log after it (ReplayLog, replay.lua). A log keeps the channel's last Options.EventLogLength
// events and expires Options.EventLogAge after its last one; a cursor older than that gets
// KindResync.
//
// On a cluster, classic PUBLISH is broadcast over the cluster bus to every node, which costs
// every node the traffic of every channel. Redis 7's sharded pub/sub (SPUBLISH, SSUBSCRIBE) sends
// a message only to the shard that owns the channel's hash slot, so pub/sub scales with the
// cluster like the keyspace does; the store publishes with it wherever the cluster supports it,
// and live events subscribe the same way (rdb.NewSubscription on Store.Runner).

// EventIDs is what a live event says: the ids of what changed. Its JSON is the message a write
// publishes and appends to its channel's log.
type EventIDs struct {
	Post    string  `json:"post"`              // the post's global id
	Comment string  `json:"comment,omitempty"` // a new comment's global id (commentAdded)
	Author  UserKey `json:"author,omitempty"`  // the post's author (published posts)
	// Notification is a new notification's global id (notificationAdded; see notify_events.go).
	Notification string `json:"notification,omitempty"`
	// Sessions lists the sessions that ended (logOut, logOutEverywhere, changePassword) by the id
	// SessionOf returns, separated by spaces (a string keeps EventIDs comparable);
	// sessions_end.lua publishes it on the user's Sessions channel, without a log: a stream that
	// may have missed it checks its session (SessionActive).
	Sessions string `json:"sessions,omitempty"`
	// Message is a new private message's global id (messageAdded; see messages.go).
	Message string `json:"message,omitempty"`
	// Blocks is a change of the user's block list: "+<user key>" when they blocked that user,
	// "-<user key>" when they unblocked them. block.lua publishes it on the user's Sessions
	// channel, without a log, so that the live streams the user has open apply it at once (a
	// stream that may have missed one reads the list again: BlocksOf).
	Blocks string `json:"blocks,omitempty"`
	// NSFW is a change of whether the user shows NSFW posts: "1" shows them, "0" does not.
	// update_profile.lua publishes it on the user's Sessions channel, like Blocks.
	NSFW string `json:"nsfw,omitempty"`
}

// LoggedEvent is one event of a channel's log.
type LoggedEvent struct {
	// ID is the event's cursor, its id in the log: ids rise with every event of a channel.
	ID string
	EventIDs
}

// The defaults of how much of a channel's events its log keeps (Options.EventLogLength and
// EventLogAge): the last 1,000 events, until 7 days after the last one.
const (
	DefaultEventLogLength = 1000
	DefaultEventLogAge    = 7 * 24 * time.Hour
)

// publishedLogFactor is how many times Options.EventLogLength the log of all new posts keeps: every
// new post of the site goes through it, where a group's log has only the group's.
const publishedLogFactor = 10

// logLengthOf is how many events the log of channel keeps.
func (s *Store) logLengthOf(channel string) int {
	if channel == s.k.chanPublished("") {
		return publishedLogFactor * s.opts.EventLogLength
	}
	return s.opts.EventLogLength
}

// shardedPubSub reports whether client is a cluster that supports sharded pub/sub (Redis 7+).
func shardedPubSub(ctx context.Context, client rdb.UniversalClient) (bool, error) {
	if _, ok := client.(*rdb.ClusterClient); !ok {
		return false, nil
	}
	// COMMAND INFO replies one entry per name asked, nil for an unknown command.
	info, err := client.Do(ctx, "command", "info", "spublish").Slice()
	if err != nil {
		return false, fmt.Errorf("ask the cluster for SPUBLISH: %w", err)
	}
	return len(info) == 1 && info[0] != nil, nil
}

// Publish sends msg on channel to its subscribers in every process: SPUBLISH on a cluster that
// supports it, PUBLISH otherwise. It neither logs the message nor checks it: writes announce
// their events through publish.lua instead.
func (s *Store) Publish(ctx context.Context, channel, msg string) error {
	var err error
	if s.sharded {
		err = s.cmd().SPublish(ctx, channel, msg).Err()
	} else {
		err = s.cmd().Publish(ctx, channel, msg).Err()
	}
	if err != nil {
		return fmt.Errorf("publish on %s: %w", channel, err)
	}
	return nil
}

// message is one event to publish on one channel.
type message struct {
	channel string
	event   EventIDs
}

// publish appends events to their channels' logs and publishes them, one script per channel, in
// one pipeline. A write calls it after it has succeeded; a failure to publish does not undo or
// fail the write, so it is logged rather than returned. The publish survives the caller's
// cancellation: the write it announces has happened.
func (s *Store) publish(ctx context.Context, msgs ...message) error {
	ctx = context.WithoutCancel(ctx)
	calls := make([]scriptCall, 0, len(msgs))
	for _, m := range msgs {
		c, err := s.publishCall(m)
		if err != nil {
			s.opts.Log.ErrorContext(ctx, "live event: encode", "channel", m.channel, "err", err)
			return err
		}
		calls = append(calls, c)
	}
	if err := s.runMany(ctx, calls); err != nil {
		s.opts.Log.ErrorContext(ctx, "live event: publish", "channels", len(msgs), "err", err)
		return err
	}
	return nil
}

// pubSubArg is the argument that tells a script which pub/sub to publish with
// (lib/announce.lua): "1" for sharded pub/sub (SPUBLISH, on a cluster that supports it), "0"
// for PUBLISH.
func (s *Store) pubSubArg() string {
	if s.sharded {
		return "1"
	}
	return "0"
}

// publishCall is the script call that appends m to its channel's log and publishes it, for a
// write that sends it in a pipeline of its own (see publish).
func (s *Store) publishCall(m message) (scriptCall, error) {
	b, err := json.Marshal(m.event)
	if err != nil {
		return scriptCall{}, fmt.Errorf("encode live event: %w", err)
	}
	return scriptCall{name: "publish", keys: []string{s.k.logOf(m.channel)},
		args: []any{m.channel, b, s.logLengthOf(m.channel), int(s.opts.EventLogAge.Seconds()), s.pubSubArg()}}, nil
}

// publishPostChanged announces that a post's votes, score, comment count or groups changed, or
// that it was deleted. pid is the post's key ("17").
func (s *Store) publishPostChanged(ctx context.Context, pid string) {
	s.publish(ctx, message{s.k.chanPostChanged(pid), EventIDs{Post: postID(pid)}})
}

// publishPostDeleted announces a deleted post on both of its channels: postChanged subscribers
// and commentAdded subscribers (an event without a comment) find the post gone and end their
// streams.
func (s *Store) publishPostDeleted(ctx context.Context, pid string) {
	s.publish(ctx,
		message{s.k.chanPostChanged(pid), EventIDs{Post: postID(pid)}},
		message{s.k.chanComments(pid), EventIDs{Post: postID(pid)}})
}

// announceComment announces the new comment num (a reply too) in the thread of the post with
// key pid, once: commentAdded, and postChanged for the post's comment count, unless it was
// announced already (announce_comment.lua). The write that creates a comment runs it once its
// derived writes are done, and so does the comment's repair job, so that a creation cut off in
// between (its process died, Redis was full) is announced when the repair finishes it: before,
// such a comment was in every list but never reached the live streams. A failure is logged, as
// publish logs one, and returned: the write then leaves its repair note, whose job announces the
// comment.
func (s *Store) announceComment(ctx context.Context, pid, num string) error {
	ctx = context.WithoutCancel(ctx)
	comments, changed := s.k.chanComments(pid), s.k.chanPostChanged(pid)
	added, err := json.Marshal(EventIDs{Post: postID(pid), Comment: commentID(pid, num)})
	if err != nil {
		return fmt.Errorf("encode live event: %w", err)
	}
	moved, err := json.Marshal(EventIDs{Post: postID(pid)})
	if err != nil {
		return fmt.Errorf("encode live event: %w", err)
	}
	_, err = s.run(ctx, "announce_comment", []string{s.k.comment(pid, num), s.k.logOf(comments), s.k.logOf(changed)},
		comments, added, s.logLengthOf(comments), changed, moved, s.logLengthOf(changed),
		int(s.opts.EventLogAge.Seconds()), s.pubSubArg())
	if err != nil {
		s.opts.Log.ErrorContext(ctx, "live event: announce a comment", "comment", commentID(pid, num), "err", err)
		return fmt.Errorf("announce comment %s: %w", commentID(pid, num), err)
	}
	return nil
}

// publishPostPublished announces a new post to every subscriber of new posts and to those of
// each of its groups.
func (s *Store) publishPostPublished(ctx context.Context, p *Post) error {
	ev := EventIDs{Post: p.ID, Author: p.Author}
	msgs := []message{{s.k.chanPublished(""), ev}}
	for _, g := range p.GroupNames {
		msgs = append(msgs, message{s.k.chanPublished(g), ev})
	}
	return s.publish(ctx, msgs...)
}

// announcePost announces the new post p, of key pid, if its hash h still holds its pending mark
// (pa, written by create_post.lua), then takes the mark, in one round trip with the calls in also
// (a write's settling of its repair note, which then costs no round trip of its own): the write
// that creates a post runs it once its derived writes are done, a repeat of that write (its
// idempotency key, a scheduled post's publish job) and the post's repair job run it too, so that
// a creation cut off after its atomic step (its process died, Redis was full) is announced when it
// is finished, and one announced is not announced again. The channels are on other slots than the
// post, so a process that dies between the announcement and taking the mark announces the post
// twice, as a retried write may. A failed announcement is returned, the mark left and also not
// sent.
func (s *Store) announcePost(ctx context.Context, pid string, p *Post, h map[string]string, also ...scriptCall) error {
	ctx = context.WithoutCancel(ctx)
	var take []op
	if h["pa"] != "" {
		if err := s.publishPostPublished(ctx, p); err != nil {
			return err
		}
		key := s.k.post(pid)
		take = append(take, op{key: key, fill: func(pl rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			return pl.HDel(ctx, key, "pa"), nil
		}})
	}
	if len(also) == 0 && len(take) == 0 {
		return nil
	}
	if _, err := s.runScripts(ctx, also, take...); err != nil {
		return fmt.Errorf("announce post %s: %w", p.ID, err)
	}
	return nil
}

// FromStart is the cursor before every event of a channel whose log was empty: LogHead returns
// it for an empty log, and ReplayLog after it returns every event logged since.
const FromStart = "0-0"

// LogHead returns the cursor of the last event in channel's log, FromStart when there is none:
// where a subscriber that has received nothing yet catches up from after a gap.
func (s *Store) LogHead(ctx context.Context, channel string) (string, error) {
	msgs, err := s.cmd().XRevRangeN(ctx, s.k.logOf(channel), "+", "-", 1).Result()
	if err != nil {
		return "", fmt.Errorf("read the head of a live-event log: %w", err)
	}
	if len(msgs) == 0 {
		return FromStart, nil
	}
	return msgs[0].ID, nil
}

// replayBatch is the most events one replay script returns; ReplayLog asks again for more.
const replayBatch = 200

// ReplayLog returns the events of channel's log after the cursor after, oldest first. It fails
// with KindResync when some of those events may no longer be kept. The caller checks that after
// is a well-formed cursor (live.CheckCursor); replay.lua fails on one that is not. It holds the
// whole rest of the log at once (up to ten times Options.EventLogLength events): a subscriber
// that delivers what it replays reads it a page at a time instead (ReplayLogPage).
func (s *Store) ReplayLog(ctx context.Context, channel, after string) ([]LoggedEvent, error) {
	var out []LoggedEvent
	for {
		page, more, err := s.ReplayLogPage(ctx, channel, after, replayBatch)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if !more {
			return out, nil
		}
		after = page[len(page)-1].ID
	}
}

// ReplayLogPage returns at most max events (replayBatch when max is not positive) of channel's log after the cursor after,
// oldest first, in one round trip, and whether more may follow: then ask again after the last
// one. It fails as ReplayLog does, KindResync included — also on a later page, when the log was
// trimmed past the cursor meanwhile.
func (s *Store) ReplayLogPage(ctx context.Context, channel, after string, max int) ([]LoggedEvent, bool, error) {
	if max <= 0 {
		max = replayBatch
	}
	reply, err := s.run(ctx, "replay", []string{s.k.logOf(channel)}, after, max)
	if err != nil {
		return nil, false, fmt.Errorf("replay live events: %w", err)
	}
	arr, err := replyArray("replay", reply, 1)
	if err != nil {
		return nil, false, fmt.Errorf("replay live events: %w", err)
	}
	status, err := replyWord("replay", arr[0], "ok", "resync")
	if err != nil {
		return nil, false, fmt.Errorf("replay live events: %w", err)
	}
	if status == "resync" {
		return nil, false, &Error{Kind: KindResync, Msg: "events after this cursor are no longer kept: refetch, then subscribe again without after"}
	}
	ids, payloads, err := replyPairs("replay", arr[1:]) // {"ok", id, event ids (JSON), ...}
	if err != nil {
		return nil, false, fmt.Errorf("replay live events: %w", err)
	}
	out := make([]LoggedEvent, len(ids))
	for i, id := range ids {
		out[i].ID = id
		if err := json.Unmarshal([]byte(payloads[i]), &out[i].EventIDs); err != nil {
			return nil, false, fmt.Errorf("replay live events: decode: %w", err)
		}
	}
	return out, len(ids) >= max, nil
}

// FeedIncludesAny is FeedIncludes of each of authors, read in one round trip: the feed's catch-up
// drops the events of authors the viewer does not follow a page at a time with it, rather than
// reading the follow of each event's author apart (most of the new posts it walks are not the
// viewer's follows). The events it keeps are checked again as they are delivered.
func (l *Loader) FeedIncludesAny(ctx context.Context, viewer UserKey, authors []UserKey) (map[UserKey]bool, error) {
	in := make(map[UserKey]bool, len(authors))
	var reads []read
	var asked []UserKey
	for _, a := range authors {
		if _, seen := in[a]; seen {
			continue
		}
		in[a] = false
		if viewer == "" || a == "" || a == viewer {
			continue
		}
		reads = append(reads, zscoreRead(l.s.k.following(string(viewer)), string(a)))
		asked = append(asked, a)
	}
	if len(reads) == 0 {
		return in, nil
	}
	for i, c := range l.getAll(ctx, reads...) {
		c, err := c.wait(ctx)
		if err != nil {
			return nil, err
		}
		fc, ok := c.cmd.(*rdb.FloatCmd)
		if !ok {
			return nil, fmt.Errorf("the follow of %s: a reply of %T", asked[i], c.cmd)
		}
		if err := fc.Err(); err != nil && !errors.Is(err, rdb.Nil) {
			return nil, err
		}
		in[asked[i]] = fc.Err() == nil
	}
	return in, nil
}

// FeedIncludes reports whether a new post by author belongs in the live feed of viewer: whether
// the viewer follows its author now.
func (l *Loader) FeedIncludes(ctx context.Context, viewer, author UserKey) (bool, error) {
	return l.Follows(ctx, viewer, author)
}
