package readexec

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/agora/agora/graph/model"
)

// objectType names the object types readexec writes.
type objectType uint8

const (
	typeNone objectType = iota
	typeQuery
	typePost
	typeComment
	typeUser
	typeGroup
	typePostConnection
	typePostEdge
	typeCommentConnection
	typeCommentEdge
	typePageInfo
	typeCount
)

// fieldID names a field readexec writes; the writer of its object type switches on it.
type fieldID uint8

const (
	fieldTypename fieldID = iota

	queryPost
	queryComment
	queryUser
	queryViewer
	queryPosts
	queryGroup

	postID
	postTitle
	postBody
	postURL
	postAuthor
	postCreatedAt
	postUpvotes
	postDownvotes
	postScore
	postHotRank
	postViewerVote
	postVotingClosesAt
	postCommentCount
	postComments
	postPublishAt
	postEditedAt
	postRemoved
	postLocked
	postViewerSaved
	postGroups
	postNSFW
	postSpoiler
	postNSFWHidden
	postUnreadCommentCount
	postViewerHasRead
	postViewerWatch

	commentID
	commentPost
	commentParent
	commentAuthor
	commentBody
	commentDeleted
	commentCreatedAt
	commentEditedAt
	commentDepth
	commentUpvotes
	commentDownvotes
	commentScore
	commentViewerVote
	commentReplyCount
	commentReplies
	commentRemoved
	commentBlockedByViewer

	userID
	userName
	userCreatedAt
	userKarma
	userRank
	userFollowerCount
	userFollowingCount
	userViewerFollows
	userFollowsViewer
	userIsAdmin
	userBio
	userAvatarURL
	userViewerBlocks
	userShowNSFW

	groupID
	groupName
	groupDescription
	groupCreatedAt
	groupPostCount
	groupPosts
	groupModerators
	groupMemberCount
	groupViewerIsMember
	groupViewerIsModerator
	groupNSFW

	connEdges
	connNodes
	connPageInfo
	connTotalCount

	edgeCursor
	edgeNode

	pageHasNext
	pageHasPrevious
	pageStartCursor
	pageEndCursor
)

// argKind says which arguments a field takes.
type argKind uint8

const (
	argsNone argKind = iota
	argsID
	argsName
	argsPostList    // sort: PostSort, group, first, after, last, before
	argsCommentList // sort: CommentSort, first, after, last, before
	argsReveal      // revealSpoiler: Boolean (Post.body)
)

// spec is what readexec knows of a field: which it is, the object type it shows (typeNone for
// a scalar or enum), whether gqlgen runs a resolver for it, and its arguments.
type spec struct {
	id       fieldID
	child    objectType
	resolver bool
	args     argKind
}

// typeInfo is what readexec knows of an object type: its name, the types a fragment on it may
// name (the type and its interfaces), and its fields. A field not listed here sends the whole
// operation to gqlgen.
type typeInfo struct {
	name       string
	implements []string
	fields     map[string]spec
}

