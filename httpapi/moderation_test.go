package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// modAPI is an API with a site admin (root) and a moderator of group go (mia), and users.
type modAPI struct {
	*api
	tokens map[string]string
}

// newModAPI signs up root (an admin), mia and rex, and makes mia a moderator of go and rex of
// rust by writing the groups' moderators directly, as createGroup and addModerator do.
func newModAPI(t *testing.T, b storetest.Backend, users ...string) *modAPI {
	a := &modAPI{api: newAPI(t, b, store.Options{}), tokens: map[string]string{}}
	for _, u := range append([]string{"root", "mia", "rex"}, users...) {
		a.tokens[u], _ = a.signUp(u)
	}
	a.grantAdmin("root")
	prefix := a.store.Options().Prefix
	for g, u := range map[string]string{"go": "mia", "rust": "rex"} {
		z := rdb.Z{Score: float64(time.Now().UnixMilli()), Member: u}
		if err := b.Client.ZAdd(context.Background(), prefix+"{g:"+g+"}:mods", z).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// as runs a query as user ("" for anonymous).
func (a *modAPI) as(user, query string, vars map[string]any) response {
	a.t.Helper()
	return a.do(a.tokens[user], query, vars)
}

// postSeen returns what user sees of post(id): nil, or its removed and locked flags.
func (a *modAPI) postSeen(user, id string) map[string]any {
	a.t.Helper()
	var d struct{ Post map[string]any }
	a.as(user, `query($id:ID!){post(id:$id){id removed locked}}`, map[string]any{"id": id}).decode(a.t, &d)
	return d.Post
}

func (a *modAPI) groupPosts(group string) ([]string, int) {
	a.t.Helper()
	var d struct {
		Group struct {
			PostCount int
			Posts     struct{ Nodes []struct{ ID string } }
		}
	}
	a.as("", `query($g:String!){group(name:$g){postCount posts(sort:NEW){nodes{id}}}}`, map[string]any{"g": group}).decode(a.t, &d)
	var ids []string
	for _, n := range d.Group.Posts.Nodes {
		ids = append(ids, n.ID)
	}
	return ids, d.Group.PostCount
}

func (a *modAPI) modLog(group string) []string {
	a.t.Helper()
	var d struct {
		ModLog struct {
			Nodes []struct {
				Action    string
				Reason    *string
				Target    struct{ ID string }
				Moderator struct{ Name string }
			}
		}
	}
	a.as("root", `query($g:String){modLog(group:$g,first:50){nodes{action reason target{id} moderator{name}}}}`,
		map[string]any{"g": group}).decode(a.t, &d)
	var out []string
	for _, n := range d.ModLog.Nodes {
		r := ""
		if n.Reason != nil {
			r = *n.Reason
		}
		out = append(out, n.Action+" "+n.Target.ID+" "+n.Moderator.Name+" "+r)
	}
	slices.Sort(out)
	return out
}

func wantCode(t *testing.T, what string, r response, code string) {
	t.Helper()
	if r.code() != code {
		t.Fatalf("%s: %+v, want code %s", what, r.Errors, code)
	}
}

const removePostMutation = `mutation($id:ID!){removePost(id:$id,reason:"spam"){id removed}}`

func TestRemovingAPostThroughTheAPI(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newModAPI(t, b, "ann", "bob")
		p := a.createPost(a.tokens["ann"], "spam", "go")
		q := a.createPost(a.tokens["ann"], "news", "go")
		vars := map[string]any{"id": p}
		wantCode(t, "a moderator of another group", a.as("rex", removePostMutation, vars), "FORBIDDEN")
		wantCode(t, "a user", a.as("bob", removePostMutation, vars), "FORBIDDEN")
		wantCode(t, "anonymous", a.as("", removePostMutation, vars), "UNAUTHENTICATED")
		for range 2 { // the client retries: the same answer, one entry in the log
			var d struct{ RemovePost struct{ Removed bool } }
			a.as("mia", removePostMutation, vars).decode(t, &d)
			if !d.RemovePost.Removed {
				t.Fatal("removePost answered a post that is not removed")
			}
		}
		// Twice each, so that the second answer may come from the response cache.
		for _, u := range []string{"", "bob", "ann", "mia", "root", "", "bob", "ann", "mia"} {
			seen := a.postSeen(u, p)
			if may := u == "ann" || u == "mia" || u == "root"; may != (seen != nil) || may && seen["removed"] != true {
				t.Fatalf("%q sees the removed post as %v", u, seen)
			}
		}
		var nodes struct{ Nodes []any }
		a.as("bob", `query($ids:[ID!]!){nodes(ids:$ids){id}}`, map[string]any{"ids": []string{p, q}}).decode(t, &nodes)
		if nodes.Nodes[0] != nil || nodes.Nodes[1] == nil {
			t.Fatalf("nodes: %v", nodes.Nodes)
		}
		if ids, n := a.groupPosts("go"); !slices.Equal(ids, []string{q}) || n != 1 {
			t.Fatalf("group go lists %v (postCount %d) after the removal", ids, n)
		}
		var user struct {
			User struct{ Posts struct{ TotalCount int } }
		}
		a.as("", `{user(name:"ann"){posts{totalCount}}}`, nil).decode(t, &user)
		if user.User.Posts.TotalCount != 1 {
			t.Fatalf("ann's posts count %d", user.User.Posts.TotalCount)
		}
		wantCode(t, "a vote", a.as("bob", `mutation($id:ID!){votePost(postId:$id,direction:UP){id}}`, map[string]any{"id": p}), "NOT_FOUND")
		wantCode(t, "a comment", a.as("bob", `mutation($id:ID!){createComment(postId:$id,body:"x"){id}}`, map[string]any{"id": p}), "NOT_FOUND")

		a.as("root", `mutation($id:ID!){restorePost(id:$id){id}}`, vars).decode(t, &struct{}{})
		if seen := a.postSeen("", p); seen == nil || seen["removed"] != false {
			t.Fatalf("anonymous sees the restored post as %v", seen)
		}
		if ids, n := a.groupPosts("go"); !slices.Equal(ids, []string{q, p}) || n != 2 {
			t.Fatalf("group go lists %v (postCount %d) after the restoration", ids, n)
		}
		want := []string{"REMOVE_POST " + p + " mia spam", "RESTORE_POST " + p + " root "}
		if got := a.modLog("go"); !slices.Equal(got, want) {
			t.Fatalf("mod log %q, want %q", got, want)
		}
	})
}

