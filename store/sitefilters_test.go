package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// filterWorld is two replicas of the store on one Redis, with one driven clock, an admin and a
// user.
type filterWorld struct {
	a, b   *store.Store
	clock  *storetest.Clock
	admin  store.UserKey
	author store.UserKey
	trips  *storetest.RoundTrips // of replica b
}

func newFilterWorld(t *testing.T, be storetest.Backend) *filterWorld {
	t.Helper()
	clock := storetest.NewClock()
	opts := store.Options{Prefix: storetest.Prefix(), Now: clock.Now}
	w := &filterWorld{clock: clock, a: be.NewStore(t, opts)}
	counted, trips := be.Counted(t)
	w.b, w.trips = counted.NewStore(t, opts), trips
	ctx := context.Background()
	for _, n := range []string{"root", "alice"} {
		if _, err := w.a.SignUp(ctx, n, "password1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.a.GrantAdmin(ctx, "root"); err != nil {
		t.Fatal(err)
	}
	w.admin, w.author = "root", "alice"
	return w
}

// filtered returns the field of a KindFiltered error, or "" for nil; any other error fails.
func filtered(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var se *store.Error
	if !asStoreError(err, &se) || se.Kind != store.KindFiltered {
		t.Fatalf("want FILTERED or nothing, got %v", err)
	}
	return se.Field
}

func TestSiteFiltersRefuseAcrossReplicas(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		ctx := context.Background()
		w := newFilterWorld(t, be)
		// Replica b reads the (empty) filters with its first write.
		if _, err := w.b.CreatePost(ctx, w.author, store.NewPost{Title: "you ass", Groups: []string{"g"}}); err != nil {
			t.Fatalf("before any filter: %v", err)
		}
		words, domains := []string{"ass", "buy now"}, []string{"https://Spam.example/x", "*.bad.test"}
		if _, err := w.a.UpdateSiteFilters(ctx, w.author, &words, &domains, store.FilterRefuse); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("a user changed the filters: %v", err)
		}
		f, err := w.a.UpdateSiteFilters(ctx, w.admin, &words, &domains, store.FilterRefuse)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.URLDomains) != 2 || f.URLDomains[0] != "spam.example" || f.URLDomains[1] != "bad.test" || f.Action != store.FilterRefuse {
			t.Fatalf("filters as kept: %+v", f)
		}
		// The replica that changed them applies them at once; the other within a second.
		if got := filtered(t, ignore(w.a.CreatePost(ctx, w.author, store.NewPost{Title: "you ass"}))); got != "title" {
			t.Fatalf("replica a: field %q, want title", got)
		}
		w.clock.Add(time.Second)
		cases := []struct {
			name  string
			post  store.NewPost
			field string
		}{
			{"a filtered word", store.NewPost{Title: "you ass"}, "title"},
			{"upper case", store.NewPost{Title: "YOU ASS"}, "title"},
			{"full width", store.NewPost{Title: "ＡＳＳ"}, "title"},
			{"Cyrillic look-alike", store.NewPost{Title: "аss"}, "title"},
			{"accents", store.NewPost{Title: "ässes? no: äss"}, "title"},
			{"zero-width space inside", store.NewPost{Title: "a\u200bss"}, "title"},
			{"a phrase", store.NewPost{Title: "t", Body: "Buy... NOW!"}, "body"},
			{"a longer word", store.NewPost{Title: "class assess bass"}, ""},
			{"half a phrase", store.NewPost{Title: "buy it now"}, ""},
			{"a filtered domain", store.NewPost{Title: "t", URL: "https://spam.example/p"}, "url"},
			{"a subdomain", store.NewPost{Title: "t", URL: "http://www.Spam.Example"}, "url"},
			{"a subdomain of a wildcard", store.NewPost{Title: "t", URL: "http://x.bad.test"}, "url"},
			{"a domain in a body", store.NewPost{Title: "t", Body: "see shop.spam.example today"}, "body"},
			{"another domain", store.NewPost{Title: "t", URL: "https://notspam.example/p", Body: "spam.examples"}, ""},
			{"a group name", store.NewPost{Title: "t", Groups: []string{"big-ass"}}, "groups"},
		}
		for _, c := range cases {
			_, err := w.b.CreatePost(ctx, w.author, c.post)
			if got := filtered(t, err); got != c.field {
				t.Errorf("%s: field %q, want %q", c.name, got, c.field)
			}
		}
		// Every write of text: comments and their edits, sign-up names, groups, bios, post edits.
		p, err := w.b.CreatePost(ctx, w.author, store.NewPost{Title: "fine"})
		if err != nil {
			t.Fatal(err)
		}
		bad, good := "what an ass", "what a class"
		checks := []struct {
			name  string
			err   error
			field string
		}{
			{"comment", ignore(w.b.CreateComment(ctx, w.author, store.NewComment{PostID: p.ID, Body: bad})), "body"},
			{"post edit", ignore(w.b.EditPost(ctx, w.author, p.ID, store.PostEdit{Body: &bad})), "body"},
			{"sign-up name", ignore(w.b.SignUp(ctx, "the_ass", "password1")), "name"},
			{"group name", ignore(w.b.CreateGroup(ctx, w.author, "ass", nil)), "name"},
			{"group description", ignore(w.b.CreateGroup(ctx, w.author, "fine", &bad)), "description"},
			{"bio", ignore(w.b.UpdateProfile(ctx, w.author, store.ProfileEdit{Bio: &bad})), "bio"},
			{"good bio", ignore(w.b.UpdateProfile(ctx, w.author, store.ProfileEdit{Bio: &good})), ""},
			{"group page", ignore(w.b.UpdateGroup(ctx, w.author, "fine", store.GroupEdit{Rules: &bad})), "rules"},
			{"a post's new group", ignore(w.b.SetPostGroups(ctx, w.author, p.ID, []string{"ass"}, nil)), "groups"},
		}
		for _, c := range checks {
			if got := filtered(t, c.err); got != c.field {
				t.Errorf("%s: field %q, want %q", c.name, got, c.field)
			}
		}
		c, err := w.b.CreateComment(ctx, w.author, store.NewComment{PostID: p.ID, Body: good})
		if err != nil {
			t.Fatal(err)
		}
		if got := filtered(t, ignore(w.b.EditComment(ctx, w.author, c.ID, bad))); got != "body" {
			t.Errorf("comment edit: field %q", got)
		}
	})
}

