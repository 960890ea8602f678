package httpapi_test

import (
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestScoresAreNetVotes checks that score means one thing on posts and comments, upvotes minus
// downvotes, and that the HOT ranking key of a post is hotRank.
func TestScoresAreNetVotes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		alice, _ := a.signUp("alice")
		bob, _ := a.signUp("bob")
		carol, _ := a.signUp("carol")
		pid := a.createPost(alice, "Scores")
		var c struct{ CreateComment struct{ ID string } }
		a.do(alice, `mutation($p:ID!){createComment(postId:$p, body:"a comment"){id}}`, map[string]any{"p": pid}).decode(t, &c)
		for _, tok := range []string{bob, carol} {
			a.do(tok, `mutation($p:ID!){votePost(postId:$p, direction:DOWN){id}}`, map[string]any{"p": pid}).decode(t, &struct{}{})
			a.do(tok, `mutation($c:ID!){voteComment(commentId:$c, direction:DOWN){id}}`, map[string]any{"c": c.CreateComment.ID}).decode(t, &struct{}{})
		}
		var got struct {
			Post struct {
				CreatedAt                 time.Time
				Upvotes, Downvotes, Score int
				HotRank                   float64
			}
			Comment struct{ Upvotes, Downvotes, Score int }
		}
		a.do("", `query($p:ID!, $c:ID!){post(id:$p){createdAt upvotes downvotes score hotRank}
			comment(id:$c){upvotes downvotes score}}`, map[string]any{"p": pid, "c": c.CreateComment.ID}).decode(t, &got)
		p := got.Post
		if p.Downvotes != 2 || p.Score != p.Upvotes-2 || p.HotRank != float64(p.CreatedAt.Unix()+432*int64(p.Score)) {
			t.Fatalf("post %+v: want score upvotes − downvotes and hotRank createdAt + 432 × score", p)
		}
		if c := got.Comment; c.Downvotes != 2 || c.Score != c.Upvotes-2 {
			t.Fatalf("comment %+v: want score upvotes − downvotes", c)
		}
	})
}

// TestDeletionsReturnTheDeletedID checks that every mutation that deletes a node returns its
// global id, so that a normalized client cache can evict it, and that deleting again does too.
func TestDeletionsReturnTheDeletedID(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		alice, _ := a.signUp("alice")
		post := a.createPost(alice, "to delete")
		other := a.createPost(alice, "with comments")
		var c struct{ CreateComment struct{ ID string } }
		a.do(alice, `mutation($p:ID!){createComment(postId:$p, body:"gone soon"){id}}`, map[string]any{"p": other}).decode(t, &c)
		var s struct{ CreatePost struct{ ID string } }
		a.do(alice, `mutation($t:Time!){createPost(input:{title:"later", publishAt:$t}){id}}`,
			map[string]any{"t": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}).decode(t, &s)
		for _, c := range []struct{ name, mutation, id string }{
			{"deletePost", `mutation($id:ID!){deletePost(id:$id)}`, post},
			{"deletePost again", `mutation($id:ID!){deletePost(id:$id)}`, post},
			{"deleteComment", `mutation($id:ID!){deleteComment(id:$id)}`, c.CreateComment.ID},
			{"deleteComment again", `mutation($id:ID!){deleteComment(id:$id)}`, c.CreateComment.ID},
			{"cancelScheduledPost", `mutation($id:ID!){cancelScheduledPost(id:$id)}`, s.CreatePost.ID},
		} {
			t.Run(c.name, func(t *testing.T) {
				var got map[string]any
				a.do(alice, c.mutation, map[string]any{"id": c.id}).decode(t, &got)
				for _, v := range got {
					if v != c.id {
						t.Fatalf("%s returned %v, want the id %s", c.name, v, c.id)
					}
				}
			})
		}
	})
}
