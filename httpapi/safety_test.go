package httpapi_test

import (
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSiteFiltersOverHTTP runs the site filters through two server replicas on one Redis: an
// admin changes them on one, and the other refuses (FILTERED, naming the field) and replaces
// within a second of the driven clock.
func TestSiteFiltersOverHTTP(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		clock := storetest.NewClock()
		opts := store.Options{Prefix: storetest.Prefix(), Now: clock.Now}
		a := newAPI(t, be, opts)
		other := be
		other.Client = be.NewClient(t)
		b := newAPI(t, other, opts)
		root, _ := a.signUp("root")
		alice, _ := a.signUp("alice")
		a.grantAdmin("root")
		const update = `mutation($w:[String!],$d:[String!],$a:FilterAction!){updateSiteFilters(words:$w,urlDomains:$d,action:$a){words urlDomains action updatedBy{name}}}`
		if r := a.do(alice, update, map[string]any{"w": []string{"ass"}, "a": "REFUSE"}); r.code() != "FORBIDDEN" {
			t.Fatalf("a user changed the filters: %+v", r)
		}
		if r := a.do(alice, `{siteFilters{words}}`, nil); r.code() != "FORBIDDEN" {
			t.Fatalf("a user read the filters: %+v", r)
		}
		// b reads the filters (none yet) with a first write.
		b.createPost(alice, "hello")
		var d struct {
			UpdateSiteFilters struct {
				Words, URLDomains []string
				Action            string
				UpdatedBy         struct{ Name string }
			}
		}
		a.do(root, update, map[string]any{"w": []string{"ass"}, "d": []string{"spam.example"}, "a": "REFUSE"}).decode(t, &d)
		if u := d.UpdateSiteFilters; len(u.Words) != 1 || len(u.URLDomains) != 1 || u.Action != "REFUSE" || u.UpdatedBy.Name != "root" {
			t.Fatalf("updateSiteFilters: %+v", u)
		}
		clock.Add(time.Second)
		const post = `mutation($t:String!,$u:String){createPost(input:{title:$t,url:$u}){id title}}`
		for _, c := range []struct {
			title, url, field string
		}{
			{"you Ass", "", "title"},
			{"fine", "https://www.spam.example/x", "url"},
		} {
			r := b.do(alice, post, map[string]any{"t": c.title, "u": c.url})
			if r.code() != "FILTERED" || len(r.Errors) != 1 || r.Errors[0].Extensions["field"] != c.field {
				t.Errorf("%q %q: %+v", c.title, c.url, r.Errors)
			}
		}
		a.do(root, update, map[string]any{"a": "REPLACE"}).decode(t, &d)
		if u := d.UpdateSiteFilters; len(u.Words) != 1 || u.Action != "REPLACE" {
			t.Fatalf("the words left out did not stay: %+v", u)
		}
		clock.Add(time.Second)
		var p struct{ CreatePost struct{ ID, Title string } }
		b.do(alice, post, map[string]any{"t": "you Ass"}).decode(t, &p)
		if p.CreatePost.Title != "you ***" {
			t.Errorf("title %q, want %q", p.CreatePost.Title, "you ***")
		}
		var f struct {
			SiteFilters struct{ Words, URLDomains []string }
		}
		a.do(root, `{siteFilters{words urlDomains}}`, nil).decode(t, &f)
		if len(f.SiteFilters.Words) != 1 || f.SiteFilters.URLDomains[0] != "spam.example" {
			t.Errorf("siteFilters: %+v", f)
		}
	})
}

