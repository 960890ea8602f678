package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// makeModerator makes uid (a user key) a moderator of group by writing the group's moderators
// directly, as createGroup and addModerator do.
func (a *api) makeModerator(b storetest.Backend, group, uid string) {
	a.t.Helper()
	key := a.store.Options().Prefix + "{g:" + group + "}:mods"
	if err := b.Client.ZAdd(context.Background(), key, rdb.Z{Score: 1, Member: uid}).Err(); err != nil {
		a.t.Fatal(err)
	}
}

// newReportsAPI returns an API with an admin, root, and the users ann, ben, mia (moderator of
// go), max (of rust) and duo (of both), and their tokens by name.
func newReportsAPI(t *testing.T, b storetest.Backend) (*api, map[string]string) {
	t.Helper()
	a := newAPI(t, b, store.Options{})
	tok := map[string]string{}
	for _, name := range []string{"ann", "ben", "mia", "max", "duo", "root"} {
		tok[name], _ = a.signUp(name)
	}
	a.grantAdmin("root")
	for _, m := range [][2]string{{"go", "mia"}, {"rust", "max"}, {"go", "duo"}, {"rust", "duo"}} {
		a.makeModerator(b, m[0], m[1])
	}
	return a, tok
}

// reportOf reports a post or a comment as the holder of token and returns the report's id.
func (a *api) reportOf(token, id, reason string) string {
	a.t.Helper()
	field := "reportPost"
	if strings.HasPrefix(id, "comment:") {
		field = "reportComment"
	}
	var d map[string]struct{ ID string }
	a.do(token, `mutation($id:ID!,$r:String!){`+field+`(id:$id,reason:$r){id}}`,
		map[string]any{"id": id, "r": reason}).decode(a.t, &d)
	return d[field].ID
}

// reportPage is a page of Query.reports.
type reportPage struct {
	Reports struct {
		Edges []struct {
			Cursor string
			Node   struct {
				ID       string
				Reason   string
				Resolved bool
				Post     *struct{ ID string }
				Comment  *struct{ ID string }
				Reporter struct{ Name string }
				Groups   []struct{ Name string }
			}
		}
		PageInfo struct {
			HasNextPage bool
			EndCursor   string
		}
		TotalCount int
	}
}

func (p reportPage) reasons() []string {
	var out []string
	for _, e := range p.Reports.Edges {
		out = append(out, e.Node.Reason)
	}
	return out
}

const reportsQuery = `query($g:String,$open:Boolean,$first:Int,$after:String){reports(group:$g,unresolvedOnly:$open,first:$first,after:$after){
  edges{cursor node{id reason resolved post{id} comment{id} reporter{name} groups{name}}} pageInfo{hasNextPage endCursor} totalCount}}`

// reportsOf reads reports as the holder of token; group "" names none.
func (a *api) reportsOf(token, group string, open bool) response {
	a.t.Helper()
	vars := map[string]any{"open": open, "first": 50}
	if group != "" {
		vars["g"] = group
	}
	return a.do(token, reportsQuery, vars)
}

