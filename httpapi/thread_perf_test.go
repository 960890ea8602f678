package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// threadServer is the real handler over a store holding one post with a thread.
type threadServer struct {
	h        http.Handler
	store    *store.Store
	post     string
	token    string // a signed-in viewer, so that viewerVote reads votes too
	comments int
}

func newThreadServer(tb testing.TB, b storetest.Backend, top, replies, replies2 int) *threadServer {
	tb.Helper()
	ctx := context.Background()
	st := b.NewStore(tb, store.Options{})
	var authors []string
	var token string
	for i := range 12 {
		s, err := st.SignUp(ctx, fmt.Sprintf("author%02d", i), "password1")
		if err != nil {
			tb.Fatal(err)
		}
		authors = append(authors, string(s.User.Key()))
		token = s.Token
	}
	p, err := st.CreatePost(ctx, store.UserKey(authors[0]), store.NewPost{Title: "A busy thread"})
	if err != nil {
		tb.Fatal(err)
	}
	n := buildThread(tb, st, p.ID, authors, top, replies, replies2)
	return &threadServer{h: httpapi.New(httpapi.Config{Store: st, Hub: newHub(tb, st)}), store: st, post: p.ID, token: token, comments: n}
}

// query runs threadQuery through the handler and returns the response data.
func (s *threadServer) query(tb testing.TB, top, replies, replies2 int) json.RawMessage {
	return s.queryDoc(tb, threadQuery, top, replies, replies2)
}

// queryDoc runs doc, threadQuery or a variant of it, through the handler and returns the
// response data.
func (s *threadServer) queryDoc(tb testing.TB, doc string, top, replies, replies2 int) json.RawMessage {
	body, _ := json.Marshal(map[string]any{"query": doc,
		"variables": map[string]any{"id": s.post, "n": top, "r": replies, "rr": replies2}})
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.token)
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	var r response
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		tb.Fatalf("decode (status %d): %v", rec.Code, err)
	}
	if len(r.Errors) > 0 {
		tb.Fatalf("errors: %+v", r.Errors)
	}
	return r.Data
}

// TestThreadRoundTrips checks that a thread page costs the same number of Redis round trips
// whatever its size, about one per level, whether its lists page forwards (first) or backwards
// (last).
func TestThreadRoundTrips(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		for _, arg := range []string{"first", "last"} {
			doc := strings.ReplaceAll(threadQuery, "(first:", "("+arg+":")
			counts := map[int]int64{}
			for _, top := range []int{5, 30} {
				// A client of its own, so that the tests running beside this one are not counted.
				counted, hook := b.Counted(t)
				s := newThreadServer(t, counted, top, 4, 2)
				hook.Reset()
				data := s.queryDoc(t, doc, top, 4, 2)
				counts[top] = hook.Count()
				if got, want := countThread(t, data), top*(1+4+4*2); got != want {
					t.Fatalf("%s, %d top-level: the response holds %d comments, want %d", arg, top, got, want)
				}
			}
			t.Logf("%s: round trips: %d for 5 top-level comments (65 in all), %d for 30 (390)", arg, counts[5], counts[30])
			if d := counts[30] - counts[5]; d > 1 || d < -1 {
				t.Errorf("%s: round trips grow with the thread: %d for 5 top-level comments, %d for 30", arg, counts[5], counts[30])
			}
			// Authentication, the post, then one per level of comments and one for the last authors.
			if counts[30] > 8 {
				t.Errorf("%s: %d round trips for a three-level thread page, want at most 8", arg, counts[30])
			}
		}
	})
}

// BenchmarkThread loads an 800-comment thread page (50 top-level comments, 5 replies each, 2
// replies to each reply, every author, the viewer's votes) through the real handler, with the
// response cache off so that every read executes.
//
//	go test ./httpapi -run '^$' -bench Thread -benchtime 200x
func BenchmarkThread(b *testing.B) {
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			s := newThreadServer(b, be, 50, 5, 2)
			s.h = httpapi.New(httpapi.Config{Store: s.store, Hub: newHub(b, s.store), ResponseCacheMiB: -1})
			if got := countThread(b, s.query(b, 50, 5, 2)); got != 800 || s.comments != 800 {
				b.Fatalf("the page holds %d of %d comments, want 800", got, s.comments)
			}
			hook := &storetest.RoundTrips{}
			be.Client.AddHook(hook)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				s.query(b, 50, 5, 2)
				n++
			}
			b.ReportMetric(float64(hook.Count())/float64(n), "roundtrips/op")
		})
	}
}