// TestRemovalNotices runs every moderation action that notifies, each twice (a retried request),
// and checks that its author (or the banned user) gets exactly one MOD_ACTION with the action,
// the group and the reason, that the log links to it, and that a moderator's action on their
// own post notifies nobody.
func TestRemovalNotices(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		a := newAPI(t, be, store.Options{})
		mod, _ := a.signUp("mod")
		bob, _ := a.signUp("bob")
		a.do(mod, `mutation{createGroup(name:"meta"){name}}`, nil).decode(t, &struct{}{})
		post := a.createPost(bob, "bob's post", "meta")
		own := a.createPost(mod, "mod's post", "meta")
		var c struct{ CreateComment struct{ ID string } }
		a.do(bob, `mutation($p:ID!){createComment(postId:$p,body:"hi"){id}}`, map[string]any{"p": post}).decode(t, &c)
		type step struct {
			query  string
			vars   map[string]any
			action string
		}
		steps := []step{
			{`mutation($id:ID!){removePost(id:$id,reason:"spam"){id}}`, map[string]any{"id": post}, "REMOVE_POST"},
			{`mutation($id:ID!){restorePost(id:$id){id}}`, map[string]any{"id": post}, "RESTORE_POST"},
			{`mutation($id:ID!){lockPost(id:$id,locked:true,reason:"heated"){id}}`, map[string]any{"id": post}, "LOCK_POST"},
			{`mutation($id:ID!){removeComment(id:$id,reason:"rude"){id}}`, map[string]any{"id": c.CreateComment.ID}, "REMOVE_COMMENT"},
			{`mutation{banUser(userId:"user:bob",group:"meta",reason:"again"){id}}`, nil, "BAN_USER"},
			{`mutation($id:ID!){removePost(id:$id,reason:"mine"){id}}`, map[string]any{"id": own}, ""},
		}
		const inbox = `{unreadNotificationCount notifications(first:20){totalCount nodes{id kind actor{name} post{id} comment{id} modAction{id action reason group{name}}}}}`
		type note struct {
			ID, Kind  string
			Actor     struct{ Name string }
			Post      *struct{ ID string }
			Comment   *struct{ ID string }
			ModAction *struct {
				ID, Action string
				Reason     *string
				Group      *struct{ Name string }
			}
		}
		var in struct {
			UnreadNotificationCount int
			Notifications           struct {
				TotalCount int
				Nodes      []note
			}
		}
		want := 0
		for _, s := range steps {
			for range 2 { // the request, then its retry
				if r := a.do(mod, s.query, s.vars); len(r.Errors) > 0 {
					t.Fatalf("%s: %+v", s.action, r.Errors)
				}
				a.settle()
			}
			if s.action == "" {
				continue
			}
			want++
			a.do(bob, inbox, nil).decode(t, &in)
			if in.UnreadNotificationCount != want || in.Notifications.TotalCount != want || len(in.Notifications.Nodes) != want {
				t.Fatalf("after %s: %d unread, %d in the inbox, want %d", s.action, in.UnreadNotificationCount, in.Notifications.TotalCount, want)
			}
			n := in.Notifications.Nodes[0]
			if n.Kind != "MOD_ACTION" || n.Actor.Name != "mod" || n.ModAction == nil || n.ModAction.Action != s.action ||
				n.ModAction.Group == nil || n.ModAction.Group.Name != "meta" {
				t.Fatalf("after %s: %+v", s.action, n)
			}
			// The log links its entry to the notice, for its recipient.
			var l struct{ Node struct{ NoticeID *string } }
			a.do(bob, `query($id:ID!){node(id:$id){...on ModAction{noticeId}}}`, map[string]any{"id": n.ModAction.ID}).decode(t, &l)
			if l.Node.NoticeID == nil || *l.Node.NoticeID != n.ID {
				t.Errorf("%s: the log links to %v, want %s", s.action, l.Node.NoticeID, n.ID)
			}
		}
		last := in.Notifications.Nodes
		if r := last[4].ModAction.Reason; r == nil || *r != "spam" || last[4].Post == nil || last[4].Post.ID != post {
			t.Errorf("the removal's notice: %+v", last[4])
		}
		if last[1].Comment == nil || last[1].Comment.ID != c.CreateComment.ID {
			t.Errorf("the comment's notice: %+v", last[1])
		}
		var m struct{ Notifications struct{ TotalCount int } }
		a.do(mod, `{notifications(first:5){totalCount}}`, nil).decode(t, &m)
		if m.Notifications.TotalCount != 0 {
			t.Errorf("the moderator was notified of their own action: %d", m.Notifications.TotalCount)
		}
	})
}