func TestSiteFiltersReplaceAcrossReplicas(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		ctx := context.Background()
		w := newFilterWorld(t, be)
		words, domains := []string{"ass"}, []string{"spam.example"}
		if _, err := w.a.UpdateSiteFilters(ctx, w.admin, &words, &domains, store.FilterRefuse); err != nil {
			t.Fatal(err)
		}
		p, err := w.b.CreatePost(ctx, w.author, store.NewPost{Title: "fine"})
		if err != nil {
			t.Fatal(err)
		}
		// Only the action changes: the words stay.
		if _, err := w.a.UpdateSiteFilters(ctx, w.admin, nil, nil, store.FilterReplace); err != nil {
			t.Fatal(err)
		}
		w.clock.Add(time.Second)
		for _, c := range []struct{ in, want string }{
			{"you ass!", "you ***!"},
			{"ＡＳＳ and class", "*** and class"},
			{"buy at shop.spam.example now", "buy at ***************** now"},
		} {
			got, err := w.b.CreateComment(ctx, w.author, store.NewComment{PostID: p.ID, Body: c.in})
			if err != nil {
				t.Fatalf("%q: %v", c.in, err)
			}
			if b := got.Body(); b == nil || *b != c.want {
				t.Errorf("%q became %v, want %q", c.in, *got.Body(), c.want)
			}
		}
		// Names and URLs cannot hold asterisks: refused under REPLACE too.
		if got := filtered(t, ignore(w.b.CreatePost(ctx, w.author, store.NewPost{Title: "t", URL: "https://spam.example"}))); got != "url" {
			t.Errorf("url under REPLACE: %q", got)
		}
		if got := filtered(t, ignore(w.b.SignUp(ctx, "ass", "password1"))); got != "name" {
			t.Errorf("name under REPLACE: %q", got)
		}
		// Clearing the words lets them through on every replica within a second.
		none := []string{}
		if _, err := w.a.UpdateSiteFilters(ctx, w.admin, &none, nil, store.FilterReplace); err != nil {
			t.Fatal(err)
		}
		w.clock.Add(time.Second)
		got, err := w.b.CreateComment(ctx, w.author, store.NewComment{PostID: p.ID, Body: "you ass"})
		if err != nil || *got.Body() != "you ass" {
			t.Fatalf("after clearing: %v %v", got, err)
		}
	})
}

// TestSiteFiltersCostNoRoundTrip checks that a write costs as many round trips when its replica
// reads the filters again as when it does not.
func TestSiteFiltersCostNoRoundTrip(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		ctx := context.Background()
		w := newFilterWorld(t, be)
		words := []string{"ass"}
		if _, err := w.a.UpdateSiteFilters(ctx, w.admin, &words, nil, store.FilterRefuse); err != nil {
			t.Fatal(err)
		}
		p, err := w.b.CreatePost(ctx, w.author, store.NewPost{Title: "fine"})
		if err != nil {
			t.Fatal(err)
		}
		comment := func() int64 {
			w.trips.Reset()
			if _, err := w.b.CreateComment(ctx, w.author, store.NewComment{PostID: p.ID, Body: "hello"}); err != nil {
				t.Fatal(err)
			}
			return w.trips.Count()
		}
		fresh := comment()
		w.clock.Add(time.Second)
		if _, err := w.a.UpdateSiteFilters(ctx, w.admin, &[]string{"ass", "bum"}, nil, store.FilterRefuse); err != nil {
			t.Fatal(err)
		}
		if due := comment(); due != fresh {
			t.Errorf("a write that read changed filters took %d round trips, one that did not %d", due, fresh)
		}
		if got := filtered(t, ignore(w.b.CreateComment(ctx, w.author, store.NewComment{PostID: p.ID, Body: "bum"}))); got != "body" {
			t.Errorf("the change was not read: %q", got)
		}
	})
}

// ignore drops a result, keeping the error.
func ignore[T any](_ T, err error) error { return err }
