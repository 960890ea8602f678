package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
)

// The notification inbox: every field reads the viewer's own inbox (requireViewer), so a response
// that reads one is cached per viewer, and stale once the inbox's revision moves.

// notificationConnection converts a page of notifications.
func notificationConnection(p *store.Page[*store.Notification]) *model.NotificationConnection {
	c := &model.NotificationConnection{PageInfo: pageInfo(p), TotalCount: p.Total,
		Edges: edges(p, func(cursor string, node *store.Notification) model.NotificationEdge {
			return model.NotificationEdge{Cursor: cursor, Node: node}
		}), Nodes: p.Items}
	return c
}

// notificationNeeds returns, lazily, what the selection of the field being resolved reads of the
// actors, posts and comments of notifications: below edges.node for a connection, else below the
// field itself (a Notification, or a Node that may be one); nodes of a connection alike.
func notificationNeeds(ctx context.Context, connection bool) func() *store.NotificationNeeds {
	return func() *store.NotificationNeeds {
		fc := graphql.GetFieldContext(ctx)
		if fc == nil || fc.Field.Field == nil {
			return nil
		}
		b := newNeedsBuilder(ctx)
		op := b.op
		sel := fc.Field.Selections
		if connection {
			var nodes ast.SelectionSet
			for _, e := range graphql.CollectFields(op, sel, nil) {
				if e.Name == "nodes" {
					nodes = append(nodes, e.Selections...)
					continue
				}
				if e.Name != "edges" {
					continue
				}
				for _, n := range graphql.CollectFields(op, e.Selections, nil) {
					if n.Name == "node" {
						nodes = append(nodes, n.Selections...)
					}
				}
			}
			sel = nodes
		}
		n := &store.NotificationNeeds{}
		for _, f := range graphql.CollectFields(op, sel, []string{"Notification", "Node"}) {
			switch f.Name {
			case "actor":
				n.Actor = b.object(f.Selections, "User")
			case "post":
				n.Post = b.object(f.Selections, "Post")
			case "comment":
				n.Comment = b.object(f.Selections, "Comment")
			}
		}
		return n
	}
}

// loadNotification loads a notification by global id for node(id): null unless the viewer is its
// recipient.
func loadNotification(ctx context.Context, id string) (store.Node, error) {
	l := loaderFrom(ctx)
	n, err := l.Notification(ctx, viewerFrom(ctx), id)
	if err != nil || n == nil {
		return nil, err
	}
	l.WalkNotifications(ctx, []*store.Notification{n}, notificationNeeds(ctx, false)())
	return n, nil
}

// notificationPost loads the post a notification is about; nil for a FOLLOW, and once deleted.
func notificationPost(ctx context.Context, n *store.Notification) (*store.Post, error) {
	if n.PostID == "" {
		return nil, nil
	}
	p, err := loaderFrom(ctx).Post(ctx, n.PostID)
	if err != nil {
		return nil, err
	}
	return visiblePost(ctx, p)
}

// notificationComment loads the comment that caused a notification; nil when no comment did, and
// once the comment (or its post) is deleted, tombstones included.
func notificationComment(ctx context.Context, n *store.Notification) (*store.Comment, error) {
	if n.CommentID == "" {
		return nil, nil
	}
	c, err := loadComment(ctx, n.CommentID)
	if err != nil || c == nil || c.Deleted {
		return nil, err
	}
	return c, nil
}

// notificationActor loads who caused a notification.
func notificationActor(ctx context.Context, n *store.Notification) (*store.User, error) {
	if n.Actor == "" {
		return nil, nil
	}
	return loaderFrom(ctx).User(ctx, n.Actor)
}

// notificationAdded streams the viewer's new notifications.
func (r *Resolver) notificationAdded(ctx context.Context, after *string) (<-chan *store.Notification, error) {
	viewer, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	from, err := resumeFrom(ctx, after)
	if err != nil {
		return nil, err
	}
	sub, err := r.Live.SubscribeNotificationAdded(ctx, viewer)
	if err != nil {
		return nil, err
	}
	needs := notificationNeeds(ctx, false)() // once for the whole stream
	return stream(ctx, r.Log, sub, resume{after: from}, func(ctx context.Context, ev live.Event) (*store.Notification, bool, error) {
		n, err := ev.Loader.Notification(ctx, viewer, ev.Notification)
		if err != nil || n == nil {
			return nil, false, err // trimmed before it was read: skipped
		}
		ev.Loader.WalkNotifications(ctx, []*store.Notification{n}, needs)
		return n, true, nil
	})
}
