package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func TestFirstSession(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		alice, aliceID := a.signUp("Alice")
		bob, _ := a.signUp("bob")
		var created struct {
			CreatePost struct {
				ID, Title, Body string
				URL             *string
				Author          struct{ Name string }
				Groups          []struct {
					ID, Name  string
					PostCount int
				}
				ViewerVote     string
				VotingClosesAt time.Time
				CreatedAt      time.Time
			}
		}
		a.do(alice, `mutation { createPost(input: {title: "Hello", body: "First!", url: "https://example.com", groups: ["Go"]}) {
			id title body url author { name } groups { id name postCount } viewerVote votingClosesAt createdAt } }`, nil).decode(t, &created)
		p := created.CreatePost
		if p.Title != "Hello" || p.Author.Name != "Alice" || len(p.Groups) != 1 || p.Groups[0].Name != "go" ||
			p.Groups[0].PostCount != 1 || p.ViewerVote != "UP" || *p.URL != "https://example.com" {
			t.Fatalf("created %+v", p)
		}
		if d := p.VotingClosesAt.Sub(p.CreatedAt); d != 7*24*time.Hour {
			t.Fatalf("voting window %v", d)
		}
		var voted struct {
			VotePost struct {
				Upvotes, Downvotes int
				Score              int
				HotRank            float64
				ViewerVote         string
			}
		}
		a.do(bob, `mutation($id: ID!) { votePost(postId: $id, direction: UP) { upvotes downvotes score hotRank viewerVote } }`,
			map[string]any{"id": p.ID}).decode(t, &voted)
		if v := voted.VotePost; v.Upvotes != 1 || v.ViewerVote != "UP" || v.Score != 1 || v.HotRank != float64(p.CreatedAt.Unix()+432) {
			t.Fatalf("voted %+v", v)
		}
		var list struct {
			Posts struct {
				TotalCount int
				Edges      []struct {
					Cursor string
					Node   struct{ ID, Title string }
				}
				PageInfo struct {
					HasNextPage, HasPreviousPage bool
					StartCursor, EndCursor       *string
				}
			}
			Viewer *struct{ Name string }
			User   struct {
				ID    string
				Posts struct{ TotalCount int }
			}
			Group struct {
				ID        string
				PostCount int
			}
		}
		a.do(bob, `{ posts(sort: TOP, first: 10) { totalCount edges { cursor node { id title } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
			viewer { name } user(name: "ALICE") { id posts { totalCount } } group(name: "go") { id postCount } }`, nil).decode(t, &list)
		if list.Posts.TotalCount != 1 || list.Posts.Edges[0].Node.ID != p.ID || list.Posts.PageInfo.HasNextPage ||
			*list.Posts.PageInfo.EndCursor != list.Posts.Edges[0].Cursor {
			t.Fatalf("posts %+v", list.Posts)
		}
		if list.Viewer == nil || list.Viewer.Name != "bob" || list.User.ID != aliceID || list.User.Posts.TotalCount != 1 || list.Group.PostCount != 1 {
			t.Fatalf("viewer/user/group %+v", list)
		}
		// node(id) answers for every Node type, and null for ids that name nothing.
		var nodes struct {
			U, P, G       *struct{ ID, Typename string }
			Missing, Gone *struct{ ID string }
		}
		a.do("", `query($u: ID!, $p: ID!) { u: node(id: $u) { id ... on User { name } }
			p: node(id: $p) { id ... on Post { title } } g: node(id: "group:go") { id ... on Group { name } }
			missing: node(id: "post:999999") { id } gone: post(id: "post:999998") { id } }`,
			map[string]any{"u": aliceID, "p": p.ID}).decode(t, &nodes)
		if nodes.U == nil || nodes.U.ID != aliceID || nodes.P == nil || nodes.P.ID != p.ID || nodes.G == nil || nodes.Missing != nil || nodes.Gone != nil {
			t.Fatalf("nodes %+v", nodes)
		}
		var out struct{ LogOut bool }
		a.do(bob, `mutation { logOut }`, nil).decode(t, &out)
		if r := a.do(bob, `mutation($id: ID!) { votePost(postId: $id, direction: DOWN) { id } }`, map[string]any{"id": p.ID}); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("vote after log out: %+v", r)
		}
	})
}

