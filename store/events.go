package store

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Live events. Every write publishes, after it has succeeded, a small JSON message of ids on Redis
// pub/sub; subscribers read the current data themselves through a Loader, so they always see fresh
// values and the viewer's own fields. Any number of server processes share one Redis: a write on
// one reaches the subscribers of all.
//
// Channels carry the hash tag of the aggregate they are about, so that they can move to sharded
// pub/sub (SPUBLISH/SSUBSCRIBE) on a cluster unchanged:
//
//	<prefix>{p:<post>}:ev:changed   {"post":"post:17"}                            postChanged
//	<prefix>{p:<post>}:ev:comments  {"post":"post:17","comment":"comment:17:4"}   commentAdded
//	<prefix>{r:all}:ev:posts        {"post":"post:17","author":"user:alice"}      postPublished, feed
//	<prefix>{g:<group>}:ev:posts    {"post":"post:17","author":"user:alice"}      postPublished(group)
//	<prefix>{n:<user>}:ev:notifications  {"notification":"notification:alice:c:17:4"}  notificationAdded
//
// Each event is also appended to its channel's log, a stream beside the channel
// (<channel>:log), in the same script that publishes it (publish.lua): its id in the log is the
// event's cursor, published with it as "id". A subscriber that resumes from a cursor replays the
// log after it (replay.lua). A log keeps the channel's last logLength events and expires
// logTTL after its last one; a cursor older than that gets KindResync.

// Event is one live event: the ids of what changed.
type Event struct {
	// ID is the event's cursor, its id in its channel's log: ids rise with every event of a
	// channel, and Replay returns the events after one.
	ID      string  `json:"id,omitempty"`
	Post    string  `json:"post"`              // the post's global id
	Comment string  `json:"comment,omitempty"` // a new comment's global id (commentAdded)
	Author  UserKey `json:"author,omitempty"`  // the post's author (published posts)
	// Notification is a new notification's global id (notificationAdded; see notify_events.go).
	Notification string `json:"notification,omitempty"`

	// Loader reads the event's data. It is fresh for each event and shared by every subscriber
	// of the event in this process, so that each piece of data is read once: the first
	// subscriber to ask reads it and the others join that read. It caches raw Redis replies
	// only; whatever depends on the viewer is computed from them per subscriber.
	Loader *Loader `json:"-"`

	// Gap says that the process's subscription to the channel was interrupted (its Redis
	// connection broke and was made again): events may have been published meanwhile that only
	// the channel's log has. A Gap event carries nothing else; catch up with Replay.
	Gap bool `json:"-"`
}

// LiveStats counts a process's live-event subscriptions.
type LiveStats struct {
	Channels    int    // Redis channels subscribed (and confirmed)
	Subscribers int    // local subscribers over all channels
	Delivered   uint64 // events handed to local subscribers since start
	Dropped     uint64 // events a full buffer could not take (caught up from the log instead)
}

// LiveStats returns the counts of the store's live-event hub.
func (s *Store) LiveStats() LiveStats { return s.hub.stats() }

func (k keys) chanPostChanged(pid string) string { return k.post(pid) + ":ev:changed" }
func (k keys) chanComments(pid string) string    { return k.post(pid) + ":ev:comments" }

// chanPublished is the channel of new posts: all of them (group "") or one group's.
func (k keys) chanPublished(group string) string {
	if group == "" {
		return k.prefix + "{r:all}:ev:posts"
	}
	return k.prefix + "{g:" + group + "}:ev:posts"
}

// logOf is the log of a channel's events (see publish.lua), in the channel's hash slot.
func (k keys) logOf(channel string) string { return channel + ":log" }

// How much of a channel's events its log keeps: the last logLength events, until logTTL after
// the last one. The log of all new posts keeps more, as every new post goes through it.
const (
	logLength      = 1000
	logLengthPosts = 10000
	logTTL         = 7 * 24 * time.Hour
)

// logLengthOf is how many events the log of channel keeps.
func (s *Store) logLengthOf(channel string) int {
	if channel == s.k.chanPublished("") {
		return logLengthPosts
	}
	return logLength
}

