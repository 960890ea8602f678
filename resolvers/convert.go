package resolvers

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/store"
)

// defaultFirst is the schema's default for first.
const defaultFirst = 20

// pageWindow reads the paging arguments of the connection field being resolved (see window), and
// what its selection shows of the page (see unshown).
func pageWindow(ctx context.Context, first *int, after *string, last *int, before *string) (store.Window, error) {
	given := first != nil
	fc := graphql.GetFieldContext(ctx)
	if fc != nil && fc.Field.Field != nil {
		given = argGiven(fc.Field.Field, graphql.GetOperationContext(ctx).Variables, "first")
	}
	w, err := window(first, after, last, before, given)
	if err == nil && fc != nil && fc.Field.Field != nil {
		var memo *shownMemo
		var cache *needsCache
		if r := RequestFrom(ctx); r != nil {
			memo, cache = r.shown, r.needs
		}
		w.NoTotal, w.NoCursors = cache.unshown(memo, graphql.GetOperationContext(ctx), fc.Field)
	}
	return w, err
}

// window turns a connection's paging arguments into the store's Window: a forward page of first
// (default 20) after after, or, when last is given, a backward page of last before before. The
// schema gives first a default, so it always arrives; it counts as given only when firstGiven
// says the query sets it, and a first that is given with last is refused by the store. The range
// of last is checked here, so that its error names last even when it is 0.
func window(first *int, after *string, last *int, before *string, firstGiven bool) (store.Window, error) {
	w := store.Window{After: deref(after), Before: deref(before)}
	if last == nil {
		w.First = defaultFirst
		if first != nil {
			w.First = *first
		}
		return w, nil
	}
	if err := store.CheckLast(*last); err != nil {
		return store.Window{}, err
	}
	w.Last = *last
	if first != nil && firstGiven {
		w.First = *first
	}
	return w, nil
}

// edited returns what an editor's optional String argument name (its value v) asks of its field,
// by the one rule of every editor (editPost, updateGroup, updateProfile, updateSiteFilters): an argument left out
// leaves the field (nil); null or "" clears it (""); any other string sets it.
func edited(ctx context.Context, name string, v *string) *string {
	if v != nil || !argPresent(ctx, name) {
		return v
	}
	clear := ""
	return &clear
}

// checkedIdempotencyKey is an optional idempotencyKey argument as the store takes it, "" for none. A key
// given is 1–64 characters: an empty one is KindInvalid, not no key, or a client retrying with it
// would create twice.
func checkedIdempotencyKey(k *string) (string, error) {
	if k != nil && *k == "" {
		return "", &store.Error{Kind: store.KindInvalid, Msg: "idempotencyKey must be 1–64 characters; leave it out for none"}
	}
	return deref(k), nil
}

// editedList is a list argument of an editor as the store takes it: nil when the argument is
// left out (the field stays), the list given, and an empty list for null (the field is cleared).
func editedList(ctx context.Context, name string, v []string) *[]string {
	if v != nil {
		return &v
	}
	if !argPresent(ctx, name) {
		return nil
	}
	return &[]string{}
}

// argPresent reports whether the field being resolved was given its argument name, null
// included: written in the document, or a variable that the request provides or that has a
// default. A variable the request leaves out leaves the argument out.
func argPresent(ctx context.Context, name string) bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil {
		return false
	}
	a := fc.Field.Arguments.ForName(name)
	if a == nil || a.Value == nil {
		return false
	}
	if a.Value.Kind == ast.Variable {
		_, ok := graphql.GetOperationContext(ctx).Variables[a.Value.Raw]
		return ok
	}
	return true
}

// argGiven reports whether a field's argument is set by the query, to a value or to a variable
// that has one (from the request or the variable's default), rather than left to the schema's
// default or set to null.
func argGiven(f *ast.Field, vars map[string]any, name string) bool {
	a := f.Arguments.ForName(name)
	if a == nil || a.Value == nil {
		return false
	}
	if a.Value.Kind == ast.Variable {
		return vars[a.Value.Raw] != nil
	}
	return a.Value.Kind != ast.NullValue
}

