package httpapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/agora/agora/graph"
	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// CommandsPerUnitBound is how many Redis commands a request may send for each unit of its
// estimated cost (extensions.cost.requested) beyond CommandsAllowance and what the least request
// sends (its session, the set of NSFW groups: calWorld.base); TestCostCalibration fails on a
// field whose most expensive request sends more. Measured on the calibration's community (go
// test ./httpapi -run TestCostCalibration -v): ordinary pages of 100 send 0.03 commands a unit
// (median; at most 0.10), as each item's fields cost units and share one HMGET; the fields the
// model charges for what they read beyond their page (FeedCost, GroupFeedCost, SearchCost…)
// send 0.18 to 0.52 a unit, a median of 0.33 — the model's constants price about one unit for
// one or two commands, as UserCommentsSortCost prices its 1,000 HMGETs at 1,000. The bound is
// 3 times that median: a field over it pays less than a unit for a command, and the holes the
// model had (reports without a group: 10,694 commands for a cost of 1,000) were ten times
// over it.
const CommandsPerUnitBound = 1.0

// CommandsAllowance is what a request may send beyond the least request before
// CommandsPerUnitBound applies: the fixed reads of a page (its list, its count, its items, the
// revisions of what it shows), which a page of one — a cost of 4 or 5 — sends as a page of
// 100 does: up to 9 commands, 1.2 to 1.8 a unit. Twice that: a page many times nested pays
// for its pages with the units of what is above it.
const CommandsAllowance = 16

// TestCostCalibration walks every field of the schema that takes arguments or returns a list or
// a connection — found in the schema, so that a field added later is measured without a change
// here — and sends for each, on a community seeded so that its pages are full, the most
// expensive requests a client can write for it in one selection: the largest page with every
// scalar of its items and the objects below them, the same with scalars alone, a page of one,
// one after a cursor and one from the end; every value of its enum arguments, its Boolean ones
// true and false, its optional names null and set, a search of many words, of a short prefix
// and of a phrase. It counts the Redis commands each sends (the client's hook: what the store
// sends, scripts as one command) against the cost the server reported, and fails when a
// field's commands beyond the least request's exceed CommandsPerUnitBound a unit, naming the
// field and its figures. With -v it prints each field's worst request: its cost, commands, round
// trips and, on the private redis-server, the commands Redis ran (those of scripts counted)
// and the CPU they took by INFO commandstats, with the process's CPU time — figures for
// docs/PERFORMANCE.md, never asserted.
func TestCostCalibration(t *testing.T) {
	for _, b := range calibrationBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			w := seedCalibration(t, b)
			rows := w.measureFields(t)
			w.report(t, rows)
			w.measureWrites(t)
		})
	}
}

// calibrationBackends returns the one backend the calibration runs on: a private redis-server
// (whose INFO commandstats no other test's commands reach) when redis-server is on PATH and
// BackendsEnv wants it, else miniredis. The commands are counted at the client, the same on every
// backend; the real server adds what Redis ran, and runs it three times as fast. Under the race
// detector, which would make it several times slower, it runs on miniredis alone (CI runs
// miniredis without it).
func calibrationBackends(t *testing.T) []storetest.Backend {
	t.Helper()
	var mini []storetest.Backend
	for _, b := range storetest.Backends(t) {
		switch {
		case b.Name == "redis" && !raceDetector:
			srv := storetest.PrivateServer(t)
			c := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
			t.Cleanup(func() { _ = c.Close() })
			return []storetest.Backend{{Name: "redis", Client: c}}
		case b.Name == "miniredis":
			mini = append(mini, b)
		}
	}
	if len(mini) == 0 {
		t.Skip("the calibration runs on miniredis, or on a real redis-server without the race detector")
	}
	return mini
}

