package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// raw POSTs a query to h and returns the response body as it was sent.
func raw(t testing.TB, h http.Handler, token, query string, vars map[string]any) []byte {
	t.Helper()
	b, _ := rawCached(t, h, token, query, vars)
	return b
}

// rawCached is raw, also returning how the response cache answered.
func rawCached(t testing.TB, h http.Handler, token, query string, vars map[string]any) ([]byte, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return b, rec.Header().Get(httpapi.CacheHeader)
}

// mustData fails unless body is a response without errors, and decodes its data into v.
func mustData(t testing.TB, body []byte, v any) {
	t.Helper()
	var r struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal(body, &r); err != nil || len(r.Errors) > 0 {
		t.Fatalf("response %s: %v", body, err)
	}
	if v != nil {
		if err := json.Unmarshal(r.Data, v); err != nil {
			t.Fatal(err)
		}
	}
}

// cacheWorld is two server replicas with the response cache on, sharing one Redis through two
// clients, and a third handler with the cache off that says what a fresh answer is.
type cacheWorld struct {
	t         *testing.T
	a, b, off http.Handler
	prefix    string
	tokens    []string
	ids       []string
	posts     []string
	comments  []string
	mine      map[string]int // comment id → index of its author
}

func newCacheWorld(t *testing.T, be storetest.Backend) *cacheWorld {
	prefix := storetest.Prefix()
	opts := store.Options{Prefix: prefix, WriteLimit: -1}
	sa := be.NewStore(t, opts)
	other := be
	other.Client = be.NewClient(t)
	sb := other.NewStore(t, opts)
	ha, hb := newHub(t, sa), newHub(t, sb)
	w := &cacheWorld{t: t, a: httpapi.New(httpapi.Config{Store: sa, Hub: ha}), b: httpapi.New(httpapi.Config{Store: sb, Hub: hb}),
		off: httpapi.New(httpapi.Config{Store: sa, Hub: ha, ResponseCacheMiB: -1}), prefix: prefix, mine: map[string]int{}}
	for i := range 4 {
		var d struct {
			SignUp struct {
				Token string
				User  struct{ ID string }
			}
		}
		mustData(t, raw(t, w.a, "", `mutation($n:String!){signUp(name:$n,password:"password1"){token user{id}}}`,
			map[string]any{"n": fmt.Sprintf("cacher%d", i)}), &d)
		w.tokens, w.ids = append(w.tokens, d.SignUp.Token), append(w.ids, d.SignUp.User.ID)
	}
	for i := range 3 {
		w.createPost(i % 4)
	}
	return w
}

func (w *cacheWorld) createPost(u int) {
	var d struct{ CreatePost struct{ ID string } }
	mustData(w.t, raw(w.t, w.a, w.tokens[u], `mutation($t:String!){createPost(input:{title:$t,groups:["cache"]}){id}}`,
		map[string]any{"t": fmt.Sprint("post ", len(w.posts))}), &d)
	w.posts = append(w.posts, d.CreatePost.ID)
}

