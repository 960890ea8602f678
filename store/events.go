package store

import (
	"context"
	"encoding/json"
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

// Event is one live event: the ids of what changed.
type Event struct {
	Post    string  `json:"post"`              // the post's global id
	Comment string  `json:"comment,omitempty"` // a new comment's global id (commentAdded)
	Author  UserKey `json:"author,omitempty"`  // the post's author (published posts)

	// Loader reads the event's data. It is fresh for each event and shared by every subscriber
	// of the event in this process, so that each piece of data is read once: the first
	// subscriber to ask reads it and the others join that read. It caches raw Redis replies
	// only; whatever depends on the viewer is computed from them per subscriber.
	Loader *Loader `json:"-"`
}

// LiveStats counts a process's live-event subscriptions.
type LiveStats struct {
	Channels    int    // Redis channels subscribed (and confirmed)
	Subscribers int    // local subscribers over all channels
	Delivered   uint64 // events handed to local subscribers since start
	Dropped     uint64 // subscribers closed because they fell behind
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

// message is one event to publish on one channel.
type message struct {
	channel string
	event   Event
}

// publish sends events in one pipeline. A write calls it after it has succeeded; a failure to
// publish does not undo or fail the write, so it is logged rather than returned. The publish
// survives the caller's cancellation: the write it announces has happened.
func (s *Store) publish(ctx context.Context, msgs ...message) {
	ctx = context.WithoutCancel(ctx)
	pipe := s.rdb.Pipeline()
	for _, m := range msgs {
		b, err := json.Marshal(m.event)
		if err != nil {
			s.opts.Log.ErrorContext(ctx, "live event: encode", "channel", m.channel, "err", err)
			return
		}
		s.queuePublish(ctx, pipe, m.channel, b) // SPUBLISH on a cluster
	}
	if _, err := pipe.Exec(ctx); err != nil {
		s.opts.Log.ErrorContext(ctx, "live event: publish", "channels", len(msgs), "err", err)
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
