package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

const banQuery = `mutation($u:ID!,$g:String,$until:Time,$r:String!){banUser(userId:$u,group:$g,until:$until,reason:$r){
	id user{name} group{name} until reason createdAt moderator{name}}}`

const groupBansQuery = `query($g:String!,$first:Int,$after:String){group(name:$g){bans(first:$first,after:$after){
	totalCount pageInfo{hasNextPage endCursor} edges{cursor node{user{name} group{name} until reason moderator{name}}}}}}`

// banTest is an API with a driven clock, an admin (root), a moderator of group go (mia) and two
// users (ben, amy), with amy's posts in go (inGo), rust (inRust) and no group (inNone).
type banTest struct {
	*api
	clk                     *storetest.Clock
	root, mia, ben, amy     string // tokens
	benID, amyID            string
	inGo, inRust, inNone    string
	banned                  func(what string, r response, until any)
	ban                     func(token, user string, group any, until any, reason string) response
	vote                    func(token, post string) response
	createPostIn, commentOn func(token, target string) response
	moderate                func(group, user string)
	groupBansPage           func(token string, first int, after string) response
	modLog                  func(group string) []string
	unban                   func(token, user string, group any) response
	untilAt                 func(d time.Duration) string
}

func newBanTest(t *testing.T, b storetest.Backend) *banTest {
	t.Helper()
	clk := storetest.NewClock()
	prefix := storetest.Prefix()
	a := newAPI(t, b, store.Options{Prefix: prefix, Now: clk.Now})
	bt := &banTest{api: a, clk: clk}
	bt.root, _ = a.signUp("root")
	a.grantAdmin("root")
	bt.mia, _ = a.signUp("mia")
	bt.ben, bt.benID = a.signUp("ben")
	bt.amy, bt.amyID = a.signUp("amy")
	bt.moderate = func(group, user string) {
		// createGroup comes with another part of the work: the moderators' set is written here.
		if err := b.Client.ZAdd(context.Background(), prefix+"{g:"+group+"}:mods", rdb.Z{Score: 1, Member: user}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	bt.moderate("go", "mia")
	bt.inGo = a.createPost(bt.amy, "in go", "go")
	bt.inRust = a.createPost(bt.amy, "in rust", "rust")
	bt.inNone = a.createPost(bt.amy, "in none")
	bt.ban = func(token, user string, group any, until any, reason string) response {
		return a.do(token, banQuery, map[string]any{"u": user, "g": group, "until": until, "r": reason})
	}
	bt.unban = func(token, user string, group any) response {
		return a.do(token, `mutation($u:ID!,$g:String){unbanUser(userId:$u,group:$g){id until reason}}`, map[string]any{"u": user, "g": group})
	}
	bt.vote = func(token, post string) response {
		return a.do(token, `mutation($p:ID!){votePost(postId:$p,direction:UP){id}}`, map[string]any{"p": post})
	}
	bt.createPostIn = func(token, group string) response {
		var g []string
		if group != "" {
			g = []string{group}
		}
		return a.do(token, `mutation($g:[String!]){createPost(input:{title:"t",groups:$g}){id}}`, map[string]any{"g": g})
	}
	bt.commentOn = func(token, post string) response {
		return a.do(token, `mutation($p:ID!){createComment(postId:$p,body:"hi"){id}}`, map[string]any{"p": post})
	}
	bt.groupBansPage = func(token string, first int, after string) response {
		vars := map[string]any{"g": "go", "first": first}
		if after != "" {
			vars["after"] = after
		}
		return a.do(token, groupBansQuery, vars)
	}
	bt.banned = func(what string, r response, until any) {
		t.Helper()
		if r.code() != "BANNED" {
			t.Fatalf("%s: got %s %+v, want BANNED", what, r.code(), r.Errors)
		}
		if got, ok := r.Errors[0].Extensions["until"]; !ok || got != until {
			t.Fatalf("%s: extensions.until %v, want %v", what, got, until)
		}
	}
	bt.modLog = func(group string) []string {
		var d struct {
			ModLog struct{ Nodes []struct{ Action string } }
		}
		a.do("", `query($g:String){modLog(group:$g){nodes{action}}}`, map[string]any{"g": group}).decode(t, &d)
		var out []string
		for _, n := range d.ModLog.Nodes {
			out = append(out, n.Action)
		}
		return out
	}
	bt.untilAt = func(d time.Duration) string { return clk.Now().Add(d).Truncate(time.Second).UTC().Format(time.RFC3339) }
	return bt
}

func TestAPIBanFromAGroup(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		bt := newBanTest(t, b)
		until := bt.untilAt(48 * time.Hour)
		var d struct {
			BanUser struct {
				User      struct{ Name string }
				Group     *struct{ Name string }
				Until     *string
				Reason    string
				Moderator *struct{ Name string }
			}
		}
		bt.ban(bt.mia, bt.benID, "go", until, "spam").decode(t, &d)
		got := d.BanUser
		if got.User.Name != "ben" || got.Group == nil || got.Group.Name != "go" || got.Until == nil || *got.Until != until ||
			got.Reason != "spam" || got.Moderator == nil || got.Moderator.Name != "mia" {
			t.Fatalf("ban %+v", got)
		}
		bt.banned("post into go", bt.createPostIn(bt.ben, "go"), until)
		bt.banned("vote in go", bt.vote(bt.ben, bt.inGo), until)
		bt.banned("comment in go", bt.commentOn(bt.ben, bt.inGo), until)
		for name, r := range map[string]response{
			"post into rust":   bt.createPostIn(bt.ben, "rust"),
			"post into none":   bt.createPostIn(bt.ben, ""),
			"vote in rust":     bt.vote(bt.ben, bt.inRust),
			"vote in none":     bt.vote(bt.ben, bt.inNone),
			"comment in none":  bt.commentOn(bt.ben, bt.inNone),
			"someone else, go": bt.vote(bt.mia, bt.inGo),
		} {
			if len(r.Errors) > 0 {
				t.Fatalf("%s: %+v", name, r.Errors)
			}
		}

		// The moderators of go and the admins see its bans; nobody else.
		for _, token := range []string{bt.mia, bt.root} {
			var l struct {
				Group struct {
					Bans struct {
						TotalCount int
						Edges      []struct {
							Node struct {
								User  struct{ Name string }
								Until *string
							}
						}
					}
				}
			}
			bt.groupBansPage(token, 10, "").decode(t, &l)
			if l.Group.Bans.TotalCount != 1 || len(l.Group.Bans.Edges) != 1 || l.Group.Bans.Edges[0].Node.User.Name != "ben" ||
				*l.Group.Bans.Edges[0].Node.Until != until {
				t.Fatalf("go's bans: %+v", l)
			}
		}
		if r := bt.groupBansPage(bt.amy, 10, ""); r.code() != "FORBIDDEN" {
			t.Fatalf("a user lists the bans: %s %s", r.code(), r.Data)
		}
		if r := bt.groupBansPage("", 10, ""); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("anonymous lists the bans: %s %s", r.code(), r.Data)
		}
		// A moderator of go has no say in rust.
		if r := bt.ban(bt.mia, bt.amyID, "rust", nil, "x"); r.code() != "FORBIDDEN" {
			t.Fatalf("ban from another group: %s", r.code())
		}
		if r := bt.ban(bt.mia, bt.amyID, "go", bt.untilAt(-time.Hour), "x"); r.code() != "BAD_USER_INPUT" {
			t.Fatalf("ban into the past: %s", r.code())
		}

		var u, again struct {
			UnbanUser struct{ ID, Until, Reason string }
		}
		bt.unban(bt.mia, bt.benID, "go").decode(t, &u)
		if u.UnbanUser.ID != "ban:g:go:ben" || u.UnbanUser.Until == "" {
			t.Fatalf("unban: %+v, want the ended ban", u.UnbanUser)
		}
		bt.unban(bt.mia, bt.benID, "go").decode(t, &again)
		if again != u {
			t.Fatalf("unban again: %+v, want %+v", again.UnbanUser, u.UnbanUser)
		}
		if r := bt.vote(bt.ben, bt.inGo); len(r.Errors) > 0 {
			t.Fatalf("after the unban: %+v", r.Errors)
		}
	})
}