// message is one event to publish on one channel.
type message struct {
	channel string
	event   Event
}

// publish appends events to their channels' logs and publishes them, one script per channel, in
// one pipeline. A write calls it after it has succeeded; a failure to publish does not undo or
// fail the write, so it is logged rather than returned. The publish survives the caller's
// cancellation: the write it announces has happened.
func (s *Store) publish(ctx context.Context, msgs ...message) {
	ctx = context.WithoutCancel(ctx)
	sharded := "0"
	if s.sharded {
		sharded = "1" // SPUBLISH on a cluster
	}
	calls := make([]scriptCall, 0, len(msgs))
	for _, m := range msgs {
		b, err := json.Marshal(m.event)
		if err != nil {
			s.opts.Log.ErrorContext(ctx, "live event: encode", "channel", m.channel, "err", err)
			return
		}
		calls = append(calls, scriptCall{name: "publish", keys: []string{s.k.logOf(m.channel)},
			args: []any{m.channel, b, s.logLengthOf(m.channel), int(logTTL.Seconds()), sharded}})
	}
	if err := s.runMany(ctx, calls); err != nil {
		s.opts.Log.ErrorContext(ctx, "live event: publish", "channels", len(msgs), "err", err)
	}
}

// FromStart is the cursor before every event of a channel whose log was empty.
const FromStart = "0-0"

// logHead returns the id of the last entry of channel's log, FromStart when there is none.
func (s *Store) logHead(ctx context.Context, channel string) (string, error) {
	msgs, err := s.rdb.XRevRangeN(ctx, s.k.logOf(channel), "+", "-", 1).Result()
	if err != nil {
		return "", fmt.Errorf("read the head of a live-event log: %w", err)
	}
	if len(msgs) == 0 {
		return FromStart, nil
	}
	return msgs[0].ID, nil
}

// replayBatch is the most events one replay script returns; Replay asks again for more.
const replayBatch = 200

// cursorPattern is the form of an event's cursor.
var cursorPattern = regexp.MustCompile(`^[0-9]{1,19}-[0-9]{1,19}$`)

// CursorBefore reports whether the event cursor a comes before b. Malformed cursors come first.
func CursorBefore(a, b string) bool {
	am, as := splitCursor(a)
	bm, bs := splitCursor(b)
	return am < bm || am == bm && as < bs
}

func splitCursor(c string) (ms, seq uint64) {
	m, s, _ := strings.Cut(c, "-")
	ms, _ = strconv.ParseUint(m, 10, 64)
	seq, _ = strconv.ParseUint(s, 10, 64)
	return ms, seq
}

// CheckCursor reports whether after is a well-formed event cursor.
func CheckCursor(after string) error {
	if !cursorPattern.MatchString(after) {
		return invalidf("after: %q is not an event cursor", truncate(after, 40))
	}
	return nil
}

// replay returns the events of channel after the cursor after, oldest first, each with a fresh
// Loader; KindResync when some of them may no longer be kept.
func (s *Store) replay(ctx context.Context, channel, after string) ([]Event, error) {
	if err := CheckCursor(after); err != nil {
		return nil, err
	}
	var out []Event
	for {
		reply, err := s.run(ctx, "replay", []string{s.k.logOf(channel)}, after, replayBatch)
		if err != nil {
			return nil, fmt.Errorf("replay live events: %w", err)
		}
		arr, _ := reply.([]any)
		if len(arr) == 0 || arr[0] != "ok" {
			return nil, &Error{Kind: KindResync, Msg: "events after this cursor are no longer kept: refetch, then subscribe again without after"}
		}
		for i := 1; i+1 < len(arr); i += 2 {
			var ev Event
			if err := json.Unmarshal([]byte(fmt.Sprint(arr[i+1])), &ev); err != nil {
				return nil, fmt.Errorf("replay live events: decode: %w", err)
			}
			ev.ID = fmt.Sprint(arr[i])
			ev.Loader = s.NewLoader()
			out = append(out, ev)
			after = ev.ID
		}
		if (len(arr)-1)/2 < replayBatch {
			return out, nil
		}
	}
}

