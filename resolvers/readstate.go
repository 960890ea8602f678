package resolvers

import (
	"context"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/store"
)

// Read state and watching: the resolvers' side of store/readstate.go and store/watch.go.

// unreadCommentCount is Post.unreadCommentCount: 0 for an anonymous viewer.
//
// Called by readexec for a hole (store.ForHole) while the response cache makes a response, it
// registers the post with the response's splice and returns its index instead: the value is
// written per reader (store/readsplice.go), so the response stays shared.
func unreadCommentCount(ctx context.Context, p *store.Post) (int, error) {
	if sp := store.HoleSplice(ctx); sp != nil {
		return loaderFrom(ctx).Hole(ctx, sp, p)
	}
	n, _, err := loaderFrom(ctx).ReadState(ctx, viewerFrom(ctx), p)
	return n, err
}

// viewerHasRead is Post.viewerHasRead: false for an anonymous viewer.
func viewerHasRead(ctx context.Context, p *store.Post) (bool, error) {
	return loaderFrom(ctx).HasRead(ctx, viewerFrom(ctx), p.Key())
}

// postsMaybeUnread loads a page of posts with load, or, with hide set, of the posts the viewer
// has not marked read (store.Loader.PageWithoutRead); an anonymous viewer has read nothing.
func postsMaybeUnread(ctx context.Context, hide *bool, w store.Window, load func(store.Window) (*store.Page[*store.Post], error)) (*store.Page[*store.Post], error) {
	if hide == nil || !*hide {
		return load(w)
	}
	return loaderFrom(ctx).PageWithoutRead(ctx, viewerFrom(ctx), w, load)
}

// markPostRead is Mutation.markPostRead.
func markPostRead(ctx context.Context, st *store.Store, id string) (*store.Post, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	p, err := loadPost(ctx, id)
	if err != nil {
		return nil, err
	}
	if p == nil || p.PublishAt != nil {
		return nil, &store.Error{Kind: store.KindNotFound, Msg: "no such post"}
	}
	if err := st.MarkPostRead(ctx, uid, id); err != nil {
		return nil, err
	}
	wrote(ctx)
	return loadPost(ctx, id)
}

// watchMode converts a GraphQL watch mode to the store's.
func watchMode(m model.WatchMode) store.WatchMode { return store.WatchMode(m) }

// viewerWatch converts the store's mode to GraphQL's; nil for an anonymous viewer.
func viewerWatch(m store.WatchMode, err error) (*model.WatchMode, error) {
	if err != nil || m == "" {
		return nil, err
	}
	w := model.WatchMode(m)
	return &w, nil
}

// postViewerWatch is Post.viewerWatch.
func postViewerWatch(ctx context.Context, p *store.Post) (*model.WatchMode, error) {
	return viewerWatch(loaderFrom(ctx).PostWatch(ctx, viewerFrom(ctx), p.Key()))
}

// groupViewerWatch is Group.viewerWatch.
func groupViewerWatch(ctx context.Context, g *store.Group) (*model.WatchMode, error) {
	return viewerWatch(loaderFrom(ctx).GroupWatch(ctx, viewerFrom(ctx), g.Name))
}

// watchPost is Mutation.watchPost.
func watchPost(ctx context.Context, st *store.Store, id string, mode model.WatchMode) (*store.Post, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	p, err := loadPost(ctx, id)
	if err != nil {
		return nil, err
	}
	if p == nil || p.PublishAt != nil {
		return nil, &store.Error{Kind: store.KindNotFound, Msg: "no such post"}
	}
	if err := st.WatchPost(ctx, uid, id, watchMode(mode)); err != nil {
		return nil, err
	}
	wrote(ctx)
	return loadPost(ctx, id)
}

// watchGroup is Mutation.watchGroup.
func watchGroup(ctx context.Context, st *store.Store, name string, mode model.WatchMode) (*store.Group, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if err := st.WatchGroup(ctx, uid, name, watchMode(mode)); err != nil {
		return nil, err
	}
	wrote(ctx)
	return loaderFrom(ctx).WalkGroup(ctx, name, fieldNeeds(ctx, "Group", false))
}