func TestAPIReports(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a, tok := newReportsAPI(t, b)
		annTok, benTok, miaTok, maxTok, duoTok, rootTok := tok["ann"], tok["ben"], tok["mia"], tok["max"], tok["duo"], tok["root"]

		pGo := a.createPost(annTok, "in go", "go")
		pRust := a.createPost(annTok, "in rust", "rust")
		pBoth := a.createPost(annTok, "in both", "go", "rust")
		pNone := a.createPost(annTok, "in none")
		var c struct{ CreateComment struct{ ID string } }
		a.do(annTok, `mutation($p:ID!){createComment(postId:$p,body:"rude"){id}}`, map[string]any{"p": pGo}).decode(t, &c)
		cGo := c.CreateComment.ID

		rGo := a.reportOf(benTok, pGo, "go post")
		a.reportOf(benTok, cGo, "go comment")
		rRust := a.reportOf(benTok, pRust, "rust post")
		a.reportOf(benTok, pBoth, "both post")
		rNone := a.reportOf(benTok, pNone, "none post")
		if again := a.reportOf(benTok, pGo, "go post again"); again != rGo {
			t.Fatalf("re-report: %s, want %s", again, rGo)
		}

		// Refusals.
		for _, tc := range []struct {
			name, token, id, reason, code string
		}{
			{"anonymous", "", pGo, "spam", "UNAUTHENTICATED"},
			{"empty reason", benTok, pGo, "", "BAD_USER_INPUT"},
			{"long reason", benTok, pGo, strings.Repeat("é", store.MaxReportReasonRunes+1), "BAD_USER_INPUT"},
			{"no such post", benTok, "post:999", "spam", "NOT_FOUND"},
			{"no such comment", benTok, "comment:1:99", "spam", "NOT_FOUND"},
			{"malformed id", benTok, "post:x", "spam", "BAD_USER_INPUT"},
		} {
			res := a.do(tc.token, `mutation($id:ID!,$r:String!){reportPost(id:$id,reason:$r){id}}`, map[string]any{"id": tc.id, "r": tc.reason})
			if strings.HasPrefix(tc.id, "comment:") {
				res = a.do(tc.token, `mutation($id:ID!,$r:String!){reportComment(id:$id,reason:$r){id}}`, map[string]any{"id": tc.id, "r": tc.reason})
			}
			if res.code() != tc.code {
				t.Errorf("%s: %+v, want %s", tc.name, res.Errors, tc.code)
			}
		}
		if r := a.reportOf(benTok, pGo, strings.Repeat("é", store.MaxReportReasonRunes)); r != rGo {
			t.Errorf("a reason of %d runes: %s", store.MaxReportReasonRunes, r)
		}

		// Listing.
		list := func(token, group string, open bool) []string {
			t.Helper()
			var p reportPage
			a.reportsOf(token, group, open).decode(t, &p)
			if p.Reports.TotalCount < len(p.Reports.Edges) {
				t.Errorf("totalCount %d below %d edges", p.Reports.TotalCount, len(p.Reports.Edges))
			}
			return p.reasons()
		}
		want := func(name string, got []string, want ...string) {
			t.Helper()
			if !slices.Equal(got, want) {
				t.Errorf("%s: %q, want %q", name, got, want)
			}
		}
		want("go's reports for mia", list(miaTok, "go", true), "both post", "go comment", "go post")
		want("go's reports for root", list(rootTok, "GO", true), "both post", "go comment", "go post")
		want("mia's reports", list(miaTok, "", true), "both post", "go comment", "go post")
		want("max's reports", list(maxTok, "", true), "both post", "rust post")
		want("duo's reports, merged", list(duoTok, "", true), "both post", "rust post", "go comment", "go post")
		want("root's reports", list(rootTok, "", true), "none post", "both post", "rust post", "go comment", "go post")
		want("a user who moderates nothing", list(benTok, "", true))
		for _, tc := range []struct{ name, token string }{{"max", maxTok}, {"ben", benTok}} {
			if res := a.reportsOf(tc.token, "go", true); res.code() != "FORBIDDEN" {
				t.Errorf("go's reports for %s: %+v, want FORBIDDEN", tc.name, res.Errors)
			}
		}
		if res := a.reportsOf("", "", true); res.code() != "UNAUTHENTICATED" {
			t.Errorf("reports, anonymous: %+v", res.Errors)
		}
		var full reportPage
		a.reportsOf(miaTok, "go", true).decode(t, &full)
		n := full.Reports.Edges[1].Node
		if n.Comment == nil || n.Comment.ID != cGo || n.Post == nil || n.Post.ID != pGo || n.Reporter.Name != "ben" ||
			len(n.Groups) != 1 || n.Groups[0].Name != "go" {
			t.Errorf("the comment's report: %+v", n)
		}

		// Merged pages: stable cursors, each report once.
		var seen []string
		after := ""
		for range 10 {
			var p reportPage
			vars := map[string]any{"first": 1}
			if after != "" {
				vars["after"] = after
			}
			a.do(duoTok, reportsQuery, vars).decode(t, &p)
			seen = append(seen, p.reasons()...)
			if !p.Reports.PageInfo.HasNextPage {
				break
			}
			after = p.Reports.PageInfo.EndCursor
		}
		want("duo's reports page by page", seen, "both post", "rust post", "go comment", "go post")

		// Resolving.
		resolve := `mutation($id:ID!){resolveReport(id:$id){id resolved resolvedAt resolvedBy{name}}}`
		if res := a.do(miaTok, resolve, map[string]any{"id": rRust}); res.code() != "FORBIDDEN" {
			t.Fatalf("mia resolves a report in rust: %+v, want FORBIDDEN", res.Errors)
		}
		if res := a.do(benTok, resolve, map[string]any{"id": rGo}); res.code() != "FORBIDDEN" {
			t.Fatalf("the reporter resolves: %+v, want FORBIDDEN", res.Errors)
		}
		if res := a.do(maxTok, resolve, map[string]any{"id": "report:999"}); res.code() != "NOT_FOUND" {
			t.Fatalf("resolve a missing report: %+v, want NOT_FOUND", res.Errors)
		}
		var rs struct {
			ResolveReport struct {
				ID         string
				Resolved   bool
				ResolvedAt *string
				ResolvedBy *struct{ Name string }
			}
		}
		for range 2 { // a retried request
			a.do(maxTok, resolve, map[string]any{"id": rRust}).decode(t, &rs)
			if !rs.ResolveReport.Resolved || rs.ResolveReport.ResolvedAt == nil || rs.ResolveReport.ResolvedBy == nil ||
				rs.ResolveReport.ResolvedBy.Name != "max" {
				t.Fatalf("resolve: %+v", rs.ResolveReport)
			}
		}
		a.do(rootTok, resolve, map[string]any{"id": rRust}).decode(t, &rs) // and by another
		a.do(rootTok, resolve, map[string]any{"id": rNone}).decode(t, &rs)
		want("rust's open reports", list(maxTok, "rust", true), "both post")
		want("rust's reports", list(maxTok, "rust", false), "both post", "rust post")
		want("root's open reports", list(rootTok, "", true), "both post", "go comment", "go post")

		var ml struct {
			ModLog struct {
				Nodes []struct {
					Action   string
					TargetID string
					Group    *struct{ Name string }
					Target   *struct{ ID string }
				}
			}
		}
		a.do("", `{modLog(first:10){nodes{action targetId group{name} target{id}}}}`, nil).decode(t, &ml)
		if len(ml.ModLog.Nodes) != 2 {
			t.Fatalf("mod log %+v, want two entries", ml.ModLog.Nodes)
		}
		for i, w := range []struct{ target, group string }{{rNone, ""}, {rRust, "rust"}} {
			e := ml.ModLog.Nodes[i]
			if e.Action != "RESOLVE_REPORT" || e.TargetID != w.target || (e.Group == nil) != (w.group == "") ||
				(e.Group != nil && e.Group.Name != w.group) || e.Target != nil {
				t.Errorf("mod log entry %d: %+v, want %+v (its target hidden from the anonymous)", i, e, w)
			}
		}

		// node(id): the reporter, the moderators of its groups and the admins.
		for _, tc := range []struct {
			name, token, id string
			seen            bool
		}{
			{"the reporter", benTok, rGo, true},
			{"a moderator of its group", miaTok, rGo, true},
			{"an admin", rootTok, rGo, true},
			{"a moderator of another group", maxTok, rGo, false},
			{"its post's author", annTok, rGo, false},
			{"anonymous", "", rGo, false},
			{"nothing", rootTok, "report:999", false},
		} {
			var d struct{ Node *struct{ ID, Reason string } }
			a.do(tc.token, `query($id:ID!){node(id:$id){id ... on Report{reason}}}`, map[string]any{"id": tc.id}).decode(t, &d)
			if (d.Node != nil) != tc.seen || (tc.seen && d.Node.ID != tc.id) {
				t.Errorf("node(%s) for %s: %+v, seen %v", tc.id, tc.name, d.Node, tc.seen)
			}
		}
	})
}

