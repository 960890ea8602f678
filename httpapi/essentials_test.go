package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// editedPost is what the edit tests read of a post.
type editedPost struct {
	ID       string
	Title    string
	Body     string
	URL      *string
	EditedAt *string
}

const editPostMutation = `mutation($id:ID!,$t:String,$b:String,$u:String){editPost(id:$id,title:$t,body:$b,url:$u){id title body url editedAt}}`

func TestAPIEditPost(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		a := newAPI(t, b, store.Options{Now: clk.Now})
		ann, _ := a.signUp("ann")
		ben, _ := a.signUp("ben")
		var created struct{ CreatePost editedPost }
		a.do(ann, `mutation{createPost(input:{title:"first",body:"the body",url:"https://example.com/a"}){id title body url editedAt}}`, nil).
			decode(t, &created)
		id := created.CreatePost.ID
		if created.CreatePost.EditedAt != nil {
			t.Fatalf("a new post has editedAt %v", *created.CreatePost.EditedAt)
		}
		edit := func(tok string, vars map[string]any) response {
			t.Helper()
			vars["id"] = id
			return a.do(tok, editPostMutation, vars)
		}
		read := func() editedPost {
			t.Helper()
			var d struct{ Post editedPost }
			a.do("", `query($id:ID!){post(id:$id){id title body url editedAt}}`, map[string]any{"id": id}).decode(t, &d)
			return d.Post
		}
		str := func(s string) *string { return &s }

		// Refusals: nothing changes.
		for _, tc := range []struct {
			name, tok string
			vars      map[string]any
			code      string
		}{
			{"someone else", ben, map[string]any{"t": "mine now"}, httpapi.CodeForbidden},
			{"anonymous", "", map[string]any{"t": "mine now"}, httpapi.CodeUnauthenticated},
			{"empty title", ann, map[string]any{"t": ""}, httpapi.CodeBadUserInput},
			{"title too long", ann, map[string]any{"t": strings.Repeat("é", store.MaxTitleRunes+1)}, httpapi.CodeBadUserInput},
			{"control character", ann, map[string]any{"t": "a\x00b"}, httpapi.CodeBadUserInput},
			{"body too long", ann, map[string]any{"b": strings.Repeat("x", store.MaxPostBodyRunes+1)}, httpapi.CodeBadUserInput},
			{"ftp url", ann, map[string]any{"u": "ftp://example.com/x"}, httpapi.CodeBadUserInput},
			{"relative url", ann, map[string]any{"u": "/x"}, httpapi.CodeBadUserInput},
			{"javascript url", ann, map[string]any{"u": "javascript:alert(1)"}, httpapi.CodeBadUserInput},
		} {
			if r := edit(tc.tok, tc.vars); r.code() != tc.code {
				t.Errorf("%s: %+v, want %s", tc.name, r.Errors, tc.code)
			}
		}
		if got := read(); !sameEdited(got, created.CreatePost) || got.EditedAt != nil {
			t.Fatalf("after refused edits: %+v", got)
		}
		for _, tc := range []struct {
			name string
			id   string
			code string
		}{
			{"unknown post", "post:999999", httpapi.CodeNotFound},
			{"malformed id", "user:ann", httpapi.CodeBadUserInput},
		} {
			if r := a.do(ann, editPostMutation, map[string]any{"id": tc.id, "t": "x"}); r.code() != tc.code {
				t.Errorf("%s: %+v, want %s", tc.name, r.Errors, tc.code)
			}
		}

		// Partial edits change the fields given, and each change sets editedAt.
		steps := []struct {
			name string
			vars map[string]any
			want editedPost
		}{
			{"title only", map[string]any{"t": "second"}, editedPost{Title: "second", Body: "the body", URL: str("https://example.com/a")}},
			{"body only", map[string]any{"b": "new body"}, editedPost{Title: "second", Body: "new body", URL: str("https://example.com/a")}},
			{"url only", map[string]any{"u": "https://example.org/b"}, editedPost{Title: "second", Body: "new body", URL: str("https://example.org/b")}},
			{"url cleared", map[string]any{"u": ""}, editedPost{Title: "second", Body: "new body"}},
			{"body cleared", map[string]any{"b": ""}, editedPost{Title: "second"}},
			{"all three", map[string]any{"t": "third", "b": "b3", "u": "http://example.net/"}, editedPost{Title: "third", Body: "b3", URL: str("http://example.net/")}},
		}
		for _, st := range steps {
			clk.Add(time.Second)
			var d struct{ EditPost editedPost }
			edit(ann, st.vars).decode(t, &d)
			st.want.ID = id
			wantAt := clk.Now().UTC().Format(time.RFC3339)
			if d.EditPost.EditedAt == nil || !sameSecond(*d.EditPost.EditedAt, wantAt) {
				t.Fatalf("%s: editedAt %v, want %s", st.name, d.EditPost.EditedAt, wantAt)
			}
			got := d.EditPost
			got.EditedAt = nil
			if !sameEdited(got, st.want) {
				t.Fatalf("%s: %+v, want %+v", st.name, got, st.want)
			}
			if r := read(); !sameEdited(withoutEdited(r), st.want) || *r.EditedAt != *d.EditPost.EditedAt {
				t.Fatalf("%s: read back %+v, want %+v", st.name, r, st.want)
			}
		}

		// A repeat, and an edit with the values the post has, change nothing: editedAt stays.
		before := read()
		for _, vars := range []map[string]any{
			{"t": "third", "b": "b3", "u": "http://example.net/"},
			{"t": "third"},
			{},
		} {
			clk.Add(time.Second)
			var d struct{ EditPost editedPost }
			edit(ann, vars).decode(t, &d)
			if !sameEdited(d.EditPost, before) || *d.EditPost.EditedAt != *before.EditedAt {
				t.Fatalf("no-op edit %v: %+v, want %+v", vars, d.EditPost, before)
			}
		}

		// A deleted post is gone, for its author too.
		a.do(ann, `mutation($id:ID!){deletePost(id:$id)}`, map[string]any{"id": id}).decode(t, &struct{}{})
		if r := edit(ann, map[string]any{"t": "again"}); r.code() != httpapi.CodeNotFound {
			t.Fatalf("edit of a deleted post: %+v", r.Errors)
		}
	})
}

