package resolvers

import (
	"context"
	"fmt"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/store"
)

// commentSort maps the schema's CommentSort (default NEW) to the store's.
func commentSort(s *model.CommentSort) store.CommentSort {
	if s == nil {
		return store.CommentsNew
	}
	switch *s {
	case model.CommentSortOld:
		return store.CommentsOld
	case model.CommentSortTop:
		return store.CommentsTop
	case model.CommentSortBest:
		return store.CommentsBest
	case model.CommentSortControversial:
		return store.CommentsControversial
	}
	return store.CommentsNew
}

// commentConnection returns the connection of a page of comments.
func commentConnection(p *store.Page[*store.Comment]) *model.CommentConnection {
	// The connection and its PageInfo in one allocation: a thread page makes one per page of
	// replies, hundreds per response.
	cw := &struct {
		c    model.CommentConnection
		info infoWithCursors
	}{c: model.CommentConnection{TotalCount: p.Total, Nodes: p.Items,
		Edges: edges(p, func(cursor string, node *store.Comment) model.CommentEdge {
			return model.CommentEdge{Cursor: cursor, Node: node}
		})}}
	cw.c.PageInfo = setPageInfo(&cw.info, p)
	return &cw.c
}

// commentPost loads the post of a comment, which exists while the comment can be read.
func commentPost(ctx context.Context, c *store.Comment) (*store.Post, error) {
	p, err := loaderFrom(ctx).Post(ctx, c.PostID)
	if err == nil && p == nil {
		err = fmt.Errorf("post %s of comment %s is missing", c.PostID, c.ID)
	}
	return p, err
}

// commentAuthor loads the author of a comment; nil once it is deleted.
func commentAuthor(ctx context.Context, c *store.Comment) (*store.User, error) {
	if c.Deleted || c.Author == "" {
		return nil, nil
	}
	u, err := author(ctx, c.Author, c)
	if u != nil && store.IsDeletedUser(u) {
		return nil, err // by a deleted account: no author
	}
	return u, err
}

// userComments is User.comments: a page of the user's comments in the order sort.
func userComments(ctx context.Context, u *store.User, sort *model.CommentSort, first *int, after *string, last *int, before *string) (*model.CommentConnection, error) {
	w, err := pageWindow(ctx, first, after, last, before)
	if err != nil {
		return nil, err
	}
	p, err := loaderFrom(ctx).UserComments(ctx, u.Key(), commentSort(sort), w)
	if err != nil {
		return nil, err
	}
	return commentConnection(p), nil
}
