package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/store"
	"github.com/vektah/gqlparser/v2/ast"
)

// userConnection converts a page of users.
func userConnection(p *store.Page[*store.User]) *model.UserConnection {
	c := &model.UserConnection{PageInfo: pageInfo(p), TotalCount: p.Total,
		Edges: edges(p, func(cursor string, node *store.User) model.UserEdge {
			return model.UserEdge{Cursor: cursor, Node: node}
		}), Nodes: p.Items}
	return c
}

// leaderboardEdges converts the entries of a leaderboard page.
func leaderboardEdges(p *store.Page[*store.Ranked]) []*model.LeaderboardEdge {
	edges := make([]*model.LeaderboardEdge, len(p.Items))
	for i, r := range p.Items {
		edges[i] = &model.LeaderboardEdge{Cursor: p.Cursors[i], Node: r.User, Rank: r.Rank, Karma: r.Karma}
	}
	return edges
}

// leaderboardConnection converts a leaderboard page.
func leaderboardConnection(p *store.Page[*store.Ranked]) *model.LeaderboardConnection {
	users := make([]*store.User, len(p.Items))
	for i, r := range p.Items {
		users[i] = r.User
	}
	return &model.LeaderboardConnection{Edges: leaderboardEdges(p), Nodes: users, PageInfo: pageInfo(p), TotalCount: p.Total}
}

// intOr applies a schema default to an optional Int argument.
func intOr(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

// leaderboardNeeds returns what a leaderboard selection reads of each user: edges.node of a
// connection, or node of a list of edges.
func leaderboardNeeds(ctx context.Context, connection bool) func() *store.Needs {
	return func() *store.Needs {
		fc := graphql.GetFieldContext(ctx)
		if fc == nil || fc.Field.Field == nil {
			return nil
		}
		b := newNeedsBuilder(ctx)
		sel := fc.Field.Selections
		n := &store.Needs{}
		op := b.op
		if connection {
			var edgeSel ast.SelectionSet
			for _, e := range graphql.CollectFields(op, sel, nil) {
				switch e.Name {
				case "edges":
					edgeSel = append(edgeSel, e.Selections...)
				case "nodes": // the users themselves
					b.into(n, e.Selections, "User")
				}
			}
			sel = edgeSel
		}
		for _, f := range graphql.CollectFields(op, sel, nil) {
			if f.Name == "node" {
				b.into(n, f.Selections, "User")
			}
		}
		return n
	}
}