func TestLockingAndPinningThroughTheAPI(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newModAPI(t, b, "ann", "bob")
		p := a.createPost(a.tokens["ann"], "hot topic", "go")
		q := a.createPost(a.tokens["ann"], "rules", "go")
		lock := `mutation($id:ID!,$l:Boolean!){lockPost(id:$id,locked:$l,reason:"heat"){locked}}`
		wantCode(t, "a moderator of another group", a.as("rex", lock, map[string]any{"id": p, "l": true}), "FORBIDDEN")
		a.as("mia", lock, map[string]any{"id": p, "l": true}).decode(t, &struct{}{})
		if seen := a.postSeen("", p); seen["locked"] != true {
			t.Fatalf("locked post seen as %v", seen)
		}
		wantCode(t, "a comment", a.as("bob", `mutation($id:ID!){createComment(postId:$id,body:"x"){id}}`, map[string]any{"id": p}), "LOCKED")
		wantCode(t, "a vote", a.as("bob", `mutation($id:ID!){votePost(postId:$id,direction:UP){id}}`, map[string]any{"id": p}), "LOCKED")
		a.as("root", lock, map[string]any{"id": p, "l": false}).decode(t, &struct{}{})
		a.as("bob", `mutation($id:ID!){votePost(postId:$id,direction:UP){id}}`, map[string]any{"id": p}).decode(t, &struct{}{})

		pin := `mutation($id:ID!,$g:String!,$p:Boolean!){pinPost(id:$id,group:$g,pinned:$p){pinnedIn{name}}}`
		wantCode(t, "a moderator of another group", a.as("rex", pin, map[string]any{"id": p, "g": "go", "p": true}), "FORBIDDEN")
		wantCode(t, "a group the post is not in", a.as("rex", pin, map[string]any{"id": p, "g": "rust", "p": true}), "BAD_USER_INPUT")
		var d struct {
			PinPost struct{ PinnedIn []struct{ Name string } }
		}
		a.as("mia", pin, map[string]any{"id": p, "g": "go", "p": true}).decode(t, &d)
		if len(d.PinPost.PinnedIn) != 1 || d.PinPost.PinnedIn[0].Name != "go" {
			t.Fatalf("pinnedIn %+v", d.PinPost.PinnedIn)
		}
		if ids, _ := a.groupPosts("go"); !slices.Equal(ids, []string{p, q}) {
			t.Fatalf("group go lists %v, want the pinned post first", ids)
		}
		var list struct {
			Posts struct {
				Edges []struct {
					Node struct {
						ID       string
						PinnedIn []struct{ Name string }
					}
				}
			}
		}
		a.as("", `{posts(group:"go",sort:NEW,first:1){edges{node{id pinnedIn{name}}}}}`, nil).decode(t, &list)
		if e := list.Posts.Edges; len(e) != 1 || e[0].Node.ID != p || len(e[0].Node.PinnedIn) != 1 {
			t.Fatalf("posts(group:) %+v", e)
		}
		a.as("mia", pin, map[string]any{"id": p, "g": "go", "p": false}).decode(t, &d)
		if ids, _ := a.groupPosts("go"); !slices.Equal(ids, []string{q, p}) {
			t.Fatalf("group go lists %v once unpinned", ids)
		}
		want := []string{"LOCK_POST " + p + " mia heat", "PIN_POST " + p + " mia ", "UNLOCK_POST " + p + " root heat", "UNPIN_POST " + p + " mia "}
		if got := a.modLog("go"); !slices.Equal(got, want) {
			t.Fatalf("mod log %q, want %q", got, want)
		}
	})
}