func withoutEdited(p editedPost) editedPost { p.EditedAt = nil; return p }

// sameEdited compares two posts' fields other than editedAt.
func sameEdited(a, b editedPost) bool {
	return a.ID == b.ID && a.Title == b.Title && a.Body == b.Body && (a.URL == nil) == (b.URL == nil) &&
		(a.URL == nil || *a.URL == *b.URL)
}

// sameSecond reports whether an RFC 3339 timestamp falls in the second of want.
func sameSecond(got, want string) bool {
	g, err1 := time.Parse(time.RFC3339Nano, got)
	w, err2 := time.Parse(time.RFC3339, want)
	return err1 == nil && err2 == nil && g.Truncate(time.Second).Equal(w)
}

// TestEditPostReachesCacheAndSubscribers reads a post through the response cache, edits it
// through another replica, and reads it again: the cache answers with the edit. A postChanged
// subscriber gets the edit too.
func TestEditPostReachesCacheAndSubscribers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		w := newCacheWorld(t, be)
		p := w.posts[0] // by user 0
		q := `query($p:ID!){post(id:$p){id title editedAt}}`
		title := func(h http.Handler) (string, bool, string) {
			var d struct {
				Post struct {
					Title    string
					EditedAt *string
				}
			}
			body, how := rawCached(t, h, "", q, map[string]any{"p": p})
			mustData(t, body, &d)
			return d.Post.Title, d.Post.EditedAt != nil, how
		}
		title(w.a)
		if got, edited, how := title(w.a); got != "post 0" || edited || how != "hit" {
			t.Fatalf("before the edit: %q edited=%v (%s), want a cached post 0", got, edited, how)
		}
		mustData(t, raw(t, w.b, w.tokens[0], editPostMutation, map[string]any{"id": p, "t": "edited title"}), nil)
		for _, h := range []http.Handler{w.a, w.b, w.off} {
			if got, edited, _ := title(h); got != "edited title" || !edited {
				t.Fatalf("after the edit: %q edited=%v", got, edited)
			}
		}

		a := newAPI(t, be, store.Options{})
		ann, _ := a.signUp("ann")
		post := a.createPost(ann, "live")
		s := subscribe(t, a.srv.URL, protoSSE, "", `subscription($p:ID!){postChanged(postId:$p){title editedAt}}`, map[string]any{"p": post})
		defer func() { s.close(); waitSubscribers(t, a, 0) }()
		waitSubscribers(t, a, 1)
		a.do(ann, editPostMutation, map[string]any{"id": post, "t": "live, edited"}).decode(t, &struct{}{})
		var d struct {
			PostChanged struct {
				Title    string
				EditedAt *string
			}
		}
		next(t, s, &d)
		if d.PostChanged.Title != "live, edited" || d.PostChanged.EditedAt == nil {
			t.Fatalf("postChanged after an edit: %+v", d.PostChanged)
		}
	})
}