func TestAPISiteBan(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		bt := newBanTest(t, b)
		if r := bt.ban(bt.mia, bt.benID, nil, nil, "spam"); r.code() != "FORBIDDEN" {
			t.Fatalf("a moderator bans from the site: %s", r.code())
		}
		var d struct {
			BanUser struct {
				Group *struct{ Name string }
				Until *string
			}
		}
		bt.ban(bt.root, bt.benID, nil, nil, "spam").decode(t, &d)
		if d.BanUser.Group != nil || d.BanUser.Until != nil {
			t.Fatalf("site ban %+v", d.BanUser)
		}
		bt.banned("post into none", bt.createPostIn(bt.ben, ""), nil)
		bt.banned("post into rust", bt.createPostIn(bt.ben, "rust"), nil)
		bt.banned("vote in none", bt.vote(bt.ben, bt.inNone), nil)
		bt.banned("comment in rust", bt.commentOn(bt.ben, bt.inRust), nil)
		// Reading stays open.
		var me struct{ Viewer struct{ Name string } }
		bt.do(bt.ben, `{viewer{name}}`, nil).decode(t, &me)
		if me.Viewer.Name != "ben" {
			t.Fatalf("viewer %+v", me)
		}
		var u struct{ UnbanUser struct{ ID, Reason string } }
		bt.unban(bt.root, bt.benID, nil).decode(t, &u)
		if u.UnbanUser.ID != "ban:site:ben" || u.UnbanUser.Reason != "spam" {
			t.Fatalf("unban: %+v, want the ended site ban", u.UnbanUser)
		}
		if r := bt.createPostIn(bt.ben, ""); len(r.Errors) > 0 {
			t.Fatalf("after the unban: %+v", r.Errors)
		}
	})
}