func TestRemovedCommentsThroughTheAPI(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newModAPI(t, b, "ann", "bob")
		p := a.createPost(a.tokens["ann"], "thread", "go")
		comment := func(user, parent, body string) string {
			var d struct{ CreateComment struct{ ID string } }
			vars := map[string]any{"p": p, "body": body}
			if parent != "" {
				vars["parent"] = parent
			}
			a.as(user, `mutation($p:ID!,$parent:ID,$body:String!){createComment(postId:$p,parentId:$parent,body:$body){id}}`, vars).decode(t, &d)
			return d.CreateComment.ID
		}
		c := comment("bob", "", "rude")
		reply := comment("ann", c, "calm down")
		lone := comment("bob", "", "spam")
		remove := `mutation($id:ID!){removeComment(id:$id,reason:"rule 1"){removed}}`
		wantCode(t, "a moderator of another group", a.as("rex", remove, map[string]any{"id": c}), "FORBIDDEN")
		a.as("mia", remove, map[string]any{"id": c}).decode(t, &struct{}{})
		a.as("root", remove, map[string]any{"id": lone}).decode(t, &struct{}{})
		a.as("root", remove, map[string]any{"id": lone}).decode(t, &struct{}{}) // retried

		type node struct {
			ID         string
			Body       *string
			Author     *struct{ Name string }
			Removed    bool
			ReplyCount int
		}
		thread := func(user string) (int, []node) {
			var d struct {
				Post struct {
					CommentCount int
					Comments     struct{ Nodes []node }
				}
			}
			a.as(user, `query($id:ID!){post(id:$id){commentCount comments(sort:OLD){nodes{id body author{name} removed replyCount}}}}`,
				map[string]any{"id": p}).decode(t, &d)
			return d.Post.CommentCount, d.Post.Comments.Nodes
		}
		for _, u := range []string{"", "ann", "bob", "mia", ""} {
			count, nodes := thread(u)
			if count != 1 || len(nodes) != 1 || nodes[0].ID != c || !nodes[0].Removed || nodes[0].ReplyCount != 1 {
				t.Fatalf("%q sees a thread of %d comments: %+v", u, count, nodes)
			}
			sees := u == "bob" || u == "mia"
			if sees != (nodes[0].Body != nil) || sees != (nodes[0].Author != nil) {
				t.Fatalf("%q sees the removed comment as %+v", u, nodes[0])
			}
		}
		wantCode(t, "a reply to a removed comment", a.as("ann", `mutation($p:ID!,$c:ID!){createComment(postId:$p,parentId:$c,body:"x"){id}}`,
			map[string]any{"p": p, "c": c}), "NOT_FOUND")
		var one struct{ Comment *node }
		a.as("", `query($id:ID!){comment(id:$id){id body author{name} removed}}`, map[string]any{"id": lone}).decode(t, &one)
		if one.Comment == nil || one.Comment.Body != nil || !one.Comment.Removed {
			t.Fatalf("anonymous sees the removed comment as %+v", one.Comment)
		}
		wantCode(t, "a moderator restoring an admin's removal", a.as("mia", `mutation($id:ID!){restoreComment(id:$id){removed}}`, map[string]any{"id": lone}), "FORBIDDEN")
		a.as("root", `mutation($id:ID!){restoreComment(id:$id){removed}}`, map[string]any{"id": lone}).decode(t, &struct{}{})
		if count, nodes := thread(""); count != 2 || len(nodes) != 2 || nodes[1].ID != lone || nodes[1].Body == nil {
			t.Fatalf("after the restoration: %d %+v", count, nodes)
		}
		_ = reply
		want := []string{"REMOVE_COMMENT " + c + " mia rule 1", "REMOVE_COMMENT " + lone + " root rule 1", "RESTORE_COMMENT " + lone + " root "}
		if got := a.modLog(""); !slices.Equal(got, want) {
			t.Fatalf("mod log %q, want %q", got, want)
		}
	})
}