func TestAPIReportCountForModeratorsOnly(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a, tok := newReportsAPI(t, b)
		annTok, benTok, miaTok, maxTok, rootTok := tok["ann"], tok["ben"], tok["mia"], tok["max"], tok["root"]
		p := a.createPost(annTok, "reported", "go")
		q := a.createPost(annTok, "quiet", "go")
		var c struct{ CreateComment struct{ ID string } }
		a.do(annTok, `mutation($p:ID!){createComment(postId:$p,body:"rude"){id}}`, map[string]any{"p": p}).decode(t, &c)
		a.reportOf(benTok, p, "spam")
		a.reportOf(benTok, c.CreateComment.ID, "rude")
		a.reportOf(annTok, c.CreateComment.ID, "rude too")

		type counts struct{ post, quiet, comment *int }
		read := func(token string) counts {
			t.Helper()
			var d struct {
				Posts struct {
					Nodes []struct {
						ID          string
						ReportCount *int
						Comments    struct {
							Nodes []struct{ ReportCount *int }
						}
					}
				}
			}
			a.do(token, `{posts(sort:NEW,group:"go"){nodes{id reportCount comments{nodes{reportCount}}}}}`, nil).decode(t, &d)
			var out counts
			for _, n := range d.Posts.Nodes {
				switch n.ID {
				case p:
					out.post = n.ReportCount
					if len(n.Comments.Nodes) == 1 {
						out.comment = n.Comments.Nodes[0].ReportCount
					}
				case q:
					out.quiet = n.ReportCount
				}
			}
			return out
		}
		for _, tc := range []struct {
			name, token string
			seen        bool
		}{
			{"a moderator of the group", miaTok, true},
			{"an admin", rootTok, true},
			{"a moderator of another group", maxTok, false},
			{"the reporter", benTok, false},
			{"the author", annTok, false},
			{"anonymous", "", false},
		} {
			for range 2 { // the second may come from the response cache
				got := read(tc.token)
				if !tc.seen {
					if got.post != nil || got.quiet != nil || got.comment != nil {
						t.Errorf("%s sees report counts %v %v %v", tc.name, got.post, got.quiet, got.comment)
					}
					continue
				}
				if got.post == nil || *got.post != 1 || got.quiet == nil || *got.quiet != 0 || got.comment == nil || *got.comment != 2 {
					t.Errorf("%s: report counts %v %v %v, want 1 0 2", tc.name, got.post, got.quiet, got.comment)
				}
			}
		}
		var d struct{ Post struct{ ReportCount *int } }
		a.do(miaTok, `query($id:ID!){post(id:$id){reportCount}}`, map[string]any{"id": p}).decode(t, &d)
		if d.Post.ReportCount == nil || *d.Post.ReportCount != 1 {
			t.Errorf("post(id).reportCount for mia: %v", d.Post.ReportCount)
		}
		// A new report shows at once, also to a viewer whose response was cached.
		a.reportOf(maxTok, p, "me too")
		if got := read(miaTok); got.post == nil || *got.post != 2 {
			t.Errorf("after another report: %v, want 2", got.post)
		}
	})
}

