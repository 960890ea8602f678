package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// titles lists the titles of a connection of posts.
type titles struct {
	Edges []struct{ Node struct{ Title string } }
}

func (c titles) list() []string {
	var out []string
	for _, e := range c.Edges {
		out = append(out, e.Node.Title)
	}
	return out
}

// blockedComment is a comment as the block tests select it.
type blockedComment struct {
	BlockedByViewer bool
	Body            *string
	Author          *struct{ Name string }
}

const blockViews = `query($g:String!,$p:ID!){
	posts(sort:NEW){edges{node{title}}}
	group(name:$g){posts(sort:NEW){edges{node{title}}}}
	feed{edges{node{title}}}
	post(id:$p){comments{edges{node{blockedByViewer body author{name}}}}}
	user(name:"ben"){viewerBlocks}
}`

type blockViewsData struct {
	Posts titles
	Group struct{ Posts titles }
	Feed  titles
	Post  struct {
		Comments struct {
			Edges []struct{ Node blockedComment }
		}
	}
	User struct{ ViewerBlocks bool }
}

func TestAPIBlocks(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		ann, annID := a.signUp("ann")
		ben, benID := a.signUp("ben")
		cat, catID := a.signUp("cat")
		follow := `mutation($id:ID!){follow(userId:$id){id}}`
		for _, tok := range []string{ann, cat} {
			a.do(tok, follow, map[string]any{"id": benID}).decode(t, &struct{}{})
		}
		a.do(ann, follow, map[string]any{"id": catID}).decode(t, &struct{}{})
		catPost := a.createPost(cat, "cat post", "pets")
		a.createPost(ben, "ben post", "pets")
		comment := `mutation($p:ID!,$b:String!){createComment(postId:$p,body:$b){id}}`
		a.do(ben, comment, map[string]any{"p": catPost, "b": "ben says hi"}).decode(t, &struct{}{})
		a.settle()

		views := func(tok string) blockViewsData {
			t.Helper()
			var d blockViewsData
			a.do(tok, blockViews, map[string]any{"g": "pets", "p": catPost}).decode(t, &d)
			return d
		}
		check := func(who, tok string, blocked bool) {
			t.Helper()
			d := views(tok)
			want := []string{"ben post", "cat post"}
			feed := []string{"ben post", "cat post"}
			if who == "cat" {
				feed = []string{"ben post"}
			}
			if blocked {
				want, feed = []string{"cat post"}, []string{"cat post"}
			}
			for name, got := range map[string][]string{"posts": d.Posts.list(), "group posts": d.Group.Posts.list()} {
				if !slices.Equal(got, want) {
					t.Errorf("%s's %s = %v, want %v", who, name, got, want)
				}
			}
			if got := d.Feed.list(); !slices.Equal(got, feed) {
				t.Errorf("%s's feed = %v, want %v", who, got, feed)
			}
			if len(d.Post.Comments.Edges) != 1 {
				t.Fatalf("%s's comments: %+v", who, d.Post.Comments)
			}
			c := d.Post.Comments.Edges[0].Node
			if blocked {
				if !c.BlockedByViewer || c.Body != nil || c.Author != nil {
					t.Errorf("%s's comment by ben = %+v, want collapsed", who, c)
				}
			} else if c.BlockedByViewer || c.Body == nil || *c.Body != "ben says hi" || c.Author == nil || c.Author.Name != "ben" {
				t.Errorf("%s's comment by ben = %+v, want it whole", who, c)
			}
			if d.User.ViewerBlocks != blocked {
				t.Errorf("%s's viewerBlocks = %v, want %v", who, d.User.ViewerBlocks, blocked)
			}
		}
		check("ann", ann, false)

		block := `mutation($id:ID!){blockUser(userId:$id){name viewerBlocks}}`
		for range 2 { // idempotent
			var d struct {
				BlockUser struct {
					Name         string
					ViewerBlocks bool
				}
			}
			a.do(ann, block, map[string]any{"id": benID}).decode(t, &d)
			if d.BlockUser.Name != "ben" || !d.BlockUser.ViewerBlocks {
				t.Fatalf("blockUser = %+v", d.BlockUser)
			}
		}
		for _, tc := range []struct{ name, token, id, code string }{
			{"yourself", ann, annID, "BAD_USER_INPUT"},
			{"unknown user", ann, "user:nobody", "NOT_FOUND"},
			{"malformed id", ann, "post:1", "BAD_USER_INPUT"},
			{"anonymous", "", benID, "UNAUTHENTICATED"},
		} {
			for _, m := range []string{"blockUser", "unblockUser"} {
				q := fmt.Sprintf(`mutation($id:ID!){%s(userId:$id){id}}`, m)
				if r := a.do(tc.token, q, map[string]any{"id": tc.id}); r.code() != tc.code {
					t.Errorf("%s %s: %+v, want %s", m, tc.name, r.Errors, tc.code)
				}
			}
		}
		check("ann", ann, true)
		check("cat", cat, false) // another user still sees ben
		// A user's own list and a post read by id still show the blocked user's posts.
		var d struct {
			User struct{ Posts titles }
		}
		a.do(ann, `{user(name:"ben"){posts{edges{node{title}}}}}`, nil).decode(t, &d)
		if got := d.User.Posts.list(); !slices.Equal(got, []string{"ben post"}) {
			t.Errorf("ben's posts for ann = %v", got)
		}

		// No notification from a blocked user: a reply, a mention, a follow.
		annPost := a.createPost(ann, "ann post")
		a.do(ben, comment, map[string]any{"p": annPost, "b": "reply from ben"}).decode(t, &struct{}{})
		a.do(cat, comment, map[string]any{"p": annPost, "b": "reply from cat, @ben @ann"}).decode(t, &struct{}{})
		a.createPost(ben, "hello @ann")
		a.do(ben, follow, map[string]any{"id": annID}).decode(t, &struct{}{})
		a.do(ann, comment, map[string]any{"p": catPost, "b": "@ben hi"}).decode(t, &struct{}{})
		a.settle()
		if got := a.inbox(ann, nil).kinds(); !slices.Equal(got, []string{"REPLY cat"}) {
			t.Errorf("ann's inbox = %v, want cat's reply only", got)
		}
		// Blocking is one-way: ben is still notified by ann.
		if got := a.inbox(ben, nil).kinds(); !slices.Contains(got, "MENTION ann") {
			t.Errorf("ben's inbox = %v, want ann's mention", got)
		}

		unblock := `mutation($id:ID!){unblockUser(userId:$id){viewerBlocks}}`
		for range 2 {
			var d struct{ UnblockUser struct{ ViewerBlocks bool } }
			a.do(ann, unblock, map[string]any{"id": benID}).decode(t, &d)
			if d.UnblockUser.ViewerBlocks {
				t.Fatal("unblockUser: still blocked")
			}
		}
		got := views(ann)
		if l := got.Posts.list(); !slices.Equal(l, []string{"hello @ann", "ann post", "ben post", "cat post"}) {
			t.Errorf("ann's posts after unblocking = %v", l)
		}
		if c := got.Post.Comments.Edges; len(c) != 2 || c[1].Node.BlockedByViewer || c[1].Node.Author == nil {
			t.Errorf("ann's comments after unblocking = %+v", c)
		}
		// A new notification from ben arrives again.
		a.do(ben, comment, map[string]any{"p": annPost, "b": "again"}).decode(t, &struct{}{})
		a.settle()
		if got := a.inbox(ann, nil).kinds(); !slices.Equal(got, []string{"REPLY ben", "REPLY cat"}) {
			t.Errorf("ann's inbox after unblocking = %v", got)
		}
	})
}

