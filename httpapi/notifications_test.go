package httpapi_test

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// apiNotification is a notification as the tests select it.
type apiNotification struct {
	ID      string
	Kind    string
	Read    bool
	Actor   *struct{ Name string }
	Post    *struct{ ID, Title string }
	Comment *struct {
		ID     string
		Body   *string
		Author *struct{ Name string }
	}
}

const inboxQuery = `query($first:Int,$after:String,$unread:Boolean){
	notifications(first:$first,after:$after,unreadOnly:$unread){
		totalCount pageInfo{hasNextPage endCursor}
		edges{cursor node{id kind read createdAt actor{name} post{id title} comment{id body author{name}}}}
	}
	unreadNotificationCount
}`

type apiInbox struct {
	Notifications struct {
		TotalCount int
		PageInfo   struct {
			HasNextPage bool
			EndCursor   string
		}
		Edges []struct {
			Cursor string
			Node   apiNotification
		}
	}
	UnreadNotificationCount int
}

func (in apiInbox) kinds() []string {
	var out []string
	for _, e := range in.Notifications.Edges {
		out = append(out, e.Node.Kind+" "+e.Node.Actor.Name)
	}
	return out
}

func (a *api) inbox(token string, vars map[string]any) apiInbox {
	a.t.Helper()
	var in apiInbox
	a.do(token, inboxQuery, vars).decode(a.t, &in)
	return in
}