func TestErrorCodes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		now := time.Now()
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		a := newAPI(t, b, store.Options{Now: clock, WriteLimit: 30})
		alice, _ := a.signUp("alice")
		bob, _ := a.signUp("bob")
		post := a.createPost(alice, "p")
		old := a.createPost(alice, "old")
		vote := `mutation($id: ID!, $d: VoteDirection!) { votePost(postId: $id, direction: $d) { id } }`
		for _, tc := range []struct {
			name, token, query string
			vars               map[string]any
			code               string
		}{
			{"first too large", "", `{ posts(first: 101) { totalCount } }`, nil, "BAD_USER_INPUT"},
			{"first zero", "", `{ posts(first: 0) { totalCount } }`, nil, "BAD_USER_INPUT"},
			{"malformed cursor", "", `{ posts(after: "zzz") { totalCount } }`, nil, "BAD_USER_INPUT"},
			{"malformed id", bob, vote, map[string]any{"id": "42", "d": "UP"}, "BAD_USER_INPUT"},
			{"empty title", alice, `mutation { createPost(input: {title: ""}) { id } }`, nil, "BAD_USER_INPUT"},
			{"bad group", alice, `mutation { createPost(input: {title: "t", groups: ["a b"]}) { id } }`, nil, "BAD_USER_INPUT"},
			{"bad name", "", `mutation { signUp(name: "a", password: "password1") { token } }`, nil, "BAD_USER_INPUT"},
			{"short password", "", `mutation { signUp(name: "carol", password: "short") { token } }`, nil, "BAD_USER_INPUT"},
			{"bad enum variable", bob, vote, map[string]any{"id": post, "d": "SIDEWAYS"}, ""},
			{"anonymous write", "", `mutation { createPost(input: {title: "t"}) { id } }`, nil, "UNAUTHENTICATED"},
			{"bad token write", "not-a-token", `mutation { createPost(input: {title: "t"}) { id } }`, nil, "UNAUTHENTICATED"},
			{"wrong password", "", `mutation { logIn(name: "alice", password: "wrong-password") { token } }`, nil, "UNAUTHENTICATED"},
			{"own post", alice, vote, map[string]any{"id": post, "d": "UP"}, "FORBIDDEN"},
			{"someone else's post", bob, `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": post}, "FORBIDDEN"},
			{"missing post", bob, vote, map[string]any{"id": "post:987654", "d": "UP"}, "NOT_FOUND"},
			{"name taken", "", `mutation { signUp(name: "ALICE", password: "not alice's password") { token } }`, nil, "CONFLICT"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := a.do(tc.token, tc.query, tc.vars)
				if len(r.Errors) == 0 {
					t.Fatalf("no error; data %s", r.Data)
				}
				if tc.code != "" && r.code() != tc.code {
					t.Fatalf("code %q (%s), want %s", r.code(), r.Errors[0].Message, tc.code)
				}
				if r.code() == "" {
					t.Fatalf("an error without a code: %+v", r.Errors)
				}
			})
		}
		mu.Lock()
		now = now.Add(8 * 24 * time.Hour)
		mu.Unlock()
		if r := a.do(bob, vote, map[string]any{"id": old, "d": "UP"}); r.code() != "VOTING_CLOSED" {
			t.Fatalf("old vote: %+v", r.Errors)
		}
		// Writes beyond the limit are refused with the seconds to wait.
		var r response
		for i := 0; i < 40; i++ {
			if r = a.do(bob, `mutation { createPost(input: {title: "spam"}) { id } }`, nil); len(r.Errors) > 0 {
				break
			}
		}
		if r.code() != "RATE_LIMITED" || r.Errors[0].Extensions["retryAfter"] == nil {
			t.Fatalf("after 40 writes: %+v", r.Errors)
		}
	})
}

// TestInternalErrorsAreNotLeaked_miniredis closes the embedded Redis under the server: once the
// Redis timeout has passed the client sees UNAVAILABLE with a generic message, never an address or
// a Redis message.
func TestInternalErrorsAreNotLeaked_miniredis(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		if b.Mini == nil {
			continue
		}
		a := newAPI(t, b, store.Options{RedisTimeout: 200 * time.Millisecond})
		a.signUp("alice")
		b.Mini.Close()
		r := a.do("", `{ posts { totalCount } }`, nil)
		if r.code() != "UNAVAILABLE" || r.Errors[0].Message != "Redis did not answer in time; retry" {
			t.Fatalf("errors %+v", r.Errors)
		}
		if strings.Contains(string(r.Data)+fmt.Sprint(r.Errors), "127.0.0.1") {
			t.Fatalf("address leaked: %+v", r.Errors)
		}
	}
}

func TestMutationsNeverOverGET(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		q := url.Values{"query": {`mutation { signUp(name: "mallory", password: "password1") { token } }`}}
		res, err := http.Get(a.srv.URL + "/query?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		var refused response
		_ = json.NewDecoder(res.Body).Decode(&refused)
		res.Body.Close()
		if res.StatusCode < 400 || refused.code() != "METHOD_NOT_ALLOWED" {
			t.Fatalf("GET mutation: status %d, %+v", res.StatusCode, refused.Errors)
		}
		if r := a.do("", `{ user(name: "mallory") { id } }`, nil); string(r.Data) != `{"user":null}` {
			t.Fatalf("the GET mutation ran: %s", r.Data)
		}
		// What no transport serves is refused with a code too.
		for _, tc := range []struct{ method, ctype, code string }{
			{http.MethodPut, "application/json", "METHOD_NOT_ALLOWED"},
			{http.MethodPost, "text/plain", "BAD_USER_INPUT"},
		} {
			req, _ := http.NewRequest(tc.method, a.srv.URL+"/query", strings.NewReader(`{"query":"{ viewer { id } }"}`))
			req.Header.Set("Content-Type", tc.ctype)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var r response
			_ = json.NewDecoder(res.Body).Decode(&r)
			res.Body.Close()
			if res.StatusCode < 400 || r.code() != tc.code {
				t.Errorf("%s %s: status %d, %+v", tc.method, tc.ctype, res.StatusCode, r.Errors)
			}
		}
		// Queries over GET work.
		q = url.Values{"query": {`{ posts { totalCount } }`}}
		res, err = http.Get(a.srv.URL + "/query?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("GET query status %d", res.StatusCode)
		}
	})
}

func TestHostileQueriesAreRefused(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		aliases := new(strings.Builder)
		aliases.WriteString("{")
		for i := 0; i < 5000; i++ {
			fmt.Fprintf(aliases, " a%d: posts { totalCount }", i)
		}
		aliases.WriteString("}")
		fewAliases := new(strings.Builder)
		fewAliases.WriteString("{")
		for i := 0; i < 150; i++ {
			fmt.Fprintf(fewAliases, " a%d: viewer { id }", i)
		}
		fewAliases.WriteString("}")
		deep := "{ posts { edges { node { author { name } } } } }"
		for i := 0; i < 10; i++ {
			deep = strings.Replace(deep, "author { name }", "author { posts { edges { node { author { name } } } } }", 1)
		}
		complexQ := "{ posts(first: 100) { edges { node { author { posts(first: 100) { edges { node { author { posts(first: 100) { edges { node { id } } } } } } } } } } } }"
		frag := "query { ...A } fragment A on Query { posts(first: 100) { edges { node { author { ...B } } } } } fragment B on User { posts(first: 100) { edges { node { author { ...C } } } } } fragment C on User { posts(first: 100) { totalCount } }"
		for _, tc := range []struct {
			name, query, code string
		}{
			{"a megabyte of braces", strings.Repeat("{", 1<<20), "QUERY_TOO_LARGE"},
			{"five thousand aliases", aliases.String(), "QUERY_TOO_LARGE"},
			{"150 aliases", fewAliases.String(), "TOO_MANY_ALIASES"},
			{"too deep", deep, "QUERY_TOO_DEEP"},
			{"too complex", complexQ, "QUERY_TOO_COMPLEX"},
			{"too complex through fragments", frag, "QUERY_TOO_COMPLEX"},
			{"too complex through variable defaults", strings.ReplaceAll(strings.Replace(complexQ, "{", "query($n: Int = 100) {", 1), "first: 100", "first: $n"), "QUERY_TOO_COMPLEX"},
			// Validation compares every two selections of one name: 9,990 of them cost seconds.
			{"one field 9,990 times", "{" + strings.Repeat(" __typename", 9990) + "} # " + fmt.Sprint(time.Now().UnixNano()), "TOO_MANY_REPEATS"},
			{"repeats through fragments", "{ posts { ...F ...G } } fragment F on PostConnection {" + strings.Repeat(" totalCount", 15) +
				" } fragment G on PostConnection { ... on PostConnection {" + strings.Repeat(" totalCount", 15) + " } }", "TOO_MANY_REPEATS"},
			{"repeats merged below repeated fields", "{" + strings.Repeat(" posts { edges { node { id id } } }", 11) + " }", "TOO_MANY_REPEATS"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for try := range 2 { // the second from the checks kept for the document
					r := a.doRaw(tc.query)
					if r.code() != tc.code {
						t.Fatalf("try %d: code %q (%+v), want %s", try+1, r.code(), r.Errors, tc.code)
					}
				}
			})
		}
		// Repeats up to the limit are still answered: 10 × posts { … id id } merge to 20 ids.
		if r := a.doRaw("{" + strings.Repeat(" posts { edges { node { id id } } }", 10) + " }"); len(r.Errors) > 0 {
			t.Fatalf("20 merged repeats: %+v", r.Errors)
		}
		// A null variable cannot make a query look cheap either.
		nullQ := strings.ReplaceAll(strings.Replace(complexQ, "{", "query($n: Int) {", 1), "first: 100", "first: $n")
		if r := a.do("", nullQ, map[string]any{"n": nil}); r.code() != "QUERY_TOO_COMPLEX" {
			t.Fatalf("null page size: %+v", r.Errors)
		}
		// The measure kept with a document is the variables' own: a small page size does not let
		// a large one through, and each response tells its own cost, as a document measured for
		// the first time (the same text with a comment) does.
		for _, n := range []int{1, 100, 2, 3, 100, 4} {
			vars := map[string]any{"n": n}
			r, fresh := a.do("", nullQ, vars), a.do("", nullQ+fmt.Sprintf(" # %d", n), vars)
			if r.code() != fresh.code() || r.Extensions.Cost != fresh.Extensions.Cost {
				t.Fatalf("page size %d: %s, cost %d; measured afresh: %s, cost %d", n, r.code(), r.Extensions.Cost.Requested, fresh.code(), fresh.Extensions.Cost.Requested)
			}
			if want := n == 100; (r.code() == "QUERY_TOO_COMPLEX") != want || !want && r.Extensions.Cost.Requested == 0 {
				t.Fatalf("page size %d: %+v, cost %d", n, r.Errors, r.Extensions.Cost.Requested)
			}
		}
		// A 20 MB body is refused before it is read in full.
		res, err := http.Post(a.srv.URL+"/query", "application/json", bytes.NewReader(make([]byte, 20<<20)))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("20 MB body: status %d", res.StatusCode)
		}
		// The server is still up and answers.
		if r := a.do("", `{ posts { totalCount } }`, nil); len(r.Errors) > 0 {
			t.Fatalf("after the attacks: %+v", r.Errors)
		}
	})
}

// TestRoundTripsDoNotGrowWithPageSize lists posts with their authors, groups and the viewer's vote
// and counts Redis round trips: the count must be the same for 5 posts as for 50.
func TestRoundTripsDoNotGrowWithPageSize(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		counted, rt := b.Counted(t)
		a := newAPI(t, counted, store.Options{})
		viewer, _ := a.signUp("viewer")
		for i := 0; i < 50; i++ {
			tok, _ := a.signUp(fmt.Sprintf("author%02d", i))
			a.createPost(tok, fmt.Sprint("post ", i), "g", fmt.Sprintf("g%d", i%3))
		}
		var end struct {
			Posts struct{ PageInfo struct{ EndCursor string } }
		}
		a.do(viewer, `{ posts(first: 100) { pageInfo { endCursor } } }`, nil).decode(t, &end)
		// Forwards and backwards, from the ends of the list and from a cursor.
		for _, tc := range []struct {
			args   string
			cursor any
		}{
			{"first: $n, after: $c", nil},
			{"last: $n, before: $c", nil},
			{"last: $n, before: $c", end.Posts.PageInfo.EndCursor},
		} {
			args := tc.args
			if tc.cursor != nil {
				args += " from a cursor"
			}
			query := `query($n: Int!, $c: String) { posts(` + tc.args + `) { totalCount edges { node { id title viewerVote author { name } groups { name postCount } } } } }`
			trips := map[int]int64{}
			for _, n := range []int{5, 50} {
				vars := map[string]any{"n": n, "c": tc.cursor}
				a.do(viewer, query, vars) // warm the connection pool
				rt.Reset()
				r := a.do(viewer, query, vars)
				trips[n] = rt.Count()
				if len(r.Errors) > 0 {
					t.Fatal(r.Errors)
				}
			}
			t.Logf("posts(%s): round trips: %v", args, trips)
			if trips[50] > trips[5] {
				t.Fatalf("posts(%s): round trips grew with the page size: %v", args, trips)
			}
		}
	})
}

// doRaw POSTs a query string without variables.
func (a *api) doRaw(query string) response { return a.do("", query, nil) }

// TestBadCredentialsAreRefused checks that a request presenting a token that is invalid or
// expired, or an Authorization header that is not a bearer token, is told so (401,
// UNAUTHENTICATED) — on reads too — instead of being answered anonymously.
func TestBadCredentialsAreRefused(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		token, _ := a.signUp("credentialed")
		a.do(token, `mutation{logOut}`, nil).decode(t, &struct{}{})
		for _, tc := range []struct{ name, header string }{
			{"unknown token", "Bearer not-a-token"},
			{"ended session", "Bearer " + token},
			{"not a bearer token", "Basic YWxhZGRpbjpvcGVuc2VzYW1l"},
			{"bearer without a token", "Bearer"},
		} {
			req, _ := http.NewRequest(http.MethodPost, a.srv.URL+"/query", strings.NewReader(`{"query":"{ posts { totalCount } }"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", tc.header)
			res, err := a.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var r response
			_ = json.NewDecoder(res.Body).Decode(&r)
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized || r.code() != httpapi.CodeUnauthenticated || res.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: status %d, %+v, WWW-Authenticate %q; want 401 UNAUTHENTICATED", tc.name, res.StatusCode, r.Errors, res.Header.Get("WWW-Authenticate"))
			}
		}
		// Without a header the same read is answered anonymously.
		if r := a.do("", `{ posts { totalCount } }`, nil); len(r.Errors) > 0 {
			t.Fatalf("anonymous read: %+v", r.Errors)
		}
	})
}

