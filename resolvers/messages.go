package resolvers

import (
	"context"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
)

// Private messages: every field reads the viewer's own conversations (requireViewer), so a
// response that reads them is cached per viewer, and stale once the mailbox's or a
// conversation's revision moves.

// conversationConnection converts a page of conversations.
func conversationConnection(p *store.Page[*store.Conversation]) *model.ConversationConnection {
	return &model.ConversationConnection{PageInfo: pageInfo(p), TotalCount: p.Total,
		Edges: edges(p, func(cursor string, node *store.Conversation) model.ConversationEdge {
			return model.ConversationEdge{Cursor: cursor, Node: node}
		}), Nodes: p.Items}
}

// messageConnection converts a page of messages.
func messageConnection(p *store.Page[*store.Message]) *model.MessageConnection {
	return &model.MessageConnection{PageInfo: pageInfo(p), TotalCount: p.Total,
		Edges: edges(p, func(cursor string, node *store.Message) model.MessageEdge {
			return model.MessageEdge{Cursor: cursor, Node: node}
		}), Nodes: p.Items}
}

// participant loads a participant of a conversation: DeletedUser once their account is deleted
// (a conversation outlives either account).
func participant(ctx context.Context, uid store.UserKey) (*store.User, error) {
	u, err := loaderFrom(ctx).User(ctx, uid)
	if err != nil || u != nil {
		return u, err
	}
	return store.DeletedUser(), nil
}

// viewerAndPeer returns the signed-in viewer and the user a userId argument names: a user's id,
// or the id of one of the viewer's conversations, which names its other participant — the one
// way to name a conversation whose other side's account was deleted, as Conversation.with is
// then the [deleted] placeholder, whose id names no user. The id of a conversation the viewer is
// not in is KindNotFound (errNotTheirs).
func viewerAndPeer(ctx context.Context, userID string) (viewer, peer store.UserKey, err error) {
	if viewer, err = requireViewer(ctx); err != nil {
		return "", "", err
	}
	if typ, _, _ := store.ParseID(userID); typ == store.TypeConversation {
		a, b, err := store.ParseConversationID(userID)
		if err != nil {
			return "", "", err
		}
		switch viewer {
		case a:
			return viewer, b, nil
		case b:
			return viewer, a, nil
		}
		return "", "", errNotTheirs
	}
	if peer, err = store.ParseUserID(userID); err != nil {
		return "", "", err
	}
	return viewer, peer, nil
}

// errNotTheirs is viewerAndPeer's error for the id of another's conversation: a write on it is
// NOT_FOUND, a read finds nothing.
var errNotTheirs = &store.Error{Kind: store.KindNotFound, Msg: "no such conversation"}

// conversationList reads a page of the viewer's conversations or requests.
func conversationList(ctx context.Context, requests bool, first *int, after *string, last *int, before *string) (*model.ConversationConnection, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	w, err := pageWindow(ctx, first, after, last, before)
	if err != nil {
		return nil, err
	}
	l := loaderFrom(ctx)
	list := l.Conversations
	if requests {
		list = l.MessageRequests
	}
	p, err := list(ctx, uid, w)
	if err != nil {
		return nil, err
	}
	return conversationConnection(p), nil
}

// messageAdded streams the messages sent to and by the viewer.
func (r *Resolver) messageAdded(ctx context.Context, after *string) (<-chan *store.Message, error) {
	viewer, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	from, err := resumeFrom(ctx, after)
	if err != nil {
		return nil, err
	}
	sub, err := r.Live.SubscribeMessageAdded(ctx, viewer)
	if err != nil {
		return nil, err
	}
	return stream(ctx, r.Log, sub, resume{after: from}, func(ctx context.Context, ev live.Event) (*store.Message, bool, error) {
		m, err := ev.Loader.Message(ctx, viewer, ev.Message)
		if err != nil || m == nil {
			return nil, false, err // a send that its conversation refused: skipped
		}
		return m, true, nil
	})
}