func TestAPIReportLimit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a, tok := newReportsAPI(t, b)
		annTok, benTok, rootTok := tok["ann"], tok["ben"], tok["root"]
		var ids []string
		for i := range store.MaxOpenReports + 1 {
			p := a.createPost(annTok, fmt.Sprintf("post %d", i))
			if i < store.MaxOpenReports {
				ids = append(ids, a.reportOf(benTok, p, "spam"))
				continue
			}
			res := a.do(benTok, `mutation($id:ID!){reportPost(id:$id,reason:"spam"){id}}`, map[string]any{"id": p})
			if res.code() != "LIMIT_REACHED" {
				t.Fatalf("report %d: %+v, want LIMIT_REACHED", i+1, res.Errors)
			}
			a.do(rootTok, `mutation($id:ID!){resolveReport(id:$id){id}}`, map[string]any{"id": ids[0]}).decode(t, &json.RawMessage{})
			a.reportOf(benTok, p, "spam") // a resolved report freed a slot
		}
	})
}

// TestReportCountRoundTripsDoNotGrowWithPageSize lists posts and their comments with their report
// counts as a moderator: the counts and the viewer's moderation of the posts' groups are read
// level by level, so 50 posts cost the round trips of 5.
func TestReportCountRoundTripsDoNotGrowWithPageSize(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		counted, rt := b.Counted(t)
		a, tok := newReportsAPI(t, counted)
		for i := range 50 {
			p := a.createPost(tok["ann"], fmt.Sprint("post ", i), fmt.Sprintf("g%d", i%7), []string{"go", "rust"}[i%2])
			a.do(tok["ann"], `mutation($p:ID!){createComment(postId:$p,body:"hi"){id}}`, map[string]any{"p": p}).decode(t, &json.RawMessage{})
			if i%3 == 0 {
				a.reportOf(tok["ben"], p, "spam")
			}
		}
		trips := map[int]int64{}
		for _, n := range []int{5, 50} {
			a.do(tok["mia"], `{viewer{id}}`, nil) // warm the connection pool
			rt.Reset()
			var d struct {
				Posts struct {
					Nodes []struct {
						ReportCount *int
						Comments    struct{ Nodes []struct{ ReportCount *int } }
					}
				}
			}
			a.do(tok["mia"], `query($n:Int!){posts(sort:NEW,first:$n){nodes{reportCount comments{nodes{reportCount}}}}}`,
				map[string]any{"n": n}).decode(t, &d)
			trips[n] = rt.Count()
			seen := 0
			for _, p := range d.Posts.Nodes {
				if p.ReportCount != nil {
					seen++
				}
			}
			if len(d.Posts.Nodes) != n || seen != n/2 {
				t.Fatalf("%d posts, %d with a count: mia moderates go, half of them", len(d.Posts.Nodes), seen)
			}
		}
		t.Logf("round trips: %v", trips)
		if trips[50] > trips[5] {
			t.Fatalf("round trips grew with the page size: %v", trips)
		}
	})
}

