package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestAPIReadStateAndWatching: read state, hideRead and the watch modes through the API, for a
// signed-in and an anonymous viewer.
func TestAPIReadStateAndWatching(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		ann, annID := a.signUp("ann")
		rita, _ := a.signUp("rita")
		p1 := a.createPost(ann, "one", "golang")
		p2 := a.createPost(ann, "two", "golang")
		comment := `mutation($p:ID!){createComment(postId:$p,body:"hi"){id}}`
		for range 3 {
			a.do(ann, comment, map[string]any{"p": p1}).decode(t, &struct{}{})
		}
		state := `query($p:ID!){post(id:$p){unreadCommentCount viewerHasRead viewerWatch commentCount}}`
		type st struct {
			Post struct {
				UnreadCommentCount int
				ViewerHasRead      bool
				ViewerWatch        *string
				CommentCount       int
			}
		}
		read := func(tok string) st {
			t.Helper()
			var d st
			a.do(tok, state, map[string]any{"p": p1}).decode(t, &d)
			return d
		}
		if d := read(rita); d.Post.UnreadCommentCount != 3 || d.Post.ViewerHasRead || d.Post.ViewerWatch == nil || *d.Post.ViewerWatch != "REPLIES" {
			t.Errorf("never read: %+v", d.Post)
		}
		if d := read(""); d.Post.UnreadCommentCount != 0 || d.Post.ViewerHasRead || d.Post.ViewerWatch != nil {
			t.Errorf("anonymous: %+v", d.Post)
		}
		var m struct {
			MarkPostRead struct {
				UnreadCommentCount int
				ViewerHasRead      bool
			}
		}
		a.do(rita, `mutation($p:ID!){markPostRead(id:$p){unreadCommentCount viewerHasRead}}`, map[string]any{"p": p1}).decode(t, &m)
		if m.MarkPostRead.UnreadCommentCount != 0 || !m.MarkPostRead.ViewerHasRead {
			t.Errorf("markPostRead: %+v", m)
		}
		a.do(ann, comment, map[string]any{"p": p1}).decode(t, &struct{}{})
		if d := read(rita); d.Post.UnreadCommentCount != 1 || !d.Post.ViewerHasRead {
			t.Errorf("one new comment: %+v", d.Post)
		}
		if r := a.do("", `mutation($p:ID!){markPostRead(id:$p){id}}`, map[string]any{"p": p1}); r.code() != "UNAUTHENTICATED" {
			t.Errorf("anonymous markPostRead: %+v", r.Errors)
		}
		if r := a.do(rita, `mutation{markPostRead(id:"post:9999"){id}}`, nil); r.code() != "NOT_FOUND" {
			t.Errorf("markPostRead of a missing post: %+v", r.Errors)
		}
		a.do(rita, `mutation($id:ID!){follow(userId:$id){id}}`, map[string]any{"id": annID}).decode(t, &struct{}{})
		a.do(rita, `mutation{joinGroup(name:"golang"){id}}`, nil).decode(t, &struct{}{})
		a.settle() // the feed's backfill
		list := `query($h:Boolean){
			posts(sort:NEW,hideRead:$h){edges{node{title}}}
			groupFeed(sort:NEW,hideRead:$h){edges{node{title}}}
			feed(hideRead:$h){edges{node{title}}}
		}`
		var l struct{ Posts, GroupFeed, Feed titles }
		for _, tc := range []struct {
			hide bool
			want []string
		}{{true, []string{"two"}}, {false, []string{"two", "one"}}} {
			a.do(rita, list, map[string]any{"h": tc.hide}).decode(t, &l)
			for name, c := range map[string]titles{"posts": l.Posts, "groupFeed": l.GroupFeed, "feed": l.Feed} {
				if got := c.list(); !slices.Equal(got, tc.want) {
					t.Errorf("%s, hideRead %v: %q, want %q", name, tc.hide, got, tc.want)
				}
			}
		}
		a.do("", `query{posts(sort:NEW,hideRead:true){edges{node{title}}}}`, nil).decode(t, &l)
		if got := l.Posts.list(); !slices.Equal(got, []string{"two", "one"}) {
			t.Errorf("anonymous hideRead: %q", got)
		}
		var w struct{ WatchPost struct{ ViewerWatch string } }
		a.do(rita, `mutation($p:ID!){watchPost(id:$p,mode:ALL){viewerWatch}}`, map[string]any{"p": p2}).decode(t, &w)
		if w.WatchPost.ViewerWatch != "ALL" {
			t.Errorf("watchPost: %+v", w)
		}
		var g struct{ WatchGroup struct{ ViewerWatch string } }
		a.do(rita, `mutation{watchGroup(name:"golang",mode:MUTED){viewerWatch}}`, nil).decode(t, &g)
		if g.WatchGroup.ViewerWatch != "MUTED" {
			t.Errorf("watchGroup: %+v", g)
		}
		a.do(ann, comment, map[string]any{"p": p2}).decode(t, &struct{}{})
		a.settle()
		var n struct {
			Notifications struct {
				Edges []struct{ Node struct{ Kind string } }
			}
		}
		a.do(rita, `{notifications{edges{node{kind}}}}`, nil).decode(t, &n)
		if len(n.Notifications.Edges) != 1 || n.Notifications.Edges[0].Node.Kind != "WATCHED_COMMENT" {
			t.Errorf("rita's notifications: %+v", n)
		}
	})
}

// TestReadStateThreadCache: the thread page with read state stays one shared cache entry. Every
// reader after the first is served from it (a response kept per reader would make each one's
// first read a miss), each with their own exact read state: after a markPostRead (which changes
// no revision of the thread) and after a new comment (which does).
func TestReadStateThreadCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		ann, _ := a.signUp("ann")
		rita, _ := a.signUp("rita")
		p := a.createPost(ann, "thread")
		comment := `mutation($p:ID!){createComment(postId:$p,body:"hi"){id}}`
		a.do(ann, comment, map[string]any{"p": p}).decode(t, &struct{}{})
		q := `query($p:ID!){post(id:$p){title unreadCommentCount viewerHasRead comments{edges{node{body}}}}}`
		get := func(tok string) (string, int) {
			t.Helper()
			body, _ := json.Marshal(map[string]any{"query": q, "variables": map[string]any{"p": p}})
			req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			rec := httptest.NewRecorder()
			a.h.ServeHTTP(rec, req)
			var d struct {
				Data struct {
					Post struct{ UnreadCommentCount int }
				}
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
				t.Fatal(err)
			}
			return rec.Header().Get(httpapi.CacheHeader), d.Data.Post.UnreadCommentCount
		}
		for _, step := range []struct {
			tok, cache string
			unread     int
			then       func()
		}{
			{rita, "miss", 1, nil},
			{rita, "hit", 1, func() { a.do(rita, `mutation($p:ID!){markPostRead(id:$p){id}}`, map[string]any{"p": p}) }},
			{rita, "hit", 0, nil},
			{ann, "hit", 1, nil},
			{"", "hit", 0, func() { a.do(ann, comment, map[string]any{"p": p}).decode(t, &struct{}{}) }},
			{ann, "miss", 2, nil},
			{rita, "hit", 1, nil},
			{"", "hit", 0, nil},
		} {
			cache, unread := get(step.tok)
			if cache != step.cache || unread != step.unread {
				t.Errorf("%q: %s with %d unread, want %s with %d", step.tok[:min(4, len(step.tok))], cache, unread, step.cache, step.unread)
			}
			if step.then != nil {
				step.then()
			}
		}
	})
}