// calWorld is the seeded community of the calibration and what its requests name.
type calWorld struct {
	a      *api
	b      storetest.Backend
	rt     *storetest.RoundTrips
	stats  rdb.UniversalClient // the private redis-server's client for INFO, nil on miniredis
	viewer string              // the token of vic, who moderates, posts, follows and is followed
	admin  string              // the token of a site admin, for what only admins read
	ids    map[string]string   // what the requests name: post, comment, peer…
	nodes  []string            // ids of every kind, for node and nodes
	base   calFigures          // the least request: { __typename } as v
}

// calUsers is how many users the community has besides v: enough that v has a full page of
// followers, of message requests and of conversations.
const calUsers = 200

// calGroups is how many groups v creates and moderates: groupFeed and reports merge at most 100.
const calGroups = store.MaxGroupFeedGroups

// seedCalibration writes the community of the calibration through the store: v with 110 posts
// (one in 10 groups, pinned in each), 110 comments, 100 followers and 100 followees (each pulled
// into v's feed), 100 groups created and joined, 100 bans and 50 moderators in g000, 200 reports
// over the 100 groups, 110 saved and 100 scheduled posts, 100 conversations and 100 message
// requests, 110 messages with one peer and an inbox of 300 notifications; a post with 100
// comments and a comment with 100 replies.
func seedCalibration(t *testing.T, b storetest.Backend) *calWorld {
	t.Helper()
	start := time.Now()
	b, rt := b.Counted(t)
	// FanoutLimit 1: a followee's first follower (filler) is pushed to, v pulls every followee.
	st := b.NewStore(t, store.Options{WriteLimit: -1, Feed: store.FeedOptions{FanoutLimit: 1}})
	hub := newHub(t, st)
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: hub, ResponseCacheMiB: -1}))
	t.Cleanup(srv.Close)
	a := &api{t: t, srv: srv, store: st, hub: hub}
	w := &calWorld{a: a, b: b, rt: rt, ids: map[string]string{}}
	if b.Name == "redis" {
		w.stats = b.Client
	}
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	sess, err := st.SignUp(ctx, "vic", "password1")
	must(err)
	v := sess.User.Key()
	w.viewer = sess.Token
	users := make([]store.UserKey, calUsers)
	for i := range users {
		s, err := st.SignUp(ctx, fmt.Sprintf("u%03d", i), "password1")
		must(err)
		users[i] = s.User.Key()
	}
	filler, err := st.SignUp(ctx, "filler", "password1")
	must(err)
	root, err := st.SignUp(ctx, "root", "password1")
	must(err)
	must(st.GrantAdmin(ctx, "root"))
	w.admin = root.Token
	groups := make([]string, calGroups)
	for i := range groups {
		groups[i] = fmt.Sprintf("g%03d", i)
		desc := "a group about alpha beta gamma"
		_, err := st.CreateGroup(ctx, v, groups[i], &desc)
		must(err)
		_, err = st.JoinGroup(ctx, v, groups[i])
		must(err)
	}
	words := "alpha beta gamma delta epsilon zeta eta theta"
	var vPosts []string
	for i := range 110 {
		gs := []string{groups[i%calGroups]}
		if i == 0 {
			gs = groups[:store.MaxGroupsPerPost]
		}
		p, err := st.CreatePost(ctx, v, store.NewPost{Title: fmt.Sprintf("post %d %s", i, words), Body: "body " + words, Groups: gs})
		must(err)
		vPosts = append(vPosts, p.ID)
	}
	heavy := vPosts[0]
	for _, g := range groups[:store.MaxGroupsPerPost] {
		_, err := st.PinPost(ctx, v, heavy, g, true, nil)
		must(err)
	}
	// A post by each of 100 users, one in each group, each voted on by another user: the
	// leaderboard's 100 and the scores of the orders.
	var others []string
	for i, u := range users[:100] {
		p, err := st.CreatePost(ctx, u, store.NewPost{Title: fmt.Sprintf("%s writes %s", u, words), Body: words, Groups: []string{groups[i]}})
		must(err)
		others = append(others, p.ID)
		_, err = st.VotePost(ctx, users[100+i], p.ID, 1-(i%3)/2*2)
		must(err)
	}
	// Comments: 100 by other users on the heavy post (each a notice to v), 100 replies by v to
	// v's comment.
	top, err := st.CreateComment(ctx, v, store.NewComment{PostID: heavy, Body: "the thread " + words})
	must(err)
	for i := range 100 {
		_, err := st.CreateComment(ctx, users[i], store.NewComment{PostID: heavy, Body: "comment @vic " + words})
		must(err)
		_, err = st.CreateComment(ctx, v, store.NewComment{PostID: heavy, ParentID: top.ID, Body: "reply " + words})
		must(err)
	}
	// Follows: 100 followers; 100 followees, each first followed by filler so that v pulls them.
	for i := range 100 {
		_, err := st.Follow(ctx, users[i], v)
		must(err)
		_, err = st.Follow(ctx, filler.User.Key(), users[100+i])
		must(err)
		_, err = st.Follow(ctx, v, users[100+i])
		must(err)
	}
	// Moderation of g000: 49 more moderators, 100 bans (and 100 entries of the log).
	for _, u := range users[150:199] {
		_, err := st.AddModerator(ctx, v, groups[0], u)
		must(err)
	}
	for _, u := range users[:100] {
		_, err := st.BanUser(ctx, v, u, groups[0], nil, "spam")
		must(err)
	}
	// Reports: two on a post of each of the 100 groups v moderates.
	for i, p := range others[:calGroups] {
		_, err := st.ReportPost(ctx, users[100+i], p, "spam")
		must(err)
		_, err = st.ReportPost(ctx, users[100+(i+1)%100], p, "rude")
		must(err)
	}
	for _, p := range append(slices.Clone(vPosts[:60]), others[:50]...) {
		_, err := st.SavePost(ctx, v, p)
		must(err)
	}
	for i := range 10 { // the most a user may have pending
		_, err := st.CreatePost(ctx, v, store.NewPost{Title: fmt.Sprintf("later %d %s", i, words), Groups: []string{groups[0]},
			PublishAt: time.Now().Add(time.Hour + time.Duration(i)*time.Minute)})
		must(err)
	}
	// Messages: v writes to 100 users (conversations), 100 others write to v (requests), and v
	// and the peer exchange 110.
	for i := range 100 {
		_, err := st.SendMessage(ctx, v, users[i], "hello "+words, "")
		must(err)
		_, err = st.SendMessage(ctx, users[100+i], v, "hi "+words, "")
		must(err)
	}
	for i := range 110 {
		from, to := v, users[0]
		if i%2 == 1 {
			from, to = to, from
		}
		_, err := st.SendMessage(ctx, from, to, fmt.Sprintf("message %d", i), "")
		must(err)
	}
	a.settle()
	w.ids["post"] = heavy
	w.ids["comment"] = top.ID
	w.ids["user"] = v.ID()
	w.ids["peer"] = users[0].ID()
	w.ids["group"] = groups[0]
	w.collectNodes(t)
	t.Logf("seeded in %v", time.Since(start).Round(time.Millisecond))
	w.base = w.measure(t, `{ __typename }`)
	return w
}

