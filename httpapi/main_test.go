package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// api is the real HTTP handler on one backend, served by httptest.
type api struct {
	t     testing.TB
	srv   *httptest.Server
	h     *httpapi.Handler
	store *store.Store
	hub   *live.Hub
}

func newAPI(t testing.TB, b storetest.Backend, opts store.Options) *api {
	t.Helper()
	st := b.NewStore(t, opts)
	hub := live.New(st, live.Options{})
	h := httpapi.New(httpapi.Config{Store: st, Hub: hub})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = hub.Close() }) // first: ends the streams that srv.Close would wait for
	return &api{t: t, srv: srv, h: h, store: st, hub: hub}
}

// grantAdmin makes the account name a site admin, as the operator's `agora admin grant` does.
func (a *api) grantAdmin(name string) {
	a.t.Helper()
	if err := a.store.GrantAdmin(context.Background(), name); err != nil {
		a.t.Fatal(err)
	}
}

// newHub returns the live events of st, closed when the test ends.
func newHub(t testing.TB, st *store.Store) *live.Hub {
	t.Helper()
	h := live.New(st, live.Options{})
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// settle runs the jobs that are due (feed fan-out, notifications, ...), as a server's background
// would, so that a test reads their effects at a known moment.
func (a *api) settle() {
	a.t.Helper()
	if _, err := a.store.Jobs().RunDue(context.Background()); err != nil {
		a.t.Fatalf("run due jobs: %v", err)
	}
}

// gqlError is one entry of a response's errors.
type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// response is a decoded GraphQL response.
type response struct {
	Status     int
	Data       json.RawMessage `json:"data"`
	Errors     []gqlError      `json:"errors"`
	Extensions struct {
		Cursor string `json:"cursor"` // a live event's cursor
		Cost   struct {
			Requested int `json:"requested"`
			FieldCost int `json:"fieldCost"`
		} `json:"cost"`
	} `json:"extensions"`
	FrameID string `json:"-"` // the id: of a server-sent event
}

// code returns the extensions.code of the first error, or "".
func (r response) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// decode unmarshals data into v, failing the test on errors in the response.
func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("unexpected errors: %+v", r.Errors)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decode %s: %v", r.Data, err)
	}
}

// do POSTs a query with variables, as the holder of token ("" for anonymous).
func (a *api) do(token, query string, vars map[string]any) response {
	a.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, a.srv.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := a.srv.Client().Do(req)
	if err != nil {
		a.t.Fatalf("post: %v", err)
	}
	defer res.Body.Close()
	var r response
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		a.t.Fatalf("decode response (status %d): %v", res.StatusCode, err)
	}
	r.Status = res.StatusCode
	return r
}

// signUp creates a user and returns its token and id.
func (a *api) signUp(name string) (token, id string) {
	a.t.Helper()
	var d struct {
		SignUp struct {
			Token string
			User  struct{ ID string }
		}
	}
	a.do("", `mutation($n:String!){signUp(name:$n,password:"password1"){token user{id}}}`, map[string]any{"n": name}).decode(a.t, &d)
	return d.SignUp.Token, d.SignUp.User.ID
}

// createPost publishes a post and returns its id.
func (a *api) createPost(token, title string, groups ...string) string {
	a.t.Helper()
	var d struct{ CreatePost struct{ ID string } }
	a.do(token, `mutation($t:String!,$g:[String!]){createPost(input:{title:$t,groups:$g}){id}}`,
		map[string]any{"t": title, "g": groups}).decode(a.t, &d)
	return d.CreatePost.ID
}
