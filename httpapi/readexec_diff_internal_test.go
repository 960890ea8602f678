package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/live"
	"github.com/agora/agora/readexec"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// The differential test of readexec: every document is sent to two handlers on one store, one
// that lets readexec execute the queries it can plan and one that sends every operation through
// gqlgen's executor (Config.gqlgenOnly), and the two answers must agree: the same status, the
// same bytes of data and the same errors, in any order (gqlgen resolves fields concurrently).

// diffSeedEnv overrides the seed of the random documents, to explore beyond the fixed one.
const diffSeedEnv = "READEXEC_DIFF_SEED"

// diffViewers returns the users the documents are sent as; "" is anonymous. ann writes the main
// post, bob is an ordinary reader, carol blocks dave, mia moderates the group go and root is a
// site admin.
func diffViewers() []string { return []string{"", "ann", "bob", "carol", "dave", "mia", "root"} }

// TestReadexecMatchesGqlgen holds readexec to gqlgen's answers on hand-written documents that
// cover every field readexec knows, the paths of its errors and its null propagation, and on
// random documents built from the same fields, at every viewer.
func TestReadexecMatchesGqlgen(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		start := time.Now()
		st := b.NewStore(t, store.Options{WriteLimit: -1})
		hub := live.New(st, live.Options{})
		t.Cleanup(func() { _ = hub.Close() })
		d := &differ{
			t:      t,
			fast:   New(Config{Store: st, Hub: hub, ResponseCacheMiB: -1}),
			slow:   New(Config{Store: st, Hub: hub, ResponseCacheMiB: -1, gqlgenOnly: true}),
			tokens: map[string]string{},
		}
		w := seedDiffWorld(t, st, d.tokens)
		w.cursors = d.cursors(w)
		seeded := time.Now()

		for _, doc := range diffDocs(w) {
			viewers := doc.viewers
			if viewers == nil {
				viewers = diffViewers()
			}
			varSets := doc.vars
			if varSets == nil {
				varSets = []map[string]any{nil}
			}
			for _, viewer := range viewers {
				for i, vars := range varSets {
					d.compare(fmt.Sprintf("%s (variables #%d)", doc.name, i), viewer, doc.query, doc.op, vars,
						!strings.HasPrefix(doc.name, "not planned:"))
				}
			}
		}
		handWritten := d.stats
		d.stats = diffStats{}

		seed := uint64(20260301)
		if s := os.Getenv(diffSeedEnv); s != "" {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("%s=%q: %v", diffSeedEnv, s, err)
			}
			seed = v
		}
		n := 400
		if b.Name == "cluster" {
			n = 100
		}
		t.Logf("random documents: seed %d (set %s to change it), %d documents", seed, diffSeedEnv, n)
		g := newDocGen(seed, w)
		for i := range n {
			query, vars := g.document()
			viewer := pick(g, diffViewers()...)
			d.compare(fmt.Sprintf("random #%d of seed %d", i, seed), viewer, query, "", vars, true)
		}
		t.Logf("hand-written: %s", handWritten)
		t.Logf("random: %s", d.stats)
		t.Logf("seeding %v, comparing %v", seeded.Sub(start).Round(time.Millisecond), time.Since(seeded).Round(time.Millisecond))
	})
}

// diffWorld is the data seeded for the differential test: the ids the documents name.
type diffWorld struct {
	main       string // ann's post in go and news: edited, voted on, saved, with a deep thread
	removed    string // bob's post in go, removed by root
	locked     string // dave's post, locked by root
	scheduled  string // ann's post, published in two hours
	deleted    string // a post its author deleted
	others     []string
	top        string // bob's top-level comment on main, the root of a chain 4 replies deep
	chain      []string
	blocked    string // dave's comment, which carol sees collapsed
	tombstone  string // a deleted comment with a live reply
	lonely     string // a deleted comment without replies: gone from the tree
	modRemoved string // a comment mia removed
	edited     string // ann's comment, edited
	onRemoved  string // ann's comment on the removed post
	nsfw       string // carol's post in go, labelled NSFW: bob shows NSFW posts, the others do not
	spoiler    string // dave's post in news, labelled a spoiler
	postIDs    []string
	commentIDs []string
	// cursors of several lists, taken from a first response: "comments" of the main post (NEW)
	// and "top" (TOP), "best" (BEST), "con" (CONTROVERSIAL), "replies" to its top comment, "posts"
	// (HOT) and "new" (Query.posts, NEW), and "all" of them.
	cursors map[string][]string
}

