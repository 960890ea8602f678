package httpapi_test

import (
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestDeletedAccountsInModerationRecords: the moderation log, the report queue and a group's bans
// keep naming the accounts that acted in them after those accounts are deleted — a moderator, a
// reporter, a resolver, a banned user. Each such user field is non-null, and a deleted account
// shows as the "[deleted]" placeholder, as a deleted author does: one deleted account used to
// fail the whole page (INTERNAL_SERVER_ERROR, data null), so that deleting an account took the
// public log and the moderators' queues down.
func TestDeletedAccountsInModerationRecords(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		tok := map[string]string{}
		for _, n := range []string{"root", "mia", "ann", "ben", "zed"} {
			tok[n], _ = a.signUp(n)
		}
		a.grantAdmin("root")
		a.do(tok["mia"], `mutation{createGroup(name:"go"){name}}`, nil).decode(t, &struct{}{})
		a.do(tok["mia"], `mutation{addModerator(group:"go",userId:"user:zed"){name}}`, nil).decode(t, &struct{}{})
		post := a.createPost(tok["ann"], "spam", "go")
		open := a.reportOf(tok["ben"], post, "spam")
		resolved := a.reportOf(tok["ann"], post, "not spam")
		a.do(tok["zed"], `mutation($id:ID!){resolveReport(id:$id){id}}`, map[string]any{"id": resolved}).decode(t, &struct{}{})
		a.do(tok["zed"], `mutation($id:ID!){removePost(id:$id,reason:"spam"){id}}`, map[string]any{"id": post}).decode(t, &struct{}{})
		a.do(tok["mia"], `mutation{banUser(userId:"user:ann",group:"go",reason:"spam"){id}}`, nil).decode(t, &struct{}{})
		a.settle()
		for _, n := range []string{"ann", "ben", "zed"} {
			a.do(tok[n], `mutation{deleteAccount(password:"password1",eraseContent:false)}`, nil).decode(t, &struct{}{})
		}
		a.settle()

		var log struct {
			ModLog struct {
				Nodes []struct {
					Action    string
					Moderator struct{ Name string }
				}
			}
		}
		a.do("", `{modLog(group:"go",first:20){nodes{action moderator{name}}}}`, nil).decode(t, &log)
		mods := map[string]string{}
		for _, n := range log.ModLog.Nodes {
			mods[n.Action] = n.Moderator.Name
		}
		if mods["REMOVE_POST"] != "[deleted]" || mods["BAN_USER"] != "mia" {
			t.Errorf("the log's moderators: %v, want REMOVE_POST by [deleted], BAN_USER by mia", mods)
		}

		var reports struct {
			Reports struct {
				Nodes []struct {
					ID         string
					Reporter   struct{ Name string }
					ResolvedBy *struct{ Name string }
				}
			}
		}
		a.do(tok["root"], `{reports(unresolvedOnly:false,first:20){nodes{id reporter{name} resolvedBy{name}}}}`, nil).decode(t, &reports)
		got := map[string]string{}
		for _, r := range reports.Reports.Nodes {
			by := ""
			if r.ResolvedBy != nil {
				by = r.ResolvedBy.Name
			}
			got[r.ID] = r.Reporter.Name + " " + by
		}
		if got[open] != "[deleted] " || got[resolved] != "[deleted] [deleted]" {
			t.Errorf("the reports: %v, want their deleted reporter and resolver as [deleted]", got)
		}

		var bans struct {
			Group struct {
				Bans struct {
					Nodes []struct{ User struct{ Name string } }
				}
			}
		}
		a.do(tok["mia"], `{group(name:"go"){bans(first:10){nodes{user{name}}}}}`, nil).decode(t, &bans)
		if n := bans.Group.Bans.Nodes; len(n) != 1 || n[0].User.Name != "[deleted]" {
			t.Errorf("the group's bans: %+v, want the deleted user's as [deleted]", n)
		}
	})
}

// TestDeletedUserPlaceholderReadsWhole: the placeholder user a deleted author is shown as reads
// whole, its creation time the Unix epoch. It was the zero time, which GraphQL's Time writes as
// null: User.createdAt is non-null, so reading it failed with INTERNAL_SERVER_ERROR and took the
// kept post with it.
func TestDeletedUserPlaceholderReadsWhole(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		bob, _ := a.signUp("bobby")
		post := a.createPost(bob, "kept")
		if r := a.do(bob, `mutation{deleteAccount(password:"password1", eraseContent:false)}`, nil); len(r.Errors) > 0 {
			t.Fatalf("deleteAccount: %+v", r.Errors)
		}
		a.settle()
		var d struct {
			Post struct {
				Author struct{ ID, Name, CreatedAt string }
			}
		}
		a.do("", `query($p:ID!){post(id:$p){author{id name createdAt}}}`, map[string]any{"p": post}).decode(t, &d)
		if got, want := d.Post.Author, (struct{ ID, Name, CreatedAt string }{"user:[deleted]", "[deleted]", "1970-01-01T00:00:00Z"}); got != want {
			t.Errorf("the author of a kept post: %+v, want %+v", got, want)
		}
	})
}

// TestDeletedUserPlaceholderIsANode: the placeholder user a deleted author is shown as is a Node,
// and every Node is fetched again with node(id) and nodes(ids): as a post's author, as node and
// in nodes it reads the same. Its id was answered BAD_USER_INPUT, "malformed id", and failed a
// whole nodes(ids) batch.
func TestDeletedUserPlaceholderIsANode(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		bob, _ := a.signUp("bobby")
		post := a.createPost(bob, "kept")
		if r := a.do(bob, `mutation{deleteAccount(password:"password1", eraseContent:false)}`, nil); len(r.Errors) > 0 {
			t.Fatalf("deleteAccount: %+v", r.Errors)
		}
		a.settle()
		type user struct{ ID, Name, CreatedAt, Typename string }
		const fields = `... on User { id name createdAt typename: __typename }`
		var d struct{ Post struct{ Author user } }
		a.do("", `query($p:ID!){post(id:$p){author{`+fields+`}}}`, map[string]any{"p": post}).decode(t, &d)
		author := d.Post.Author
		if author.Name != "[deleted]" {
			t.Fatalf("the author of a kept post: %+v, want the placeholder", author)
		}
		for _, tc := range []struct{ name, query string }{
			{"node", `query($id:ID!){got: node(id:$id){` + fields + `}}`},
			{"nodes", `query($id:ID!){all: nodes(ids:[$id]){` + fields + `}}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var got struct {
					Got *user
					All []*user
				}
				a.do("", tc.query, map[string]any{"id": author.ID}).decode(t, &got)
				if tc.name == "nodes" && len(got.All) == 1 {
					got.Got = got.All[0]
				}
				if got.Got == nil || *got.Got != author {
					t.Errorf("%s(%q) = %+v, want %+v", tc.name, author.ID, got.Got, author)
				}
			})
		}
	})
}