// savedPage is what the saving tests read of a page of posts.
type savedPage struct {
	TotalCount int
	Edges      []struct {
		Cursor string
		Node   struct {
			ID          string
			Title       string
			ViewerSaved bool
		}
	}
	PageInfo struct {
		HasNextPage     bool
		HasPreviousPage bool
		EndCursor       string
		StartCursor     string
	}
}

func (p savedPage) titles() []string {
	var out []string
	for _, e := range p.Edges {
		out = append(out, e.Node.Title)
	}
	return out
}

const savedQuery = `query($f:Int,$a:String,$l:Int,$b:String){savedPosts(first:$f,after:$a,last:$l,before:$b){
	totalCount edges{cursor node{id title viewerSaved}} pageInfo{hasNextPage hasPreviousPage startCursor endCursor}}}`

func TestAPISavePosts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		clk := storetest.NewClock()
		a := newAPI(t, b, store.Options{Now: clk.Now})
		ann, _ := a.signUp("ann")
		ben, _ := a.signUp("ben")
		var posts []string
		for i := range 5 {
			posts = append(posts, a.createPost(ben, fmt.Sprint("p", i)))
		}
		saved := func(tok string, vars map[string]any) savedPage {
			t.Helper()
			var d struct{ SavedPosts savedPage }
			a.do(tok, savedQuery, vars).decode(t, &d)
			return d.SavedPosts
		}
		save := func(tok, m, id string) response {
			t.Helper()
			return a.do(tok, fmt.Sprintf(`mutation($id:ID!){%s(id:$id){id title viewerSaved}}`, m), map[string]any{"id": id})
		}
		// Saved in the order p1, p3, p0, p4; saving p1 again keeps its place.
		for _, i := range []int{1, 3, 0, 4, 1} {
			clk.Add(time.Second)
			var d struct {
				SavePost struct {
					ID          string
					ViewerSaved bool
				}
			}
			for range 2 { // idempotent
				save(ann, "savePost", posts[i]).decode(t, &d)
				if d.SavePost.ID != posts[i] || !d.SavePost.ViewerSaved {
					t.Fatalf("savePost p%d: %+v", i, d.SavePost)
				}
			}
		}
		if got := saved(ann, map[string]any{}); !slices.Equal(got.titles(), []string{"p4", "p0", "p3", "p1"}) || got.TotalCount != 4 {
			t.Fatalf("saved posts %v (total %d), want p4 p0 p3 p1", got.titles(), got.TotalCount)
		}
		if got := saved(ben, map[string]any{}); len(got.Edges) != 0 || got.TotalCount != 0 {
			t.Fatalf("ben saved nothing, got %v", got.titles())
		}

		// Paging forwards and backwards.
		p1 := saved(ann, map[string]any{"f": 2})
		if !slices.Equal(p1.titles(), []string{"p4", "p0"}) || !p1.PageInfo.HasNextPage || p1.PageInfo.HasPreviousPage {
			t.Fatalf("first page %v %+v", p1.titles(), p1.PageInfo)
		}
		p2 := saved(ann, map[string]any{"f": 2, "a": p1.PageInfo.EndCursor})
		if !slices.Equal(p2.titles(), []string{"p3", "p1"}) || p2.PageInfo.HasNextPage {
			t.Fatalf("second page %v %+v", p2.titles(), p2.PageInfo)
		}
		if back := saved(ann, map[string]any{"l": 2, "b": p2.PageInfo.StartCursor}); !slices.Equal(back.titles(), []string{"p4", "p0"}) {
			t.Fatalf("page before the second %v", back.titles())
		}
		if last := saved(ann, map[string]any{"l": 1}); !slices.Equal(last.titles(), []string{"p1"}) || !last.PageInfo.HasPreviousPage {
			t.Fatalf("last page %v %+v", last.titles(), last.PageInfo)
		}

		// Unsaving, twice.
		for range 2 {
			var d struct{ UnsavePost struct{ ViewerSaved bool } }
			save(ann, "unsavePost", posts[3]).decode(t, &d)
			if d.UnsavePost.ViewerSaved {
				t.Fatal("unsavePost answered viewerSaved true")
			}
		}
		if got := saved(ann, map[string]any{}); !slices.Equal(got.titles(), []string{"p4", "p0", "p1"}) {
			t.Fatalf("after unsaving p3: %v", got.titles())
		}

		// A saved post deleted since leaves the list; it cannot be saved again.
		a.do(ben, `mutation($id:ID!){deletePost(id:$id)}`, map[string]any{"id": posts[0]}).decode(t, &struct{}{})
		if got := saved(ann, map[string]any{}); !slices.Equal(got.titles(), []string{"p4", "p1"}) {
			t.Fatalf("after deleting p0: %v", got.titles())
		}
		for _, tc := range []struct {
			name, tok, m, id, code string
		}{
			{"save a deleted post", ann, "savePost", posts[0], httpapi.CodeNotFound},
			{"unsave a deleted post", ann, "unsavePost", posts[0], httpapi.CodeNotFound},
			{"save an unknown post", ann, "savePost", "post:999999", httpapi.CodeNotFound},
			{"save a malformed id", ann, "savePost", "user:ann", httpapi.CodeBadUserInput},
			{"save anonymously", "", "savePost", posts[1], httpapi.CodeUnauthenticated},
			{"unsave anonymously", "", "unsavePost", posts[1], httpapi.CodeUnauthenticated},
		} {
			if r := save(tc.tok, tc.m, tc.id); r.code() != tc.code {
				t.Errorf("%s: %+v, want %s", tc.name, r.Errors, tc.code)
			}
		}
		if r := a.do("", savedQuery, nil); r.code() != httpapi.CodeUnauthenticated {
			t.Errorf("savedPosts anonymously: %+v", r.Errors)
		}
		// The unsave of the deleted post took it out of the saved set.
		if got := saved(ann, map[string]any{}); got.TotalCount != 2 {
			t.Errorf("total %d after unsaving the deleted post, want 2", got.TotalCount)
		}

		// viewerSaved on a list, per viewer; false when anonymous.
		list := `{posts(sort:NEW,first:10){edges{node{title viewerSaved}}}}`
		for _, tc := range []struct {
			tok  string
			want []string
		}{{ann, []string{"p1", "p4"}}, {ben, nil}, {"", nil}} {
			var d struct{ Posts savedPage }
			a.do(tc.tok, list, nil).decode(t, &d)
			var got []string
			for _, e := range d.Posts.Edges {
				if e.Node.ViewerSaved {
					got = append(got, e.Node.Title)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("viewer %q: saved %v, want %v", tc.tok, got, tc.want)
			}
		}
	})
}