// seedDiffWorld signs up the viewers, storing their tokens in tokens, and writes the data the
// documents read, through the store's API.
func seedDiffWorld(t *testing.T, st *store.Store, tokens map[string]string) *diffWorld {
	t.Helper()
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("seed: %s: %v", what, err)
		}
	}
	for _, name := range diffViewers()[1:] {
		s, err := st.SignUp(ctx, name, "password1")
		check("sign up "+name, err)
		tokens[name] = s.Token
	}
	check("grant root admin", st.GrantAdmin(ctx, "root"))
	ann, bob, carol, dave, mia, root := store.UserKey("ann"), store.UserKey("bob"), store.UserKey("carol"),
		store.UserKey("dave"), store.UserKey("mia"), store.UserKey("root")

	_, err := st.CreateGroup(ctx, mia, "go", nil)
	check("create group go", err)
	bio, avatar := "Writes about \"Go\" & Redis\n<b>and</b> ünïcode ✓ \\o/", "https://example.com/ann.png"
	_, err = st.UpdateProfile(ctx, ann, store.ProfileEdit{Bio: &bio, AvatarURL: &avatar})
	check("update ann's profile", err)
	bobBio, shows := "just bob", true
	_, err = st.UpdateProfile(ctx, bob, store.ProfileEdit{Bio: &bobBio, ShowNSFW: &shows})
	check("update bob's profile", err)

	w := &diffWorld{}
	post := func(author store.UserKey, in store.NewPost) string {
		t.Helper()
		p, err := st.CreatePost(ctx, author, in)
		check("create post "+in.Title, err)
		w.postIDs = append(w.postIDs, p.ID)
		return p.ID
	}
	comment := func(author store.UserKey, pid, parent, body string) string {
		t.Helper()
		c, err := st.CreateComment(ctx, author, store.NewComment{PostID: pid, ParentID: parent, Body: body})
		check("create comment "+body, err)
		w.commentIDs = append(w.commentIDs, c.ID)
		return c.ID
	}

	w.main = post(ann, store.NewPost{Title: `A "quoted" title with <html> & unicode: ünï ✓`,
		Body: "line one\nline two\ttabbed \\ backslash", URL: "https://example.com/a?b=c&d=%3Ce%3E", Groups: []string{"go", "news"}})
	w.removed = post(bob, store.NewPost{Title: "spam in go", Body: "buy now", Groups: []string{"go"}})
	w.locked = post(dave, store.NewPost{Title: "a locked post"})
	for i := range 4 {
		w.others = append(w.others, post([]store.UserKey{bob, carol, dave, mia}[i], store.NewPost{
			Title: fmt.Sprintf("other post %d", i), Groups: [][]string{{"news"}, {"go"}, nil, {"news", "go"}}[i]}))
	}
	w.scheduled = post(ann, store.NewPost{Title: "later", PublishAt: time.Now().Add(2 * time.Hour)})
	w.nsfw = post(carol, store.NewPost{Title: "an NSFW post", Body: "not for work", URL: "https://example.com/nsfw",
		Groups: []string{"go"}, NSFW: true})
	w.spoiler = post(dave, store.NewPost{Title: "a spoiler", Body: "the ending", Groups: []string{"news"}, Spoiler: true})
	_, err = st.CreateGroupLabelled(ctx, mia, "late", nil, true)
	check("create the NSFW group late", err)
	post(mia, store.NewPost{Title: "in an NSFW group", Body: "late at night", Groups: []string{"late", "news"}})
	w.deleted = post(carol, store.NewPost{Title: "regretted"})
	check("delete post", st.DeletePost(ctx, carol, w.deleted))

	// The main thread: a chain of replies 4 deep under bob's comment, and comments of every kind.
	w.top = comment(bob, w.main, "", "top-level by bob")
	parent := w.top
	for i, author := range []store.UserKey{dave, carol, ann, bob} {
		parent = comment(author, w.main, parent, fmt.Sprintf("reply at depth %d", i+1))
		w.chain = append(w.chain, parent)
	}
	comment(ann, w.main, w.top, "a second reply to bob, with\r\nCRLF, \u2028 and \u2029, \ufeff, 😀, \"\\\" and </script>")
	comment(carol, w.main, w.top, "a third reply to bob")
	w.blocked = comment(dave, w.main, "", "dave says something carol does not want to read")
	comment(bob, w.main, w.blocked, "bob answers dave")
	w.lonely = comment(carol, w.main, "", "carol regrets this")
	check("delete lonely comment", st.DeleteComment(ctx, carol, w.lonely))
	w.tombstone = comment(bob, w.main, "", "bob regrets this too, but it has a reply")
	comment(ann, w.main, w.tombstone, "ann's reply keeps bob's deleted comment in the tree")
	check("delete tombstone comment", st.DeleteComment(ctx, bob, w.tombstone))
	w.modRemoved = comment(dave, w.main, "", "spam comment")
	comment(carol, w.main, w.modRemoved, "a reply to spam")
	_, err = st.RemoveComment(ctx, mia, w.modRemoved, "spam")
	check("remove comment", err)
	w.edited = comment(ann, w.main, "", "ann's first draft")
	_, err = st.EditComment(ctx, ann, w.edited, "ann's \"edited\" text\nwith a newline")
	check("edit comment", err)
	for i := range 5 {
		comment([]store.UserKey{bob, carol, dave, mia, root}[i], w.main, "", fmt.Sprintf("filler comment %d", i))
	}
	w.onRemoved = comment(ann, w.removed, "", "a comment on the removed post")
	comment(bob, w.removed, w.onRemoved, "a reply on the removed post")
	comment(carol, w.locked, "", "a comment on the locked post")

	newBody := "line one\nline two, edited"
	_, err = st.EditPost(ctx, ann, w.main, store.PostEdit{Body: &newBody})
	check("edit post", err)
	for user, dir := range map[store.UserKey]int{bob: 1, carol: -1, dave: 1, mia: 1} {
		_, err = st.VotePost(ctx, user, w.main, dir)
		check("vote post", err)
	}
	_, err = st.VotePost(ctx, ann, w.others[1], -1)
	check("vote post", err)
	votes := []struct {
		user store.UserKey
		id   string
		dir  int
	}{{ann, w.top, 1}, {carol, w.top, 1}, {dave, w.top, -1}, {bob, w.chain[0], -1}, {ann, w.chain[3], 1},
		{bob, w.edited, 1}, {carol, w.edited, 1}, {dave, w.edited, -1}, {root, w.blocked, -1}}
	for _, v := range votes {
		_, err = st.VoteComment(ctx, v.user, v.id, v.dir)
		check("vote comment", err)
	}
	_, err = st.SavePost(ctx, bob, w.main)
	check("save post", err)
	_, err = st.SavePost(ctx, ann, w.main)
	check("save post", err)
	check("mark read", st.MarkPostRead(ctx, carol, w.main))
	comment(bob, w.main, "", "after carol read the thread")
	check("watch", st.WatchPost(ctx, carol, w.main, store.WatchMuted))
	for _, f := range [][2]store.UserKey{{bob, ann}, {carol, ann}, {ann, bob}, {dave, carol}, {root, ann}} {
		_, err = st.Follow(ctx, f[0], f[1])
		check("follow", err)
	}
	_, err = st.Block(ctx, carol, dave)
	check("block", err)
	_, err = st.RemovePost(ctx, root, w.removed, "spam")
	check("remove post", err)
	locked := "flame war"
	_, err = st.LockPost(ctx, root, w.locked, true, &locked)
	check("lock post", err)
	_, err = st.Jobs().RunDue(ctx)
	check("run due jobs", err)
	return w
}

// diffDoc is a hand-written document, sent with each of its sets of variables (once without
// when it has none) as each of its viewers (every viewer when nil).
type diffDoc struct {
	name    string
	query   string
	op      string // the operation to run, for documents of several
	vars    []map[string]any
	viewers []string
}