// cacheReads are the queries the test reads, with and without viewer fields.
var cacheReads = []string{
	`query($p:ID!){post(id:$p){id title score upvotes commentCount author{name karma} comments(sort:TOP,first:5){totalCount edges{cursor node{id body upvotes replyCount author{name} replies(first:3){edges{node{id body author{name}}}}}}}}}`,
	`query($p:ID!){post(id:$p){id viewerVote comments(first:5){edges{node{id viewerVote replies(first:3){edges{node{id viewerVote}}}}}}}}`,
	`{posts(sort:HOT,first:10){totalCount edges{cursor node{id title score commentCount author{name}}}}}`,
	`{posts(sort:NEW,group:"cache",first:10){edges{node{id viewerVote groups{name postCount}}}}}`,
	`{leaderboard(first:5){edges{rank karma node{name followerCount}}}}`,
	`{viewer{name karma followingCount following(first:5){edges{node{name viewerFollows followsViewer}}}}}`,
	`{suggestUsers(prefix:"cach"){name followerCount posts(first:2){totalCount edges{node{id title}}}}}`,
	`{feed(first:5){edges{node{id title}}}}`,
	`{searchPosts(query:"post",first:5){totalCount edges{cursor node{id title upvotes}}}}`,
	`{searchPosts(query:"pos",sort:TOP,first:5){edges{node{id upvotes viewerVote}}}}`,
	`{searchPosts(query:"post",since:"2020-01-01T00:00:00Z",sort:NEW,first:5){totalCount edges{node{id title commentCount}}}}`,
	`{searchComments(query:"c1",first:5){totalCount edges{node{id body upvotes}}}}`,
	`query($p:ID!){searchComments(query:"c1",postId:$p,sort:TOP,first:5){totalCount edges{node{id upvotes viewerVote}}}}`,
	// Read state, left as holes in a shared entry and filled per reader (store/readsplice.go).
	`query($p:ID!){post(id:$p){id commentCount unreadCommentCount viewerHasRead comments(first:5){edges{node{id body}}}}}`,
	`{posts(sort:NEW,first:10,hideRead:true){edges{node{id unreadCommentCount viewerHasRead}}}}`,
}

// TestResponseCacheNeverStale interleaves writes through two replicas with cached reads through
// both, and checks that every answer equals a fresh, uncached one.
func TestResponseCacheNeverStale(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		w := newCacheWorld(t, be)
		r := rand.New(rand.NewPCG(1, 2))
		dirs := []string{"UP", "DOWN", "NONE"}
		hits, readState := 0, 0
		for step := range 300 {
			h := w.a
			if r.IntN(2) == 1 {
				h = w.b
			}
			u := r.IntN(4)
			if r.IntN(3) == 0 { // a write, through either replica
				switch r.IntN(7) {
				case 0:
					raw(t, h, w.tokens[u], `mutation($p:ID!,$d:VoteDirection!){votePost(postId:$p,direction:$d){id}}`,
						map[string]any{"p": w.posts[r.IntN(len(w.posts))], "d": dirs[r.IntN(3)]})
				case 1:
					var parent any
					if len(w.comments) > 0 && r.IntN(2) == 0 {
						parent = w.comments[r.IntN(len(w.comments))]
					}
					var d struct{ CreateComment struct{ ID string } }
					body := raw(t, h, w.tokens[u], `mutation($p:ID!,$r:ID,$b:String!){createComment(postId:$p,parentId:$r,body:$b){id}}`,
						map[string]any{"p": w.posts[r.IntN(len(w.posts))], "r": parent, "b": fmt.Sprint("c", step)})
					if json.Unmarshal(body, &struct{ Data any }{&d}) == nil && d.CreateComment.ID != "" {
						w.comments = append(w.comments, d.CreateComment.ID)
						w.mine[d.CreateComment.ID] = u
					}
				case 2:
					if len(w.comments) > 0 {
						raw(t, h, w.tokens[u], `mutation($c:ID!,$d:VoteDirection!){voteComment(commentId:$c,direction:$d){id}}`,
							map[string]any{"c": w.comments[r.IntN(len(w.comments))], "d": dirs[r.IntN(3)]})
					}
				case 3:
					if len(w.comments) > 0 {
						c := w.comments[r.IntN(len(w.comments))]
						raw(t, h, w.tokens[w.mine[c]], `mutation($c:ID!){deleteComment(id:$c)}`, map[string]any{"c": c})
					}
				case 4:
					m := "follow"
					if r.IntN(2) == 0 {
						m = "unfollow"
					}
					raw(t, h, w.tokens[u], `mutation($u:ID!){`+m+`(userId:$u){id}}`, map[string]any{"u": w.ids[(u+1+r.IntN(3))%4]})
				case 5:
					w.createPost(u)
				case 6: // read state, of every thread: it changes no revision a shared entry records
					for _, p := range w.posts {
						raw(t, h, w.tokens[u], `mutation($p:ID!){markPostRead(id:$p){id}}`, map[string]any{"p": p})
					}
				}
				continue
			}
			q := cacheReads[r.IntN(len(cacheReads))]
			vars := map[string]any{"p": w.posts[r.IntN(len(w.posts))]}
			token := ""
			if r.IntN(3) > 0 {
				token = w.tokens[u]
			}
			first, how1 := rawCached(t, h, token, q, vars)
			again, how2 := rawCached(t, h, token, q, vars) // a hit: nothing changed in between
			fresh := raw(t, w.off, token, q, vars)
			if bytes.Contains(fresh, []byte(`"viewerHasRead":true`)) {
				readState++
			}
			if !bytes.Equal(first, fresh) || !bytes.Equal(again, fresh) {
				t.Fatalf("step %d: a cached answer differs from a fresh one\nquery %s\ncached %s\nagain  %s\nfresh  %s", step, q, first, again, fresh)
			}
			if how2 != "hit" && !bytes.Contains(again, []byte(`"errors"`)) {
				t.Fatalf("step %d: a repeated read was a %s, want a hit: %s", step, how2, q)
			}
			if how1 == "hit" {
				hits++ // cached by an earlier step, and still current
			}
		}
		if hits == 0 {
			t.Error("no read was answered from an entry kept by an earlier step")
		}
		if readState == 0 {
			t.Error("no read showed a thread its reader had marked read")
		}
		t.Logf("%d reads were answered from entries kept by earlier steps; %d showed read marks", hits, readState)
	})
}