// TestInvalidTextIsRefused checks that text that is not valid UTF-8 — raw bytes, or a lone
// surrogate escape that the JSON decoder would turn into U+FFFD — is refused instead of being
// stored altered, and that control characters are refused in titles.
func TestInvalidTextIsRefused(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		token, _ := a.signUp("writer")
		post := func(body []byte) (int, response) {
			req, _ := http.NewRequest(http.MethodPost, a.srv.URL+"/query", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := a.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var r response
			_ = json.NewDecoder(res.Body).Decode(&r)
			return res.StatusCode, r
		}
		create := `{"query":"mutation($t:String!){createPost(input:{title:$t}){title}}","variables":{"t":"%s"}}`
		for _, tc := range []struct {
			name string
			body []byte
		}{
			{"raw invalid bytes", append([]byte(fmt.Sprintf(create, "bad ")), 0xff, 0xfe, '"', '}', '}')},
			{"a lone high surrogate", []byte(fmt.Sprintf(create, `a \ud800 b`))},
			{"a lone low surrogate", []byte(fmt.Sprintf(create, `a \udc00 b`))},
		} {
			if status, r := post(tc.body); status != http.StatusBadRequest || r.code() != "BAD_USER_INPUT" {
				t.Errorf("%s: status %d %+v, want 400 BAD_USER_INPUT", tc.name, status, r.Errors)
			}
		}
		if _, r := post([]byte(fmt.Sprintf(create, `bell \u0007`))); r.code() != "BAD_USER_INPUT" {
			t.Errorf("a control character in a title: %+v, want BAD_USER_INPUT", r.Errors)
		}
		var d struct{ CreatePost struct{ Title string } }
		_, r := post([]byte(fmt.Sprintf(create, `smile \ud83d\ude00 \\ud800 and\ttab`)))
		r.decode(t, &d)
		if d.CreatePost.Title != "smile 😀 \\ud800 and\ttab" {
			t.Errorf("a valid pair, an escaped backslash and a tab: title %q", d.CreatePost.Title)
		}
	})
}

