package resolvers

import (
	"context"
	"encoding/json"
	"sync"
	"weak"

	"github.com/99designs/gqlgen/graphql"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/internal/gqlvar"
	"github.com/agora/agora/store"
)

// The resolvers of lists and of root fields tell the loader, from the selection set, what the
// response reads below their items (store.Needs), so that store.Loader.Walk reads the whole
// subtree level by level, one pipeline per level. This is the only prefetching there is.

// fieldNeeds returns, lazily, what the selection of the field being resolved reads of an object
// of type typ: the field's own selection for a single object (Query.post), or that of
// edges.node for a connection (Query.posts). It is evaluated only when the loader has not already
// walked the items.
func fieldNeeds(ctx context.Context, typ string, connection bool) func() *store.Needs {
	return func() *store.Needs {
		fc := graphql.GetFieldContext(ctx)
		if fc == nil || fc.Field.Field == nil {
			return nil
		}
		b := newNeedsBuilder(ctx)
		build := func() *store.Needs {
			if connection {
				return b.connection(fc.Field.Selections, typ)
			}
			return b.object(fc.Field.Selections, typ)
		}
		var cache *needsCache
		if r := RequestFrom(ctx); r != nil {
			cache = r.needs
		}
		return cache.get(&b, fc.Field, needsKind{typ: typ, connection: connection, splice: b.splice}, build)
	}
}

// needsCache keeps what the selection of a field of a document reads (store.Needs), so that the
// requests of a document kept by the executor derive it once rather than once each: per field of
// the document, the type read and the request's read-state splicing, for the selections that name
// no variable and no viewer field (whose Needs are the same for every request). A field is known
// by a weak pointer to its syntax node: the cache keeps no document alive, and a node parsed later
// at the same address is another key. Bounded, least recently used out first.
type needsCache struct {
	lru *lru.Cache[needsKey, needsEntry]
	// shown keeps, likewise, what the selections of connection fields leave out of their pages
	// (see unshown), for the selections that name no variable.
	shown *lru.Cache[weak.Pointer[ast.Field], shownEntry]
}

// shownEntry is what a connection's selection leaves out (see unshown), or, when fixed is false,
// the mark of a selection whose answer depends on its variables.
type shownEntry struct {
	noTotal, noCursors, fixed bool
}

// needsCacheSize is how many fields' Needs are kept at most.
const needsCacheSize = 4096

// needsKey is a field of a document, read as kind.
type needsKey struct {
	field weak.Pointer[ast.Field]
	kind  needsKind
}

// needsKind is what a field's Needs are derived for: the type of its items, whether it is a
// connection, and whether read state is left as holes.
type needsKind struct {
	typ                string
	connection, splice bool
}

// needsEntry is a field's Needs, or, when fixed is false, the mark of a selection whose Needs
// depend on the request (its variables or its viewer): derived per request.
type needsEntry struct {
	needs *store.Needs
	fixed bool
}

func newNeedsCache() *needsCache {
	c, err := lru.New[needsKey, needsEntry](needsCacheSize)
	if err != nil {
		panic(err) // only for a size below 1
	}
	shown, err := lru.New[weak.Pointer[ast.Field], shownEntry](needsCacheSize)
	if err != nil {
		panic(err)
	}
	return &needsCache{lru: c, shown: shown}
}

// unshown is unshown for the selection of connection field f: kept across requests when it names
// no variable, else remembered for the operation in memo (see unshownMemo).
func (c *needsCache) unshown(memo *shownMemo, op *graphql.OperationContext, f graphql.CollectedField) (noTotal, noCursors bool) {
	if c == nil || f.Field == nil || !ownSelection(f) {
		return unshownMemo(memo, op, f.Selections)
	}
	k := weak.Make(f.Field)
	e, ok := c.shown.Get(k)
	if !ok {
		e.fixed = !gqlvar.InSelection(op.Doc, f.Field.SelectionSet)
		if e.fixed {
			e.noTotal, e.noCursors = unshown(op, f.Selections)
		}
		c.shown.Add(k, e)
	}
	if !e.fixed {
		return unshownMemo(memo, op, f.Selections)
	}
	return e.noTotal, e.noCursors
}

