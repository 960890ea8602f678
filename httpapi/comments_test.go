package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// commentFields is what the API tests read of every comment.
const commentFields = `fragment C on Comment {
  id body deleted createdAt editedAt depth upvotes downvotes replyCount viewerVote
  author { name }
  parent { id }
  post { id }
}`

// apiComment is a comment as the API returns it.
type apiComment struct {
	ID         string
	Body       *string
	Deleted    bool
	CreatedAt  time.Time
	EditedAt   *time.Time
	Depth      int
	Upvotes    int
	Downvotes  int
	ReplyCount int
	ViewerVote string
	Author     *struct{ Name string }
	Parent     *struct{ ID string }
	Post       struct{ ID string }
	Replies    *apiConnection
}

type apiConnection struct {
	TotalCount int
	PageInfo   struct {
		HasNextPage     bool
		HasPreviousPage bool
		StartCursor     *string
		EndCursor       *string
	}
	Edges []struct {
		Cursor string
		Node   apiComment
	}
}

func (c *apiConnection) ids() []string {
	out := make([]string, len(c.Edges))
	for i, e := range c.Edges {
		out[i] = e.Node.ID
	}
	return out
}

// comment creates a comment through the API and returns it.
func (a *api) comment(token, postID, parentID, body string) apiComment {
	a.t.Helper()
	vars := map[string]any{"p": postID, "b": body}
	if parentID != "" {
		vars["r"] = parentID
	}
	var d struct{ CreateComment apiComment }
	a.do(token, `mutation($p:ID!,$r:ID,$b:String!){createComment(postId:$p,parentId:$r,body:$b){...C}}`+commentFields, vars).decode(a.t, &d)
	return d.CreateComment
}