func TestNotificationsAPI(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		annTok, annID := a.signUp("ann")
		bobTok, _ := a.signUp("bob")
		catTok, _ := a.signUp("cat")
		post := a.createPost(annTok, "ann's post")
		c := a.comment(bobTok, post, "", "hello @cat and @ann")
		a.do(catTok, `mutation($id:ID!){follow(userId:$id){id}}`, map[string]any{"id": annID}).decode(t, &struct{}{})
		a.settle()

		in := a.inbox(annTok, nil)
		if got := in.kinds(); !slices.Equal(got, []string{"FOLLOW cat", "REPLY bob"}) || in.UnreadNotificationCount != 2 || in.Notifications.TotalCount != 2 {
			t.Fatalf("ann's inbox %v, %d unread, total %d", got, in.UnreadNotificationCount, in.Notifications.TotalCount)
		}
		follow, reply := in.Notifications.Edges[0].Node, in.Notifications.Edges[1].Node
		if follow.Post != nil || follow.Comment != nil || follow.Read {
			t.Errorf("follow notification %+v", follow)
		}
		if reply.Post == nil || reply.Post.ID != post || reply.Comment == nil || reply.Comment.ID != c.ID ||
			reply.Comment.Author == nil || reply.Comment.Author.Name != "bob" {
			t.Errorf("reply notification %+v", reply)
		}
		if got := a.inbox(catTok, nil).kinds(); !slices.Equal(got, []string{"MENTION bob"}) {
			t.Errorf("cat's inbox %v", got)
		}

		// Paging, newest first.
		p1 := a.inbox(annTok, map[string]any{"first": 1})
		p2 := a.inbox(annTok, map[string]any{"first": 1, "after": p1.Notifications.PageInfo.EndCursor})
		if !p1.Notifications.PageInfo.HasNextPage || p2.Notifications.PageInfo.HasNextPage ||
			p2.Notifications.Edges[0].Node.ID != reply.ID {
			t.Errorf("pages of one: %+v then %+v", p1.Notifications, p2.Notifications)
		}

		// node(id) is the recipient's only.
		node := `query($id:ID!){node(id:$id){id ... on Notification{kind actor{name}}}}`
		var d struct {
			Node *struct {
				ID, Kind string
				Actor    struct{ Name string }
			}
		}
		a.do(annTok, node, map[string]any{"id": reply.ID}).decode(t, &d)
		if d.Node == nil || d.Node.ID != reply.ID || d.Node.Kind != "REPLY" || d.Node.Actor.Name != "bob" {
			t.Errorf("ann's node(%s): %+v", reply.ID, d.Node)
		}
		for _, tok := range []string{bobTok, ""} {
			d.Node = nil
			a.do(tok, node, map[string]any{"id": reply.ID}).decode(t, &d)
			if d.Node != nil {
				t.Errorf("node(%s) as %q: %+v, want null", reply.ID, tok, d.Node)
			}
		}

		// Errors.
		mark := `mutation($ids:[ID!],$all:Boolean){markNotificationsRead(ids:$ids,all:$all)}`
		for _, tc := range []struct {
			name, token, query string
			vars               map[string]any
			code               string
		}{
			{"anonymous inbox", "", `{notifications{totalCount}}`, nil, "UNAUTHENTICATED"},
			{"anonymous count", "", `{unreadNotificationCount}`, nil, "UNAUTHENTICATED"},
			{"anonymous mark", "", mark, map[string]any{"all": true}, "UNAUTHENTICATED"},
			{"first 0", annTok, inboxQuery, map[string]any{"first": 0}, "BAD_USER_INPUT"},
			{"first 101", annTok, inboxQuery, map[string]any{"first": 101}, "BAD_USER_INPUT"},
			{"bad cursor", annTok, inboxQuery, map[string]any{"after": "nope"}, "BAD_USER_INPUT"},
			{"mark nothing", annTok, mark, nil, "BAD_USER_INPUT"},
			{"mark a malformed id", annTok, mark, map[string]any{"ids": []string{"post:1"}}, "BAD_USER_INPUT"},
			{"mark someone else's", bobTok, mark, map[string]any{"ids": []string{reply.ID}}, "FORBIDDEN"},
			{"malformed node id", annTok, node, map[string]any{"id": "notification:ann:x"}, "BAD_USER_INPUT"},
		} {
			if r := a.do(tc.token, tc.query, tc.vars); r.code() != tc.code {
				t.Errorf("%s: %+v, want %s", tc.name, r.Errors, tc.code)
			}
		}

		// Marking read.
		var m struct{ MarkNotificationsRead int }
		a.do(annTok, mark, map[string]any{"ids": []string{reply.ID, reply.ID}}).decode(t, &m)
		if m.MarkNotificationsRead != 1 {
			t.Errorf("mark the reply read: %d unread left, want 1", m.MarkNotificationsRead)
		}
		if u := a.inbox(annTok, map[string]any{"unread": true}); !slices.Equal(u.kinds(), []string{"FOLLOW cat"}) || u.UnreadNotificationCount != 1 {
			t.Errorf("unread only: %v, count %d", u.kinds(), u.UnreadNotificationCount)
		}
		a.do(annTok, mark, map[string]any{"all": true}).decode(t, &m)
		if m.MarkNotificationsRead != 0 {
			t.Errorf("mark all read: %d unread left", m.MarkNotificationsRead)
		}

		// A deleted comment and post leave the notification, with null fields.
		a.do(bobTok, `mutation($id:ID!){deleteComment(id:$id)}`, map[string]any{"id": c.ID}).decode(t, &struct{}{})
		in = a.inbox(annTok, nil)
		if r := in.Notifications.Edges[1].Node; r.Comment != nil || r.Post == nil || !r.Read {
			t.Errorf("reply after its comment was deleted: %+v", r)
		}
		a.do(annTok, `mutation($id:ID!){deletePost(id:$id)}`, map[string]any{"id": post}).decode(t, &struct{}{})
		if r := a.inbox(annTok, nil).Notifications.Edges[1].Node; r.Comment != nil || r.Post != nil || r.Actor.Name != "bob" {
			t.Errorf("reply after its post was deleted: %+v", r)
		}
	})
}

// TestNotificationsAreCachedPerViewer: the response cache keeps an inbox per viewer and serves it
// until a notification arrives or is read.
func TestNotificationsAreCachedPerViewer(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		annTok, _ := a.signUp("ann")
		bobTok, _ := a.signUp("bob")
		post := a.createPost(annTok, "ann's post")
		a.comment(bobTok, post, "", "one")
		a.settle()
		q := `{unreadNotificationCount notifications{edges{node{kind}}}}`
		count := func(tok, wantCache string, want int) {
			t.Helper()
			body, how := rawCached(t, a.h, tok, q, nil)
			var d struct{ UnreadNotificationCount int }
			mustData(t, body, &d)
			if d.UnreadNotificationCount != want || how != wantCache {
				t.Errorf("count %d (cache %s), want %d (%s)", d.UnreadNotificationCount, how, want, wantCache)
			}
		}
		count(annTok, "miss", 1)
		count(annTok, "hit", 1)
		count(bobTok, "miss", 0) // not ann's answer
		count(bobTok, "hit", 0)
		a.comment(bobTok, post, "", "two")
		count(annTok, "hit", 1) // the job has not run: nothing changed yet
		a.settle()
		count(annTok, "miss", 2)
		count(bobTok, "hit", 0) // ann's inbox is not bob's
		a.do(annTok, `mutation{markNotificationsRead(all:true)}`, nil).decode(t, &struct{}{})
		count(annTok, "miss", 0)
	})
}

