package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/store"
)

// Reports: a signed-in user reports a post or a comment; the moderators of its groups (the admins
// for a post in no group) list and resolve reports; a report is seen by them and by its reporter.
// Every field here depends on who asks, so each reads the viewer.

// reportTarget answers Mutation.reportPost and Mutation.reportComment: comment says which.
func reportTarget(ctx context.Context, s *store.Store, id, reason string, comment bool) (*store.Report, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	var r *store.Report
	if comment {
		r, err = s.ReportComment(ctx, uid, id, reason)
	} else {
		r, err = s.ReportPost(ctx, uid, id, reason)
	}
	wrote(ctx)
	return r, err
}

// resolveReport answers Mutation.resolveReport: resolution nil is ACTIONED.
func resolveReport(ctx context.Context, s *store.Store, id string, resolution *store.ReportResolution) (*store.Report, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	res := store.ReportActioned
	if resolution != nil {
		res = *resolution
	}
	r, err := s.ResolveReportAs(ctx, uid, id, res)
	wrote(ctx)
	return r, err
}

// reports answers Query.reports.
func reports(ctx context.Context, group *string, unresolvedOnly *bool, first *int, after *string, last *int, before *string) (*model.ReportConnection, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	w, err := pageWindow(ctx, first, after, last, before)
	if err != nil {
		return nil, err
	}
	open := unresolvedOnly == nil || *unresolvedOnly
	p, err := loaderFrom(ctx).Reports(ctx, uid, deref(group), open, w, reportNeeds(ctx))
	if err != nil {
		return nil, err
	}
	c := &model.ReportConnection{PageInfo: pageInfo(p), TotalCount: p.Total,
		Edges: edges(p, func(cursor string, node *store.Report) model.ReportEdge {
			return model.ReportEdge{Cursor: cursor, Node: node}
		}), Nodes: p.Items}
	return c, nil
}

// reportNeeds reads, from the selection of a ReportConnection, which of each report's post,
// comment, reporter and resolver the response shows.
func reportNeeds(ctx context.Context) store.ReportNeeds {
	var n store.ReportNeeds
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil {
		return n
	}
	op := graphql.GetOperationContext(ctx)
	mark := func(sel []graphql.CollectedField) {
		for _, f := range sel {
			switch f.Name {
			case "post":
				n.Post = true
			case "comment":
				n.Comment = true
			case "reporter":
				n.Reporter = true
			case "resolvedBy":
				n.ResolvedBy = true
			}
		}
	}
	for _, f := range graphql.CollectFields(op, fc.Field.Selections, nil) {
		switch f.Name {
		case "nodes":
			mark(graphql.CollectFields(op, f.Selections, []string{"Report", "Node"}))
		case "edges":
			for _, e := range graphql.CollectFields(op, f.Selections, nil) {
				if e.Name == "node" {
					mark(graphql.CollectFields(op, e.Selections, []string{"Report", "Node"}))
				}
			}
		}
	}
	return n
}

// loadReport loads a report for node(id): nil unless the viewer may see it.
func loadReport(ctx context.Context, id string) (*store.Report, error) {
	return loaderFrom(ctx).Report(ctx, viewerFrom(ctx), id)
}

// reportPost is Report.post: the post reported, or the comment's post; nil once deleted.
func reportPost(ctx context.Context, r *store.Report) (*store.Post, error) {
	return loadPost(ctx, r.PostID)
}

// reportComment is Report.comment: the comment reported, as the viewer may see it (see
// moderation.go: a reporter sees a removed one as a tombstone, and none on a removed post); nil
// for a post, and once deleted.
func reportComment(ctx context.Context, r *store.Report) (*store.Comment, error) {
	if r.CommentID == "" {
		return nil, nil
	}
	c, err := loadComment(ctx, r.CommentID)
	if err != nil || c == nil || c.Deleted {
		return nil, err
	}
	return c, nil
}

// reportReporter is Report.reporter: nil to a moderator whose own post or comment the report is
// about (store.Loader.ReporterFor).
func reportReporter(ctx context.Context, r *store.Report) (*store.User, error) {
	by, err := loaderFrom(ctx).ReporterFor(ctx, viewerFrom(ctx), r)
	if err != nil || by == "" {
		return nil, err
	}
	return mustUser(ctx, by)
}

// reportResolvedBy is Report.resolvedBy: nil while open.
func reportResolvedBy(ctx context.Context, r *store.Report) (*store.User, error) {
	if r.ResolvedBy == "" {
		return nil, nil
	}
	return mustUser(ctx, r.ResolvedBy)
}

// postReportCount is Post.reportCount: nil unless the viewer moderates one of its groups or is
// an admin.
func postReportCount(ctx context.Context, p *store.Post) (*int, error) {
	return loaderFrom(ctx).ReportCount(ctx, viewerFrom(ctx), p.GroupNames, p.ID)
}

// commentReportCount is Comment.reportCount: nil unless the viewer moderates one of its post's
// groups or is an admin.
func commentReportCount(ctx context.Context, c *store.Comment) (*int, error) {
	v := viewerFrom(ctx)
	if v == "" {
		return nil, nil
	}
	p, err := commentPost(ctx, c)
	if err != nil {
		return nil, err
	}
	return loaderFrom(ctx).ReportCount(ctx, v, p.GroupNames, c.ID)
}