func TestCommentThreadAPI(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		alice, _ := a.signUp("alice")
		bob, _ := a.signUp("bob")
		post := a.createPost(alice, "Threads")

		var empty struct {
			Post struct {
				CommentCount int
				Comments     apiConnection
			}
		}
		a.do("", `query($id:ID!){post(id:$id){commentCount comments{totalCount pageInfo{hasNextPage endCursor} edges{cursor}}}}`,
			map[string]any{"id": post}).decode(t, &empty)
		if empty.Post.CommentCount != 0 || empty.Post.Comments.TotalCount != 0 || len(empty.Post.Comments.Edges) != 0 ||
			empty.Post.Comments.PageInfo.HasNextPage || empty.Post.Comments.PageInfo.EndCursor != nil {
			t.Errorf("a post without comments: %+v", empty.Post)
		}

		top := a.comment(bob, post, "", "top-level")
		if top.Depth != 0 || top.Parent != nil || top.Post.ID != post || top.Author.Name != "bob" || *top.Body != "top-level" ||
			top.ViewerVote != "UP" || top.Deleted || top.EditedAt != nil {
			t.Errorf("created: %+v", top)
		}
		reply := a.comment(alice, post, top.ID, "a reply")
		deep := a.comment(bob, post, reply.ID, "deeper")
		if reply.Depth != 1 || reply.Parent.ID != top.ID || deep.Depth != 2 || deep.Parent.ID != reply.ID {
			t.Errorf("reply %+v deep %+v", reply, deep)
		}
		second := a.comment(alice, post, "", "second top-level")

		// The whole thread in one query, as alice sees it.
		q := `query($id:ID!){post(id:$id){commentCount comments(first:10){totalCount edges{cursor node{...C
		  replies(first:10){totalCount edges{node{...C replies(sort:OLD,first:5){totalCount edges{node{...C}}}}}}}}}}}` + commentFields
		var d struct {
			Post struct {
				CommentCount int
				Comments     apiConnection
			}
		}
		a.do(alice, q, map[string]any{"id": post}).decode(t, &d)
		if d.Post.CommentCount != 4 || d.Post.Comments.TotalCount != 2 {
			t.Fatalf("counts %d %d", d.Post.CommentCount, d.Post.Comments.TotalCount)
		}
		if got := d.Post.Comments.ids(); fmt.Sprint(got) != fmt.Sprint([]string{second.ID, top.ID}) {
			t.Errorf("NEW order %v", got)
		}
		n := d.Post.Comments.Edges[1].Node
		if n.ReplyCount != 1 || n.Replies.TotalCount != 1 || n.ViewerVote != "NONE" {
			t.Errorf("top as alice sees it: %+v", n)
		}
		r := n.Replies.Edges[0].Node
		if r.ID != reply.ID || r.ViewerVote != "UP" || r.Replies.TotalCount != 1 || r.Replies.Edges[0].Node.ID != deep.ID {
			t.Errorf("reply level: %+v", r)
		}

		// comment(id) and node(id) find a comment; missing ids give null.
		var one struct {
			Comment apiComment
			Node    *struct{ ID, Body string }
			Missing *apiComment
			NoNode  *struct{ ID string }
		}
		a.do("", `query($id:ID!,$m:ID!){comment(id:$id){...C} node(id:$id){id ... on Comment{body}}
		  missing: comment(id:$m){...C} noNode: node(id:$m){id}}`+commentFields,
			map[string]any{"id": deep.ID, "m": deep.ID + "9"}).decode(t, &one)
		if one.Comment.ID != deep.ID || one.Comment.Parent.ID != reply.ID || one.Comment.ViewerVote != "NONE" ||
			one.Node == nil || one.Node.Body != "deeper" || one.Missing != nil || one.NoNode != nil {
			t.Errorf("lookups: %+v", one)
		}

		// Edit, vote, delete.
		var ed struct{ EditComment apiComment }
		a.do(bob, `mutation($id:ID!){editComment(id:$id,body:"edited"){...C}}`+commentFields, map[string]any{"id": top.ID}).decode(t, &ed)
		if *ed.EditComment.Body != "edited" || ed.EditComment.EditedAt == nil {
			t.Errorf("edited: %+v", ed.EditComment)
		}
		var vd struct{ VoteComment apiComment }
		a.do(alice, `mutation($id:ID!){voteComment(commentId:$id,direction:DOWN){...C}}`+commentFields, map[string]any{"id": top.ID}).decode(t, &vd)
		if vd.VoteComment.Downvotes != 1 || vd.VoteComment.ViewerVote != "DOWN" {
			t.Errorf("voted: %+v", vd.VoteComment)
		}
		var del struct{ DeleteComment string }
		a.do(bob, `mutation($id:ID!){deleteComment(id:$id)}`, map[string]any{"id": top.ID}).decode(t, &del)
		if del.DeleteComment != top.ID {
			t.Errorf("deleteComment returned %q, want %q", del.DeleteComment, top.ID)
		}
		a.do("", `query($id:ID!,$m:ID!){comment(id:$id){...C} node(id:$id){id ... on Comment{body}}
		  missing: comment(id:$m){...C} noNode: node(id:$m){id}}`+commentFields,
			map[string]any{"id": top.ID, "m": "comment:999:1"}).decode(t, &one)
		if !one.Comment.Deleted || one.Comment.Author != nil || one.Comment.Body != nil || one.Comment.ReplyCount != 1 {
			t.Errorf("tombstone: %+v", one.Comment)
		}
		// Removing the rest removes the tombstone too.
		a.do(bob, `mutation($id:ID!){deleteComment(id:$id)}`, map[string]any{"id": deep.ID}).decode(t, &del)
		a.do(alice, `mutation($id:ID!){deleteComment(id:$id)}`, map[string]any{"id": reply.ID}).decode(t, &del)
		a.do(alice, q, map[string]any{"id": post}).decode(t, &d)
		if d.Post.CommentCount != 1 || fmt.Sprint(d.Post.Comments.ids()) != fmt.Sprint([]string{second.ID}) {
			t.Errorf("after deletes: %d %v", d.Post.CommentCount, d.Post.Comments.ids())
		}
	})
}

func TestCommentPagingAPI(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		alice, _ := a.signUp("alice")
		bob, _ := a.signUp("bob")
		carol, _ := a.signUp("carol")
		post := a.createPost(alice, "Paging")
		var made []string
		for i := range 7 {
			made = append(made, a.comment(bob, post, "", fmt.Sprint("c", i)).ID)
		}
		for _, tok := range []string{alice, carol} {
			a.do(tok, `mutation($id:ID!){voteComment(commentId:$id,direction:UP){id}}`, map[string]any{"id": made[2]}).decode(t, &struct{}{})
		}
		a.do(alice, `mutation($id:ID!){voteComment(commentId:$id,direction:UP){id}}`, map[string]any{"id": made[5]}).decode(t, &struct{}{})
		a.do(alice, `mutation($id:ID!){voteComment(commentId:$id,direction:DOWN){id}}`, map[string]any{"id": made[0]}).decode(t, &struct{}{})

		q := `query($id:ID!,$s:CommentSort!,$after:String){post(id:$id){comments(sort:$s,first:3,after:$after){
		  totalCount pageInfo{hasNextPage hasPreviousPage startCursor endCursor} edges{cursor node{id}}}}}`
		read := func(sort string) []string {
			var out []string
			var after any
			for {
				var d struct {
					Post struct{ Comments apiConnection }
				}
				a.do("", q, map[string]any{"id": post, "s": sort, "after": after}).decode(t, &d)
				c := d.Post.Comments
				out = append(out, c.ids()...)
				if c.TotalCount != 7 || c.PageInfo.HasPreviousPage != (after != nil) {
					t.Errorf("%s: total %d prev %v", sort, c.TotalCount, c.PageInfo.HasPreviousPage)
				}
				if len(c.Edges) > 0 && *c.PageInfo.EndCursor != c.Edges[len(c.Edges)-1].Cursor {
					t.Errorf("%s: endCursor is not the last edge's cursor", sort)
				}
				if !c.PageInfo.HasNextPage {
					return out
				}
				after = *c.PageInfo.EndCursor
			}
		}
		rev := make([]string, len(made))
		for i, id := range made {
			rev[len(made)-1-i] = id
		}
		tests := map[string][]string{
			"OLD": made,
			"NEW": rev,
			"TOP": {made[2], made[5], made[6], made[4], made[3], made[1], made[0]},
		}
		for sort, want := range tests {
			if got := read(sort); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %v, want %v", sort, got, want)
			}
		}
	})
}