// get returns the Needs of field f read as kind: the kept ones, or build's, kept when they hold
// for every request. A nil cache, and a field whose selection gqlgen merged from several fields
// of the document (which its node alone does not describe), always build. The Needs returned are
// shared: nobody writes them (the loader copies what it changes).
func (c *needsCache) get(b *needsBuilder, f graphql.CollectedField, kind needsKind, build func() *store.Needs) *store.Needs {
	if c == nil || !ownSelection(f) {
		return build()
	}
	k := needsKey{field: weak.Make(f.Field), kind: kind}
	if e, ok := c.lru.Get(k); ok {
		if e.fixed {
			return e.needs
		}
		return build()
	}
	if gqlvar.InSelection(b.op.Doc, f.Field.SelectionSet) {
		c.lru.Add(k, needsEntry{})
		return build()
	}
	b.viewerRead = new(bool)
	n := build()
	c.lru.Add(k, needsEntry{needs: n, fixed: !*b.viewerRead})
	return n
}

// ownSelection reports whether the selection of a collected field is its node's own: gqlgen
// appends the selections of every field of the same response key (copies them), so a field
// selected once has exactly its node's.
func ownSelection(f graphql.CollectedField) bool {
	own := f.Field.SelectionSet
	if len(f.Selections) != len(own) {
		return false
	}
	for i, s := range f.Selections {
		if s != own[i] {
			return false
		}
	}
	return true
}

// listNeeds is fieldNeeds for a field that returns a plain list of objects of type typ.
func listNeeds(ctx context.Context, typ string) func() *store.Needs {
	return fieldNeeds(ctx, typ, false)
}

// needsBuilder turns selection sets into store.Needs.
type needsBuilder struct {
	op      *graphql.OperationContext
	viewerF func() store.UserKey
	shown   *shownMemo // the request's; may be nil
	splice  bool       // read state may be left as holes (store.ReadStateSplice)
	// viewerRead, when not nil, is set when the Needs built read the viewer (see needsCache).
	viewerRead *bool
}

// viewer returns the viewer, noting that the Needs being built depend on it.
func (b needsBuilder) viewer() store.UserKey {
	if b.viewerRead != nil {
		*b.viewerRead = true
	}
	return b.viewerF()
}

// newNeedsBuilder returns the needsBuilder of the operation of ctx.
func newNeedsBuilder(ctx context.Context) needsBuilder {
	b := needsBuilder{op: graphql.GetOperationContext(ctx), viewerF: viewerKey(ctx), splice: store.ReadStateSpliceOf(ctx) != nil}
	if r := RequestFrom(ctx); r != nil {
		b.shown = r.shown
	}
	return b
}

// connection reads the selection of a connection: what edges.node and nodes read of each item.
// A listing of posts reads their bodies only when the selection shows them (Needs.PostBody); a
// single post is read with its body, as every other lookup of it.
func (b needsBuilder) connection(sel ast.SelectionSet, typ string) *store.Needs {
	n := &store.Needs{PostFieldsChosen: typ == "Post"}
	for _, edges := range graphql.CollectFields(b.op, sel, nil) {
		if edges.Name == "nodes" {
			b.into(n, edges.Selections, typ)
			continue
		}
		if edges.Name != "edges" {
			continue
		}
		for _, node := range graphql.CollectFields(b.op, edges.Selections, nil) {
			if node.Name == "node" {
				b.into(n, node.Selections, typ)
			}
		}
	}
	return n
}

// object reads the selection of a single object of type typ.
func (b needsBuilder) object(sel ast.SelectionSet, typ string) *store.Needs {
	n := &store.Needs{}
	b.into(n, sel, typ)
	return n
}