// TestRemovedPostsLeaveLiveStreams checks that postChanged tells a lock and ends when its post is
// removed, that a removed post cannot be subscribed to, and that postPublished does not deliver a
// removed post (here in a replay, which reads the posts as they are now).
func TestRemovedPostsLeaveLiveStreams(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newModAPI(t, b, "ann")
		p := a.createPost(a.tokens["ann"], "watched", "go")
		changed := subscribe(t, a.srv.URL, protoSSE, "", `subscription($p:ID!){postChanged(postId:$p){locked}}`, map[string]any{"p": p})
		defer changed.close()
		published := subscribe(t, a.srv.URL, protoSSE, "", `subscription{postPublished(group:"go"){id}}`, nil)
		waitSubscribers(t, a.api, 2)
		a.as("mia", `mutation($id:ID!){lockPost(id:$id,locked:true){id}}`, map[string]any{"id": p}).decode(t, &struct{}{})
		var d struct{ PostChanged struct{ Locked bool } }
		next(t, changed, &d)
		if !d.PostChanged.Locked {
			t.Fatal("postChanged did not tell the lock")
		}
		a.as("mia", removePostMutation, map[string]any{"id": p}).decode(t, &struct{}{})
		if r, done := changed.result(t); !done {
			t.Fatalf("postChanged goes on after the removal: %+v", r)
		}
		again := subscribe(t, a.srv.URL, protoSSE, "", `subscription($p:ID!){postChanged(postId:$p){id}}`, map[string]any{"p": p})
		r, _ := again.result(t)
		again.close()
		wantCode(t, "subscribing to a removed post", r, "NOT_FOUND")

		first := a.createPost(a.tokens["ann"], "first", "go")
		var pub struct{ PostPublished struct{ ID string } }
		r, _ = published.result(t)
		if err := json.Unmarshal(r.Data, &pub); err != nil || pub.PostPublished.ID != first {
			t.Fatalf("postPublished %s, want %s", r.Data, first)
		}
		published.close()
		gone := a.createPost(a.tokens["ann"], "spam", "go")
		kept := a.createPost(a.tokens["ann"], "kept", "go")
		a.as("mia", removePostMutation, map[string]any{"id": gone}).decode(t, &struct{}{})
		replay := subscribe(t, a.srv.URL, protoSSE, "", `subscription($a:String){postPublished(group:"go",after:$a){id}}`,
			map[string]any{"a": r.FrameID})
		defer replay.close()
		r, _ = replay.result(t)
		if err := json.Unmarshal(r.Data, &pub); err != nil || pub.PostPublished.ID != kept {
			t.Fatalf("replayed %s, want only %s", r.Data, kept)
		}
	})
}

// TestPinsCostNoRoundTrips checks that a group's listing with its pins first, and pinnedIn on
// every post, cost the round trips of a listing without them, whatever the page size: the pins
// are read with the authors. (Authors shown by name alone are not read at all: see
// TestAuthorNamesCostNoRoundTrip.)
func TestPinsCostNoRoundTrips(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		counted, rt := b.Counted(t)
		a := newAPI(t, counted, store.Options{})
		root, _ := a.signUp("root")
		a.grantAdmin("root")
		tok, _ := a.signUp("author")
		var posts []string
		for i := range 30 {
			posts = append(posts, a.createPost(tok, fmt.Sprint("post ", i), "g", fmt.Sprintf("g%d", i%3)))
		}
		for _, p := range posts[:3] {
			a.do(root, `mutation($id:ID!){pinPost(id:$id,group:"g",pinned:true){id}}`, map[string]any{"id": p}).decode(t, &struct{}{})
		}
		// Every read executes: the response cache is off.
		off := httptest.NewServer(httpapi.New(httpapi.Config{Store: a.store, Hub: a.hub, ResponseCacheMiB: -1}))
		t.Cleanup(off.Close)
		a.srv = off
		trips := func(query string, n int) int64 {
			vars := map[string]any{"n": n}
			a.do("", query, vars) // warm the connection pool
			rt.Reset()
			r := a.do(root, query, vars)
			if len(r.Errors) > 0 {
				t.Fatal(r.Errors)
			}
			return rt.Count()
		}
		plain := `query($n:Int!){posts(group:"g",first:$n){edges{node{id author{name createdAt}}}}}`
		pinned := `query($n:Int!){posts(group:"g",first:$n){edges{node{id author{name createdAt} pinnedIn{name}}}}}`
		for _, n := range []int{5, 25} {
			p, q := trips(plain, n), trips(pinned, n)
			t.Logf("first %d: %d round trips, %d with pinnedIn", n, p, q)
			if q > p || q > trips(pinned, 5) {
				t.Fatalf("first %d: %d round trips with pinnedIn, %d without, %d for 5", n, q, p, trips(pinned, 5))
			}
		}
	})
}
