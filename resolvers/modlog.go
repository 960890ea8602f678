package resolvers

import (
	"context"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/store"
)

// The moderation log is public, as on Lemmy: anyone may read what the moderators did, by whom,
// why and when. An action's target is shown only to those who may see it (a removed post to its
// author and the moderators), through the same node loading as node(id).

// modLog answers Query.modLog.
func modLog(ctx context.Context, group string, first *int, after *string, last *int, before *string) (*model.ModActionConnection, error) {
	w, err := pageWindow(ctx, first, after, last, before)
	if err != nil {
		return nil, err
	}
	p, err := loaderFrom(ctx).ModLog(ctx, group, w)
	if err != nil {
		return nil, err
	}
	c := &model.ModActionConnection{PageInfo: pageInfo(p), TotalCount: p.Total,
		Edges: edges(p, func(cursor string, node *store.ModAction) model.ModActionEdge {
			return model.ModActionEdge{Cursor: cursor, Node: node}
		}), Nodes: p.Items}
	return c, nil
}

// groupOrNil is the group named name; nil for "".
func groupOrNil(name string) *store.Group {
	if name == "" {
		return nil
	}
	return store.NewGroup(name)
}