// TestSiteFiltersFollowTheEditorRule: updateSiteFilters follows the one rule of every editor —
// a list left out (not written, or a variable the request leaves out) stays as it is; null or []
// clears it.
func TestSiteFiltersFollowTheEditorRule(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		a := newAPI(t, be, store.Options{})
		root, _ := a.signUp("root")
		a.grantAdmin("root")
		const set = `mutation{updateSiteFilters(words:["ass"],urlDomains:["spam.example"],action:REFUSE){words}}`
		const byVar = `mutation($w:[String!],$d:[String!]){updateSiteFilters(words:$w,urlDomains:$d,action:REFUSE){words urlDomains}}`
		for _, tc := range []struct {
			name, query string
			vars        map[string]any
			words, doms int // what stays of each list
		}{
			{"both left out", `mutation{updateSiteFilters(action:REFUSE){words urlDomains}}`, nil, 1, 1},
			{"variables left out", byVar, map[string]any{}, 1, 1},
			{"null words", `mutation{updateSiteFilters(words:null,action:REFUSE){words urlDomains}}`, nil, 0, 1},
			{"null domains", `mutation{updateSiteFilters(urlDomains:null,action:REFUSE){words urlDomains}}`, nil, 1, 0},
			{"null variables", byVar, map[string]any{"w": nil, "d": nil}, 0, 0},
			{"empty lists", byVar, map[string]any{"w": []string{}, "d": []string{}}, 0, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if r := a.do(root, set, nil); len(r.Errors) > 0 {
					t.Fatalf("set the filters: %+v", r.Errors)
				}
				var d struct {
					UpdateSiteFilters struct{ Words, URLDomains []string }
				}
				a.do(root, tc.query, tc.vars).decode(t, &d)
				if u := d.UpdateSiteFilters; len(u.Words) != tc.words || len(u.URLDomains) != tc.doms {
					t.Errorf("words %q, urlDomains %q; want %d and %d", u.Words, u.URLDomains, tc.words, tc.doms)
				}
			})
		}
	})
}

// TestNoticeLinkShownToItsRecipientOnly: the public moderation log linked an action to its notice
// (ModAction.noticeId) only when the notice was delivered, and a notice is not delivered to an
// author who blocks the moderator: anyone reading the log learned who blocks which moderator.
// The link is shown to the notice's recipient only, null to everyone else.
func TestNoticeLinkShownToItsRecipientOnly(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		a := newAPI(t, be, store.Options{})
		mod, _ := a.signUp("mod")
		ann, _ := a.signUp("ann")
		bob, _ := a.signUp("bob")
		eve, _ := a.signUp("eve")
		a.do(mod, `mutation{createGroup(name:"meta"){name}}`, nil).decode(t, &struct{}{})
		a.do(ann, `mutation{blockUser(userId:"user:mod"){id}}`, nil).decode(t, &struct{}{})
		for _, tok := range []string{ann, bob} {
			p := a.createPost(tok, "a post", "meta")
			a.do(mod, `mutation($id:ID!){removePost(id:$id,reason:"spam"){id}}`, map[string]any{"id": p}).decode(t, &struct{}{})
		}
		a.settle()
		links := func(tok string) []*string {
			t.Helper()
			var l struct {
				ModLog struct{ Nodes []struct{ NoticeID *string } }
			}
			a.do(tok, `{modLog(group:"meta",first:10){nodes{noticeId}}}`, nil).decode(t, &l)
			var out []*string
			for _, n := range l.ModLog.Nodes {
				out = append(out, n.NoticeID)
			}
			return out
		}
		for name, tok := range map[string]string{"anonymous": "", "eve": eve, "mod": mod, "ann": ann} {
			for i, l := range links(tok) {
				if l != nil {
					t.Errorf("%s reads the link %q of action %d, which tells whether its author blocks the moderator", name, *l, i)
				}
			}
		}
		var in struct {
			Notifications struct{ Nodes []struct{ ID string } }
		}
		a.do(bob, `{notifications(first:5){nodes{id}}}`, nil).decode(t, &in)
		got := links(bob)
		if len(in.Notifications.Nodes) != 1 || len(got) != 2 || got[0] == nil || *got[0] != in.Notifications.Nodes[0].ID {
			t.Errorf("bob's own notice: links %v, inbox %+v", got, in)
		}
	})
}
