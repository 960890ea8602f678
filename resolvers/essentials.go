package resolvers

import (
	"context"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/store"
)

// The everyday essentials of a user's own content: editing a post, saving posts, the profile.

func editPost(ctx context.Context, st *store.Store, id string, in store.PostEdit) (*store.Post, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	in.Title, in.Body, in.URL = edited(ctx, "title", in.Title), edited(ctx, "body", in.Body), edited(ctx, "url", in.URL)
	p, err := st.EditPost(ctx, uid, id, in)
	wrote(ctx)
	return p, err
}

// savePost saves (save) or unsaves a post of the viewer's choosing.
func savePost(ctx context.Context, st *store.Store, id string, save bool) (*store.Post, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	var p *store.Post
	if save {
		p, err = st.SavePost(ctx, uid, id)
	} else {
		p, err = st.UnsavePost(ctx, uid, id)
	}
	wrote(ctx)
	return p, err
}

func savedPosts(ctx context.Context, first *int, after *string, last *int, before *string) (*model.PostConnection, error) {
	return viewerPosts(ctx, first, after, last, before, func(l *store.Loader, uid store.UserKey, w store.Window, needs func() *store.Needs) (*store.Page[*store.Post], error) {
		return l.SavedPosts(ctx, uid, w, needs)
	})
}

func viewerSaved(ctx context.Context, p *store.Post) (bool, error) {
	return loaderFrom(ctx).Saved(ctx, viewerFrom(ctx), p)
}

func updateProfile(ctx context.Context, st *store.Store, in store.ProfileEdit) (*store.User, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	in.Bio, in.AvatarURL = edited(ctx, "bio", in.Bio), edited(ctx, "avatarUrl", in.AvatarURL)
	u, err := st.UpdateProfile(ctx, uid, in)
	wrote(ctx)
	return u, err
}
