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

func createGroup(ctx context.Context, s *store.Store, name string, description *string, nsfw bool) (*store.Group, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	g, err := s.CreateGroupLabelled(ctx, uid, name, description, nsfw)
	return groupWrite(ctx, g, err)
}

// updateGroup is Mutation.updateGroup: an argument left out leaves its field, null clears it
// (as "" does), except postingRestricted, which null leaves.
func updateGroup(ctx context.Context, s *store.Store, name string, edit store.GroupEdit) (*store.Group, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	for arg, v := range map[string]**string{"description": &edit.Description, "title": &edit.Title,
		"iconUrl": &edit.IconURL, "bannerUrl": &edit.BannerURL, "rules": &edit.Rules} {
		*v = edited(ctx, arg, *v)
	}
	g, err := s.UpdateGroup(ctx, uid, name, edit)
	return groupWrite(ctx, g, err)
}

// directory is Query.groups: a page of the directory of groups.
func directory(ctx context.Context, sort *model.GroupSort, first *int, after *string, last *int, before *string) (*model.GroupConnection, error) {
	w, err := pageWindow(ctx, first, after, last, before)
	if err != nil {
		return nil, err
	}
	p, err := loaderFrom(ctx).Groups(ctx, groupSort(sort), w, fieldNeeds(ctx, "Group", true))
	if err != nil {
		return nil, err
	}
	return groupConnection(p), nil
}

// groupSort is the store's order of the directory; POPULAR by default.
func groupSort(s *model.GroupSort) store.GroupSort {
	if s == nil {
		return store.GroupsPopular
	}
	switch *s {
	case model.GroupSortNew:
		return store.GroupsNew
	case model.GroupSortActive:
		return store.GroupsActive
	case model.GroupSortName:
		return store.GroupsName
	}
	return store.GroupsPopular
}

// activityWindow is the store's window of Group.activeUsers; DAY by default.
func activityWindow(w *model.Window) store.ActivityWindow {
	if w == nil {
		return store.ActiveDay
	}
	switch *w {
	case model.WindowHour:
		return store.ActiveHour
	case model.WindowWeek:
		return store.ActiveWeek
	case model.WindowMonth:
		return store.ActiveMonth
	case model.WindowYear:
		return store.ActiveYear
	}
	return store.ActiveDay
}

// groupPage is what a group's page shows of its info.
type groupPage struct {
	title, icon, banner *string
	restricted          bool
}

// loadGroupPage loads a group's page fields (one read, shared by the fields through the loader).
func loadGroupPage(ctx context.Context, g *store.Group) (groupPage, error) {
	t, i, b, r, err := loaderFrom(ctx).GroupPage(ctx, g)
	return groupPage{t, i, b, r}, err
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
func groupFeed(ctx context.Context, sort *model.PostSort, first *int, after *string, last *int, before *string, hide *bool) (*model.PostConnection, error) {
	return viewerPosts(ctx, first, after, last, before, func(l *store.Loader, uid store.UserKey, w store.Window, needs func() *store.Needs) (*store.Page[*store.Post], error) {
		return postsMaybeUnread(ctx, hide, w, func(w store.Window) (*store.Page[*store.Post], error) {
			return l.GroupFeed(ctx, uid, postSort(sort), w, needs)
		})
	})
}