// TestViewerSavedRoundTrips lists posts with viewerSaved: the saved flags of a whole list are
// read with the list, so the round trips neither grow with the page nor exceed those of the list
// without them.
func TestViewerSavedRoundTrips(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		counted, rt := b.Counted(t)
		st := counted.NewStore(t, store.Options{WriteLimit: -1})
		a := &api{t: t, store: st}
		a.srv = httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: newHub(t, st), ResponseCacheMiB: -1}))
		t.Cleanup(a.srv.Close)
		viewer, _ := a.signUp("viewer")
		author, _ := a.signUp("author")
		for i := range 30 {
			id := a.createPost(author, fmt.Sprint("post ", i))
			if i%2 == 0 {
				a.do(viewer, `mutation($id:ID!){savePost(id:$id){id}}`, map[string]any{"id": id}).decode(t, &struct{}{})
			}
		}
		trips := map[string]int64{}
		for _, q := range []string{
			`query($n:Int!){posts(sort:NEW,first:$n){edges{node{id viewerVote}}}}`,
			`query($n:Int!){posts(sort:NEW,first:$n){edges{node{id viewerVote viewerSaved}}}}`,
			`query($n:Int!){savedPosts(first:$n){edges{node{id viewerSaved author{name}}}}}`,
		} {
			for _, n := range []int{3, 30} {
				rt.Reset()
				a.do(viewer, q, map[string]any{"n": n}).decode(t, &struct{}{})
				trips[fmt.Sprint(n, q)] = rt.Count()
			}
			if small, big := trips[fmt.Sprint(3, q)], trips[fmt.Sprint(30, q)]; big > small {
				t.Errorf("%s: %d round trips for 30 posts, %d for 3", q, big, small)
			}
		}
		withSaved := `query($n:Int!){posts(sort:NEW,first:$n){edges{node{id viewerVote viewerSaved}}}}`
		without := `query($n:Int!){posts(sort:NEW,first:$n){edges{node{id viewerVote}}}}`
		if trips[fmt.Sprint(30, withSaved)] > trips[fmt.Sprint(30, without)] {
			t.Errorf("viewerSaved added round trips: %v", trips)
		}
	})
}

