//go:build unix

package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// apiOn serves the real handler over a store on rdb with the given Redis timeout (0: the default).
func apiOn(t *testing.T, rdb rdb.UniversalClient, timeout time.Duration) *api {
	t.Helper()
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := store.New(context.Background(), rdb, store.Options{Prefix: storetest.Prefix(),
		Password: storetest.FastPasswords, WriteLimit: -1, RedisTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, st, httpapi.Live{})
}

// boundedClient is a client to addr made as the server makes its own.
func boundedClient(t *testing.T, addr string, timeout time.Duration) rdb.UniversalClient {
	t.Helper()
	rdb, err := rdb.NewClient(rdb.ClientConfig{URL: addr, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return rdb
}

// readyz returns the status of /readyz and how long it took.
func readyz(t *testing.T, a *api) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	res, err := a.srv.Client().Get(a.srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode, time.Since(start)
}

// TestFrozenRedisAnswersUnavailable stops the redis-server under a running handler (SIGSTOP):
// queries, mutations and subscriptions fail with UNAVAILABLE within a few of the Redis timeout
// instead of waiting for Redis, /readyz answers 503 within its 2s even with a longer Redis
// timeout, and everything works again once Redis resumes.
func TestFrozenRedisAnswersUnavailable(t *testing.T) {
	const timeout = 300 * time.Millisecond
	const failWithin = 5 * timeout // a bound on behaviour, generous for a loaded machine
	srv := storetest.PrivateServer(t)
	a := apiOn(t, boundedClient(t, srv.Addr, timeout), timeout)
	author, _ := a.signUp("alice")
	postID := a.createPost(author, "before the freeze", "go")
	token, _ := a.signUp("carol") // a voter
	ready := []struct {
		name string
		api  *api
	}{
		{"Redis timeout 300ms", a},
		{"default Redis timeout (3s)", apiOn(t, boundedClient(t, srv.Addr, 0), 0)},
		{"a client that keeps its sockets past a context's deadline", apiOn(t, rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr}), 0)},
	}
	for _, r := range ready {
		if code, _ := readyz(t, r.api); code != http.StatusOK {
			t.Fatalf("%s: /readyz %d before the freeze", r.name, code)
		}
	}

	thaw := srv.Freeze(t)
	for _, c := range []struct {
		name   string
		token  string
		query  string
		vars   map[string]any
		status int // 503 when the request fails authenticating, before GraphQL runs
	}{
		{"anonymous query", "", `query($p:ID!){ post(id: $p) { title author { name } } }`, map[string]any{"p": postID}, http.StatusOK},
		{"anonymous mutation", "", `mutation { signUp(name: "bob", password: "password1") { token } }`, nil, http.StatusOK},
		{"query with a token", token, `{ viewer { name } }`, nil, http.StatusServiceUnavailable},
		{"mutation with a token", token, `mutation($p:ID!){ votePost(postId: $p, direction: UP) { upvotes } }`, map[string]any{"p": postID}, http.StatusServiceUnavailable},
	} {
		start := time.Now()
		r := a.do(c.token, c.query, c.vars)
		took := time.Since(start)
		if r.code() != "UNAVAILABLE" || r.Errors[0].Message != "Redis did not answer in time; retry" || r.Status != c.status {
			t.Errorf("%s on a frozen Redis: status %d, errors %+v; want %d UNAVAILABLE", c.name, r.Status, r.Errors, c.status)
		}
		if took > failWithin {
			t.Errorf("%s on a frozen Redis took %s, want under %s", c.name, took, failWithin)
		}
		t.Logf("%s on a frozen Redis: %d %+v after %s", c.name, r.Status, r.Errors, took.Round(time.Millisecond))
	}
	// A new subscription takes longer: its SUBSCRIBE, and the UNSUBSCRIBE the hub sends after it
	// fails, each wait for the shared pub/sub connection, which go-redis keeps trying to reconnect
	// (each try a dial and a handshake bounded by the timeout) while holding it. The cost of a
	// frozen Redis is still bounded by a few timeouts, not by the freeze.
	const subscribeWithin = 10 * timeout
	for _, proto := range protos {
		start := time.Now()
		s := subscribe(t, a.srv.URL, proto, "", `subscription { postPublished(group: "go") { title } }`, nil)
		r, _ := s.result(t)
		took := time.Since(start)
		s.close()
		if r.code() != "UNAVAILABLE" {
			t.Errorf("subscription over %s on a frozen Redis: errors %+v, want UNAVAILABLE", proto, r.Errors)
		}
		if took > subscribeWithin {
			t.Errorf("subscription over %s on a frozen Redis took %s, want under %s", proto, took, subscribeWithin)
		}
		t.Logf("subscription over %s on a frozen Redis: %+v after %s", proto, r.Errors, took.Round(time.Millisecond))
	}
	for _, r := range ready {
		code, took := readyz(t, r.api)
		if code != http.StatusServiceUnavailable || took > 3*time.Second {
			t.Errorf("%s: /readyz %d after %s on a frozen Redis, want 503 within 2s", r.name, code, took)
		}
		t.Logf("%s: /readyz %d after %s on a frozen Redis", r.name, code, took.Round(time.Millisecond))
	}

	thaw()
	waitFor(t, "/readyz after the thaw", func() bool { code, _ := readyz(t, a); return code == http.StatusOK })
	var d struct{ VotePost struct{ Upvotes int } }
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
		// The first requests may still meet a connection that timed out.
		r := a.do(token, `mutation($p:ID!){ votePost(postId: $p, direction: UP) { upvotes } }`, map[string]any{"p": postID})
		if len(r.Errors) == 0 {
			r.decode(t, &d)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("votePost after the thaw: %+v", r.Errors)
		}
	}
	if d.VotePost.Upvotes != 1 {
		t.Errorf("upvotes %d after the thaw, want 1", d.VotePost.Upvotes)
	}
	s := subscribe(t, a.srv.URL, protoSSE, "", `subscription { postPublished(group: "go") { title } }`, nil)
	defer s.close()
	waitSubscribers(t, a, 1)
	a.createPost(author, "after the thaw", "go")
	var p struct{ PostPublished struct{ Title string } }
	next(t, s, &p)
	if p.PostPublished.Title != "after the thaw" {
		t.Errorf("subscription after the thaw got %+v", p.PostPublished)
	}
}
