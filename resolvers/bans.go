package resolvers

import (
	"context"
	"time"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/store"
)

// Bans: banUser and unbanUser by a group's moderators (a group's bans) and the site admins (any
// ban, and site bans); Group.bans for the same people. See store/bans.go for what a ban refuses.

// banUser answers Mutation.banUser.
func banUser(ctx context.Context, st *store.Store, userID string, group *string, until *time.Time, reason string) (*store.Ban, error) {
	viewer, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	uid, err := store.ParseUserID(userID)
	if err != nil {
		return nil, err
	}
	b, err := st.BanUser(ctx, viewer, uid, deref(group), until, reason)
	if err != nil {
		return nil, err
	}
	wrote(ctx)
	return b, nil
}

// unbanUser answers Mutation.unbanUser.
func unbanUser(ctx context.Context, st *store.Store, userID string, group *string) (*store.Ban, error) {
	viewer, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	uid, err := store.ParseUserID(userID)
	if err != nil {
		return nil, err
	}
	b, err := st.UnbanUser(ctx, viewer, uid, deref(group))
	if err != nil {
		return nil, err
	}
	wrote(ctx)
	return b, nil
}

// groupBans answers Group.bans: the bans in force, for the group's moderators and the admins.
func groupBans(ctx context.Context, g *store.Group, first *int, after *string, last *int, before *string) (*model.BanConnection, error) {
	viewer, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	w, err := pageWindow(ctx, first, after, last, before)
	if err != nil {
		return nil, err
	}
	p, err := loaderFrom(ctx).GroupBans(ctx, viewer, g.Name, w)
	if err != nil {
		return nil, err
	}
	c := &model.BanConnection{PageInfo: pageInfo(p), TotalCount: p.Total,
		Edges: edges(p, func(cursor string, node *store.Ban) model.BanEdge { return model.BanEdge{Cursor: cursor, Node: node} }), Nodes: p.Items}
	return c, nil
}

// banModerator answers Ban.moderator: null when the user no longer exists.
func banModerator(ctx context.Context, b *store.Ban) (*store.User, error) {
	if b.Moderator == "" {
		return nil, nil
	}
	return loaderFrom(ctx).User(ctx, b.Moderator)
}