// collectNodes finds an id of every kind of node v may read, for node(id:) and nodes(ids:).
func (w *calWorld) collectNodes(t *testing.T) {
	t.Helper()
	q := `{ reports(first: 1) { nodes { id } } group(name: "g000") { bans(first: 1) { nodes { id } } }
		modLog(first: 1) { nodes { id } } notifications(first: 1) { nodes { id } }
		conversations(first: 1) { nodes { id } } messages(withUserId: "` + w.ids["peer"] + `", first: 1) { nodes { id } } }`
	var d struct {
		Reports, ModLog, Notifications, Conversations, Messages struct{ Nodes []struct{ ID string } }
		Group                                                   struct {
			Bans struct{ Nodes []struct{ ID string } }
		}
	}
	w.a.do(w.viewer, q, nil).decode(t, &d)
	for kind, list := range map[string][]struct{ ID string }{"report": d.Reports.Nodes, "ban": d.Group.Bans.Nodes,
		"modaction": d.ModLog.Nodes, "notification": d.Notifications.Nodes, "conversation": d.Conversations.Nodes, "message": d.Messages.Nodes} {
		if len(list) == 0 {
			t.Fatalf("the seeded community has no %s", kind)
		}
		w.ids[kind] = list[0].ID
	}
	for _, k := range []string{"post", "comment", "user", "report", "ban", "modaction", "notification", "conversation", "message"} {
		w.nodes = append(w.nodes, w.ids[k])
	}
	w.nodes = append(w.nodes, "group:g000")
}