// TestSavedPostsPerViewerInCache reads viewerSaved and savedPosts through the response cache as
// two viewers: neither is served the other's answer, and a save shows at once.
func TestSavedPostsPerViewerInCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		w := newCacheWorld(t, be)
		p := w.posts[0]
		q := `query($p:ID!){post(id:$p){id viewerSaved} savedPosts{totalCount}}`
		read := func(tok string) (bool, int) {
			var d struct {
				Post       struct{ ViewerSaved bool }
				SavedPosts struct{ TotalCount int }
			}
			mustData(t, raw(t, w.a, tok, q, map[string]any{"p": p}), &d)
			return d.Post.ViewerSaved, d.SavedPosts.TotalCount
		}
		for _, tok := range w.tokens[1:3] {
			if s, n := read(tok); s || n != 0 {
				t.Fatalf("before saving: %v %d", s, n)
			}
		}
		mustData(t, raw(t, w.b, w.tokens[1], `mutation($p:ID!){savePost(id:$p){id}}`, map[string]any{"p": p}), nil)
		if s, n := read(w.tokens[1]); !s || n != 1 {
			t.Fatalf("the saver reads %v %d", s, n)
		}
		if s, n := read(w.tokens[2]); s || n != 0 {
			t.Fatalf("another viewer reads %v %d", s, n)
		}
		mustData(t, raw(t, w.b, w.tokens[1], `mutation($p:ID!){unsavePost(id:$p){id}}`, map[string]any{"p": p}), nil)
		if s, n := read(w.tokens[1]); s || n != 0 {
			t.Fatalf("after unsaving: %v %d", s, n)
		}
	})
}