func TestBlockLimit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		a := newAPI(t, b, store.Options{Prefix: prefix, WriteLimit: -1})
		ann, _ := a.signUp("ann")
		// The users to block, written straight into Redis: signing up a thousand takes long.
		ctx := t.Context()
		p := b.Client.Pipeline()
		for i := range store.MaxBlocks + 1 {
			p.HSet(ctx, fmt.Sprintf("%s{u:u%04d}", prefix, i), "name", fmt.Sprintf("u%04d", i), "created", "1")
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		q := `mutation($id:ID!){blockUser(userId:$id){id}}`
		for i := range store.MaxBlocks {
			if r := a.do(ann, q, map[string]any{"id": fmt.Sprintf("user:u%04d", i)}); len(r.Errors) > 0 {
				t.Fatalf("block %d: %+v", i, r.Errors)
			}
		}
		over := map[string]any{"id": fmt.Sprintf("user:u%04d", store.MaxBlocks)}
		if r := a.do(ann, q, over); r.code() != "LIMIT_REACHED" {
			t.Fatalf("block %d: %+v, want LIMIT_REACHED", store.MaxBlocks+1, r.Errors)
		}
		// Blocking again one already blocked is fine; unblocking one makes room.
		if r := a.do(ann, q, map[string]any{"id": "user:u0000"}); len(r.Errors) > 0 {
			t.Fatalf("block again: %+v", r.Errors)
		}
		a.do(ann, `mutation{unblockUser(userId:"user:u0000"){id}}`, nil).decode(t, &struct{}{})
		if r := a.do(ann, q, over); len(r.Errors) > 0 {
			t.Fatalf("block after unblocking one: %+v", r.Errors)
		}
	})
}