// calFigures is what one request cost and did.
type calFigures struct {
	cost, commands, trips int64
	redisCalls, redisUsec int64 // INFO commandstats, on the private redis-server only
	cpu                   time.Duration
}

// measure sends query as vic and returns its figures; the request must succeed.
func (w *calWorld) measure(t *testing.T, query string) calFigures {
	t.Helper()
	f, r := w.try(t, w.viewer, query)
	if len(r.Errors) > 0 {
		t.Fatalf("%s: %+v", query, r.Errors)
	}
	return f
}

// try sends query with token and returns its figures and response.
func (w *calWorld) try(t *testing.T, token, query string) (calFigures, response) {
	t.Helper()
	calls0, usec0 := w.commandStats(t)
	cpu0 := processCPU(t)
	w.rt.Reset()
	r := w.a.do(token, query, nil)
	f := calFigures{cost: int64(r.Extensions.Cost.Requested), commands: w.rt.Commands(), trips: w.rt.Count(), cpu: processCPU(t) - cpu0}
	calls, usec := w.commandStats(t)
	f.redisCalls, f.redisUsec = calls-calls0, usec-usec0
	return f, r
}

// commandStats sums the calls and CPU time of INFO commandstats on the private redis-server, but
// INFO's own; 0 on miniredis.
func (w *calWorld) commandStats(t *testing.T) (calls, usec int64) {
	t.Helper()
	if w.stats == nil {
		return 0, 0
	}
	info, err := w.stats.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_info" {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls += n
			case "usec":
				usec += n
			}
		}
	}
	return calls, usec
}

// calField is a field of the schema the calibration measures.
type calField struct {
	typ *ast.Definition
	def *ast.FieldDefinition
}

func (f calField) String() string { return f.typ.Name + "." + f.def.Name }

