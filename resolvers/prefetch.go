package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/agora/agora/store"
)

// selected returns the fields selected below the field being resolved along path (for a
// connection, path "edges", "node" gives the fields asked of each node), fragments resolved for
// an object of the type names in satisfies.
func selected(ctx context.Context, satisfies []string, path ...string) map[string]graphql.CollectedField {
	opCtx := graphql.GetOperationContext(ctx)
	fields := graphql.CollectFieldsCtx(ctx, nil)
	for i, name := range path {
		var next []graphql.CollectedField
		sat := []string(nil)
		if i == len(path)-1 {
			sat = satisfies
		}
		for _, f := range fields {
			if f.Name == name {
				next = append(next, graphql.CollectFields(opCtx, f.Selections, sat)...)
			}
		}
		fields = next
	}
	out := make(map[string]graphql.CollectedField, len(fields))
	for _, f := range fields {
		out[f.Name] = f
	}
	return out
}

// hasSubfield reports whether a selected field asks for the subfield name.
func hasSubfield(ctx context.Context, f graphql.CollectedField, satisfies []string, name string) bool {
	for _, sf := range graphql.CollectFields(graphql.GetOperationContext(ctx), f.Selections, satisfies) {
		if sf.Name == name {
			return true
		}
	}
	return false
}

var postTypes = []string{"Post", "Node"}

// prefetchPosts starts loading, in one round trip, what the selection asks of each post of a
// connection: authors, the viewer's votes and group sizes. The field resolvers then find the
// results in the loader instead of each waiting for a batch window.
func prefetchPosts(ctx context.Context, st *store.Store, posts []*store.Post, path ...string) {
	if len(posts) == 0 {
		return
	}
	fields := selected(ctx, postTypes, path...)
	var reads []store.Read
	viewer := viewerFrom(ctx)
	_, author := fields["author"]
	_, vote := fields["viewerVote"]
	groupsField, groups := fields["groups"]
	groupCounts := groups && hasSubfield(ctx, groupsField, []string{"Group", "Node"}, "postCount")
	for _, p := range posts {
		if author {
			if r, ok := st.UserRead(p.AuthorID); ok {
				reads = append(reads, r)
			}
		}
		if vote && viewer != "" {
			if r, ok := st.PostVoteRead(p, viewer); ok {
				reads = append(reads, r)
			}
		}
		if groupCounts {
			for _, g := range p.GroupNames {
				reads = append(reads, st.GroupPostCountRead(g))
			}
		}
	}
	loaderFrom(ctx).Prefetch(ctx, reads...)
}
