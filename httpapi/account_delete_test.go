package httpapi_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestDeleteAccountKeepContent deletes an account without erase over HTTP and checks what its
// kept post and comment show: the post the placeholder author "[deleted]", the comment none,
// whatever the selection of the author; and that its name finds nothing.
func TestDeleteAccountKeepContent(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		ann, annID := a.signUp("ann")
		bob, _ := a.signUp("bob")
		pid := a.createPost(ann, "curlew kept")
		var c struct{ CreateComment struct{ ID string } }
		a.do(ann, `mutation($p:ID!){createComment(postId:$p,body:"curlew comment"){id}}`, map[string]any{"p": pid}).decode(t, &c)
		a.settle()

		var d struct{ DeleteAccount string }
		a.do(ann, `mutation{deleteAccount(password:"password1",eraseContent:false)}`, nil).decode(t, &d)
		if d.DeleteAccount != annID {
			t.Fatalf("deleteAccount answered %q, want ann's id %q (for a client cache to evict)", d.DeleteAccount, annID)
		}
		a.settle()

		for _, sel := range []string{`author{id name}`, `author{name karma}`} {
			var r struct {
				Post struct {
					Title  string
					Author struct{ Name string }
				}
				Comment struct {
					Body   string
					Author *struct{ Name string }
				}
			}
			q := fmt.Sprintf(`query($p:ID!,$c:ID!){post(id:$p){title %s} comment(id:$c){body %s}}`, sel, sel)
			a.do(bob, q, map[string]any{"p": pid, "c": c.CreateComment.ID}).decode(t, &r)
			if r.Post.Title != "curlew kept" || r.Post.Author.Name != "[deleted]" {
				t.Fatalf("%s: kept post reads %+v, want its title by [deleted]", sel, r.Post)
			}
			if r.Comment.Body != "curlew comment" || r.Comment.Author != nil {
				t.Fatalf("%s: kept comment reads %+v, want its body without author", sel, r.Comment)
			}
		}
		var s struct {
			All, By struct {
				Edges []struct{ Node struct{ ID string } }
			}
			User *struct{ Name string }
		}
		a.do(bob, `{all:searchPosts(query:"curlew"){edges{node{id}}} by:searchPosts(query:"curlew",author:"ann"){edges{node{id}}} user(name:"ann"){name}}`, nil).decode(t, &s)
		if len(s.All.Edges) != 1 || len(s.By.Edges) != 0 || s.User != nil {
			t.Fatalf("search shows %d (by ann %d), user(ann) = %v; want 1, 0, null", len(s.All.Edges), len(s.By.Edges), s.User)
		}
		if r := a.do("", `mutation{signUp(name:"Ann",password:"password2"){token}}`, nil); r.code() != "CONFLICT" {
			t.Fatalf("sign-up with a deleted name: %+v, want CONFLICT", r.Errors)
		}
	})
}

// TestDeleteUserByAdmin checks the admin path: a non-admin is FORBIDDEN, a wrong password is
// FORBIDDEN, an admin's deletion works and is in the moderation log as DELETE_USER, and the
// deleted user's token is UNAUTHENTICATED afterwards.
func TestDeleteUserByAdmin(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		admin, _ := a.signUp("root")
		a.grantAdmin("root")
		ann, annID := a.signUp("ann")
		bob, _ := a.signUp("bob")
		a.createPost(ann, "curlew")

		del := `mutation($u:ID!,$e:Boolean!){deleteUser(userId:$u,eraseContent:$e)}`
		if r := a.do(bob, del, map[string]any{"u": annID, "e": true}); r.code() != "FORBIDDEN" {
			t.Fatalf("deleteUser by a non-admin: %+v, want FORBIDDEN", r.Errors)
		}
		if r := a.do(ann, `mutation{deleteAccount(password:"wrong-password",eraseContent:true)}`, nil); r.code() != "FORBIDDEN" {
			t.Fatalf("deleteAccount with a wrong password: %+v, want FORBIDDEN", r.Errors)
		}
		if r := a.do(ann, `{viewer{name}}`, nil); len(r.Errors) > 0 {
			t.Fatalf("ann's token after the refused deletions: %+v", r.Errors)
		}
		var d struct{ DeleteUser string }
		a.do(admin, del, map[string]any{"u": annID, "e": true}).decode(t, &d)
		if d.DeleteUser != annID {
			t.Fatalf("deleteUser answered %q, want ann's id %q", d.DeleteUser, annID)
		}
		a.settle()

		var log struct {
			ModLog struct {
				Edges []struct {
					Node struct {
						Action    string
						TargetID  string
						Moderator struct{ Name string }
					}
				}
			}
		}
		a.do(admin, `{modLog(first:10){edges{node{action targetId moderator{name}}}}}`, nil).decode(t, &log)
		found := false
		for _, e := range log.ModLog.Edges {
			if e.Node.Action == "DELETE_USER" && e.Node.TargetID == annID && e.Node.Moderator.Name == "root" {
				found = true
			}
		}
		if !found {
			t.Fatalf("modLog holds no DELETE_USER of ann by root: %+v", log.ModLog.Edges)
		}
		if r := a.do(ann, `{viewer{name}}`, nil); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("a deleted user's token: %+v, want UNAUTHENTICATED", r.Errors)
		}
		if r := a.do(ann, `mutation{createPost(input:{title:"after"}){id}}`, nil); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("a deleted user's token writes: %+v, want UNAUTHENTICATED", r.Errors)
		}
		// The erased posts are not shown (nor counted: see searchPosts' totalCount).
		var s struct {
			SearchPosts struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		a.do(bob, `{searchPosts(query:"curlew"){edges{node{id}}}}`, nil).decode(t, &s)
		if len(s.SearchPosts.Edges) != 0 {
			t.Fatalf("search shows %d erased posts", len(s.SearchPosts.Edges))
		}
		// The id a client cache evicts names nothing any more.
		if r := a.do(bob, `query($u:ID!){node(id:$u){id}}`, map[string]any{"u": annID}); string(r.Data) != `{"node":null}` {
			t.Fatalf("node(deleted user's id): %s %+v, want null", r.Data, r.Errors)
		}
		// Deleting again (to erase what a deletion left) answers the same id.
		var again struct{ DeleteUser string }
		a.do(admin, del, map[string]any{"u": annID, "e": true}).decode(t, &again)
		if again.DeleteUser != annID {
			t.Fatalf("deleteUser again answered %q, want %q", again.DeleteUser, annID)
		}
	})
}