// TestSlowBodiesAreCut sends a request body one byte at a time and checks that the server stops
// waiting after its body timeout and answers 408.
func TestSlowBodiesAreCut(t *testing.T) {
	b := storetest.Backends(t)[0]
	st := b.NewStore(t, store.Options{})
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: newHub(t, st), Limits: httpapi.Limits{BodyTimeout: 300 * time.Millisecond}}))
	t.Cleanup(srv.Close)
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, _ = c.Write([]byte("POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n{"))
	done := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(c).ReadString('\n')
		done <- line
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case line := <-done:
			if !strings.Contains(line, "408") {
				t.Fatalf("status line %q, want 408", line)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %s", d)
			}
			return
		case <-tick.C:
			_, _ = c.Write([]byte(" "))
		case <-time.After(10 * time.Second):
			t.Fatal("the slow body was not cut")
		}
	}
}

// TestSlowBodiesFreeTheirConnections holds more connections than the server accepts, each having
// sent 1 byte of a 1,000-byte body, and checks that the server closes each within a second of its
// 408 — it used to drain the rest of the body with no deadline, so the socket stayed open for as
// long as the client kept it — and that another client is then served while the slow clients
// still hold their sockets.
func TestSlowBodiesFreeTheirConnections(t *testing.T) {
	b := storetest.Backends(t)[0]
	st := b.NewStore(t, store.Options{})
	const slots, slow = 4, 6
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: httpapi.New(httpapi.Config{Store: st, Hub: newHub(t, st), Limits: httpapi.Limits{BodyTimeout: 200 * time.Millisecond}})}
	go func() { _ = srv.Serve(httpapi.LimitConnections(ln, slots)) }()
	t.Cleanup(func() { _ = srv.Close() })

	var wg sync.WaitGroup
	errs := make(chan error, slow)
	for i := range slow {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() }) // held open until the test ends
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			_, _ = c.Write([]byte("POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"))
			br := bufio.NewReader(c)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				errs <- fmt.Errorf("slow client %d: %w", i, err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			switch res.StatusCode {
			case http.StatusServiceUnavailable: // over the limit: answered and closed at once
				return
			case http.StatusRequestTimeout:
			default:
				errs <- fmt.Errorf("slow client %d: status %d, want 408 or 503", i, res.StatusCode)
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			if n, err := br.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
				errs <- fmt.Errorf("slow client %d: after its 408 the connection is open (read %d, %v)", i, n, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The slow clients still hold their sockets; the server has let go of them.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	deadline := time.Now().Add(5 * time.Second)
	for {
		// Over the limit, the 503 is written before the request is read, which the client may
		// report as an error: either way it was not served.
		res, err := client.Get("http://" + ln.Addr().String() + "/healthz")
		status := 0
		if err == nil {
			res.Body.Close()
			status = res.StatusCode
		}
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("another client: status %d (%v) while slow clients hold their sockets", status, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCORS checks that a web app on an allowed origin can call the API over HTTP, and one on
// another origin cannot.
func TestCORS(t *testing.T) {
	b := storetest.Backends(t)[0]
	st := b.NewStore(t, store.Options{})
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: newHub(t, st),
		Live: httpapi.Live{AllowedOrigins: []string{"https://app.example.org"}}}))
	t.Cleanup(srv.Close)
	do := func(method, origin string, body string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+"/query", strings.NewReader(body))
		req.Header.Set("Origin", origin)
		if method == http.MethodOptions {
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	res := do(http.MethodOptions, "https://app.example.org", "")
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.org" ||
		!strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Authorization") || res.Header.Get("Access-Control-Max-Age") == "" ||
		res.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("preflight from an allowed origin: %d %v", res.StatusCode, res.Header)
	}
	res = do(http.MethodPost, "https://app.example.org", `{"query":"{ posts { totalCount } }"}`)
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.org" {
		t.Errorf("a POST from an allowed origin: %d %v", res.StatusCode, res.Header)
	}
	res = do(http.MethodOptions, "https://evil.example.com", "")
	if res.StatusCode != http.StatusForbidden || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from another origin: %d %v", res.StatusCode, res.Header)
	}
	res = do(http.MethodPost, "https://evil.example.com", `{"query":"{ posts { totalCount } }"}`)
	if res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a POST from another origin carries %v", res.Header)
	}
}

