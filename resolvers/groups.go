package resolvers

import (
	"context"
	"time"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/store"
)

// Groups as aggregates: their fields, their moderators' changes, membership and the group feed.
// A list of groups (Query.group, suggestGroups, User.groups, Post.groups) walks its groups with
// what the selection reads of them, so the fields below find their reads in the loader.

// groupWrite finishes a mutation that returns a group: the request's reads are cleared and the
// group is walked with what the selection reads of it.
func groupWrite(ctx context.Context, g *store.Group, err error) (*store.Group, error) {
	wrote(ctx)
	if err != nil {
		return nil, err
	}
	loaderFrom(ctx).WalkGroups(ctx, []*store.Group{g}, fieldNeeds(ctx, "Group", false))
	return g, nil
}

func createGroup(ctx context.Context, s *store.Store, name string, description *string) (*store.Group, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	g, err := s.CreateGroup(ctx, uid, name, description)
	return groupWrite(ctx, g, err)
}

func updateGroup(ctx context.Context, s *store.Store, name string, description *string) (*store.Group, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	g, err := s.UpdateGroup(ctx, uid, name, edited(ctx, "description", description))
	return groupWrite(ctx, g, err)
}

// setModerator adds (add) or removes the user userID as a moderator of group.
func setModerator(ctx context.Context, s *store.Store, group, userID string, add bool) (*store.Group, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	target, err := store.ParseUserID(userID)
	if err != nil {
		return nil, err
	}
	change := s.RemoveModerator
	if add {
		change = s.AddModerator
	}
	g, err := change(ctx, uid, group, target)
	return groupWrite(ctx, g, err)
}

// setMembership makes the viewer join (join) or leave a group.
func setMembership(ctx context.Context, s *store.Store, name string, join bool) (*store.Group, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	change := s.LeaveGroup
	if join {
		change = s.JoinGroup
	}
	g, err := change(ctx, uid, name)
	return groupWrite(ctx, g, err)
}

func groupCreatedAt(ctx context.Context, g *store.Group) (*time.Time, error) {
	t, err := loaderFrom(ctx).GroupCreatedAt(ctx, g)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// userGroups is User.groups: the groups the user joined, most recently joined first.
func userGroups(ctx context.Context, u *store.User, first *int, after *string, last *int, before *string) (*model.GroupConnection, error) {
	w, err := pageWindow(ctx, first, after, last, before)
	if err != nil {
		return nil, err
	}
	p, err := loaderFrom(ctx).UserGroups(ctx, u.Key(), w, fieldNeeds(ctx, "Group", true))
	if err != nil {
		return nil, err
	}
	return groupConnection(p), nil
}

// groupConnection is a page of groups as a connection.
func groupConnection(p *store.Page[*store.Group]) *model.GroupConnection {
	return &model.GroupConnection{PageInfo: pageInfo(p), TotalCount: p.Total,
		Edges: edges(p, func(cursor string, node *store.Group) model.GroupEdge {
			return model.GroupEdge{Cursor: cursor, Node: node}
		}), Nodes: p.Items}
}

// groupFeed is Query.groupFeed: the posts of the viewer's groups, merged in sort order.
func groupFeed(ctx context.Context, sort *model.PostSort, first *int, after *string, last *int, before *string) (*model.PostConnection, error) {
	return viewerPosts(ctx, first, after, last, before, func(l *store.Loader, uid store.UserKey, w store.Window, needs func() *store.Needs) (*store.Page[*store.Post], error) {
		return l.GroupFeed(ctx, uid, postSort(sort), w, needs)
	})
}