// TestBlocksAndResponseCache: the front page an anonymous reader cached is not the one a blocker
// gets; the blocker's own page goes stale when they unblock.
func TestBlocksAndResponseCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		ann, _ := a.signUp("ann")
		ben, benID := a.signUp("ben")
		cat, _ := a.signUp("cat")
		a.createPost(ben, "ben post")
		a.createPost(cat, "cat post")
		front := `{posts(sort:NEW){edges{node{title}}}}`
		page := func(tok, wantCache string, want ...string) {
			t.Helper()
			body, how := rawCached(t, a.h, tok, front, nil)
			var d struct{ Posts titles }
			mustData(t, body, &d)
			if got := d.Posts.list(); !slices.Equal(got, want) {
				t.Errorf("front page = %v, want %v", got, want)
			}
			if how != wantCache {
				t.Errorf("cache said %q, want %q", how, wantCache)
			}
		}
		page("", "miss", "cat post", "ben post")
		page("", "hit", "cat post", "ben post")
		page(ann, "hit", "cat post", "ben post") // ann blocks nobody yet: the shared page
		a.do(ann, `mutation($id:ID!){blockUser(userId:$id){id}}`, map[string]any{"id": benID}).decode(t, &struct{}{})
		page(ann, "miss", "cat post")
		page(ann, "hit", "cat post") // ann's own entry
		page("", "hit", "cat post", "ben post")
		page(cat, "hit", "cat post", "ben post")
		a.do(ann, `mutation($id:ID!){unblockUser(userId:$id){id}}`, map[string]any{"id": benID}).decode(t, &struct{}{})
		page(ann, "hit", "cat post", "ben post") // the shared page again

		// A viewer-dependent page of ann's is kept for her; blocking makes it stale.
		mine := `{posts(sort:NEW){edges{node{title viewerVote}}}}`
		for _, want := range []string{"miss", "hit"} {
			if _, how := rawCached(t, a.h, ann, mine, nil); how != want {
				t.Errorf("ann's page with votes: cache said %q, want %q", how, want)
			}
		}
		a.do(ann, `mutation($id:ID!){blockUser(userId:$id){id}}`, map[string]any{"id": benID}).decode(t, &struct{}{})
		body, how := rawCached(t, a.h, ann, mine, nil)
		if how != "miss" || strings.Contains(string(body), "ben post") {
			t.Errorf("ann's page with votes after blocking: cache %q, %s", how, body)
		}
	})
}