// into adds to n what a selection on an object of type typ reads.
func (b needsBuilder) into(n *store.Needs, sel ast.SelectionSet, typ string) {
	for _, f := range graphql.CollectFields(b.op, sel, []string{typ, "Node"}) {
		switch typ + "." + f.Name {
		case "Post.author", "Comment.author":
			if nameOnly(f.Selections) {
				n.AuthorName = true
				if typ == "Comment" {
					n.CommentFields |= store.CommentAuthorName
				}
				continue
			}
			if n.Author == nil {
				n.Author = &store.Needs{}
			}
			b.into(n.Author, f.Selections, "User")
		case "Post.viewerVote", "Comment.viewerVote":
			n.Vote, n.Viewer = true, b.viewer()
		case "Post.body":
			n.PostBody = true
		case "Post.viewerSaved":
			n.Saved, n.Viewer = true, b.viewer()
		case "Post.unreadCommentCount", "Post.viewerHasRead":
			if b.splice {
				n.LiveComments = true // the values are filled in per reader (store/readsplice.go)
				continue
			}
			n.ReadState, n.Viewer = true, b.viewer()
		case "Post.viewerWatch", "Group.viewerWatch":
			n.Watch, n.Viewer = true, b.viewer()
		case "Post.reportCount", "Comment.reportCount":
			n.ReportCount, n.Viewer = true, b.viewer()
		case "Post.groups":
			for _, g := range graphql.CollectFields(b.op, f.Selections, []string{"Group", "Node"}) {
				n.GroupSizes = n.GroupSizes || g.Name == "postCount"
			}
			if n.Groups == nil {
				n.Groups = &store.Needs{}
			}
			b.into(n.Groups, f.Selections, "Group")
		case "Group.createdAt":
			n.GroupCreated = true
		case "Group.memberCount":
			n.MemberCount = true
		case "Group.activeUsers":
			var w *model.Window
			if v, ok := f.ArgumentMap(b.op.Variables)["window"].(string); ok {
				mw := model.Window(v)
				w = &mw
			}
			n.ActiveUsers = n.ActiveUsers.With(activityWindow(w))
		case "Group.moderators":
			if n.Moderators == nil {
				n.Moderators = &store.Needs{}
			}
			b.into(n.Moderators, f.Selections, "User")
		case "Group.viewerIsMember":
			n.ViewerIsMember, n.Viewer = true, b.viewer()
		case "Group.viewerIsModerator":
			n.ViewerIsModerator, n.Viewer = true, b.viewer()
		case "Post.pinnedIn":
			n.PinnedIn = true
		case "Post.comments":
			b.list(n, f, store.ListComments, "Comment")
		case "Comment.replies":
			n.CommentFields |= store.CommentReplies // an empty list is known without reading it
			b.list(n, f, store.ListComments, "Comment")
		case "Comment.body", "Comment.editedAt", "Comment.depth", "Comment.upvotes", "Comment.downvotes",
			"Comment.replyCount", "Comment.parent":
			n.CommentFields |= commentFields[f.Name]
		case "User.karma":
			n.Karma = true
		case "User.rank":
			n.Rank = true
		case "User.followerCount":
			n.FollowerCount = true
		case "User.followingCount":
			n.FollowingCount = true
		case "User.viewerFollows":
			n.ViewerFollows, n.Viewer = true, b.viewer()
		case "User.followsViewer":
			n.FollowsViewer, n.Viewer = true, b.viewer()
		case "User.posts":
			b.list(n, f, store.ListPosts, "Post")
		case "User.followers":
			b.list(n, f, store.ListFollowers, "User")
		case "User.following":
			b.list(n, f, store.ListFollowing, "User")
		}
	}
}

// commentFields maps the Comment fields that show stored data to the stored fields they read.
var commentFields = map[string]store.CommentFields{
	"body": store.CommentBody, "editedAt": store.CommentEdited, "depth": store.CommentDepth,
	"upvotes": store.CommentUp, "downvotes": store.CommentDown, "score": store.CommentUp | store.CommentDown,
	"replyCount": store.CommentReplies,
	"parent":     store.CommentParent,
}

