package httpapi_test

import (
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func TestAPIScheduledPosts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		a := newAPI(t, b, store.Options{Now: clk.Now, MaxScheduledPosts: 2})
		amy, _ := a.signUp("amy")
		bob, _ := a.signUp("bob")
		at := clk.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		const create = `mutation($t:String!,$at:Time){createPost(input:{title:$t,publishAt:$at}){id title publishAt createdAt}}`

		for _, tc := range []struct {
			name, token string
			at          string
			code        string
		}{
			{"anonymous", "", at, "UNAUTHENTICATED"},
			{"too soon", amy, clk.Now().Add(30 * time.Second).UTC().Format(time.RFC3339), "BAD_USER_INPUT"},
			{"too far", amy, clk.Now().Add(91 * 24 * time.Hour).UTC().Format(time.RFC3339), "BAD_USER_INPUT"},
			{"not a time", amy, "tomorrow", "BAD_USER_INPUT"},
		} {
			if r := a.do(tc.token, create, map[string]any{"t": "x", "at": tc.at}); r.code() != tc.code {
				t.Errorf("%s: %+v, want %s", tc.name, r.Errors, tc.code)
			}
		}

		var d struct {
			CreatePost struct{ ID, Title, PublishAt, CreatedAt string }
		}
		a.do(amy, create, map[string]any{"t": "soon", "at": at}).decode(t, &d)
		id := d.CreatePost.ID
		if d.CreatePost.PublishAt != at || d.CreatePost.CreatedAt != at {
			t.Fatalf("scheduled post %+v, want publishAt and createdAt %s", d.CreatePost, at)
		}
		const read = `query($id:ID!){post(id:$id){title publishAt} node(id:$id){id}}`
		var seen struct {
			Post *struct{ Title, PublishAt string }
			Node *struct{ ID string }
		}
		a.do(amy, read, map[string]any{"id": id}).decode(t, &seen)
		if seen.Post == nil || seen.Post.PublishAt != at || seen.Node == nil {
			t.Fatalf("the author's post(id): %+v", seen)
		}
		for _, who := range []string{bob, ""} {
			seen.Post, seen.Node = nil, nil
			a.do(who, read, map[string]any{"id": id}).decode(t, &seen)
			if seen.Post != nil || seen.Node != nil {
				t.Fatalf("someone else's post(id): %+v", seen)
			}
		}
		var list struct {
			ScheduledPosts struct {
				TotalCount int
				Edges      []struct{ Node struct{ ID string } }
			}
		}
		a.do(amy, `{scheduledPosts{totalCount edges{node{id}}}}`, nil).decode(t, &list)
		if list.ScheduledPosts.TotalCount != 1 || list.ScheduledPosts.Edges[0].Node.ID != id {
			t.Fatalf("scheduledPosts %+v", list)
		}
		if r := a.do("", `{scheduledPosts{totalCount}}`, nil); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("anonymous scheduledPosts: %+v", r.Errors)
		}

		// The cap: 2 pending.
		a.do(amy, create, map[string]any{"t": "second", "at": at}).decode(t, &struct{}{})
		if r := a.do(amy, create, map[string]any{"t": "third", "at": at}); r.code() != "LIMIT_REACHED" {
			t.Fatalf("third pending post: %+v, want LIMIT_REACHED", r.Errors)
		}

		later := clk.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
		var moved struct{ ReschedulePost struct{ PublishAt string } }
		a.do(amy, `mutation($id:ID!,$at:Time!){reschedulePost(id:$id,publishAt:$at){publishAt}}`,
			map[string]any{"id": id, "at": later}).decode(t, &moved)
		if moved.ReschedulePost.PublishAt != later {
			t.Fatalf("rescheduled to %s, want %s", moved.ReschedulePost.PublishAt, later)
		}
		if r := a.do(bob, `mutation($id:ID!){cancelScheduledPost(id:$id)}`, map[string]any{"id": id}); r.code() != "NOT_FOUND" {
			t.Fatalf("bob cancels amy's post: %+v", r.Errors)
		}

		// At the first time only "second" goes live; at the new time "soon" does, with its
		// new time as its creation time, and publishAt null.
		clk.Add(time.Hour)
		a.settle()
		var posts struct {
			Posts struct {
				Edges []struct {
					Node struct{ Title, CreatedAt string }
				}
			}
		}
		a.do("", `{posts(sort:NEW){edges{node{title createdAt}}}}`, nil).decode(t, &posts)
		if len(posts.Posts.Edges) != 1 || posts.Posts.Edges[0].Node.Title != "second" {
			t.Fatalf("posts after an hour: %+v", posts)
		}
		clk.Add(time.Hour)
		a.settle()
		a.do(bob, read, map[string]any{"id": id}).decode(t, &seen)
		if seen.Post == nil || seen.Post.PublishAt != "" || seen.Post.Title != "soon" {
			t.Fatalf("published post as bob sees it: %+v", seen.Post)
		}
		if r := a.do(amy, `mutation($id:ID!){cancelScheduledPost(id:$id)}`, map[string]any{"id": id}); r.code() != "NOT_FOUND" {
			t.Fatalf("cancel a published post: %+v, want NOT_FOUND", r.Errors)
		}
	})
}

// TestCancelScheduledPostAgainReturnsItsID: cancelScheduledPost is a deletion, and every
// deletion returns the deleted item's id, again when repeated (a retry whose answer was lost).
// Another user's post, a published one and an id that never named a post stay NOT_FOUND.
func TestCancelScheduledPostAgainReturnsItsID(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		a := newAPI(t, b, store.Options{Now: clk.Now})
		amy, _ := a.signUp("amy")
		bob, _ := a.signUp("bob")
		const create = `mutation($at:Time){createPost(input:{title:"t",publishAt:$at}){id}}`
		const cancel = `mutation($id:ID!){cancelScheduledPost(id:$id)}`
		schedule := func() string {
			var d struct{ CreatePost struct{ ID string } }
			a.do(amy, create, map[string]any{"at": clk.Now().Add(time.Hour).UTC().Format(time.RFC3339)}).decode(t, &d)
			return d.CreatePost.ID
		}
		cancelled, published := schedule(), schedule()
		for i := range 2 {
			var d struct{ CancelScheduledPost string }
			a.do(amy, cancel, map[string]any{"id": cancelled}).decode(t, &d)
			if d.CancelScheduledPost != cancelled {
				t.Fatalf("cancel #%d: %q, want %q", i+1, d.CancelScheduledPost, cancelled)
			}
		}
		clk.Add(2 * time.Hour)
		a.settle()
		for _, tc := range []struct{ name, token, id string }{
			{"another's cancelled post", bob, cancelled},
			{"a published post", amy, published},
			{"no such post", amy, "post:987654"},
		} {
			if r := a.do(tc.token, cancel, map[string]any{"id": tc.id}); r.code() != "NOT_FOUND" {
				t.Errorf("%s: %s %+v, want NOT_FOUND", tc.name, r.Data, r.Errors)
			}
		}
	})
}
