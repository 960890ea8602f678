package httpapi_test

import (
	"strconv"
	"strings"
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

// TestBansAreNodes checks that a ban has a global id that node and nodes find, for those who may
// see it (the site admins; a group ban's moderators too), in force and once unbanUser ended it,
// and that unbanUser returns the ban, as banUser does, under the same id.
func TestBansAreNodes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		bt := newBanTest(t, b)
		var banned struct{ BanUser struct{ ID, Reason string } }
		bt.ban(bt.mia, bt.benID, "go", nil, "spam").decode(t, &banned)
		var site struct{ BanUser struct{ ID string } }
		bt.ban(bt.root, bt.amyID, nil, nil, "flood").decode(t, &site)
		if banned.BanUser.ID != "ban:g:go:ben" || site.BanUser.ID != "ban:site:amy" {
			t.Fatalf("ban ids %q and %q", banned.BanUser.ID, site.BanUser.ID)
		}
		type ban struct {
			Typename string `json:"__typename"`
			ID       string
			Reason   string
			Until    *string
			User     struct{ Name string }
		}
		read := func(token, id string) (node *ban, nodes []*ban) {
			t.Helper()
			var d struct {
				Node  *ban
				Nodes []*ban
			}
			bt.do(token, `query($id:ID!){node(id:$id){__typename id ... on Ban{reason until user{name}}}
				nodes(ids:[$id]){__typename id ... on Ban{reason until user{name}}}}`, map[string]any{"id": id}).decode(t, &d)
			return d.Node, d.Nodes
		}
		for _, c := range []struct {
			name, token, id string
			visible         bool
		}{
			{"group ban, its moderator", bt.mia, banned.BanUser.ID, true},
			{"group ban, an admin", bt.root, banned.BanUser.ID, true},
			{"group ban, the banned user", bt.ben, banned.BanUser.ID, false},
			{"group ban, another user", bt.amy, banned.BanUser.ID, false},
			{"group ban, anonymous", "", banned.BanUser.ID, false},
			{"site ban, an admin", bt.root, site.BanUser.ID, true},
			{"site ban, a group moderator", bt.mia, site.BanUser.ID, false},
			{"no such ban", bt.root, "ban:g:go:amy", false},
		} {
			t.Run(c.name, func(t *testing.T) {
				node, nodes := read(c.token, c.id)
				if !c.visible {
					if node != nil || len(nodes) != 1 || nodes[0] != nil {
						t.Fatalf("node %+v, nodes %+v; want null", node, nodes)
					}
					return
				}
				if node == nil || node.Typename != "Ban" || node.ID != c.id || len(nodes) != 1 || nodes[0] == nil || *nodes[0] != *node {
					t.Fatalf("node %+v, nodes %+v; want the ban %s", node, nodes, c.id)
				}
			})
		}
		for _, bad := range []string{"ban:go:ben", "ban:g:go", "ban:site:", "ban:g:Go!:ben"} {
			if r := bt.do(bt.root, `query($id:ID!){node(id:$id){id}}`, map[string]any{"id": bad}); r.code() != "BAD_USER_INPUT" {
				t.Errorf("node(%q): %+v, want BAD_USER_INPUT", bad, r.Errors)
			}
		}

		var lifted struct {
			UnbanUser struct {
				ID, Reason, Until string
				User              struct{ Name string }
			}
		}
		bt.unban(bt.mia, bt.benID, "go").decode(t, &lifted)
		until, _ := time.Parse(time.RFC3339, lifted.UnbanUser.Until)
		if u := lifted.UnbanUser; u.ID != banned.BanUser.ID || u.Reason != "spam" || !until.Equal(bt.clk.Now().Truncate(time.Millisecond)) {
			t.Fatalf("unbanUser returned %+v; want the ban %s, ended now", u, banned.BanUser.ID)
		}
		node, _ := read(bt.mia, banned.BanUser.ID)
		if node == nil || node.Until == nil || *node.Until != lifted.UnbanUser.Until {
			t.Fatalf("the ended ban reads %+v, want it ended at %s", node, lifted.UnbanUser.Until)
		}
		bt.clk.Add(25 * time.Hour)
		if node, _ := read(bt.mia, banned.BanUser.ID); node != nil {
			t.Fatalf("a ban ended 25 hours ago reads %+v, want null", node)
		}
	})
}