// TestResponseCachePerViewer checks that a response that reads the viewer is never served to
// another viewer, and that one that does not is shared.
func TestResponseCachePerViewer(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		w := newCacheWorld(t, be)
		p := w.posts[0]
		raw(t, w.a, w.tokens[1], `mutation($p:ID!){votePost(postId:$p,direction:UP){id}}`, map[string]any{"p": p})
		raw(t, w.a, w.tokens[2], `mutation($p:ID!){votePost(postId:$p,direction:DOWN){id}}`, map[string]any{"p": p})
		q := `query($p:ID!){post(id:$p){id viewerVote}}`
		want := map[string]string{"": "NONE", w.tokens[0]: "UP" /* the author */, w.tokens[1]: "UP", w.tokens[2]: "DOWN", w.tokens[3]: "NONE"}
		for round := range 3 {
			for _, tok := range []string{w.tokens[1], "", w.tokens[2], w.tokens[3], w.tokens[0]} {
				var d struct{ Post struct{ ViewerVote string } }
				mustData(t, raw(t, w.b, tok, q, map[string]any{"p": p}), &d)
				if d.Post.ViewerVote != want[tok] {
					t.Fatalf("round %d: viewerVote %s, want %s", round, d.Post.ViewerVote, want[tok])
				}
			}
		}
		// A response without viewer fields is one entry for everyone: after the first reader,
		// the others hit it (one round trip each, the revision check).
		shared := `query($p:ID!){post(id:$p){id title upvotes downvotes}}`
		counted, hook := be.Counted(t)
		st := counted.NewStore(t, store.Options{Prefix: w.prefix})
		h := httpapi.New(httpapi.Config{Store: st, Hub: newHub(t, st)})
		first := raw(t, h, "", shared, map[string]any{"p": p})
		hook.Reset()
		for _, tok := range []string{"", w.tokens[1], w.tokens[2]} {
			if got := raw(t, h, tok, shared, map[string]any{"p": p}); !bytes.Equal(got, first) {
				t.Fatalf("shared answer differs: %s vs %s", got, first)
			}
		}
		// Each signed-in request also authenticates its token (one round trip).
		if n := hook.Count(); n > 5 {
			t.Errorf("%d round trips for three hits, want at most 5 (3 revision checks, 2 sessions)", n)
		}
	})
}