// TestAPIReporterHiddenFromTheReportedModerator: a moderator whose own post or comment was
// reported sees the report (they may not resolve it) but not who made it — Report.reporter is
// null to them, in the reports list, by node(id) and as a mod log entry's target, before and
// after they delete what was reported — as Reddit keeps reporters anonymous: the author of what
// was reported must not learn who reported them. The other moderators, the admins and the
// reporter see the reporter.
func TestAPIReporterHiddenFromTheReportedModerator(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a, tok := newReportsAPI(t, b)
		annTok, benTok, miaTok, duoTok, rootTok := tok["ann"], tok["ben"], tok["mia"], tok["duo"], tok["root"]
		own := a.createPost(miaTok, "mia's own", "go")
		other := a.createPost(annTok, "ann's", "go")
		cOwn := a.comment(miaTok, other, "", "mia's comment").ID
		rPost := a.reportOf(benTok, own, "mia's post")
		rComment := a.reportOf(benTok, cOwn, "mia's comment")
		rOther := a.reportOf(benTok, other, "ann's post")

		reporters := func(token string) map[string]string {
			t.Helper()
			var d struct {
				Reports struct {
					Nodes []struct {
						ID       string
						Reporter *struct{ Name string }
					}
				}
			}
			a.do(token, `{reports(group:"go",unresolvedOnly:false){nodes{id reporter{name}}}}`, nil).decode(t, &d)
			out := map[string]string{}
			for _, n := range d.Reports.Nodes {
				out[n.ID] = ""
				if n.Reporter != nil {
					out[n.ID] = n.Reporter.Name
				}
			}
			for _, id := range []string{rPost, rComment} {
				var n struct {
					Node *struct{ Reporter *struct{ Name string } }
				}
				a.do(token, `query($id:ID!){node(id:$id){... on Report{reporter{name}}}}`, map[string]any{"id": id}).decode(t, &n)
				by := ""
				if n.Node != nil && n.Node.Reporter != nil {
					by = n.Node.Reporter.Name
				}
				if by != out[id] {
					t.Errorf("report %s: the list says %q, node(id) %q", id, out[id], by)
				}
			}
			return out
		}
		check := func(when string) {
			t.Helper()
			if got := reporters(miaTok); got[rPost] != "" || got[rComment] != "" || got[rOther] != "ben" {
				t.Errorf("%s: the reporters as the reported moderator sees them: %v, want ben's name on %s alone", when, got, rOther)
			}
			for name, token := range map[string]string{"duo": duoTok, "root": rootTok} {
				if got := reporters(token); got[rPost] != "ben" || got[rComment] != "ben" || got[rOther] != "ben" {
					t.Errorf("%s: the reporters as %s sees them: %v, want ben on every one", when, name, got)
				}
			}
		}
		check("reported")

		// The mod log's entry of a resolve names the report as its target.
		a.do(duoTok, `mutation($id:ID!){resolveReport(id:$id){id}}`, map[string]any{"id": rPost}).decode(t, &struct{}{})
		var ml struct {
			ModLog struct {
				Nodes []struct {
					Target *struct{ Reporter *struct{ Name string } }
				}
			}
		}
		a.do(miaTok, `{modLog(group:"go",first:5){nodes{target{... on Report{reporter{name}}}}}}`, nil).decode(t, &ml)
		if len(ml.ModLog.Nodes) != 1 || ml.ModLog.Nodes[0].Target == nil || ml.ModLog.Nodes[0].Target.Reporter != nil {
			t.Errorf("the resolve in the mod log, as the reported moderator reads it: %+v, want the report without its reporter", ml.ModLog.Nodes)
		}

		for _, del := range []string{`mutation($id:ID!){deletePost(id:$id)}`, `mutation($id:ID!){deleteComment(id:$id)}`} {
			id := own
			if strings.Contains(del, "Comment") {
				id = cOwn
			}
			a.do(miaTok, del, map[string]any{"id": id}).decode(t, &struct{}{})
		}
		check("deleted")
	})
}