// pipelineLog records the commands of every pipeline sent.
type pipelineLog struct {
	mu    sync.Mutex
	pipes [][]string
}

// hook is the client hook that records.
func (h *pipelineLog) hook() *storetest.Hook {
	return &storetest.Hook{Pipeline: func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
		var p []string
		for _, c := range cmds {
			args := make([]string, len(c.Args()))
			for i, a := range c.Args() {
				args[i] = storetest.ArgString(a)
			}
			p = append(p, strings.Join(args, " "))
		}
		h.mu.Lock()
		h.pipes = append(h.pipes, p)
		h.mu.Unlock()
		return next(ctx, cmds)
	}}
}

// TestVotesAreReadWithCounts checks that the viewer's vote on a post or comment is read in the
// same pipeline as the item's counts, right after them, so that a response never shows
// upvotes 1, downvotes 0 with viewerVote DOWN while the viewer flips a vote.
func TestVotesAreReadWithCounts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		hook := &pipelineLog{}
		logged := b.Hooked(t, hook.hook())
		a := newAPI(t, logged, store.Options{})
		author, _ := a.signUp("writer")
		viewer, _ := a.signUp("reader")
		post := a.createPost(author, "counted")
		a.do(author, `mutation($p:ID!){createComment(postId:$p,body:"one"){id}}`, map[string]any{"p": post}).decode(t, &struct{}{})
		hook.mu.Lock()
		hook.pipes = nil
		hook.mu.Unlock()
		a.do(viewer, `query($p:ID!){post(id:$p){upvotes downvotes viewerVote comments{edges{node{upvotes downvotes viewerVote}}}}}`,
			map[string]any{"p": post}).decode(t, &struct{}{})
		hook.mu.Lock()
		defer hook.mu.Unlock()
		found := 0
		for _, p := range hook.pipes {
			for i, c := range p {
				if !strings.HasPrefix(c, "hmget ") || strings.Contains(c, "{u:") || strings.Contains(c, "}:c:body ") {
					continue // a user's, or texts (a post's, comments' bodies): no counts
				}
				key := strings.Fields(c)[1]
				vote := "hget " + key + ":votes reader"            // a post's
				if head, num, ok := strings.Cut(key, "}:c:"); ok { // a comment's: its thread's bucket
					n, _ := strconv.Atoi(num)
					vote = fmt.Sprintf("hget %s}:c:v%d %d:reader", head, n/8, n)
				}
				if i+1 >= len(p) || p[i+1] != vote {
					t.Errorf("the counts of %s are not followed by the viewer's vote: %v", key, p)
				}
				found++
			}
		}
		if found < 2 {
			t.Fatalf("saw %d item reads, want the post and its comment: %v", found, hook.pipes)
		}
	})
}