// TestResponseCacheSingleFlight sends the same query at once from many clients on a cold cache:
// the page is computed once, and the others are answered from it after checking its revisions.
func TestResponseCacheSingleFlight(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		counted, hook := be.Counted(t)
		s := newThreadServer(t, counted, 20, 3, 2)
		q := `query($id:ID!){post(id:$id){id comments(first:20){edges{node{id body author{name} replies(first:3){edges{node{id replies(first:2){edges{node{id author{name}}}}}}}}}}}}`
		// One request alone, for the cost of a miss.
		cold := httpapi.New(httpapi.Config{Store: s.store, Hub: newHub(t, s.store), ResponseCacheMiB: -1})
		hook.Reset()
		want := raw(t, cold, "", q, map[string]any{"id": s.post})
		miss := hook.Count()
		hook.Reset()
		const n = 16
		var wg sync.WaitGroup
		var mu sync.Mutex
		answers := map[string]int{}
		for range n {
			wg.Go(func() {
				body, _ := json.Marshal(map[string]any{"query": q, "variables": map[string]any{"id": s.post}})
				req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				s.h.ServeHTTP(rec, req)
				if !bytes.Equal(rec.Body.Bytes(), want) {
					t.Errorf("answer differs: %s", rec.Body.Bytes())
				}
				mu.Lock()
				answers[rec.Header().Get(httpapi.CacheHeader)]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if answers["miss"] != 1 || answers["hit"] != n-1 {
			t.Errorf("%d identical requests at once: %v, want one miss", n, answers)
		}
		if c := hook.Count(); c >= n*miss {
			t.Errorf("%d round trips for %d identical requests; %d misses would cost %d", c, n, n, n*miss)
		}
		t.Logf("%v; %d round trips for %d identical requests, one miss alone costs %d", answers, hook.Count(), n, miss)
	})
}

// TestResponseCacheRedisDown checks that nothing is served from the cache while Redis cannot
// be reached.
func TestResponseCacheRedisDown(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr(), MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	st, err := store.New(context.Background(), rdb, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Store: st, Hub: newHub(t, st)})
	var d struct {
		SignUp struct{ Token string }
	}
	mustData(t, raw(t, h, "", `mutation{signUp(name:"downer",password:"password1"){token}}`, nil), &d)
	var p struct{ CreatePost struct{ ID string } }
	mustData(t, raw(t, h, d.SignUp.Token, `mutation{createPost(input:{title:"kept"}){id}}`, nil), &p)
	q := `query($p:ID!){post(id:$p){id title}}`
	vars := map[string]any{"p": p.CreatePost.ID}
	mustData(t, raw(t, h, "", q, vars), nil)
	mustData(t, raw(t, h, "", q, vars), nil) // now cached
	m.Close()
	body := raw(t, h, "", q, vars)
	if bytes.Contains(body, []byte(`"kept"`)) {
		t.Fatalf("served from the cache while Redis is down: %s", body)
	}
	if !bytes.Contains(body, []byte(`UNAVAILABLE`)) {
		t.Fatalf("want UNAVAILABLE while Redis is down, got %s", body)
	}
}

// TestResponseCacheKeysOnWhatRuns: the cache reads a request's members exactly as the transport
// does, so a body that also carries look-alike members ("Variables", "QUERY") is kept under the
// request that ran, and never answers another.
func TestResponseCacheKeysOnWhatRuns(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		tok, _ := a.signUp("writer")
		p1, p2 := a.createPost(tok, "first"), a.createPost(tok, "second")
		post := func(body string) (string, string) {
			t.Helper()
			res, err := http.Post(a.srv.URL+"/query", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			got, err := io.ReadAll(res.Body)
			if err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("%s: status %d, %v", body, res.StatusCode, err)
			}
			return string(got), res.Header.Get(httpapi.CacheHeader)
		}
		const q = `"query":"query($id: ID!) { post(id: $id) { title } }"`
		tricky := `{"QUERY":"{ viewer { id } }",` + q + `,"variables":{"id":"` + p1 + `"},"Variables":{"id":"` + p2 + `"}}`
		if body, _ := post(tricky); !strings.Contains(body, `"first"`) {
			t.Fatalf("the request with look-alike members: %s", body)
		}
		body, cache := post(`{` + q + `,"variables":{"id":"` + p2 + `"}}`)
		if !strings.Contains(body, `"second"`) || cache != "miss" {
			t.Fatalf("the second post read after it: %s (cache %s)", body, cache)
		}
	})
}