// calibratedFields returns every field of schema's object types that takes arguments or returns
// a list or a connection, but those of connections and edges themselves (measured with the
// field that returns them) and those of mutations and subscriptions (see
// calWorld.measureWrites).
func calibratedFields(schema *ast.Schema) []calField {
	var out []calField
	for _, typ := range schema.Types {
		if typ.Kind != ast.Object || strings.HasPrefix(typ.Name, "__") || typ == schema.Mutation || typ == schema.Subscription ||
			strings.HasSuffix(typ.Name, "Connection") || strings.HasSuffix(typ.Name, "Edge") {
			continue
		}
		for _, def := range typ.Fields {
			if strings.HasPrefix(def.Name, "__") {
				continue
			}
			if len(def.Arguments) > 0 || def.Type.Elem != nil || strings.HasSuffix(def.Type.Name(), "Connection") {
				out = append(out, calField{typ, def})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// parentOf is the selection that reaches one item of type typ, the heaviest of the community,
// with %s where its field goes; "" for a type the calibration cannot reach yet.
func (w *calWorld) parentOf(typ string) string {
	switch typ {
	case "Query":
		return "%s"
	case "User":
		return `user(name: "vic") { %s }`
	case "Post":
		return `post(id: "` + w.ids["post"] + `") { %s }`
	case "Comment":
		return `comment(id: "` + w.ids["comment"] + `") { %s }`
	case "Group":
		return `group(name: "` + w.ids["group"] + `") { %s }`
	case "Report":
		return `node(id: "` + w.ids["report"] + `") { ... on Report { %s } }`
	case "SiteFilters":
		return `siteFilters { %s }`
	}
	return ""
}

// argValues are the values a calibration request gives an argument, as GraphQL literals; "" leaves
// it out. The page arguments (first, last, after, before, radius) are the shapes' (see
// calShapes), and any enum argument takes every value of its enum. It reports false for an
// argument it knows no values for.
func (w *calWorld) argValues(schema *ast.Schema, f calField, arg *ast.ArgumentDefinition) ([]string, bool) {
	if t := schema.Types[arg.Type.Name()]; t != nil && t.Kind == ast.Enum {
		var vs []string
		for _, v := range t.EnumValues {
			vs = append(vs, v.Name)
		}
		return vs, true
	}
	if arg.Type.Name() == "Boolean" {
		return []string{"true", "false"}, true
	}
	q := strconv.Quote
	switch arg.Name {
	case "first", "last", "after", "before", "radius":
		return []string{""}, true
	case "group":
		return []string{"", q(w.ids["group"])}, true
	case "name":
		if f.def.Type.Name() == "Group" {
			return []string{q(w.ids["group"])}, true
		}
		return []string{q("vic")}, true
	case "id":
		switch f.def.Type.Name() {
		case "Post":
			return []string{q(w.ids["post"])}, true
		case "Comment":
			return []string{q(w.ids["comment"])}, true
		}
		var vs []string
		for _, id := range w.nodes {
			vs = append(vs, q(id))
		}
		return vs, true
	case "ids":
		var s []string
		for i := range store.MaxFirst {
			s = append(s, q(w.nodes[i%len(w.nodes)]))
		}
		return []string{"[" + strings.Join(s, ", ") + "]"}, true
	case "userId":
		return []string{q(w.ids["user"])}, true
	case "withUserId":
		return []string{q(w.ids["peer"])}, true
	case "postId":
		return []string{"", q(w.ids["post"])}, true
	case "query":
		// Eight words, the last a prefix; a short prefix that expands to many words; a phrase.
		return []string{q("alpha beta gamma delta epsilon zeta eta th"), q("a"), q(`"alpha beta gamma"`)}, true
	case "author":
		return []string{"", q("vic")}, true
	case "since":
		return []string{"", q("2000-01-01T00:00:00Z")}, true
	case "prefix":
		return []string{q("u"), q("g")}, true
	}
	return nil, false
}

// calShape is one request shape of a field: its page and how much of each item it shows.
type calShape struct {
	name  string
	page  string // the page arguments, as GraphQL
	depth int    // how far below its items the selection goes (see selection); -1: the page's position alone
}

// calShapes are the shapes of a field: pages of the most items and of one, forwards, after a
// cursor and backwards, for a field with a page; the whole of it for the others.
func calShapes(def *ast.FieldDefinition) []calShape {
	switch {
	case def.Arguments.ForName("radius") != nil:
		return []calShape{{"radius 50", fmt.Sprintf("radius: %d", store.MaxLeaderboardRadius), 1}, {"radius 0", "radius: 0", 0}}
	case def.Arguments.ForName("first") == nil:
		return []calShape{{"whole", "", 1}}
	case def.Arguments.ForName("last") == nil:
		return []calShape{{"first 100", "first: 100", 1}, {"first 1", "first: 1", 0}}
	}
	return []calShape{
		{"first 100", "first: 100", 1},
		{"first 100 flat", "first: 100", 0},
		{"first 1", "first: 1", -1},
		{"first 1 after", "first: 1, after: %q", -1},
		{"last 1", "last: 1", -1},
	}
}

// selection is what a request selects of a value of typ: the fields without arguments of an
// object (those with arguments are measured on their own), and depth levels of the objects and
// lists below; a connection's count, position and items. depth -1 selects of a connection its
// position alone, the least that reads its page.
func selection(schema *ast.Schema, typ *ast.Definition, depth int) string {
	if typ == nil || typ.Kind == ast.Scalar || typ.Kind == ast.Enum {
		return ""
	}
	if strings.HasSuffix(typ.Name, "Connection") {
		if depth < 0 {
			return "{ pageInfo { hasNextPage endCursor } }"
		}
		edge := schema.Types[typ.Fields.ForName("edges").Type.Name()]
		return "{ totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges " + selection(schema, edge, depth) + " }"
	}
	if depth < 0 {
		if typ.Fields.ForName("id") != nil {
			return "{ id }"
		}
		return "{ __typename }"
	}
	var parts []string
	if typ.Kind == ast.Interface || typ.Kind == ast.Union {
		// The possible types' fields of one name and different types may not be selected
		// together: they are left out.
		possible := schema.GetPossibleTypes(typ)
		types := map[string]string{}
		clash := map[string]bool{}
		for _, p := range possible {
			for _, f := range p.Fields {
				if t, seen := types[f.Name]; seen && t != f.Type.String() {
					clash[f.Name] = true
				}
				types[f.Name] = f.Type.String()
			}
		}
		parts = append(parts, "__typename")
		for _, p := range possible {
			parts = append(parts, "... on "+p.Name+" "+selectFields(schema, p, depth, clash))
		}
		return "{ " + strings.Join(parts, " ") + " }"
	}
	return selectFields(schema, typ, depth, nil)
}

// selectFields is selection of an object type, but for the fields skip names.
func selectFields(schema *ast.Schema, typ *ast.Definition, depth int, skip map[string]bool) string {
	var parts []string
	edge := strings.HasSuffix(typ.Name, "Edge")
	for _, f := range typ.Fields {
		if strings.HasPrefix(f.Name, "__") || len(f.Arguments) > 0 || skip[f.Name] {
			continue
		}
		child := schema.Types[f.Type.Name()]
		if child.Kind == ast.Scalar || child.Kind == ast.Enum {
			parts = append(parts, f.Name)
			continue
		}
		switch {
		case edge && f.Name == "node":
			parts = append(parts, f.Name+" "+selection(schema, child, depth))
		case depth > 0:
			parts = append(parts, f.Name+" "+selection(schema, child, 0))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "__typename")
	}
	return "{ " + strings.Join(parts, " ") + " }"
}

// calRow is one calibration request and its figures.
type calRow struct {
	field calField
	args  string
	shape string
	calFigures
}

// perUnit is the commands the row's request sent beyond base's and CommandsAllowance, per unit
// of its cost.
func (r calRow) perUnit(base calFigures) float64 {
	return float64(max(r.commands-base.commands-CommandsAllowance, 0)) / float64(max(r.cost, 1))
}

// measureFields sends every calibration request and returns their figures; it fails on a field
// it cannot reach or give arguments, and on a request that fails.
func (w *calWorld) measureFields(t *testing.T) []calRow {
	t.Helper()
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	var rows []calRow
	for _, f := range calibratedFields(schema) {
		parent := w.parentOf(f.typ.Name)
		if parent == "" {
			t.Errorf("%s: the calibration reaches no %s: add it to calWorld.parentOf", f, f.typ.Name)
			continue
		}
		// Every value of each argument with every value of the others, but the optional
		// arguments that narrow a list (a group, an author, a time…), which are all left out or
		// all set.
		combos := []string{""}
		var narrowing []string
		for _, arg := range f.def.Arguments {
			vals, ok := w.argValues(schema, f, arg)
			if !ok {
				t.Errorf("%s: the calibration gives argument %q no values: add them to calWorld.argValues", f, arg.Name)
				combos = nil
				break
			}
			if len(vals) == 2 && vals[0] == "" {
				narrowing = append(narrowing, arg.Name+": "+vals[1])
				continue
			}
			var next []string
			for _, c := range combos {
				for _, v := range vals {
					if v == "" {
						next = append(next, c)
					} else {
						next = append(next, strings.TrimPrefix(c+", "+arg.Name+": "+v, ", "))
					}
				}
			}
			combos = next
		}
		if len(narrowing) > 0 {
			for _, c := range slices.Clone(combos) {
				combos = append(combos, strings.TrimPrefix(c+", "+strings.Join(narrowing, ", "), ", "))
			}
		}
		for _, args := range combos {
			rows = append(rows, w.measureField(t, schema, f, parent, args)...)
		}
	}
	return rows
}

// measureField sends the requests of every shape of f with args, selected under parent.
func (w *calWorld) measureField(t *testing.T, schema *ast.Schema, f calField, parent, args string) []calRow {
	t.Helper()
	var rows []calRow
	cursor := ""
	for _, sh := range calShapes(f.def) {
		page := sh.page
		if strings.Contains(page, "%q") {
			if cursor == "" {
				continue
			}
			page = fmt.Sprintf(page, cursor)
		}
		// The largest page the limit lets through, and then the deepest selection: a rich
		// selection of 100 items may be over it.
		n, depth := store.MaxFirst, sh.depth
		for {
			p := strings.Replace(page, "first: 100", "first: "+strconv.Itoa(n), 1)
			call := f.def.Name
			if all := strings.Trim(args+", "+p, ", "); all != "" {
				call += "(" + all + ")"
			}
			q := "{ " + fmt.Sprintf(parent, call+" "+selection(schema, schema.Types[f.def.Type.Name()], depth)) + " }"
			token := w.viewer
			if f.typ.Name == "SiteFilters" { // admins only
				token = w.admin
			}
			fig, r := w.try(t, token, q)
			if r.code() == httpapi.CodeTooComplex {
				if n > 1 && strings.Contains(page, "first: 100") {
					n /= 2
					continue
				}
				if depth >= 0 {
					depth--
					continue
				}
			}
			if len(r.Errors) > 0 {
				t.Errorf("%s(%s) %s: %s: %+v", f, args, sh.name, q, r.Errors)
				break
			}
			name := sh.name
			if n != store.MaxFirst {
				name = strings.Replace(name, "first 100", "first "+strconv.Itoa(n), 1)
			}
			if depth != sh.depth {
				name += fmt.Sprintf(" depth %d", depth)
			}
			rows = append(rows, calRow{field: f, args: args, shape: name, calFigures: fig})
			if sh.name == "first 1" {
				cursor = endCursor(string(r.Data))
			}
			break
		}
	}
	return rows
}

// endCursor is the first endCursor in a response's data, or "".
func endCursor(data string) string {
	_, rest, ok := strings.Cut(data, `"endCursor":"`)
	if !ok {
		return ""
	}
	c, _, _ := strings.Cut(rest, `"`)
	return c
}

// report fails on each field whose worst request is over CommandsPerUnitBound, and logs the table
// of every field's worst request.
func (w *calWorld) report(t *testing.T, rows []calRow) {
	t.Helper()
	worst := map[string]calRow{}
	var order []string
	var ratios []float64
	for _, r := range rows {
		k := r.field.String()
		ratios = append(ratios, r.perUnit(w.base))
		old, seen := worst[k]
		if !seen {
			order = append(order, k)
		}
		if !seen || r.perUnit(w.base) > old.perUnit(w.base) {
			worst[k] = r
		}
	}
	slices.Sort(ratios)
	var s strings.Builder
	fmt.Fprintf(&s, "%d requests over %d fields; the least request sends %d commands; commands a unit beyond it and %d more: median %.3f, 90th percentile %.3f, bound %.2f\n",
		len(rows), len(order), w.base.commands, CommandsAllowance, pct(ratios, 50), pct(ratios, 90), CommandsPerUnitBound)
	fmt.Fprintf(&s, "%-34s %-60s %-15s %7s %8s %6s %8s %9s %9s %8s\n", "field", "arguments", "shape", "cost", "commands", "trips", "per unit", "redis cmd", "redis µs", "cpu µs")
	for _, k := range order {
		r := worst[k]
		args := r.args
		if len(args) > 60 {
			args = args[:57] + "..."
		}
		fmt.Fprintf(&s, "%-34s %-60s %-15s %7d %8d %6d %8.3f %9d %9d %8d\n", k, args, r.shape, r.cost, r.commands, r.trips,
			r.perUnit(w.base), r.redisCalls, r.redisUsec, r.cpu.Microseconds())
		if r.perUnit(w.base) > CommandsPerUnitBound {
			t.Errorf("%s(%s) %s: %d commands (%d beyond the least request) for a cost of %d, %.3f a unit beyond the allowance of %d; the bound is %.2f",
				k, r.args, r.shape, r.commands, r.commands-w.base.commands, r.cost, r.perUnit(w.base), CommandsAllowance, CommandsPerUnitBound)
		}
	}
	t.Log("\n" + s.String())
}

// pct is the p-th percentile of sorted xs.
func pct(xs []float64, p int) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[min(len(xs)-1, len(xs)*p/100)]
}

// measureWrites sends the mutations that fan out — a label on a group's every post, a post's
// labels in its 10 groups, a site ban, leaving and joining a group, a post into 10 groups
// before 100 followers, deleting a post in 10 groups with 100 comments, marking 200
// notifications read, deleting an account with its content — and logs what each cost and sent
// in its request (the jobs it queued run later, each in a request of its own). Nothing is
// asserted: the figures are docs/PERFORMANCE.md's.
func (w *calWorld) measureWrites(t *testing.T) {
	t.Helper()
	post := w.ids["post"]
	writes := []struct{ name, token, query string }{
		{"updateGroup nsfw", w.viewer, `mutation { updateGroup(name: "g000", nsfw: true) { id } }`},
		{"updateGroup nsfw off", w.viewer, `mutation { updateGroup(name: "g000", nsfw: false) { id } }`},
		{"setPostLabels", w.viewer, `mutation { setPostLabels(id: "` + post + `", nsfw: true, spoiler: true) { id } }`},
		{"banUser site", w.admin, `mutation { banUser(userId: "user:u150", reason: "spam") { id } }`},
		{"leaveGroup", w.viewer, `mutation { leaveGroup(name: "g001") { id } }`},
		{"joinGroup", w.viewer, `mutation { joinGroup(name: "g001") { id } }`},
		{"createPost 10 groups", w.viewer, `mutation { createPost(input: {title: "news alpha", body: "beta", groups: ["g000", "g001", "g002", "g003", "g004", "g005", "g006", "g007", "g008", "g009"]}) { id } }`},
		{"markNotificationsRead all", w.viewer, `mutation { markNotificationsRead(all: true) }`},
		{"deletePost 10 groups", w.viewer, `mutation { deletePost(id: "` + post + `") }`},
		{"deleteUser erase", w.admin, `mutation { deleteUser(userId: "user:vic", eraseContent: true) }`},
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%-28s %7s %8s %6s %9s %9s %8s\n", "mutation", "cost", "commands", "trips", "redis cmd", "redis µs", "cpu µs")
	for _, m := range writes {
		f, r := w.try(t, m.token, m.query)
		if len(r.Errors) > 0 {
			t.Errorf("%s: %+v", m.name, r.Errors)
			continue
		}
		fmt.Fprintf(&s, "%-28s %7d %8d %6d %9d %9d %8d\n", m.name, f.cost, f.commands, f.trips, f.redisCalls, f.redisUsec, f.cpu.Microseconds())
	}
	t.Log("\n" + s.String())
}