func postSort(s *model.PostSort) store.PostSort {
	if s == nil {
		return store.SortHot
	}
	switch *s {
	case model.PostSortNew:
		return store.SortNew
	case model.PostSortTop:
		return store.SortTop
	case model.PostSortTopHour:
		return store.SortTopHour
	case model.PostSortTopDay:
		return store.SortTopDay
	case model.PostSortTopWeek:
		return store.SortTopWeek
	case model.PostSortTopMonth:
		return store.SortTopMonth
	case model.PostSortTopYear:
		return store.SortTopYear
	case model.PostSortActive:
		return store.SortActive
	case model.PostSortControversial:
		return store.SortControversial
	case model.PostSortMostComments:
		return store.SortMostComments
	}
	return store.SortHot
}

// userPostSort maps the order of User.posts to the store's: NEW when not given.
func userPostSort(s *model.PostSort) store.PostSort {
	if s == nil {
		return store.SortNew
	}
	return postSort(s)
}

// searchSort maps a search order to the store's; RELEVANCE when not given.
func searchSort(s *model.SearchSort) store.SearchSort {
	if s == nil {
		return store.SearchRelevance
	}
	switch *s {
	case model.SearchSortNew:
		return store.SearchNew
	case model.SearchSortTop:
		return store.SearchTop
	}
	return store.SearchRelevance
}

// voteValue maps a vote direction to the store's 1, -1 and 0.
func voteValue(d model.VoteDirection) int {
	switch d {
	case model.VoteDirectionUp:
		return 1
	case model.VoteDirectionDown:
		return -1
	}
	return 0
}

func voteDirection(v int) model.VoteDirection {
	switch v {
	case 1:
		return model.VoteDirectionUp
	case -1:
		return model.VoteDirectionDown
	}
	return model.VoteDirectionNone
}

// pageInfo returns the PageInfo of a page.
func pageInfo[T any](p *store.Page[T]) *model.PageInfo {
	// One allocation for the PageInfo and its cursors, rather than one each: a thread page
	// makes one per page of replies, hundreds per response.
	return setPageInfo(new(infoWithCursors), p)
}

// infoWithCursors is a PageInfo with room for its cursors, so that both take one allocation, or
// none of their own inside a connection (commentConnection).
type infoWithCursors struct {
	info       model.PageInfo
	start, end string
}

// setPageInfo makes w the PageInfo of p and returns it.
func setPageInfo[T any](w *infoWithCursors, p *store.Page[T]) *model.PageInfo {
	w.info = model.PageInfo{HasNextPage: p.HasNext, HasPreviousPage: p.HasPrev}
	w.start, w.end = p.StartCursor(), p.EndCursor()
	if w.start != "" {
		w.info.StartCursor = &w.start
	}
	if w.end != "" {
		w.info.EndCursor = &w.end
	}
	return &w.info
}

// viewerPosts answers a signed-in viewer's own list of posts (feed, groupFeed, savedPosts,
// scheduledPosts): load reads its page, and what the selection reads of the posts (needs).
func viewerPosts(ctx context.Context, first *int, after *string, last *int, before *string,
	load func(l *store.Loader, uid store.UserKey, w store.Window, needs func() *store.Needs) (*store.Page[*store.Post], error)) (*model.PostConnection, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	w, err := pageWindow(ctx, first, after, last, before)
	if err != nil {
		return nil, err
	}
	p, err := load(loaderFrom(ctx), uid, w, fieldNeeds(ctx, "Post", true))
	if err != nil {
		return nil, err
	}
	return postConnection(p), nil
}

func postConnection(p *store.Page[*store.Post]) *model.PostConnection {
	c := &model.PostConnection{PageInfo: pageInfo(p), TotalCount: p.Total,
		Edges: edges(p, func(cursor string, node *store.Post) model.PostEdge {
			return model.PostEdge{Cursor: cursor, Node: node}
		}), Nodes: p.Items}
	return c
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// edges returns the edges of a page's items, made by edge from each item and its cursor and
// allocated together rather than one by one.
func edges[E, T any](p *store.Page[T], edge func(cursor string, node T) E) []*E {
	all := make([]E, len(p.Items))
	out := make([]*E, len(p.Items))
	for i, it := range p.Items {
		all[i] = edge(p.Cursors[i], it)
		out[i] = &all[i]
	}
	return out
}