// TestCORSPreflightAllowsTheHeadersTheAPIReads: a browser app on an allowed origin sends each
// header /query reads only if the preflight's Access-Control-Allow-Headers names it. It named
// Authorization, Content-Type and Accept only, so an event stream resumed with Last-Event-ID (the
// documented way) or a request carrying a trace's traceparent was blocked by the browser.
func TestCORSPreflightAllowsTheHeadersTheAPIReads(t *testing.T) {
	st := storetest.Backends(t)[0].NewStore(t, store.Options{})
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: newHub(t, st),
		Live: httpapi.Live{AllowedOrigins: []string{"https://app.example.org"}}}))
	t.Cleanup(srv.Close)
	for _, h := range []string{"authorization", "content-type", "accept", "last-event-id", "traceparent", "tracestate", "baggage"} {
		req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/query", nil)
		req.Header.Set("Origin", "https://app.example.org")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,"+h)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		allowed := false
		for _, a := range strings.Split(res.Header.Get("Access-Control-Allow-Headers"), ",") {
			allowed = allowed || strings.EqualFold(strings.TrimSpace(a), h)
		}
		if res.StatusCode != http.StatusNoContent || !allowed {
			t.Errorf("preflight for %s: %d, Access-Control-Allow-Headers %q", h, res.StatusCode, res.Header.Get("Access-Control-Allow-Headers"))
		}
	}
}
