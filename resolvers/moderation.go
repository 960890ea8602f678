package resolvers

import (
	"context"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/store"
)

// Removed content is seen by its author, the moderators of its post's groups and the site admins
// only: a removed post (and every comment on it) is null to anyone else, and a removed comment
// a tombstone, without author or text. Listings leave removed posts out for everyone (the store
// takes them out of every index), so only the resolvers that show one item decide, and deciding
// reads the viewer: the response is then cached per viewer, whoever asks.

// mayModerate reports whether the viewer wrote an item (author) or moderates the groups of its
// post p. It reads the viewer, so the response depends on who asks.
func mayModerate(ctx context.Context, author store.UserKey, p *store.Post) (bool, error) {
	v := viewerFrom(ctx)
	if v == "" {
		return false, nil
	}
	if v == author {
		return true, nil
	}
	return loaderFrom(ctx).CanModerate(ctx, v, p.GroupNames)
}

// visiblePost returns p as the viewer may see it: nil for a removed post they may not see.
func visiblePost(ctx context.Context, p *store.Post) (*store.Post, error) {
	if p == nil || !p.Removed {
		return p, nil
	}
	ok, err := mayModerate(ctx, p.Author, p)
	if err != nil || !ok {
		return nil, err
	}
	return p, nil
}

// visibleComment returns c as the viewer may see it: nil on a removed post they may not see,
// and a tombstone for a removed comment they may not see.
func visibleComment(ctx context.Context, c *store.Comment) (*store.Comment, error) {
	if c == nil {
		return nil, nil
	}
	p, err := loaderFrom(ctx).Post(ctx, c.PostID) // read with the comment
	if err != nil || p == nil {
		return nil, err
	}
	if p, err = visiblePost(ctx, p); err != nil || p == nil {
		return nil, err
	}
	return maskComment(ctx, c, p)
}

// maskComment returns a comment of the visible post p as the viewer may see it.
func maskComment(ctx context.Context, c *store.Comment, p *store.Post) (*store.Comment, error) {
	if !c.Removed || c.Deleted {
		return c, nil
	}
	ok, err := mayModerate(ctx, c.Author, p)
	if err != nil || ok {
		return c, err
	}
	return c.Masked(), nil
}

// visibleComments masks the removed comments of a page of a thread the viewer sees. Only a
// removed comment with replies is in a thread; a page without one reads nothing more.
func visibleComments(ctx context.Context, page *store.Page[*store.Comment]) (*store.Page[*store.Comment], error) {
	var out *store.Page[*store.Comment]
	for i, c := range page.Items {
		if !c.Removed || c.Deleted {
			continue
		}
		p, err := loaderFrom(ctx).Post(ctx, c.PostID)
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue
		}
		m, err := maskComment(ctx, c, p)
		if err != nil {
			return nil, err
		}
		if out == nil {
			cp := *page
			cp.Items = append([]*store.Comment(nil), page.Items...)
			out = &cp
		}
		out.Items[i] = m
	}
	if out == nil {
		return page, nil
	}
	return out, nil
}

// loadComment loads a comment as the viewer may see it.
func loadComment(ctx context.Context, id string) (*store.Comment, error) {
	c, err := loaderFrom(ctx).Comment(ctx, id)
	if err != nil {
		return nil, err
	}
	return visibleComment(ctx, c)
}

// removePost answers Mutation.removePost.
func (r *Resolver) removePost(ctx context.Context, id, reason string) (*store.Post, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	p, err := r.Store.RemovePost(ctx, uid, id, reason)
	wrote(ctx)
	return p, err
}

// restorePost answers Mutation.restorePost.
func (r *Resolver) restorePost(ctx context.Context, id string) (*store.Post, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	p, err := r.Store.RestorePost(ctx, uid, id)
	wrote(ctx)
	return p, err
}

// removeComment answers Mutation.removeComment.
func (r *Resolver) removeComment(ctx context.Context, id, reason string) (*store.Comment, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	c, err := r.Store.RemoveComment(ctx, uid, id, reason)
	wrote(ctx)
	return c, err
}

// restoreComment answers Mutation.restoreComment.
func (r *Resolver) restoreComment(ctx context.Context, id string) (*store.Comment, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	c, err := r.Store.RestoreComment(ctx, uid, id)
	wrote(ctx)
	return c, err
}

// lockPost answers Mutation.lockPost.
func (r *Resolver) lockPost(ctx context.Context, id string, locked bool, reason *string) (*store.Post, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	p, err := r.Store.LockPost(ctx, uid, id, locked, reason)
	wrote(ctx)
	return p, err
}

// pinPost answers Mutation.pinPost.
func (r *Resolver) pinPost(ctx context.Context, id, group string, pinned bool, reason *string) (*store.Post, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	p, err := r.Store.PinPost(ctx, uid, id, group, pinned, reason)
	wrote(ctx)
	return p, err
}

// commentPage is the connection of a page of a thread as the viewer may see it.
func commentPage(ctx context.Context, p *store.Page[*store.Comment]) (*model.CommentConnection, error) {
	p, err := visibleComments(ctx, p)
	if err != nil {
		return nil, err
	}
	return commentConnection(p), nil
}
