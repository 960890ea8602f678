package resolvers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

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
	}
	return store.CommentsNew
}

func commentConnection(p *store.Page[*store.Comment]) *model.CommentConnection {
	c := &model.CommentConnection{PageInfo: pageInfo(p), TotalCount: p.Total, Edges: make([]*model.CommentEdge, len(p.Items))}
	for i, it := range p.Items {
		c.Edges[i] = &model.CommentEdge{Cursor: p.Cursors[i], Node: it}
	}
	return c
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
	if c.Deleted || c.AuthorID == "" {
		return nil, nil
	}
	return mustUser(ctx, c.AuthorID)
}

// commentBody is the text of a comment; nil once it is deleted.
func commentBody(c *store.Comment) *string {
	if c.Deleted {
		return nil
	}
	t := c.Text
	return &t
}

// threadNeeds returns, for the comment connection being resolved, what the rest of the query reads
// below it, so that the loader can read a whole thread level by level. It is called lazily, only
// when the loader has not already walked this part of the thread.
func threadNeeds(ctx context.Context) func() store.CommentNeeds {
	return func() store.CommentNeeds {
		fc := graphql.GetFieldContext(ctx)
		if fc == nil || fc.Field.Field == nil {
			return store.CommentNeeds{}
		}
		return connectionNeeds(ctx, graphql.GetOperationContext(ctx), fc.Field.Selections)
	}
}

// connectionNeeds reads the selection set of a CommentConnection.
func connectionNeeds(ctx context.Context, op *graphql.OperationContext, sel ast.SelectionSet) store.CommentNeeds {
	var needs store.CommentNeeds
	for _, edges := range graphql.CollectFields(op, sel, []string{"CommentConnection"}) {
		if edges.Name != "edges" {
			continue
		}
		for _, node := range graphql.CollectFields(op, edges.Selections, []string{"CommentEdge"}) {
			if node.Name == "node" {
				commentNeeds(ctx, op, node.Selections, &needs)
			}
		}
	}
	return needs
}

// commentNeeds adds what a selection set on Comment reads to needs.
func commentNeeds(ctx context.Context, op *graphql.OperationContext, sel ast.SelectionSet, needs *store.CommentNeeds) {
	for _, f := range graphql.CollectFields(op, sel, []string{"Comment", "Node"}) {
		switch f.Name {
		case "author":
			needs.Author = true
		case "viewerVote":
			needs.Viewer = viewerFrom(ctx)
		case "replies":
			args := f.ArgumentMap(op.Variables)
			rn := store.ReplyNeeds{Sort: store.CommentsNew, First: 20}
			if s, ok := args["sort"].(string); ok {
				cs := model.CommentSort(s)
				rn.Sort = commentSort(&cs)
			}
			if n, ok := argInt(args["first"]); ok {
				rn.First = n
			}
			if a, ok := args["after"].(string); ok {
				rn.After = a
			}
			rn.Needs = connectionNeeds(ctx, op, f.Selections)
			needs.Replies = append(needs.Replies, rn)
		}
	}
}

// argInt reads an Int argument as gqlgen may hold it: a literal or a coerced variable.
func argInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case float64:
		return int(x), true
	case json.Number:
		n, err := x.Int64()
		return int(n), err == nil
	}
	return 0, false
}