// TestAPIBanEndsAtItsSecond moves the server's clock to a second before a ban ends, then to its
// end: refused, then allowed, with no job run.
func TestAPIBanEndsAtItsSecond(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		bt := newBanTest(t, b)
		bt.clk.Add(time.Second - time.Duration(bt.clk.Now().Nanosecond())) // on a whole second
		until := bt.untilAt(time.Hour)
		bt.ban(bt.mia, bt.benID, "go", until, "cool off").decode(t, &struct{}{})
		bt.clk.Add(time.Hour - time.Second)
		bt.banned("a second before", bt.vote(bt.ben, bt.inGo), until)
		bt.clk.Add(time.Second)
		if r := bt.vote(bt.ben, bt.inGo); len(r.Errors) > 0 {
			t.Fatalf("at the end: %+v", r.Errors)
		}
		var l struct {
			Group struct{ Bans struct{ TotalCount int } }
		}
		bt.groupBansPage(bt.mia, 10, "").decode(t, &l)
		if l.Group.Bans.TotalCount != 0 {
			t.Fatalf("bans in force at the end: %d", l.Group.Bans.TotalCount)
		}
	})
}

// TestAPIBanRetriedLogsOnce sends each moderation request twice, as a client that lost the
// answer would: the moderation log holds each action once.
func TestAPIBanRetriedLogsOnce(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		bt := newBanTest(t, b)
		until := bt.untilAt(time.Hour)
		for range 2 {
			bt.ban(bt.mia, bt.benID, "go", until, "spam").decode(t, &struct{}{})
		}
		bt.clk.Add(time.Second)
		for range 2 {
			bt.unban(bt.mia, bt.benID, "go").decode(t, &struct{}{})
		}
		got := bt.modLog("go")
		if len(got) != 2 || got[0] != "UNBAN_USER" || got[1] != "BAN_USER" {
			t.Fatalf("go's log %v", got)
		}
	})
}

func TestAPIGroupBansPaging(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		bt := newBanTest(t, b)
		names := []string{"ann", "bob", "cat", "dan"}
		for i, n := range names {
			_, id := bt.signUp(n)
			var until any // the last one for good
			if i < len(names)-1 {
				until = bt.untilAt(time.Duration(i+1) * time.Hour)
			}
			bt.ban(bt.root, id, "go", until, "spam").decode(t, &struct{}{})
		}
		var seen []string
		after := ""
		for range len(names) {
			var l struct {
				Group struct {
					Bans struct {
						TotalCount int
						PageInfo   struct {
							HasNextPage bool
							EndCursor   string
						}
						Edges []struct {
							Node struct{ User struct{ Name string } }
						}
					}
				}
			}
			bt.groupBansPage(bt.mia, 3, after).decode(t, &l)
			if l.Group.Bans.TotalCount != 4 {
				t.Fatalf("total %d", l.Group.Bans.TotalCount)
			}
			for _, e := range l.Group.Bans.Edges {
				seen = append(seen, e.Node.User.Name)
			}
			if !l.Group.Bans.PageInfo.HasNextPage {
				break
			}
			after = l.Group.Bans.PageInfo.EndCursor
		}
		if len(seen) != 4 || seen[0] != "ann" || seen[1] != "bob" || seen[2] != "cat" || seen[3] != "dan" {
			t.Fatalf("paged %v", seen)
		}
	})
}