func TestCommentErrorsAPI(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		var ms atomic.Int64
		start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		ms.Store(start.UnixMilli())
		a := newAPI(t, b, store.Options{MaxCommentDepth: 1, Now: func() time.Time { return time.UnixMilli(ms.Load()) }})
		alice, _ := a.signUp("alice")
		bob, _ := a.signUp("bob")
		post := a.createPost(alice, "Errors")
		top := a.comment(alice, post, "", "top")
		reply := a.comment(bob, post, top.ID, "reply")
		var gone struct{ DeletePost string }
		deleted := a.createPost(alice, "gone")
		a.do(alice, `mutation($id:ID!){deletePost(id:$id)}`, map[string]any{"id": deleted}).decode(t, &gone)

		create := `mutation($p:ID!,$r:ID,$b:String!){createComment(postId:$p,parentId:$r,body:$b){id}}`
		cases := []struct {
			name, token, query string
			vars               map[string]any
			code               string
		}{
			{"anonymous create", "", create, map[string]any{"p": post, "b": "x"}, "UNAUTHENTICATED"},
			{"bad token", "nope", create, map[string]any{"p": post, "b": "x"}, "UNAUTHENTICATED"},
			{"empty body", bob, create, map[string]any{"p": post, "b": ""}, "BAD_USER_INPUT"},
			{"long body", bob, create, map[string]any{"p": post, "b": strings.Repeat("x", 10001)}, "BAD_USER_INPUT"},
			{"malformed post id", bob, create, map[string]any{"p": "post:abc", "b": "x"}, "BAD_USER_INPUT"},
			{"malformed parent", bob, create, map[string]any{"p": post, "r": "comment:", "b": "x"}, "BAD_USER_INPUT"},
			{"too deep", alice, create, map[string]any{"p": post, "r": reply.ID, "b": "x"}, "BAD_USER_INPUT"},
			{"missing post", bob, create, map[string]any{"p": "post:9999", "b": "x"}, "NOT_FOUND"},
			{"deleted post", bob, create, map[string]any{"p": deleted, "b": "x"}, "NOT_FOUND"},
			{"missing parent", bob, create, map[string]any{"p": post, "r": top.ID + "0", "b": "x"}, "NOT_FOUND"},
			{"edit another's", bob, `mutation($id:ID!){editComment(id:$id,body:"x"){id}}`, map[string]any{"id": top.ID}, "FORBIDDEN"},
			{"edit anonymous", "", `mutation($id:ID!){editComment(id:$id,body:"x"){id}}`, map[string]any{"id": top.ID}, "UNAUTHENTICATED"},
			{"edit to empty", alice, `mutation($id:ID!){editComment(id:$id,body:""){id}}`, map[string]any{"id": top.ID}, "BAD_USER_INPUT"},
			{"delete another's", alice, `mutation($id:ID!){deleteComment(id:$id)}`, map[string]any{"id": reply.ID}, "FORBIDDEN"},
			{"delete missing", alice, `mutation($id:ID!){deleteComment(id:$id)}`, map[string]any{"id": top.ID + "7"}, "NOT_FOUND"},
			{"vote own", alice, `mutation($id:ID!){voteComment(commentId:$id,direction:UP){id}}`, map[string]any{"id": top.ID}, "FORBIDDEN"},
			{"vote anonymous", "", `mutation($id:ID!){voteComment(commentId:$id,direction:UP){id}}`, map[string]any{"id": top.ID}, "UNAUTHENTICATED"},
			{"vote a post id", bob, `mutation($id:ID!){voteComment(commentId:$id,direction:UP){id}}`, map[string]any{"id": post}, "BAD_USER_INPUT"},
			{"first 0", "", `query($id:ID!){post(id:$id){comments(first:0){totalCount}}}`, map[string]any{"id": post}, "BAD_USER_INPUT"},
			{"first 101", "", `query($id:ID!){comment(id:$id){replies(first:101){totalCount}}}`, map[string]any{"id": top.ID}, "BAD_USER_INPUT"},
			{"bad cursor", "", `query($id:ID!){post(id:$id){comments(after:"zzz"){totalCount}}}`, map[string]any{"id": post}, "BAD_USER_INPUT"},
			{"malformed comment id", "", `{comment(id:"comment:x"){id}}`, nil, "BAD_USER_INPUT"},
		}
		for _, c := range cases {
			if got := a.do(c.token, c.query, c.vars); got.code() != c.code {
				t.Errorf("%s: code %q (%+v), want %s", c.name, got.code(), got.Errors, c.code)
			}
		}

		// Votes close seven days after the comment was written.
		ms.Store(start.Add(7*24*time.Hour + time.Second).UnixMilli())
		r := a.do(alice, `mutation($id:ID!){voteComment(commentId:$id,direction:UP){id}}`, map[string]any{"id": reply.ID})
		if r.code() != "VOTING_CLOSED" {
			t.Errorf("late vote: %q %+v", r.code(), r.Errors)
		}
		// Comments are still welcome.
		a.comment(bob, post, top.ID, "still open for comments")
	})
}