// publishPostChanged announces that a post's votes, score, comment count or groups changed, or
// that it was deleted. pid is the post's key ("17").
func (s *Store) publishPostChanged(ctx context.Context, pid string) {
	s.publish(ctx, message{s.k.chanPostChanged(pid), Event{Post: postID(pid)}})
}

// publishPostDeleted announces a deleted post on both of its channels: postChanged subscribers
// and commentAdded subscribers (an event without a comment) find the post gone and end their
// streams.
func (s *Store) publishPostDeleted(ctx context.Context, pid string) {
	s.publish(ctx,
		message{s.k.chanPostChanged(pid), Event{Post: postID(pid)}},
		message{s.k.chanComments(pid), Event{Post: postID(pid)}})
}

// publishCommentAdded announces a new comment or reply, commentID being its global id
// ("comment:17:4"), in the thread of the post with key pid. The post's comment count moved with
// it, so it announces postChanged too.
func (s *Store) publishCommentAdded(ctx context.Context, pid, commentID string) {
	s.publish(ctx,
		message{s.k.chanComments(pid), Event{Post: postID(pid), Comment: commentID}},
		message{s.k.chanPostChanged(pid), Event{Post: postID(pid)}})
}

// publishPostPublished announces a new post to every subscriber of new posts and to those of
// each of its groups.
func (s *Store) publishPostPublished(ctx context.Context, p *Post) {
	ev := Event{Post: p.ID, Author: p.Author}
	msgs := []message{{s.k.chanPublished(""), ev}}
	for _, g := range p.GroupNames {
		msgs = append(msgs, message{s.k.chanPublished(g), ev})
	}
	s.publish(ctx, msgs...)
}

// SubscribePostChanged subscribes to the changes of one post: votes, score, comment count,
// groups, and its deletion. The Post of each event is the post's id.
func (s *Store) SubscribePostChanged(ctx context.Context, postID string) (*EventStream, error) {
	pid, err := PostKey(postID)
	if err != nil {
		return nil, err
	}
	return s.hub.subscribe(ctx, s.k.chanPostChanged(pid))
}

// SubscribeCommentAdded subscribes to the new comments and replies anywhere in one post's
// thread. Each event names the post and the comment; an event without a comment says the post
// was deleted.
func (s *Store) SubscribeCommentAdded(ctx context.Context, postID string) (*EventStream, error) {
	pid, err := PostKey(postID)
	if err != nil {
		return nil, err
	}
	return s.hub.subscribe(ctx, s.k.chanComments(pid))
}

// SubscribePostPublished subscribes to new posts: all of them when group is "", else those
// published in that group. Each event names the post and its author.
func (s *Store) SubscribePostPublished(ctx context.Context, group string) (*EventStream, error) {
	if group != "" {
		var err error
		if group, err = NormalizeGroupName(group); err != nil {
			return nil, err
		}
	}
	return s.hub.subscribe(ctx, s.k.chanPublished(group))
}

// SubscribeFeed subscribes to the candidates of a viewer's live feed: every new post. Pass each
// event through FeedIncludes, which keeps the posts of the users the viewer follows at the moment
// the event arrives, so that a user followed after subscribing counts at once.
//
// One channel for all feeds keeps the subscription independent of the follow graph: a follow or
// unfollow needs no resubscription, and a process holds one Redis subscription for all its feed
// subscribers whatever they follow. The price is one follow check (a ZSCORE) per feed subscriber
// per new post, each its own round trip since the loader has no batch window.
func (s *Store) SubscribeFeed(ctx context.Context, viewer UserKey) (*EventStream, error) {
	if !validUserName(string(viewer)) {
		return nil, invalidf("malformed user %q", truncate(string(viewer), 40))
	}
	return s.hub.subscribe(ctx, s.k.chanPublished(""))
}

// FeedIncludes reports whether a new-post event belongs in the live feed of viewer: whether the
// viewer follows its author now.
func (l *Loader) FeedIncludes(ctx context.Context, viewer UserKey, ev Event) (bool, error) {
	return l.Follows(ctx, viewer, ev.Author)
}