// diffDocs returns the hand-written documents.
func diffDocs(w *diffWorld) []diffDoc {
	p := func(vars ...map[string]any) []map[string]any { return vars }
	main := map[string]any{"p": w.main}
	cur := func(list string, i int) string { return w.cursors[list][i%len(w.cursors[list])] }
	const postFields = `__typename id title body url author { __typename id name createdAt karma rank followerCount
		followingCount viewerFollows followsViewer isAdmin bio avatarUrl viewerBlocks } createdAt upvotes downvotes
		score hotRank viewerVote votingClosesAt commentCount comments { __typename totalCount pageInfo { __typename hasNextPage
		hasPreviousPage startCursor endCursor } edges { __typename cursor node { __typename id } } nodes { id } }
		publishAt editedAt removed locked viewerSaved nsfw spoiler nsfwHidden revealed: body(revealSpoiler: true)
		hidden: body(revealSpoiler: false) unreadCommentCount viewerHasRead viewerWatch`
	const commentFields = `__typename id post { id title } parent { id body } author { id name viewerBlocks } body
		deleted createdAt editedAt depth upvotes downvotes score viewerVote replyCount replies { totalCount nodes { id body }
		pageInfo { hasNextPage endCursor } } removed blockedByViewer`
	const userFields = `__typename id name createdAt karma rank followerCount followingCount viewerFollows
		followsViewer isAdmin bio avatarUrl viewerBlocks showNsfw`
	allPosts := []map[string]any{}
	for _, id := range append(slices.Clone(w.postIDs), "post:999999") {
		allPosts = append(allPosts, map[string]any{"p": id})
	}
	allComments := []map[string]any{}
	for _, id := range append(slices.Clone(w.commentIDs), "comment:1:999999", "comment:999999:1") {
		allComments = append(allComments, map[string]any{"c": id})
	}
	badPaging := []string{"first: 0", "first: 101", "first: -1", "last: 0", "last: 101", "first: 2, last: 2",
		`after: "garbage"`, `before: "garbage"`, `after: ""`, "first: 100", "last: 1", "first: null", "last: null",
		`after: null, before: null`}
	docs := []diffDoc{
		{name: "every field of Post", query: `query($p: ID!) { post(id: $p) { ` + postFields + ` } }`, vars: allPosts},
		{name: "every field of Comment", query: `query($c: ID!) { comment(id: $c) { ` + commentFields + ` } }`, vars: allComments},
		{name: "every field of User", query: `query($n: String!) { user(name: $n) { ` + userFields + ` } }`,
			vars: p(map[string]any{"n": "ann"}, map[string]any{"n": "bob"}, map[string]any{"n": "DAVE"},
				map[string]any{"n": "root"}, map[string]any{"n": "nobody"}, map[string]any{"n": "not a name!"},
				map[string]any{"n": 12345}, map[string]any{"n": "mia"})},
		{name: "viewer", query: `{ viewer { ` + userFields + ` } __typename }`},
		{name: "only __typename", query: `{ __typename t: __typename }`},
		{name: "__typename at every level", query: `query($p: ID!) { __typename post(id: $p) { __typename author { __typename }
			comments(first: 2) { __typename edges { __typename node { __typename author { __typename } parent { __typename }
			post { __typename } replies { __typename pageInfo { __typename } nodes { __typename } } } } pageInfo { __typename } } }
			posts(first: 1) { __typename edges { __typename node { __typename } } nodes { __typename } pageInfo { __typename } } }`,
			vars: p(main)},
		{name: "aliases of one field with different arguments", query: `query($p: ID!) { post(id: $p) {
			t1: title t2: title id id
			newest: comments(sort: NEW, first: 2) { nodes { id } }
			oldest: comments(sort: OLD, first: 2) { nodes { id createdAt } }
			best: comments(sort: TOP) { nodes { id upvotes downvotes } totalCount }
			comments { totalCount }
			a: author { name } b: author { karma }
		}
		again: post(id: $p) { title } other: post(id: "post:999999") { title } }`, vars: p(main)},
		{name: "one field merged from several selections", query: `query($p: ID!) { post(id: $p) {
			comments(first: 3) { nodes { id } }
			comments(first: 3) { nodes { body author { name } } totalCount }
			author { name } author { karma name }
			...F ... on Post { comments(first: 3) { pageInfo { endCursor } } }
		} } fragment F on Post { comments(first: 3) { nodes { depth } } author { rank } }`, vars: p(main)},
		{name: "fragments and inline fragments", query: `query($p: ID!, $c: ID!) {
			post(id: $p) { ...PostParts ... on Node { id } ... on Post { title ... on Node { __typename } }
				comments(sort: OLD, first: 4) { edges { node { ...CommentParts } } } }
			comment(id: $c) { ...CommentParts ... on Node { id } replies { nodes { ...CommentParts } } }
			viewer { ...UserParts ... on Node { id } }
		}
		fragment PostParts on Post { title author { ...UserParts } ... on Post { url } }
		fragment CommentParts on Comment { id body author { ...UserParts } ...on Comment { depth } }
		fragment UserParts on User { name karma ... on User { isAdmin } }`,
			vars: p(map[string]any{"p": w.main, "c": w.top}, map[string]any{"p": w.removed, "c": w.onRemoved})},
		{name: "fragments on Node that name other types", query: `query($c: ID!) { comment(id: $c) {
			... on Node { ... on Post { title } ... on Comment { body ... on Node { __typename } } ... on User { name } }
			author { ...N } post { ...N } } } fragment N on Node { id ... on Post { url } ... on User { bio } ... on Comment { depth } }`,
			vars: p(map[string]any{"c": w.top}, map[string]any{"c": w.blocked})},
		{name: "@skip and @include with variables", query: `query($p: ID!, $yes: Boolean!, $no: Boolean!) {
			post(id: $p) { title @include(if: $yes) body @skip(if: $yes) url @include(if: $no)
				comments(first: 2) @skip(if: $no) { totalCount nodes @include(if: $yes) { id } edges @skip(if: $yes) { cursor } }
				... on Post @include(if: $no) { id } ... @skip(if: $no) { score } }
			viewer @skip(if: $yes) { id } v: viewer @include(if: $yes) { name }
			nothing: post(id: $p) { title @skip(if: $yes) }
		}`, vars: p(map[string]any{"p": w.main, "yes": true, "no": false}, map[string]any{"p": w.main, "yes": false, "no": true})},
		{name: "every field skipped", query: `{ viewer @skip(if: true) { id } }`},
		{name: "fragment spreads with directives", query: `query($p: ID!, $yes: Boolean!) { post(id: $p) {
			...T @include(if: $yes) ...T @skip(if: $yes) ...C @include(if: false) ...A
			comments(first: 2) { nodes { ...A @skip(if: true) id } } } }
			fragment T on Post { title } fragment C on Post { commentCount } fragment A on Node { id ... on Post { author { ...U } } }
			fragment U on User { name ...U2 } fragment U2 on User { karma }`,
			vars: p(map[string]any{"p": w.main, "yes": true}, map[string]any{"p": w.main, "yes": false})},
		{name: "a thread 4 replies deep", query: `query($p: ID!) { post(id: $p) { comments(sort: OLD, first: 10) { edges { cursor node {
			id depth body replies(sort: OLD, first: 3) { edges { node { id depth replies(first: 2) { nodes { id depth replyCount
			replies(sort: TOP, first: 2) { nodes { id depth parent { id } replies(last: 2) { totalCount nodes { id depth body
			author { name } replies(first: 1) { totalCount } } } } } } } } } } } } } } }`, vars: p(main)},
		{name: "the chain from its deepest comment up", query: `query($c: ID!) { comment(id: $c) { id depth parent { id depth parent {
			id parent { id parent { id parent { id } } } } } post { id commentCount } } }`,
			vars: p(map[string]any{"c": w.chain[3]}, map[string]any{"c": w.chain[0]})},
		{name: "the three comment sorts", query: `query($p: ID!, $s: CommentSort) { post(id: $p) {
			new: comments(sort: NEW) { nodes { id } } old: comments(sort: OLD) { nodes { id } }
			top: comments(sort: TOP) { nodes { id upvotes downvotes } } v: comments(sort: $s, first: 3) { nodes { id } }
		} }`, vars: p(map[string]any{"p": w.main, "s": "TOP"}, map[string]any{"p": w.main, "s": nil}, main)},
		{name: "the BEST and CONTROVERSIAL comment sorts", query: `query($p: ID!, $c: ID!, $s: CommentSort, $c1: String, $c2: String) {
			post(id: $p) {
				best: comments(sort: BEST) { totalCount nodes { id upvotes downvotes } pageInfo { hasNextPage endCursor } }
				con: comments(sort: CONTROVERSIAL, first: 4) { edges { cursor node { id upvotes downvotes } } pageInfo { hasNextPage endCursor } }
				ba: comments(sort: BEST, first: 2, after: $c1) { nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
				cb: comments(sort: CONTROVERSIAL, last: 2, before: $c2) { nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor } }
				v: comments(sort: $s, last: 3) { nodes { id replies(sort: $s, first: 2) { totalCount nodes { id } } } }
			}
			comment(id: $c) { best: replies(sort: BEST) { nodes { id upvotes } } con: replies(sort: CONTROVERSIAL, last: 2) { nodes { id } } } }`,
			vars: p(map[string]any{"p": w.main, "c": w.top, "s": "BEST", "c1": cur("best", 1), "c2": cur("con", 5)},
				map[string]any{"p": w.main, "c": w.top, "s": "CONTROVERSIAL", "c1": cur("best", 4), "c2": cur("con", 2)},
				map[string]any{"p": w.main, "c": w.chain[0], "s": "TOP", "c1": cur("top", 1), "c2": cur("best", 2)})},
		{name: "paging with cursors", query: `query($p: ID!, $c1: String, $c2: String) { post(id: $p) {
			f2: comments(first: 2) { edges { cursor } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
			a: comments(first: 2, after: $c1) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
			b: comments(last: 2, before: $c2) { nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
			l: comments(last: 3) { nodes { id } pageInfo { hasNextPage hasPreviousPage } }
			ab: comments(after: $c1, before: $c2) { nodes { id } totalCount }
			lb: comments(sort: TOP, last: 1, after: $c1) { nodes { id } }
		} }`, vars: p(map[string]any{"p": w.main, "c1": cur("comments", 1), "c2": cur("comments", 6)},
			map[string]any{"p": w.main, "c1": cur("comments", 4), "c2": cur("comments", 2)},
			map[string]any{"p": w.main, "c1": cur("top", 2), "c2": cur("top", 5)},
			map[string]any{"p": w.main, "c1": cur("comments", 0), "c2": cur("top", 3)}, main)},
		{name: "paging arguments in variables", query: `query($p: ID!, $f: Int, $a: String, $l: Int, $b: String) { post(id: $p) {
			comments(first: $f, after: $a, last: $l, before: $b) { nodes { id } pageInfo { hasNextPage hasPreviousPage } totalCount }
		} }`, vars: p(map[string]any{"p": w.main, "f": 2}, map[string]any{"p": w.main, "l": 2},
			map[string]any{"p": w.main, "f": 2, "l": 2}, map[string]any{"p": w.main, "f": nil, "l": 2},
			map[string]any{"p": w.main, "f": 0}, map[string]any{"p": w.main, "l": 101},
			map[string]any{"p": w.main, "f": 1, "a": cur("comments", 0)}, map[string]any{"p": w.main, "l": 1, "b": cur("comments", 4)},
			map[string]any{"p": w.main, "f": 3, "a": cur("comments", 2), "b": cur("comments", 8)},
			map[string]any{"p": w.main, "a": "garbage"}, map[string]any{"p": w.main, "f": 1e10},
			map[string]any{"p": w.main, "f": "two"}, map[string]any{"p": w.main, "f": 2.5}, main)},
		// gqlparser validates an enum variable ignoring case ("new" passes), and the generated
		// enum's UnmarshalGQL then refused it at execution, where readexec first reported it on
		// another path than gqlgen (fixed: argError in fields.go). The server now refuses such a
		// variable before execution (strictVariables in variables.go), so both answer the same 400.
		{name: "sort variables that validation lets through", query: `query($p: ID!, $cs: CommentSort, $ps: PostSort) { viewer { name }
			post(id: $p) { title comments(sort: $cs, first: 2) { totalCount } } posts(sort: $ps, first: 2) { totalCount } }`,
			vars: p(map[string]any{"p": w.main, "cs": "new"}, map[string]any{"p": w.main, "cs": "Top"}, map[string]any{"p": w.main, "cs": 1},
				map[string]any{"p": w.main, "ps": "hot"}, map[string]any{"p": w.main, "ps": 2}, map[string]any{"p": w.main, "cs": "OLD", "ps": "TOP"}),
			viewers: []string{"", "bob"}},
		{name: "string and number variables that validation lets through", query: `query($p: ID!, $f: Int, $a: String, $g: String) {
			post(id: $p) { comments(first: $f, after: $a) { totalCount } } posts(group: $g, first: $f) { totalCount } }`,
			vars: p(map[string]any{"p": w.main, "f": "2"}, map[string]any{"p": w.main, "a": 5}, map[string]any{"p": w.main, "g": 7},
				map[string]any{"p": w.main, "f": "-3"}, map[string]any{"p": w.main, "f": "9999999999"}),
			viewers: []string{""}},
		{name: "a variable's default", query: `query($p: ID!, $f: Int = 2, $s: CommentSort = OLD) { post(id: $p) {
			comments(first: $f, sort: $s) { nodes { id } } } }`,
			vars: p(main, map[string]any{"p": w.main, "f": nil}, map[string]any{"p": w.main, "f": 1, "s": "TOP"})},
		{name: "Query.posts by sort and group", query: `query($g: String) {
			hot: posts { totalCount nodes { id score hotRank } } new: posts(sort: NEW) { nodes { id createdAt } }
			top: posts(sort: TOP, first: 3) { edges { cursor node { id upvotes downvotes } } pageInfo { hasNextPage endCursor } }
			go: posts(group: "go") { nodes { id title } } news: posts(group: "news", sort: NEW, first: 2) { nodes { id } }
			none: posts(group: "nonexistent") { totalCount nodes { id } pageInfo { hasNextPage startCursor } }
			g: posts(group: $g) { totalCount } } `,
			vars: p(map[string]any{"g": "go"}, map[string]any{"g": nil}, map[string]any{"g": "GO"}, map[string]any{"g": "not a group!"}, nil)},
		{name: "Query.posts and Group.posts by the windowed, activity and controversy sorts", query: `query($s: PostSort) {
			day: posts(sort: TOP_DAY, first: 2) { totalCount edges { cursor node { id upvotes } } pageInfo { hasNextPage endCursor } }
			year: posts(sort: TOP_YEAR, last: 2) { totalCount nodes { id } pageInfo { hasPreviousPage startCursor } }
			active: posts(sort: ACTIVE) { nodes { id commentCount } } con: posts(sort: CONTROVERSIAL) { nodes { id } }
			most: posts(sort: MOST_COMMENTS, group: "go") { totalCount nodes { id commentCount } }
			v: posts(sort: $s, group: "go", first: 3) { nodes { id } } }`,
			vars: p(map[string]any{"s": "TOP_HOUR"}, map[string]any{"s": "TOP_WEEK"}, map[string]any{"s": "TOP_MONTH"}, map[string]any{"s": "NOPE"})},
		{name: "Query.posts paging", query: `query($a: String, $b: String) {
			a: posts(first: 2, after: $a) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
			b: posts(last: 2, before: $b) { nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
			c: posts(sort: NEW, last: 2) { nodes { id } } }`,
			vars: p(map[string]any{"a": cur("posts", 1), "b": cur("posts", 5)}, map[string]any{"a": cur("new", 2), "b": cur("new", 4)},
				map[string]any{"a": cur("new", 0), "b": cur("posts", 0)}, nil)},
		{name: "ids that name nothing", query: `{ a: post(id: "post:999999") { id } b: comment(id: "comment:1:999999") { id }
			c: user(name: "nobody") { id } d: comment(id: "comment:999999:1") { id } }`},
		{name: "the deleted post and its id", query: `query($p: ID!) { post(id: $p) { id } }`, vars: p(map[string]any{"p": w.deleted})},
		{name: "malformed ids", query: `{ a: post(id: "garbage") { id } b: post(id: "comment:1:1") { id } c: comment(id: "post:1") { id }
			d: post(id: "") { id } e: user(name: "") { id } f: post(id: 1) { id } ok: viewer { name } }`},
		{name: "an id variable given as a number", query: `query($p: ID!) { post(id: $p) { id } }`,
			vars: p(map[string]any{"p": 1}, map[string]any{"p": 1.5}, map[string]any{"p": true})},
		{name: "the removed post", query: `query($p: ID!, $c: ID!) { post(id: $p) { id title removed author { name }
			comments { totalCount nodes { id body author { name } replies { nodes { body } } } } }
			comment(id: $c) { id body removed post { id removed } } }`, vars: p(map[string]any{"p": w.removed, "c": w.onRemoved})},
		{name: "the scheduled and the locked post", query: `query($s: ID!, $l: ID!) { s: post(id: $s) { id title publishAt author { name } }
			l: post(id: $l) { id locked removed comments { nodes { body } } } }`, vars: p(map[string]any{"s": w.scheduled, "l": w.locked})},
		{name: "removed, deleted and blocked comments in their thread", query: `query($p: ID!) { post(id: $p) { commentCount
			comments(sort: OLD, first: 50) { totalCount nodes { id body deleted removed blockedByViewer author { name }
			replyCount replies { totalCount nodes { id body author { name } blockedByViewer } } } } } }`, vars: p(main)},
		{name: "Comment.post and parent around a cycle", query: `query($c: ID!) { comment(id: $c) { post { comments(first: 2) {
			nodes { post { id } parent { id } replies(first: 1) { nodes { parent { id post { title } } } } } } } } }`,
			vars: p(map[string]any{"c": w.chain[1]})},
		{name: "one comment read through several paths that read different fields", query: `query($p: ID!, $c: ID!, $d: ID!) {
			a: post(id: $p) { comments(sort: OLD, first: 3) { nodes { id } } }
			b: comment(id: $d) { parent { id body upvotes depth replyCount editedAt author { name } } }
			c: comment(id: $c) { id } d: comment(id: $c) { body downvotes replies(first: 2) { nodes { body } } }
			e: post(id: $p) { comments(sort: OLD, first: 3) { nodes { body replyCount parent { id } } } } }`,
			vars: p(map[string]any{"p": w.main, "c": w.top, "d": w.chain[0]}, map[string]any{"p": w.main, "c": w.chain[1], "d": w.chain[2]})},
		{name: "a list read twice, with different fields", query: `query($p: ID!) { post(id: $p) {
			x: comments(first: 4) { nodes { id } } y: comments(first: 4) { nodes { body depth editedAt replies { nodes { body } } } }
			z: comments(first: 4) { nodes { id } } } }`, vars: p(main)},
		{name: "two operations, one chosen by name", op: "B", query: `query A { viewer { id } } query B($p: ID!) { post(id: $p) { title } }`, vars: p(main)},
		{name: "a huge Int literal", query: `{ posts(first: 3000000000) { totalCount } }`},
		{name: "an error under a nullable field beside good data", query: `query($p: ID!) { viewer { name }
			good: post(id: $p) { title } bad: post(id: $p) { title comments(first: 0) { totalCount } } }`, vars: p(main)},
		{name: "an error in every item of a list", query: `query($p: ID!) { post(id: $p) { comments(sort: OLD) {
			nodes { id replies(first: 101) { totalCount } } } } }`, vars: p(main)},
		{name: "an error in one item of a list", query: `query($p: ID!, $c: String) { post(id: $p) { comments(sort: OLD) {
			edges { node { id replies(after: $c) { totalCount } } } } } }`,
			vars: p(map[string]any{"p": w.main, "c": "garbage"}, map[string]any{"p": w.main, "c": cur("replies", 0)})},
		{name: "an error deep down: the whole post goes", query: `query($p: ID!) { viewer { id } post(id: $p) { title comments(first: 1, sort: OLD) {
			nodes { replies(first: 1) { nodes { replies(first: 1) { nodes { replies(first: 1, last: 1) { totalCount } } } } } } } } }`, vars: p(main)},
		{name: "an error in Query.posts makes data null", query: `{ viewer { name } posts(first: 0) { totalCount } }`},
		{name: "errors in Query.posts and beside it", query: `{ a: posts(last: 0) { totalCount } b: post(id: "garbage") { id } }`},
		{name: "a group with its moderators", query: `{ group(name: "go") { name postCount moderators { name } } post(id: "post:1") { title } }`},
		{name: "a group's page of posts", query: `query($g: String!) { group(name: $g) { id name description createdAt postCount memberCount viewerIsMember viewerIsModerator posts(first: 3) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { title groups { name postCount } author { name } } } } } }`,
			vars: p(map[string]any{"g": "go"}, map[string]any{"g": "GO"}, map[string]any{"g": "news"}, map[string]any{"g": "nonexistent"})},
		{name: "a post's groups", query: `query($p: ID!) { post(id: $p) { title groups { name } } }`, vars: p(main)},
		{name: "not planned: the leaderboard", query: `{ leaderboard(first: 5) { edges { rank karma node { name } } } }`},
		{name: "not planned: introspection", query: `{ __schema { queryType { name } } viewer { name } }`},
		{name: "not planned: __type", query: `{ __type(name: "Post") { name kind } }`},
		{name: "not planned: @defer", query: `query($p: ID!) { post(id: $p) { title ... @defer { body } } }`, vars: p(main)},
		{name: "@defer that is off", query: `query($p: ID!, $d: Boolean!) { post(id: $p) { title ... @defer(if: false) { body }
			... @defer(if: $d) { url } } }`, vars: p(map[string]any{"p": w.main, "d": false})},
		{name: "not planned: @defer that a variable turns on", query: `query($p: ID!, $d: Boolean!) { post(id: $p) { title ... @defer(if: false) { body }
			... @defer(if: $d) { url } } }`, vars: p(map[string]any{"p": w.main, "d": true})},
		{name: "not planned: node", query: `query($p: ID!) { node(id: $p) { id ... on Post { title } } }`, vars: p(main)},
		{name: "not planned: reportCount", query: `query($p: ID!) { post(id: $p) { title reportCount } }`, vars: p(main)},
		{name: "not planned: a field on a user", query: `{ user(name: "ann") { name posts(first: 2) { nodes { title } } } }`},
		{name: "not valid: an unknown field", query: `{ post(id: "post:1") { nope } }`},
		{name: "not valid: an unused variable", query: `query($x: Int) { viewer { id } }`},
		{name: "not valid: a conflict of aliases", query: `query($p: ID!) { post(id: $p) { a: title a: body } }`, vars: p(main)},
		{name: "a mutation goes to gqlgen", query: `mutation { logOut }`, viewers: []string{""}},
	}
	for _, bad := range badPaging {
		docs = append(docs,
			diffDoc{name: "paging on Post.comments: " + bad, query: `query($p: ID!) { viewer { name } post(id: $p) { title comments(` + bad +
				`) { totalCount nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`, vars: p(main), viewers: []string{"", "carol"}},
			diffDoc{name: "paging on Comment.replies: " + bad, query: `query($c: ID!) { comment(id: $c) { id replies(` + bad +
				`) { totalCount nodes { id } pageInfo { hasNextPage hasPreviousPage } } } }`, vars: p(map[string]any{"c": w.top}), viewers: []string{"", "carol"}},
			diffDoc{name: "paging on Query.posts: " + bad, query: `{ viewer { name } posts(` + bad +
				`) { totalCount nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, viewers: []string{"", "carol"}},
		)
	}
	return docs
}

// differ sends documents to the two handlers and compares their answers.
type differ struct {
	t          *testing.T
	fast, slow *Handler // with readexec, and gqlgen only
	tokens     map[string]string
	stats      diffStats
}

// diffStats counts what the compared answers were, to show what a run covered.
type diffStats struct {
	compared, withData, withErrors, noData, mismatches int
}

func (s diffStats) String() string {
	return fmt.Sprintf("%d compared: %d with data that is not null, %d with errors, %d without data, %d mismatches",
		s.compared, s.withData, s.withErrors, s.noData, s.mismatches)
}

// answer is one handler's answer to a document.
type answer struct {
	status     int
	body       []byte
	data       json.RawMessage
	errors     []string // canonical JSON, sorted
	extensions json.RawMessage
}

// send POSTs a document to h as viewer.
func (d *differ) send(h http.Handler, viewer, query, op string, vars map[string]any) answer {
	d.t.Helper()
	req := map[string]any{"query": query}
	if vars != nil {
		req["variables"] = vars
	}
	if op != "" {
		req["operationName"] = op
	}
	body, err := json.Marshal(req)
	if err != nil {
		d.t.Fatalf("marshal request: %v", err)
	}
	r := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if viewer != "" {
		r.Header.Set("Authorization", "Bearer "+d.tokens[viewer])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	a := answer{status: rec.Code, body: rec.Body.Bytes()}
	var res struct {
		Data       json.RawMessage   `json:"data"`
		Errors     []json.RawMessage `json:"errors"`
		Extensions json.RawMessage   `json:"extensions"`
	}
	if err := json.Unmarshal(a.body, &res); err != nil {
		d.t.Errorf("viewer %q: decode an answer (status %d): %v\n%s\ndocument: %s", viewer, a.status, err, clip(a.body), query)
		return a
	}
	a.data, a.extensions = res.Data, res.Extensions
	for _, e := range res.Errors {
		var v any
		if err := json.Unmarshal(e, &v); err != nil {
			d.t.Fatalf("decode an error %s: %v", e, err)
		}
		canon, _ := json.Marshal(v) // maps marshal with sorted keys
		a.errors = append(a.errors, string(canon))
	}
	slices.Sort(a.errors)
	return a
}

// compare sends a document to both handlers and reports where their answers differ, and whether
// readexec executed it when planned says it should (or handed it to gqlgen when not). A document
// refused before execution (invalid, over a limit) is executed by neither.
func (d *differ) compare(name, viewer, query, op string, vars map[string]any, planned bool) {
	d.t.Helper()
	ran0, handed0 := d.fast.rx.Counts()
	fast := d.send(d.fast, viewer, query, op, vars)
	ran1, handed1 := d.fast.rx.Counts()
	switch {
	case planned && handed1 != handed0:
		d.t.Errorf("%s, viewer %q: readexec handed the document to gqlgen instead of planning it\ndocument: %s", name, viewer, query)
	case !planned && ran1 != ran0:
		d.t.Errorf("%s, viewer %q: readexec executed a document it should hand to gqlgen\ndocument: %s", name, viewer, query)
	}
	slow := d.send(d.slow, viewer, query, op, vars)
	d.stats.compared++
	switch {
	case slow.data == nil:
		d.stats.noData++
	case !bytes.Equal(slow.data, []byte("null")):
		d.stats.withData++
	}
	if len(slow.errors) > 0 {
		d.stats.withErrors++
	}
	var diffs []string
	if fast.status != slow.status {
		diffs = append(diffs, fmt.Sprintf("status %d, gqlgen %d", fast.status, slow.status))
	}
	if !bytes.Equal(fast.data, slow.data) {
		diffs = append(diffs, "data differs")
	}
	if !slices.Equal(fast.errors, slow.errors) {
		diffs = append(diffs, "errors differ")
	}
	if !bytes.Equal(fast.extensions, slow.extensions) {
		diffs = append(diffs, "extensions differ")
	}
	if len(diffs) == 0 {
		return
	}
	d.stats.mismatches++
	vj, _ := json.Marshal(vars)
	d.t.Errorf("%s, viewer %q: %s\ndocument: %s\nvariables: %s\nreadexec: %s\ngqlgen:   %s",
		name, viewer, strings.Join(diffs, ", "), query, vj, clip(fast.body), clip(slow.body))
}

// cursors returns cursors of several lists, read through gqlgen (see diffWorld.cursors).
func (d *differ) cursors(w *diffWorld) map[string][]string {
	d.t.Helper()
	a := d.send(d.slow, "", `query($p: ID!, $c: ID!) {
		post(id: $p) { n: comments(first: 100) { edges { cursor } } t: comments(sort: TOP, first: 100) { edges { cursor } }
			b: comments(sort: BEST, first: 100) { edges { cursor } } c: comments(sort: CONTROVERSIAL, first: 100) { edges { cursor } } }
		comment(id: $c) { replies { edges { cursor } } }
		h: posts(first: 100) { edges { cursor } } o: posts(sort: NEW, first: 100) { edges { cursor } } }`,
		"", map[string]any{"p": w.main, "c": w.top})
	if len(a.errors) > 0 {
		d.t.Fatalf("read the cursors: %s", a.body)
	}
	type edges struct{ Edges []struct{ Cursor string } }
	var data struct {
		Post    struct{ N, T, B, C edges }
		Comment struct{ Replies edges }
		H, O    edges
	}
	if err := json.Unmarshal(a.data, &data); err != nil {
		d.t.Fatalf("read the cursors: %v", err)
	}
	out := map[string][]string{}
	for name, l := range map[string]edges{"comments": data.Post.N, "top": data.Post.T, "best": data.Post.B, "con": data.Post.C,
		"replies": data.Comment.Replies,
		"posts":   data.H, "new": data.O} {
		if len(l.Edges) < 3 {
			d.t.Fatalf("read the cursors: only %d of %s", len(l.Edges), name)
		}
		for _, e := range l.Edges {
			out[name] = append(out[name], e.Cursor)
		}
		out["all"] = append(out["all"], out[name]...)
	}
	slices.Sort(out["all"]) // in an order that does not depend on the map's
	return out
}

// clip shortens a body for a failure message.
func clip(b []byte) string {
	const max = 2048
	if len(b) <= max {
		return string(b)
	}
	return string(b[:max]) + fmt.Sprintf("… (%d bytes more)", len(b)-max)
}

// The random documents are built from a copy of readexec's tables (readexec/fields.go): the
// fields of each type it writes, their arguments and the types they show.

// argShape says which arguments a field takes.
type argShape uint8

const (
	noArgs argShape = iota
	postIDArg
	commentIDArg
	nameArg
	postListArgs    // sort: PostSort, group, first, after, last, before
	commentListArgs // sort: CommentSort, first, after, last, before
	groupNameArg
	groupPostsArgs // sort: PostSort, first, after, last, before
	revealArg      // revealSpoiler: Boolean (Post.body)
)

// genField is a field of the random documents: its name, its arguments and, for an object or a
// list of objects, the type it shows ("" for a leaf).
type genField struct {
	name  string
	args  argShape
	child string
}

// genSchema returns the fields of every type readexec writes, from readexec's own tables
// (readexec.Tables), so that a field readexec learns is in the random documents at once.
func genSchema() map[string][]genField {
	out := map[string][]genField{}
	for typ, fields := range readexec.Tables() {
		for _, f := range fields {
			g := genField{name: f.Name, child: f.Child}
			switch {
			case f.Args == "id" && f.Child == "Post":
				g.args = postIDArg
			case f.Args == "id" && f.Child == "Comment":
				g.args = commentIDArg
			case f.Args == "name" && f.Child == "Group":
				g.args = groupNameArg
			case f.Args == "name":
				g.args = nameArg
			case f.Args == "postList" && typ == "Group":
				g.args = groupPostsArgs
			case f.Args == "postList":
				g.args = postListArgs
			case f.Args == "commentList":
				g.args = commentListArgs
			case f.Args == "reveal":
				g.args = revealArg
			case f.Args != "":
				panic(fmt.Sprintf("genSchema: %s.%s takes arguments %q the random documents cannot make", typ, f.Name, f.Args))
			}
			out[typ] = append(out[typ], g)
		}
	}
	return out
}

// mergeable reports whether two selections of a field of type t under one response key always
// merge: t has no field with arguments, so their sub-selections cannot conflict.
func mergeable(f genField) bool {
	return f.args == noArgs && (f.child == "" || f.child == "User" || f.child == "PageInfo")
}

// maxGenDepth is how deeply the random documents nest selection sets below the root's.
const maxGenDepth = 5

// docGen builds random documents.
type docGen struct {
	rng    *rand.Rand
	schema map[string][]genField
	w      *diffWorld
	// Of the document being built: its variables' declarations and values, and a counter that
	// makes aliases and variable names unique in it.
	decls []string
	vars  map[string]any
	n     int
}

func newDocGen(seed uint64, w *diffWorld) *docGen {
	return &docGen{rng: rand.New(rand.NewPCG(seed, seed)), schema: genSchema(), w: w}
}

// document returns a random query and its variables.
func (g *docGen) document() (string, map[string]any) {
	g.decls, g.vars, g.n = nil, map[string]any{}, 0
	body := g.selectionSet("Query", 0, map[string]bool{})
	head := "query"
	if len(g.decls) > 0 {
		head += "(" + strings.Join(g.decls, ", ") + ")"
	}
	return head + " " + body, g.vars
}

func (g *docGen) chance(p float64) bool { return g.rng.Float64() < p }

func pick[T any](g *docGen, xs ...T) T { return xs[g.rng.IntN(len(xs))] }

// selectionSet returns a selection set on an object of type typ, depth levels below the root's;
// keys holds the response keys already used in it (by the enclosing set, for a fragment's).
func (g *docGen) selectionSet(typ string, depth int, keys map[string]bool) string {
	n := 1 + g.rng.IntN(4)
	parts := make([]string, 0, n)
	for range n {
		parts = append(parts, g.selection(typ, depth, keys))
	}
	return "{ " + strings.Join(parts, " ") + " }"
}

// selection returns one selection on typ: a field, __typename or an inline fragment.
func (g *docGen) selection(typ string, depth int, keys map[string]bool) string {
	node := typ == "Post" || typ == "Comment" || typ == "User"
	switch r := g.rng.IntN(25); {
	case r == 0:
		if g.chance(0.5) {
			return g.alias() + "__typename"
		}
		return "__typename"
	case r == 1:
		return "... on " + typ + g.directive() + " " + g.selectionSet(typ, depth, keys)
	case r == 2:
		return "..." + g.directive() + " " + g.selectionSet(typ, depth, keys)
	case r == 3 && node:
		keys["id"] = true
		return "... on Node" + g.directive() + " { " + pick(g, "id", "__typename id", "id __typename") + " }"
	}
	fields := g.schema[typ]
	if depth >= maxGenDepth {
		var leaves []genField
		for _, f := range fields {
			if f.child == "" {
				leaves = append(leaves, f)
			}
		}
		fields = leaves
	}
	f := fields[g.rng.IntN(len(fields))]
	key := ""
	switch {
	case keys[f.name] && mergeable(f) && g.chance(0.5):
		// The same field again under its own name: the two selections merge.
	case keys[f.name] || g.chance(0.15):
		key = g.alias()
	}
	if key == "" {
		keys[f.name] = true
	}
	s := key + f.name + g.args(f) + g.directive()
	if f.child != "" {
		s += " " + g.selectionSet(f.child, depth+1, map[string]bool{})
	}
	return s
}

// alias returns a new alias, with its colon.
func (g *docGen) alias() string {
	g.n++
	return fmt.Sprintf("a%d: ", g.n)
}

// variable declares a new variable of type typ and returns its name. With provide false the
// request leaves it out.
func (g *docGen) variable(typ string, value any, provide bool) string {
	g.n++
	name := fmt.Sprintf("v%d", g.n)
	g.decls = append(g.decls, "$"+name+": "+typ)
	if provide {
		g.vars[name] = value
	}
	return "$" + name
}

// directive returns, now and then, an @include or @skip, with a literal or a variable.
func (g *docGen) directive() string {
	if !g.chance(0.06) {
		return ""
	}
	v := g.chance(0.7)
	cond := strconv.FormatBool(v)
	if g.chance(0.5) {
		cond = g.variable("Boolean!", v, true)
	}
	return " @" + pick(g, "include", "skip") + "(if: " + cond + ")"
}

// args returns the arguments of field f, in parentheses, or "".
func (g *docGen) args(f genField) string {
	shape := f.args
	var parts []string
	add := func(name, value string) { parts = append(parts, name+": "+value) }
	w := g.w
	switch shape {
	case noArgs:
		return ""
	case revealArg:
		switch {
		case g.chance(0.3):
			add("revealSpoiler", g.variable("Boolean", g.chance(0.5), g.chance(0.8)))
		case g.chance(0.5):
			add("revealSpoiler", pick(g, "true", "false", "null"))
		}
	case postIDArg:
		add("id", g.idArg(pick(g, w.postIDs...), pick(g, w.commentIDs...)))
	case commentIDArg:
		add("id", g.idArg(pick(g, w.commentIDs...), pick(g, w.postIDs...)))
	case nameArg:
		name := pick(g, "ann", "bob", "carol", "dave", "mia", "root", "ANN")
		if g.chance(0.1) {
			name = pick(g, "nobody", "", "not a name!")
		}
		if g.chance(0.3) {
			add("name", g.variable("String!", name, true))
		} else {
			add("name", quoteGraphQL(name))
		}
	case groupNameArg:
		name := pick(g, "go", "news", "late", "GO", "nonexistent", "not a group!")
		if g.chance(0.3) {
			add("name", g.variable("String!", name, true))
		} else {
			add("name", quoteGraphQL(name))
		}
	case postListArgs, commentListArgs, groupPostsArgs:
		if g.chance(0.3) {
			sorts := []string{"NEW", "OLD", "TOP", "BEST", "CONTROVERSIAL"}
			typ := "CommentSort"
			if shape != commentListArgs {
				sorts, typ = []string{"NEW", "HOT", "TOP"}, "PostSort"
			}
			s := pick(g, sorts...)
			if g.chance(0.3) {
				add("sort", g.variable(typ, s, g.chance(0.8)))
			} else {
				add("sort", s)
			}
		}
		if shape == postListArgs && g.chance(0.3) {
			add("group", quoteGraphQL(pick(g, "go", "news", "nonexistent", "GO")))
		}
		if g.chance(0.6) {
			add("first", g.intArg())
		}
		if g.chance(0.2) {
			add("after", g.cursorArg(f.name))
		}
		if g.chance(0.15) {
			add("last", g.intArg())
		}
		if g.chance(0.1) {
			add("before", g.cursorArg(f.name))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// idArg returns an id argument: mostly good, sometimes of the other type, missing or malformed.
func (g *docGen) idArg(good, other string) string {
	id := good
	switch r := g.rng.IntN(20); {
	case r == 0:
		id = other
	case r == 1:
		id = pick(g, "post:999999", "comment:1:999999", "garbage", "")
	}
	if g.chance(0.3) {
		return g.variable("ID!", id, true)
	}
	return quoteGraphQL(id)
}

// intArg returns a first or last: mostly small, sometimes out of range or null, as a literal or
// a variable (given, null or left out).
func (g *docGen) intArg() string {
	var v any = pick(g, 1, 2, 3, 5)
	if g.chance(0.15) {
		v = pick[any](g, 0, 101, -1, 20, 100, nil)
	}
	if g.chance(0.25) {
		return g.variable("Int", v, g.chance(0.85))
	}
	if v == nil {
		return "null"
	}
	return fmt.Sprint(v)
}

// cursorArg returns an after or before of the field named field: mostly a cursor of a list that
// field shows, sometimes one of another list, or garbage.
func (g *docGen) cursorArg(field string) string {
	lists := map[string][]string{"comments": {"comments", "top"}, "replies": {"replies"}, "posts": {"posts", "new"}}[field]
	c := pick(g, g.w.cursors[pick(g, lists...)]...)
	switch r := g.rng.IntN(10); {
	case r == 0:
		c = pick(g, "garbage", "")
	case r < 3:
		c = pick(g, g.w.cursors["all"]...)
	}
	if g.chance(0.25) {
		return g.variable("String", c, true)
	}
	return quoteGraphQL(c)
}

// quoteGraphQL returns s as a GraphQL string literal (JSON's escapes are GraphQL's).
func quoteGraphQL(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
