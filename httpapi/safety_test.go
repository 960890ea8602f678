package httpapi_test

import (
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSiteFiltersOverHTTP runs the site filters through two server replicas on one Redis: an
// admin changes them on one, and the other refuses (FILTERED, naming the field) and replaces
// within a second of the driven clock.
func TestSiteFiltersOverHTTP(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		clock := storetest.NewClock()
		opts := store.Options{Prefix: storetest.Prefix(), Now: clock.Now}
		a := newAPI(t, be, opts)
		other := be
		other.Client = be.NewClient(t)
		b := newAPI(t, other, opts)
		root, _ := a.signUp("root")
		alice, _ := a.signUp("alice")
		a.grantAdmin("root")
		const update = `mutation($w:[String!],$d:[String!],$a:FilterAction!){updateSiteFilters(words:$w,urlDomains:$d,action:$a){words urlDomains action updatedBy{name}}}`
		if r := a.do(alice, update, map[string]any{"w": []string{"ass"}, "a": "REFUSE"}); r.code() != "FORBIDDEN" {
			t.Fatalf("a user changed the filters: %+v", r)
		}
		if r := a.do(alice, `{siteFilters{words}}`, nil); r.code() != "FORBIDDEN" {
			t.Fatalf("a user read the filters: %+v", r)
		}
		// b reads the filters (none yet) with a first write.
		b.createPost(alice, "hello")
		var d struct {
			UpdateSiteFilters struct {
				Words, URLDomains []string
				Action            string
				UpdatedBy         struct{ Name string }
			}
		}
		a.do(root, update, map[string]any{"w": []string{"ass"}, "d": []string{"spam.example"}, "a": "REFUSE"}).decode(t, &d)
		if u := d.UpdateSiteFilters; len(u.Words) != 1 || len(u.URLDomains) != 1 || u.Action != "REFUSE" || u.UpdatedBy.Name != "root" {
			t.Fatalf("updateSiteFilters: %+v", u)
		}
		clock.Add(time.Second)
		const post = `mutation($t:String!,$u:String){createPost(input:{title:$t,url:$u}){id title}}`
		for _, c := range []struct {
			title, url, field string
		}{
			{"you Ass", "", "title"},
			{"fine", "https://www.spam.example/x", "url"},
		} {
			r := b.do(alice, post, map[string]any{"t": c.title, "u": c.url})
			if r.code() != "FILTERED" || len(r.Errors) != 1 || r.Errors[0].Extensions["field"] != c.field {
				t.Errorf("%q %q: %+v", c.title, c.url, r.Errors)
			}
		}
		a.do(root, update, map[string]any{"a": "REPLACE"}).decode(t, &d)
		if u := d.UpdateSiteFilters; len(u.Words) != 1 || u.Action != "REPLACE" {
			t.Fatalf("the words left out did not stay: %+v", u)
		}
		clock.Add(time.Second)
		var p struct{ CreatePost struct{ ID, Title string } }
		b.do(alice, post, map[string]any{"t": "you Ass"}).decode(t, &p)
		if p.CreatePost.Title != "you ***" {
			t.Errorf("title %q, want %q", p.CreatePost.Title, "you ***")
		}
		var f struct {
			SiteFilters struct{ Words, URLDomains []string }
		}
		a.do(root, `{siteFilters{words urlDomains}}`, nil).decode(t, &f)
		if len(f.SiteFilters.Words) != 1 || f.SiteFilters.URLDomains[0] != "spam.example" {
			t.Errorf("siteFilters: %+v", f)
		}
	})
}