// list adds to n the page a connection field below an object reads: its arguments and what it
// reads of its items. A page with bad arguments is left out: its resolver reports them.
func (b needsBuilder) list(n *store.Needs, f graphql.CollectedField, kind store.ListKind, typ string) {
	args := f.ArgumentMap(b.op.Variables)
	l := store.List{Kind: kind, Sort: store.CommentsNew, PostSort: store.SortNew}
	if s, ok := args["sort"].(string); ok {
		cs := model.CommentSort(s)
		l.Sort = commentSort(&cs)
		if kind == store.ListPosts {
			ps := model.PostSort(s)
			l.PostSort = userPostSort(&ps)
		}
	}
	var first, last *int
	if v, ok := argInt(args["first"]); ok {
		first = &v
	}
	if v, ok := argInt(args["last"]); ok {
		last = &v
	}
	after, _ := args["after"].(string)
	before, _ := args["before"].(string)
	var err error
	if l.Window, err = window(first, &after, last, &before, argGiven(f.Field, b.op.Variables, "first")); err != nil {
		return
	}
	l.Needs = *b.connection(f.Selections, typ)
	l.Window.NoTotal, l.Window.NoCursors = unshownMemo(b.shown, b.op, f.Selections)
	if typ == "Comment" {
		l.Needs.CommentFields |= store.CommentFieldsChosen
	}
	n.Lists = append(n.Lists, l)
}

// shownMemo remembers, for one operation, what the selections of its connections leave out (see
// unshown): a connection field of the document is resolved once per parent object — 300 times on
// a thread page — and its selection, with the operation's variables, gives the same answer each
// time. A selection is known by where its fields are (its first element and its length), which
// tells apart the selections gqlgen merges for one field from the field's own.
type shownMemo struct {
	mu sync.Mutex
	m  map[shownKey][2]bool
}

type shownKey struct {
	first *ast.Selection
	n     int
}

// unshownMemo is unshown, remembered in memo when it is not nil.
func unshownMemo(memo *shownMemo, op *graphql.OperationContext, sel ast.SelectionSet) (noTotal, noCursors bool) {
	if memo == nil || len(sel) == 0 {
		return unshown(op, sel)
	}
	k := shownKey{&sel[0], len(sel)}
	memo.mu.Lock()
	v, ok := memo.m[k]
	memo.mu.Unlock()
	if !ok {
		v[0], v[1] = unshown(op, sel)
		memo.mu.Lock()
		if memo.m == nil {
			memo.m = map[shownKey][2]bool{}
		}
		memo.m[k] = v
		memo.mu.Unlock()
	}
	return v[0], v[1]
}

// unshown reports what a connection's selection leaves out of its page: its total (totalCount)
// and its cursors (edges.cursor, pageInfo.startCursor and endCursor). The resolver of the field
// and the walk that reads its page ahead both compute it here, so that they name the page alike.
func unshown(op *graphql.OperationContext, sel ast.SelectionSet) (noTotal, noCursors bool) {
	noTotal, noCursors = true, true
	for _, cf := range graphql.CollectFields(op, sel, nil) {
		switch cf.Name {
		case "totalCount":
			noTotal = false
		case "pageInfo":
			for _, pf := range graphql.CollectFields(op, cf.Selections, nil) {
				if pf.Name == "startCursor" || pf.Name == "endCursor" {
					noCursors = false
				}
			}
		case "edges":
			for _, ef := range graphql.CollectFields(op, cf.Selections, nil) {
				if ef.Name == "cursor" {
					noCursors = false
				}
			}
		}
	}
	return noTotal, noCursors
}

// viewerKey returns a function giving the viewer ("" when anonymous), which marks the response as
// depending on the viewer.
func viewerKey(ctx context.Context) func() store.UserKey {
	return func() store.UserKey { return viewerFrom(ctx) }
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