// types describes every object type readexec writes. The resolver flags follow gqlgen.yml: a
// field bound to a struct field or a method of the model has none.
var types = [typeCount]typeInfo{
	typeQuery: {name: "Query", implements: []string{"Query"}, fields: map[string]spec{
		"post":    {id: queryPost, child: typePost, resolver: true, args: argsID},
		"comment": {id: queryComment, child: typeComment, resolver: true, args: argsID},
		"user":    {id: queryUser, child: typeUser, resolver: true, args: argsName},
		"viewer":  {id: queryViewer, child: typeUser, resolver: true},
		"posts":   {id: queryPosts, child: typePostConnection, resolver: true, args: argsPostList},
		"group":   {id: queryGroup, child: typeGroup, resolver: true, args: argsName},
	}},
	typePost: {name: "Post", implements: []string{"Post", "Node"}, fields: map[string]spec{
		"id":    {id: postID},
		"title": {id: postTitle},
		// body takes an argument (revealSpoiler): it has a slot for it, bound to a method of the
		// model (Post.ShownBody) and not a resolver.
		"body":           {id: postBody, args: argsReveal},
		"url":            {id: postURL},
		"author":         {id: postAuthor, child: typeUser, resolver: true},
		"createdAt":      {id: postCreatedAt},
		"upvotes":        {id: postUpvotes},
		"downvotes":      {id: postDownvotes},
		"score":          {id: postScore},
		"hotRank":        {id: postHotRank},
		"viewerVote":     {id: postViewerVote, resolver: true},
		"votingClosesAt": {id: postVotingClosesAt},
		"commentCount":   {id: postCommentCount},
		"comments":       {id: postComments, child: typeCommentConnection, resolver: true, args: argsCommentList},
		"publishAt":      {id: postPublishAt},
		"editedAt":       {id: postEditedAt},
		"removed":        {id: postRemoved},
		"locked":         {id: postLocked},
		"viewerSaved":    {id: postViewerSaved, resolver: true},
		"groups":         {id: postGroups, child: typeGroup},
		"nsfw":           {id: postNSFW},
		"spoiler":        {id: postSpoiler},
		"nsfwHidden":     {id: postNSFWHidden},
		// Read state (schema/readstate.graphqls).
		"unreadCommentCount": {id: postUnreadCommentCount, resolver: true},
		"viewerHasRead":      {id: postViewerHasRead, resolver: true},
		"viewerWatch":        {id: postViewerWatch, resolver: true},
	}},
	typeComment: {name: "Comment", implements: []string{"Comment", "Node"}, fields: map[string]spec{
		"id":              {id: commentID},
		"post":            {id: commentPost, child: typePost, resolver: true},
		"parent":          {id: commentParent, child: typeComment, resolver: true},
		"author":          {id: commentAuthor, child: typeUser, resolver: true},
		"body":            {id: commentBody},
		"deleted":         {id: commentDeleted},
		"createdAt":       {id: commentCreatedAt},
		"editedAt":        {id: commentEditedAt},
		"depth":           {id: commentDepth},
		"upvotes":         {id: commentUpvotes},
		"downvotes":       {id: commentDownvotes},
		"score":           {id: commentScore},
		"viewerVote":      {id: commentViewerVote, resolver: true},
		"replyCount":      {id: commentReplyCount},
		"replies":         {id: commentReplies, child: typeCommentConnection, resolver: true, args: argsCommentList},
		"removed":         {id: commentRemoved},
		"blockedByViewer": {id: commentBlockedByViewer},
	}},
	typeUser: {name: "User", implements: []string{"User", "Node"}, fields: map[string]spec{
		"id":             {id: userID},
		"name":           {id: userName},
		"createdAt":      {id: userCreatedAt},
		"karma":          {id: userKarma, resolver: true},
		"rank":           {id: userRank, resolver: true},
		"followerCount":  {id: userFollowerCount, resolver: true},
		"followingCount": {id: userFollowingCount, resolver: true},
		"viewerFollows":  {id: userViewerFollows, resolver: true},
		"followsViewer":  {id: userFollowsViewer, resolver: true},
		"isAdmin":        {id: userIsAdmin},
		"bio":            {id: userBio},
		"avatarUrl":      {id: userAvatarURL},
		"viewerBlocks":   {id: userViewerBlocks, resolver: true},
		"showNsfw":       {id: userShowNSFW, resolver: true},
	}},
	typeGroup: {name: "Group", implements: []string{"Group", "Node"}, fields: map[string]spec{
		"id":                {id: groupID},
		"name":              {id: groupName},
		"description":       {id: groupDescription, resolver: true},
		"createdAt":         {id: groupCreatedAt, resolver: true},
		"postCount":         {id: groupPostCount, resolver: true},
		"posts":             {id: groupPosts, child: typePostConnection, resolver: true, args: argsPostList},
		"moderators":        {id: groupModerators, child: typeUser, resolver: true},
		"memberCount":       {id: groupMemberCount, resolver: true},
		"viewerIsMember":    {id: groupViewerIsMember, resolver: true},
		"viewerIsModerator": {id: groupViewerIsModerator, resolver: true},
		"nsfw":              {id: groupNSFW, resolver: true},
	}},
	typePostConnection:    connection("PostConnection", typePostEdge, typePost),
	typePostEdge:          edge("PostEdge", typePost),
	typeCommentConnection: connection("CommentConnection", typeCommentEdge, typeComment),
	typeCommentEdge:       edge("CommentEdge", typeComment),
	typePageInfo: {name: "PageInfo", implements: []string{"PageInfo"}, fields: map[string]spec{
		"hasNextPage":     {id: pageHasNext},
		"hasPreviousPage": {id: pageHasPrevious},
		"startCursor":     {id: pageStartCursor},
		"endCursor":       {id: pageEndCursor},
	}},
}

