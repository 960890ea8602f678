package resolvers

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/agora/agora/store"
)

// loadNode loads any Node by its global id; nil when it names nothing. The placeholder of a
// deleted author is found by its id as it is shown, although its name is not a user name.
func loadNode(ctx context.Context, id string) (store.Node, error) {
	if id == store.DeletedUserID {
		return store.DeletedUser(), nil
	}
	typ, _, err := store.ParseID(id)
	if err != nil {
		return nil, err
	}
	l := loaderFrom(ctx)
	switch typ {
	case store.TypeUser:
		uid, err := store.ParseUserID(id)
		if err != nil {
			return nil, err
		}
		if u, err := l.User(ctx, uid); u != nil || err != nil {
			return u, err
		}
	case store.TypePost:
		if p, err := loadPost(ctx, id); p != nil || err != nil {
			return p, err
		}
	case store.TypeComment:
		if c, err := loadComment(ctx, id); c != nil || err != nil {
			return c, err
		}
	case store.TypeGroup:
		if g, err := l.Group(ctx, id[len(store.TypeGroup)+1:]); g != nil || err != nil {
			return g, err
		}
	case store.TypeNotification:
		if n, err := loadNotification(ctx, id); n != nil || err != nil {
			return n, err
		}
	case store.TypeModAction:
		if a, err := l.ModAction(ctx, id); a != nil || err != nil {
			return a, err
		}
	case store.TypeReport:
		if r, err := loadReport(ctx, id); r != nil || err != nil {
			return r, err
		}
	case store.TypeBan:
		if b, err := l.Ban(ctx, viewerFrom(ctx), id); b != nil || err != nil {
			return b, err
		}
	case store.TypeMessage:
		if m, err := l.Message(ctx, viewerFrom(ctx), id); m != nil || err != nil {
			return m, err
		}
	case store.TypeConversation:
		if c, err := l.Conversation(ctx, viewerFrom(ctx), id); c != nil || err != nil {
			return c, err
		}
	}
	return nil, nil // never a typed nil: GraphQL must see null
}

// walkNode reads the node an id names and what the selection reads below it, whatever its type.
func walkNode(ctx context.Context, id string) {
	typ, _, err := store.ParseID(id)
	if err != nil {
		return
	}
	typeName := map[string]string{store.TypePost: "Post", store.TypeComment: "Comment", store.TypeUser: "User",
		store.TypeGroup: "Group"}[typ]
	if typeName != "" {
		loaderFrom(ctx).WalkID(ctx, id, fieldNeeds(ctx, typeName, false))
	}
}

// mustUser loads a user that the data says exists, such as an author, a moderator in the
// moderation log, a reporter or a banned user (non-null fields): a deleted account is the
// DeletedUser placeholder, as a deleted author is, so that the records it is named in — public
// like the log, or the moderators' queues — go on reading whole; one that never existed is an
// error.
func mustUser(ctx context.Context, uid store.UserKey) (*store.User, error) {
	u, err := loaderFrom(ctx).User(ctx, uid)
	if err != nil || u != nil {
		return u, err
	}
	if gone, err := loaderFrom(ctx).DeletedAccount(ctx, uid); err != nil || gone {
		return store.DeletedUser(), err
	}
	return nil, fmt.Errorf("user %s is referenced but missing", uid)
}

// author resolves the author of a post or comment: as the item's hash keeps them when the
// field shows only their id and name, and otherwise, or when the hash lacks the name, read.
func author(ctx context.Context, uid store.UserKey, item store.Named) (*store.User, error) {
	if fc := graphql.GetFieldContext(ctx); fc != nil && nameOnly(fc.Field.Selections) {
		if u := loaderFrom(ctx).NamedAuthor(item); u != nil {
			return u, nil
		}
	}
	// A deleted account's kept posts show a placeholder (Post.author is non-null); its comments
	// show none (see commentAuthor).
	return mustUser(ctx, uid)
}

// nameOnly reports whether a selection of a user shows nothing but its id and name (and
// __typename): what a post's or a comment's hash keeps of its author. A fragment counts as more.
func nameOnly(sel ast.SelectionSet) bool {
	for _, s := range sel {
		f, ok := s.(*ast.Field)
		if !ok {
			return false
		}
		switch f.Name {
		case "id", "name", "__typename":
		default:
			return false
		}
	}
	return len(sel) > 0
}

// loadPost loads a post; a post its author scheduled and that is not published yet is found for
// its author only, and a removed one for its author and moderators only (see moderation.go).
func loadPost(ctx context.Context, id string) (*store.Post, error) {
	l := loaderFrom(ctx)
	p, err := l.Post(ctx, id)
	if p != nil || err != nil {
		if err != nil {
			return nil, err
		}
		return visiblePost(ctx, p)
	}
	if v := viewerFrom(ctx); v != "" {
		return l.ScheduledPost(ctx, v, id)
	}
	return nil, nil
}