func TestCommentIdempotencyAPI(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		alice, _ := a.signUp("alice")
		post := a.createPost(alice, "Retry")
		q := `mutation($p:ID!,$k:String){createComment(postId:$p,body:"once",idempotencyKey:$k){id}}`
		var first, again struct{ CreateComment struct{ ID string } }
		a.do(alice, q, map[string]any{"p": post, "k": "abc"}).decode(t, &first)
		a.do(alice, q, map[string]any{"p": post, "k": "abc"}).decode(t, &again)
		if first.CreateComment.ID != again.CreateComment.ID {
			t.Errorf("a retried request made %s and %s", first.CreateComment.ID, again.CreateComment.ID)
		}
		var d struct{ Post struct{ CommentCount int } }
		a.do("", `query($id:ID!){post(id:$id){commentCount}}`, map[string]any{"id": post}).decode(t, &d)
		if d.Post.CommentCount != 1 {
			t.Errorf("commentCount %d, want 1", d.Post.CommentCount)
		}
	})
}

// threadQuery is the typical thread page: a post, its top-level comments, 4 replies each and 2
// replies to each reply, with every author.
const threadQuery = `query($id:ID!,$n:Int!,$r:Int!,$rr:Int!){post(id:$id){id title commentCount author{name}
  comments(first:$n){totalCount pageInfo{hasNextPage endCursor} edges{cursor node{...T
    replies(first:$r){totalCount edges{cursor node{...T
      replies(first:$rr){totalCount edges{cursor node{...T}}}}}}}}}}}
fragment T on Comment{id body createdAt depth upvotes downvotes replyCount viewerVote author{name}}`

// buildThread writes top top-level comments with replies replies each and replies2 replies to
// each reply, by authors taking turns, straight through the store.
func buildThread(tb testing.TB, st *store.Store, post string, authors []string, top, replies, replies2 int) int {
	tb.Helper()
	ctx := context.Background()
	n := 0
	add := func(parent string) string {
		c, err := st.CreateComment(ctx, store.UserKey(authors[n%len(authors)]), store.NewComment{PostID: post, ParentID: parent, Body: fmt.Sprintf("comment %d: some text that a reader might write", n)})
		if err != nil {
			tb.Fatalf("create comment: %v", err)
		}
		n++
		return c.ID
	}
	for range top {
		t := add("")
		for range replies {
			r := add(t)
			for range replies2 {
				add(r)
			}
		}
	}
	return n
}

// countThread counts the comments in a threadQuery response.
func countThread(tb testing.TB, data json.RawMessage) int {
	tb.Helper()
	var d struct {
		Post struct{ Comments apiConnection }
	}
	if err := json.Unmarshal(data, &d); err != nil {
		tb.Fatal(err)
	}
	n := 0
	var walk func(c *apiConnection)
	walk = func(c *apiConnection) {
		for _, e := range c.Edges {
			n++
			if e.Node.Author == nil {
				tb.Fatalf("%s has no author", e.Node.ID)
			}
			if e.Node.Replies != nil {
				walk(e.Node.Replies)
			}
		}
	}
	walk(&d.Post.Comments)
	return n
}
