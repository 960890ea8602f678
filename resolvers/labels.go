package resolvers

import (
	"context"

	"github.com/agora/agora/store"
)

// Content labels (see store/labels.go): the viewer's showNsfw setting, read with the session,
// decides what the request's loader reads (Operations.loader) and the response cache's key.

// setPostLabels sets a post's labels as the viewer: its author, or a moderator of its groups.
func setPostLabels(ctx context.Context, st *store.Store, id string, nsfw, spoiler *bool, reason *string) (*store.Post, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	p, err := st.SetPostLabels(ctx, uid, id, nsfw, spoiler, reason)
	wrote(ctx)
	return p, err
}

// showNSFW is User.showNsfw: the user's setting for the user themselves, false for everyone else.
func showNSFW(ctx context.Context, u *store.User) (bool, error) {
	v := viewerFrom(ctx)
	if v == "" || v != u.Key() {
		return false, nil
	}
	return loaderFrom(ctx).ShowsNSFW(ctx, v)
}

// derefBool returns *b, or false for nil.
func derefBool(b *bool) bool { return b != nil && *b }