// TestNotificationAddedAPI: notificationAdded delivers the viewer's new notifications, with an
// event cursor, over every transport, and only the viewer's.
func TestNotificationAddedAPI(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		annTok, _ := a.signUp("ann")
		bobTok, _ := a.signUp("bob")
		post := a.createPost(annTok, "ann's post")
		q := `subscription{notificationAdded{id kind read actor{name} comment{body}}}`
		for _, proto := range protos {
			t.Run(proto, func(t *testing.T) {
				anon := subscribe(t, a.srv.URL, proto, "", q, nil)
				if r, _ := anon.result(t); r.code() != "UNAUTHENTICATED" {
					t.Errorf("anonymous subscription: %+v, want UNAUTHENTICATED", r.Errors)
				}
				anon.close()

				sub := subscribe(t, a.srv.URL, proto, annTok, q, nil)
				defer sub.close()
				bobs := subscribe(t, a.srv.URL, proto, bobTok, q, nil)
				defer bobs.close()
				waitSubscribers(t, a, 2)
				body := "from " + proto + " @bob"
				a.comment(bobTok, post, "", body)        // ann: REPLY; bob mentions himself: nothing
				a.comment(annTok, post, "", "mine @bob") // bob: MENTION
				a.settle()
				var d struct {
					NotificationAdded struct {
						ID, Kind string
						Read     bool
						Actor    struct{ Name string }
						Comment  struct{ Body string }
					}
				}
				r, done := sub.result(t)
				if done || len(r.Errors) > 0 {
					t.Fatalf("ann's subscription: %+v", r.Errors)
				}
				if r.Extensions.Cursor == "" {
					t.Error("an event without extensions.cursor")
				}
				r.decode(t, &d)
				n := d.NotificationAdded
				if n.Kind != "REPLY" || n.Read || n.Actor.Name != "bob" || n.Comment.Body != body || !strings.HasPrefix(n.ID, "notification:ann:") {
					t.Errorf("ann's event %+v", n)
				}
				next(t, bobs, &d)
				if n := d.NotificationAdded; n.Kind != "MENTION" || n.Actor.Name != "ann" || !strings.HasPrefix(n.ID, "notification:bob:") {
					t.Errorf("bob's event %+v", n)
				}
			})
		}
	})
}

// TestNotificationRoundTripsDoNotGrowWithPageSize reads a page of notifications with their
// actors, posts and comments and what those show below them, and counts Redis round trips (the
// response cache off): the count must be the same for 5 notifications as for 40.
func TestNotificationRoundTripsDoNotGrowWithPageSize(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		counted, rt := b.Counted(t)
		st := counted.NewStore(t, store.Options{})
		hub := newHub(t, st)
		srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: hub, ResponseCacheMiB: -1}))
		t.Cleanup(srv.Close)
		a := &api{t: t, srv: srv, store: st, hub: hub}
		annTok, annID := a.signUp("ann")
		post := a.createPost(annTok, "ann's post")
		for i := range 20 {
			tok, _ := a.signUp(fmt.Sprintf("author%02d", i))
			a.comment(tok, post, "", "hi @ann")
			a.do(tok, `mutation($id:ID!){follow(userId:$id){id}}`, map[string]any{"id": annID}).decode(t, &struct{}{})
		}
		a.settle()
		query := `query($n: Int!) { notifications(first: $n) { totalCount edges { cursor node { id kind read
			actor { name karma } post { title viewerVote author { name } } comment { body author { name followerCount } } } } } }`
		trips := map[int]int64{}
		for _, n := range []int{5, 40} {
			a.do(annTok, query, map[string]any{"n": n}) // warm the connection pool
			rt.Reset()
			var d struct{ Notifications struct{ Edges []any } }
			a.do(annTok, query, map[string]any{"n": n}).decode(t, &d)
			trips[n] = rt.Count()
			if len(d.Notifications.Edges) != n {
				t.Fatalf("%d notifications, want %d", len(d.Notifications.Edges), n)
			}
		}
		t.Logf("round trips: %v", trips)
		if trips[40] > trips[5] {
			t.Fatalf("round trips grew with the page size: %v", trips)
		}
	})
}