// connection describes a Relay connection type whose edges are of type edge and nodes of type node.
func connection(name string, edge, node objectType) typeInfo {
	return typeInfo{name: name, implements: []string{name}, fields: map[string]spec{
		"edges":      {id: connEdges, child: edge},
		"nodes":      {id: connNodes, child: node},
		"pageInfo":   {id: connPageInfo, child: typePageInfo},
		"totalCount": {id: connTotalCount},
	}}
}

// edge describes a Relay edge type whose node is of type node.
func edge(name string, node objectType) typeInfo {
	return typeInfo{name: name, implements: []string{name}, fields: map[string]spec{
		"cursor": {id: edgeCursor},
		"node":   {id: edgeNode, child: node},
	}}
}

// coerce coerces a field's arguments as the generated field_*_args functions do: a missing or
// null optional argument is nil, and the schema's defaults are already in raw.
func coerce(kind argKind, raw map[string]any) (a args, err error) {
	switch kind {
	case argsID:
		a.id, err = graphql.UnmarshalID(raw["id"])
		return a, newArgError("id", err)
	case argsName:
		a.name, err = graphql.UnmarshalString(raw["name"])
		return a, newArgError("name", err)
	case argsPostList:
		if v := raw["sort"]; v != nil {
			a.postSort = new(model.PostSort)
			if err := a.postSort.UnmarshalGQL(v); err != nil {
				return a, newArgError("sort", err)
			}
		}
		if a.group, err = optString(raw["group"]); err != nil {
			return a, newArgError("group", err)
		}
		if v := raw["hideRead"]; v != nil {
			b, err := graphql.UnmarshalBoolean(v)
			if err != nil {
				return a, newArgError("hideRead", err)
			}
			a.hideRead = &b
		}
	case argsReveal:
		if v := raw["revealSpoiler"]; v != nil {
			b, err := graphql.UnmarshalBoolean(v)
			a.revealSpoiler = &b
			return a, newArgError("revealSpoiler", err)
		}
		return a, nil
	case argsCommentList:
		if v := raw["sort"]; v != nil {
			a.commentSort = new(model.CommentSort)
			if err := a.commentSort.UnmarshalGQL(v); err != nil {
				return a, newArgError("sort", err)
			}
		}
	default:
		return a, nil
	}
	if a.first, err = optInt(raw["first"]); err != nil {
		return a, newArgError("first", err)
	}
	if a.after, err = optString(raw["after"]); err != nil {
		return a, newArgError("after", err)
	}
	if a.last, err = optInt(raw["last"]); err != nil {
		return a, newArgError("last", err)
	}
	if a.before, err = optString(raw["before"]); err != nil {
		return a, newArgError("before", err)
	}
	return a, nil
}

// optInt coerces an optional Int argument.
func optInt(v any) (*int, error) {
	if v == nil {
		return nil, nil
	}
	i, err := graphql.UnmarshalInt(v)
	return &i, err
}

// optString coerces an optional String argument.
func optString(v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	s, err := graphql.UnmarshalString(v)
	return &s, err
}

// argError is an argument's coercion error as gqlgen reports it: at the path of the argument
// (the field's path and its name), without a location; path is filled in when it is reported.
type argError struct {
	name string
	err  error
}

func (e *argError) Error() string { return e.err.Error() }

func (e *argError) Unwrap() error { return e.err }

// newArgError returns err as the coercion error of argument name, or nil.
func newArgError(name string, err error) error {
	if err == nil {
		return nil
	}
	return &argError{name: name, err: err}
}