// TestDeleteAccountResponseCache reads the front page and a search through the response cache,
// deletes the author of a post in them (with and without erase), and checks that the cached
// answers then equal fresh ones.
func TestDeleteAccountResponseCache(t *testing.T) {
	reads := []string{
		`{posts(sort:NEW,first:10){totalCount edges{node{id title author{name}}}}}`,
		`{posts(sort:HOT,first:10){totalCount edges{node{id title author{id name}}}}}`,
		`{searchPosts(query:"curlew",first:10){totalCount edges{node{id title author{name}}}}}`,
		`{searchComments(query:"curlew",first:10){totalCount edges{node{id body author{name}}}}}`,
		`{leaderboard(first:10){edges{karma node{name}}}}`,
		`{suggestUsers(prefix:"a"){name}}`,
	}
	for _, erase := range []bool{false, true} {
		t.Run(fmt.Sprintf("erase=%v", erase), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				a := newAPI(t, b, store.Options{WriteLimit: -1})
				off := httpapi.New(httpapi.Config{Store: a.store, Hub: a.hub, ResponseCacheMiB: -1})
				ann, _ := a.signUp("ann")
				bob, _ := a.signUp("bob")
				pid := a.createPost(ann, "curlew ann")
				a.createPost(bob, "curlew bob")
				a.do(ann, `mutation($p:ID!){createComment(postId:$p,body:"curlew comment"){id}}`, map[string]any{"p": pid})
				a.do(bob, `mutation($p:ID!){votePost(postId:$p,direction:UP){id}}`, map[string]any{"p": pid})
				a.settle()
				for _, q := range reads {
					raw(t, a.h, "", q, nil)
					if _, how := rawCached(t, a.h, "", q, nil); how != "hit" {
						t.Fatalf("%s: the cache answered %q before the deletion, want hit", q, how)
					}
				}
				if r := a.do(ann, `mutation($e:Boolean!){deleteAccount(password:"password1",eraseContent:$e)}`, map[string]any{"e": erase}); len(r.Errors) > 0 {
					t.Fatal(r.Errors)
				}
				a.settle()
				for _, q := range reads {
					got, how := rawCached(t, a.h, "", q, nil)
					want := raw(t, off, "", q, nil)
					mustData(t, want, nil)
					if !bytes.Equal(got, want) {
						t.Errorf("%s: cached (%s)\n%s\nfresh\n%s", q, how, got, want)
					}
				}
			})
		})
	}
}

// TestNoWritesAfterDeleteAccountInOneRequest: the mutations that follow deleteAccount in one
// request run with the request's viewer, authenticated before the deletion; they are refused
// with UNAUTHENTICATED, and nothing they would have written is there once the chain ran.
func TestNoWritesAfterDeleteAccountInOneRequest(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		ann, _ := a.signUp("ann")
		bob, bobID := a.signUp("bob")
		r := a.do(ann, `mutation($b:ID!){
			deleteAccount(password:"password1",eraseContent:true)
			createPost(input:{title:"sandpiper after"}){id}
			follow(userId:$b){id}
		}`, map[string]any{"b": bobID})
		codes := map[string]string{}
		for _, e := range r.Errors {
			if len(e.Path) > 0 {
				c, _ := e.Extensions["code"].(string)
				codes[fmt.Sprint(e.Path[0])] = c
			}
		}
		for _, f := range []string{"createPost", "follow"} {
			if codes[f] != "UNAUTHENTICATED" {
				t.Errorf("%s after deleteAccount in its request: %q (errors %+v), want UNAUTHENTICATED", f, codes[f], r.Errors)
			}
		}
		a.settle()
		var s struct {
			SearchPosts struct{ TotalCount int }
			User        struct{ FollowerCount int }
		}
		a.do(bob, `query($b:String!){searchPosts(query:"sandpiper"){totalCount} user(name:$b){followerCount}}`, map[string]any{"b": "bob"}).decode(t, &s)
		if s.SearchPosts.TotalCount != 0 || s.User.FollowerCount != 0 {
			t.Errorf("after the chain: %d posts found, bob has %d followers; want none", s.SearchPosts.TotalCount, s.User.FollowerCount)
		}
	})
}