func TestAPIUpdateProfile(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		ann, _ := a.signUp("ann")
		const m = `mutation($b:String,$u:String){updateProfile(bio:$b,avatarUrl:$u){name bio avatarUrl}}`
		type profile struct {
			Name      string
			Bio       *string
			AvatarURL *string `json:"avatarUrl"`
		}
		read := func() profile {
			t.Helper()
			var d struct{ User profile }
			a.do("", `{user(name:"ann"){name bio avatarUrl}}`, nil).decode(t, &d)
			return d.User
		}
		str := func(s string) *string { return &s }
		check := func(step string, got profile, bio, avatar *string) {
			t.Helper()
			if got.Name != "ann" || !sameStringPtr(got.Bio, bio) || !sameStringPtr(got.AvatarURL, avatar) {
				t.Fatalf("%s: %+v, want bio %v avatar %v", step, got, showStringPtr(bio), showStringPtr(avatar))
			}
		}
		check("new user", read(), nil, nil)

		longBio := strings.Repeat("é", store.MaxBioRunes)
		pic := "https://cdn.example.com/ann.png?s=64#x"
		steps := []struct {
			name        string
			vars        map[string]any
			bio, avatar *string
		}{
			{"both", map[string]any{"b": "hello", "u": pic}, str("hello"), str(pic)},
			{"bio only", map[string]any{"b": longBio}, str(longBio), str(pic)},
			{"again", map[string]any{"b": longBio}, str(longBio), str(pic)},
			{"avatar only", map[string]any{"u": "https://x.example/a"}, str(longBio), str("https://x.example/a")},
			{"left out leaves", map[string]any{}, str(longBio), str("https://x.example/a")},
			{"null clears bio", map[string]any{"b": nil}, nil, str("https://x.example/a")},
			{"empty clears avatar", map[string]any{"u": ""}, nil, nil},
		}
		for _, st := range steps {
			var d struct{ UpdateProfile profile }
			a.do(ann, m, st.vars).decode(t, &d)
			check(st.name, d.UpdateProfile, st.bio, st.avatar)
			check(st.name+", read back", read(), st.bio, st.avatar)
		}

		a.do(ann, m, map[string]any{"b": "kept", "u": pic}).decode(t, &struct{}{})
		for _, tc := range []struct {
			name string
			vars map[string]any
		}{
			{"bio too long", map[string]any{"b": longBio + "x"}},
			{"bio with a control character", map[string]any{"b": "a\x07b"}},
			{"http", map[string]any{"u": "http://example.com/a.png"}},
			{"javascript", map[string]any{"u": "javascript:alert(1)"}},
			{"data", map[string]any{"u": "data:image/png;base64,AAAA"}},
			{"relative", map[string]any{"u": "/a.png"}},
			{"scheme-relative", map[string]any{"u": "//example.com/a.png"}},
			{"no host", map[string]any{"u": "https:///a.png"}},
			{"opaque", map[string]any{"u": "https:example.com"}},
			{"port only", map[string]any{"u": "https://:443/a.png"}},
			{"credentials", map[string]any{"u": "https://user:pass@example.com/a.png"}},
			{"user name", map[string]any{"u": "https://user@example.com/a.png"}},
			{"space", map[string]any{"u": "https://example.com/a b.png"}},
			{"newline", map[string]any{"u": "https://example.com/a\n.png"}},
			{"too long", map[string]any{"u": "https://example.com/" + strings.Repeat("a", store.MaxURLBytes)}},
			{"valid bio, bad avatar", map[string]any{"b": "changed", "u": "http://example.com"}},
		} {
			if r := a.do(ann, m, tc.vars); r.code() != httpapi.CodeBadUserInput {
				t.Errorf("%s: %+v, want BAD_USER_INPUT", tc.name, r.Errors)
			}
		}
		check("after refused updates", read(), str("kept"), str(pic))
		if r := a.do("", m, map[string]any{"b": "x"}); r.code() != httpapi.CodeUnauthenticated {
			t.Errorf("anonymous: %+v", r.Errors)
		}

		// The longest URL accepted is MaxURLBytes.
		long := "https://example.com/" + strings.Repeat("a", store.MaxURLBytes-len("https://example.com/"))
		var d struct{ UpdateProfile profile }
		a.do(ann, m, map[string]any{"u": long}).decode(t, &d)
		check("longest url", d.UpdateProfile, str("kept"), &long)
	})
}

// TestUpdateProfileReachesCache reads a user through the response cache, updates the profile
// through another replica, and reads again.
func TestUpdateProfileReachesCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T, be storetest.Backend) {
		w := newCacheWorld(t, be)
		q := `{user(name:"cacher1"){name bio avatarUrl}}`
		bio := func() *string {
			var d struct{ User struct{ Bio *string } }
			mustData(t, raw(t, w.a, "", q, nil), &d)
			return d.User.Bio
		}
		if b := bio(); b != nil {
			t.Fatalf("bio before: %q", *b)
		}
		mustData(t, raw(t, w.b, w.tokens[1], `mutation{updateProfile(bio:"hi there"){bio}}`, nil), nil)
		if b := bio(); b == nil || *b != "hi there" {
			t.Fatalf("bio after the update: %v", b)
		}
	})
}

func sameStringPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func showStringPtr(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