// TestResponseCacheFollowsAdminStanding: what a site admin reads that nobody else may (another
// user's email address, every report) is kept for the admin alone, and must not be served to
// them from the cache once the operator revokes their standing; nor may an account granted it
// go on being served what it read before.
func TestResponseCacheFollowsAdminStanding(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		a := newAPI(t, be, store.Options{WriteLimit: -1})
		ann, _ := a.signUp("ann")
		rae, _ := a.signUp("rae")
		ivy, _ := a.signUp("ivy")
		if r := a.do(ann, `mutation{setEmail(email:"ann@example.org",password:"password1"){id}}`, nil); len(r.Errors) > 0 {
			t.Fatalf("setEmail: %+v", r.Errors)
		}
		p := a.createPost(ann, "reported")
		if r := a.do(ivy, `mutation($id:ID!){reportPost(id:$id,reason:"spam"){id}}`, map[string]any{"id": p}); len(r.Errors) > 0 {
			t.Fatalf("reportPost: %+v", r.Errors)
		}
		tests := []struct {
			name, query string
			admin, not  string // the answer's data as an admin and as anyone else
		}{
			{"an email address", `{user(name:"ann"){email}}`, `{"user":{"email":"ann@example.org"}}`, `{"user":{"email":null}}`},
			{"the reports", `{reports{totalCount}}`, `{"reports":{"totalCount":1}}`, `{"reports":{"totalCount":0}}`},
		}
		read := func(t *testing.T, query, want, when string) {
			t.Helper()
			r := a.do(rae, query, nil)
			if len(r.Errors) > 0 || string(r.Data) != want {
				t.Errorf("%s: data %s, errors %+v; want %s", when, r.Data, r.Errors, want)
			}
		}
		revoke := func(t *testing.T) {
			t.Helper()
			if err := a.store.RevokeAdmin(t.Context(), "rae"); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				a.grantAdmin("rae")
				read(t, tc.query, tc.admin, "granted")
				read(t, tc.query, tc.admin, "granted, again") // kept
				revoke(t)
				read(t, tc.query, tc.not, "revoked")
				read(t, tc.query, tc.not, "revoked, again") // kept
				a.grantAdmin("rae")
				read(t, tc.query, tc.admin, "granted anew")
				revoke(t)
			})
		}
	})
}

// stalledWriter is a client that does not read its answer: its first Write blocks until release
// is closed.
type stalledWriter struct {
	h       http.Header
	writing chan struct{} // closed when the first Write begins
	release chan struct{}
	once    sync.Once
}

func (w *stalledWriter) Header() http.Header { return w.h }
func (w *stalledWriter) WriteHeader(int)     {}
func (w *stalledWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.writing) })
	<-w.release
	return len(b), nil
}

// TestResponseCacheSlowReaderHoldsNoOneElse: the request that computes an answer for the
// others (the flight's leader) let them have it only after its own client had taken all of it,
// so one client that did not read — on purpose or on a slow link — held every request for the
// same query (all anonymous readers of the front page) for as long as it kept its connection
// open. The others now get the answer as soon as it is made.
func TestResponseCacheSlowReaderHoldsNoOneElse(t *testing.T) {
	st := storetest.Backends(t)[0].NewStore(t, store.Options{})
	h := httpapi.New(httpapi.Config{Store: st, Hub: newHub(t, st)})
	const q = `{ posts(first: 5) { totalCount } }`
	body, _ := json.Marshal(map[string]any{"query": q, "variables": nil}) // as raw sends it
	slow := &stalledWriter{h: http.Header{}, writing: make(chan struct{}), release: make(chan struct{})}
	leaderDone := make(chan struct{})
	go func() {
		defer close(leaderDone)
		req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(slow, req)
	}()
	defer func() { close(slow.release); <-leaderDone }()
	<-slow.writing // the leader has its answer and is writing it to a client that does not read

	got := make(chan []byte, 1)
	go func() { got <- raw(t, h, "", q, nil) }()
	select {
	case b := <-got:
		mustData(t, b, nil)
	case <-time.After(3 * time.Second):
		t.Fatal("a second request for the same query waits for the first one's client to read its answer")
	}
}