// TestEditorsShareOneNullRule checks the one rule of every editor's optional arguments: an
// argument left out (in the document, or a variable the request leaves out) leaves its field;
// null (written, or a variable sent as null) or "" clears it; a field that cannot be empty (a
// post's title) refuses both.
func TestEditorsShareOneNullRule(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		ann, _ := a.signUp("ann")
		a.do(ann, `mutation{createGroup(name:"editors"){name}}`, nil).decode(t, &struct{}{})
		post := a.createPost(ann, "Edited")
		// op wraps a selection into an operation that declares the variables it uses.
		op := func(kind, sel string) string {
			var decl []string
			if strings.Contains(sel, "$p") {
				decl = append(decl, "$p:ID!")
			}
			if strings.Contains(sel, "$v") {
				decl = append(decl, "$v:String")
			}
			if len(decl) > 0 {
				kind += "(" + strings.Join(decl, ",") + ")"
			}
			return kind + "{" + sel + "}"
		}
		// Each editor's mutation has ARG where its argument goes; read selects the field.
		editors := []struct{ name, arg, mutation, read, value string }{
			{"updateGroup", "description", `updateGroup(name:"editors" ARG){name}`, `group(name:"editors"){v:description}`, "about editors"},
			{"updateProfile", "bio", `updateProfile(ARG){name}`, `viewer{v:bio}`, "a bio"},
			{"updateProfile", "avatarUrl", `updateProfile(ARG){name}`, `viewer{v:avatarUrl}`, "https://x.example/a.png"},
			{"editPost", "body", `editPost(id:$p ARG){id}`, `post(id:$p){v:body}`, "a body"},
			{"editPost", "url", `editPost(id:$p ARG){id}`, `post(id:$p){v:url}`, "https://x.example/"},
		}
		for _, e := range editors {
			// write runs the editor with the argument written as lit ("" leaves it out); a
			// request variable v is sent when send is set.
			write := func(t *testing.T, lit string, send bool, v any) {
				t.Helper()
				if lit != "" {
					lit = ", " + e.arg + ":" + lit
				}
				vars := map[string]any{"p": post}
				if send {
					vars["v"] = v
				}
				sel := strings.Replace(strings.Replace(e.mutation, "ARG", lit, 1), "()", "", 1)
				a.do(ann, op("mutation", sel), vars).decode(t, &struct{}{})
			}
			// read returns the field; "" when null (a post's body is empty rather than null).
			read := func(t *testing.T) string {
				t.Helper()
				var d map[string]map[string]*string
				a.do(ann, op("query", e.read), map[string]any{"p": post}).decode(t, &d)
				for _, f := range d {
					if f["v"] != nil {
						return *f["v"]
					}
				}
				return ""
			}
			for _, c := range []struct {
				name string
				lit  string
				send bool
				v    any
				kept bool
			}{
				{"left out", "", false, nil, true},
				{"variable left out", "$v", false, nil, true},
				{"null", "null", false, nil, false},
				{"variable null", "$v", true, nil, false},
				{`""`, `""`, false, nil, false},
				{`variable ""`, "$v", true, "", false},
			} {
				t.Run(e.name+" "+e.arg+"/"+c.name, func(t *testing.T) {
					write(t, strconv.Quote(e.value), false, nil)
					if got := read(t); got != e.value {
						t.Fatalf("set: %q, want %q", got, e.value)
					}
					write(t, c.lit, c.send, c.v)
					want := ""
					if c.kept {
						want = e.value
					}
					if got := read(t); got != want {
						t.Fatalf("after %s: %q, want %q", c.name, got, want)
					}
				})
			}
		}
		for _, v := range []string{`null`, `""`} {
			if r := a.do(ann, `mutation($p:ID!){editPost(id:$p,title:`+v+`){id}}`, map[string]any{"p": post}); r.code() != "BAD_USER_INPUT" {
				t.Errorf("editPost title %s: %+v, want BAD_USER_INPUT", v, r.Errors)
			}
		}
	})
}
