package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestWatchKeepsSharedAnswersCached: a watch mode is the viewer's own (viewerWatch), so one
// user's watchPost or watchGroup leaves the thread's and the group's shared cached answers
// standing for everyone else, while the watcher's own next read shows the new mode.
func TestWatchKeepsSharedAnswersCached(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		ann, _ := a.signUp("ann")
		rita, _ := a.signUp("rita")
		bob, _ := a.signUp("bob")
		p := a.createPost(ann, "thread", "golang")
		a.do(ann, `mutation($p:ID!){createComment(postId:$p,body:"hi"){id}}`, map[string]any{"p": p}).decode(t, &struct{}{})
		shared := map[string]string{
			"post":  `query($p:ID!){post(id:$p){title commentCount comments{edges{node{body}}}}}`,
			"group": `query{group(name:"golang"){name postCount posts{edges{node{title}}}}}`,
		}
		own := map[string]string{
			"post":  `query($p:ID!){post(id:$p){title viewerWatch}}`,
			"group": `query{group(name:"golang"){name viewerWatch}}`,
		}
		watch := map[string]string{
			"post":  `mutation($p:ID!){watchPost(id:$p,mode:ALL){id}}`,
			"group": `mutation{watchGroup(name:"golang",mode:MUTED){id}}`,
		}
		get := func(tok, q string) (string, string) {
			t.Helper()
			body, _ := json.Marshal(map[string]any{"query": q, "variables": map[string]any{"p": p}})
			req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			rec := httptest.NewRecorder()
			a.h.ServeHTTP(rec, req)
			var d struct {
				Data struct {
					Post, Group struct{ ViewerWatch *string }
				}
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
				t.Fatal(err)
			}
			w := d.Data.Post.ViewerWatch
			if w == nil {
				w = d.Data.Group.ViewerWatch
			}
			if w == nil {
				return rec.Header().Get(httpapi.CacheHeader), ""
			}
			return rec.Header().Get(httpapi.CacheHeader), *w
		}
		for _, what := range []string{"post", "group"} {
			want := map[string]string{"post": "ALL", "group": "MUTED"}[what]
			if c, _ := get(bob, shared[what]); c != "miss" {
				t.Errorf("%s: bob's first read: %s", what, c)
			}
			if c, _ := get(bob, shared[what]); c != "hit" {
				t.Errorf("%s: bob's second read: %s", what, c)
			}
			if _, w := get(rita, own[what]); w != "REPLIES" {
				t.Errorf("%s: rita's mode before: %q", what, w)
			}
			a.do(rita, watch[what], map[string]any{"p": p}).decode(t, &struct{}{})
			if c, w := get(rita, own[what]); w != want {
				t.Errorf("%s: rita's mode after watching: %q (%s), want %s", what, w, c, want)
			}
			if c, _ := get(bob, shared[what]); c != "hit" {
				t.Errorf("%s: bob's read after rita watched: %s, want hit", what, c)
			}
			if c, _ := get("", shared[what]); c != "hit" {
				t.Errorf("%s: an anonymous read after rita watched: %s, want hit", what, c)
			}
		}
	})
}
