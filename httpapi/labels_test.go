package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// labelSorts are every post sort of the API, each read by the label tests.
var labelSorts = []string{"HOT", "NEW", "TOP", "TOP_HOUR", "TOP_DAY", "TOP_WEEK", "TOP_MONTH", "TOP_YEAR",
	"ACTIVE", "CONTROVERSIAL", "MOST_COMMENTS"}

// labelViews reads every list a post shows in: the site's rankings in every sort (aliases below),
// a group's page, the home feed, the author's posts, and search.
func labelViews() string {
	q := `query($g:String!,$signed:Boolean!){`
	for _, s := range labelSorts {
		q += fmt.Sprintf(`s%s:posts(sort:%s){totalCount edges{node{title nsfw nsfwHidden}}} `, s, s)
		q += fmt.Sprintf(`g%s:posts(sort:%s,group:$g){totalCount edges{node{title}}} `, s, s)
	}
	return q + `group(name:$g){postCount posts(sort:NEW){totalCount edges{node{title}}}}
		feed @include(if:$signed){edges{node{title}}}
		groupFeed(sort:NEW) @include(if:$signed){totalCount edges{node{title}}}
		savedPosts @include(if:$signed){edges{node{title}}}
		user(name:"lena"){postCount posts{totalCount edges{node{title}}}}
		searchPosts(query:"labelled"){edges{node{title}}}
		searchComments(query:"remark"){edges{node{body}}}
	}`
}

// labelConn is a connection of posts as labelViews reads it.
type labelConn struct {
	TotalCount int
	Edges      []struct {
		Node struct {
			Title      *string
			NSFW       bool
			NSFWHidden bool
		}
	}
}

func (c labelConn) titles() []string {
	var out []string
	for _, e := range c.Edges {
		if e.Node.Title == nil || *e.Node.Title == "" {
			out = append(out, "<withheld>")
		} else {
			out = append(out, *e.Node.Title)
		}
	}
	slices.Sort(out)
	return out
}

// checkLabelViews reads labelViews as the holder of tok and checks that every list holds exactly
// want (sorted titles), with totals that agree.
func checkLabelViews(t *testing.T, a *api, who, tok string, want []string) {
	t.Helper()
	var d map[string]json.RawMessage
	a.do(tok, labelViews(), map[string]any{"g": "art", "signed": tok != ""}).decode(t, &d)
	conn := func(name string, raw json.RawMessage, total bool) {
		t.Helper()
		var c labelConn
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := c.titles(); !slices.Equal(got, want) {
			t.Errorf("%s: %s sees %v, want %v", name, who, got, want)
		}
		if total && c.TotalCount != len(want) {
			t.Errorf("%s: %s sees totalCount %d, want %d", name, who, c.TotalCount, len(want))
		}
		for _, e := range c.Edges {
			if e.Node.NSFWHidden {
				t.Errorf("%s: %s is listed a withheld post", name, who)
			}
		}
	}
	for _, s := range labelSorts {
		conn("posts("+s+")", d["s"+s], true)
		conn("group posts("+s+")", d["g"+s], true)
	}
	var g struct {
		PostCount int
		Posts     json.RawMessage
	}
	mustJSON(t, d["group"], &g)
	conn("group.posts", g.Posts, true)
	if g.PostCount != len(want) {
		t.Errorf("group.postCount: %s sees %d, want %d", who, g.PostCount, len(want))
	}
	var u struct {
		PostCount int
		Posts     json.RawMessage
	}
	mustJSON(t, d["user"], &u)
	conn("user.posts", u.Posts, true)
	if u.PostCount != len(want) {
		t.Errorf("user.postCount: %s sees %d, want %d", who, u.PostCount, len(want))
	}
	if tok != "" {
		conn("feed", d["feed"], false)
		conn("groupFeed", d["groupFeed"], true)
		conn("savedPosts", d["savedPosts"], false)
	}
	conn("searchPosts", d["searchPosts"], false)
	var sc struct {
		Edges []struct{ Node struct{ Body string } }
	}
	mustJSON(t, d["searchComments"], &sc)
	if len(sc.Edges) != len(want) {
		t.Errorf("searchComments: %s sees %d comments, want %d (one on each post seen)", who, len(sc.Edges), len(want))
	}
}

func mustJSON(t *testing.T, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// TestLabelsNSFWReachesOnlyThoseWhoShowIt: an NSFW post is in no listing (every sort, a group's
// page, the home feed, the author's posts, search) of a viewer who does not show NSFW posts —
// anonymous, or signed in with showNsfw false, the default — and in all of them for a viewer who
// does, with totals that agree; read by id it comes withheld. A label change, by the author or a
// moderator, moves the post in or out at once; anyone else is FORBIDDEN.
func TestLabelsNSFWReachesOnlyThoseWhoShowIt(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		lena, lenaID := a.signUp("lena")
		hide, _ := a.signUp("hide")
		show, _ := a.signUp("show")
		mod, _ := a.signUp("mod") // makes the group "art": its moderator
		a.do(mod, `mutation{createGroup(name:"art"){id}}`, nil).decode(t, &struct{}{})
		for _, tok := range []string{hide, show} {
			a.do(tok, `mutation($id:ID!){follow(userId:$id){id}}`, map[string]any{"id": lenaID}).decode(t, &struct{}{})
			a.do(tok, `mutation{joinGroup(name:"art"){id}}`, nil).decode(t, &struct{}{})
		}
		var me struct{ Viewer struct{ ShowNsfw bool } }
		a.do(hide, `{viewer{showNsfw}}`, nil).decode(t, &me)
		if me.Viewer.ShowNsfw {
			t.Fatal("showNsfw is true for a new account")
		}
		var upd struct{ UpdateProfile struct{ ShowNsfw bool } }
		a.do(show, `mutation{updateProfile(showNsfw:true){showNsfw}}`, nil).decode(t, &upd)
		if !upd.UpdateProfile.ShowNsfw {
			t.Fatal("updateProfile(showNsfw: true) answered showNsfw false")
		}
		// Another user's setting is theirs alone.
		var other struct{ User struct{ ShowNsfw bool } }
		a.do(hide, `{user(name:"show"){showNsfw}}`, nil).decode(t, &other)
		if other.User.ShowNsfw {
			t.Error("another user's showNsfw is shown")
		}

		create := func(title string, nsfw, spoiler bool) string {
			t.Helper()
			var d struct{ CreatePost struct{ ID string } }
			a.do(lena, `mutation($t:String!,$n:Boolean,$s:Boolean){createPost(input:{title:$t,body:"the butler did it",
				url:"https://example.com/x",groups:["art"],nsfw:$n,spoiler:$s}){id}}`,
				map[string]any{"t": title, "n": nsfw, "s": spoiler}).decode(t, &d)
			a.do(mod, `mutation($p:ID!){createComment(postId:$p,body:"a remark"){id}}`,
				map[string]any{"p": d.CreatePost.ID}).decode(t, &struct{}{})
			for _, tok := range []string{hide, show} {
				a.do(tok, `mutation($p:ID!){savePost(id:$p){id}}`, map[string]any{"p": d.CreatePost.ID}).decode(t, &struct{}{})
			}
			return d.CreatePost.ID
		}
		safe := create("labelled safe", false, false)
		adult := create("labelled adult", true, false)
		create("labelled spoiler", false, true)
		a.settle()

		sfw := []string{"labelled safe", "labelled spoiler"}
		all := []string{"labelled adult", "labelled safe", "labelled spoiler"}
		checkLabelViews(t, a, "an anonymous reader", "", sfw)
		checkLabelViews(t, a, "a viewer who hides NSFW", hide, sfw)
		checkLabelViews(t, a, "a viewer who shows NSFW", show, all)

		// Read by id: withheld from those who hide NSFW, its thread with it, whole for the others.
		type postView struct {
			Title, URL, Body *string
			NSFW, NSFWHidden bool
			Comments         struct{ Nodes []struct{ Body *string } }
		}
		read := func(tok, id string) postView {
			t.Helper()
			var d struct {
				Post postView
				Node struct{ NSFWHidden bool }
			}
			a.do(tok, `query($id:ID!){post(id:$id){title url body nsfw nsfwHidden comments{nodes{body}}} node(id:$id){...on Post{nsfwHidden}}}`,
				map[string]any{"id": id}).decode(t, &d)
			if d.Node.NSFWHidden != d.Post.NSFWHidden {
				t.Errorf("node(id) and post(id) disagree on nsfwHidden")
			}
			return d.Post
		}
		for _, tok := range []string{"", hide} {
			if p := read(tok, adult); !p.NSFW || !p.NSFWHidden || deref(p.Title) != "" || p.URL != nil || deref(p.Body) != "" ||
				len(p.Comments.Nodes) != 0 {
				t.Errorf("the NSFW post read by id by one who hides NSFW: %+v, want it marked and withheld with its thread", p)
			}
		}
		if p := read(show, adult); !p.NSFW || p.NSFWHidden || p.Title == nil || *p.Title != "labelled adult" || p.Body == nil || p.URL == nil ||
			len(p.Comments.Nodes) != 1 || deref(p.Comments.Nodes[0].Body) != "a remark" {
			t.Errorf("the NSFW post read by id by one who shows NSFW: %+v", p)
		}

		// Labels change: others than the author and the group's moderators may not.
		setLabels := `mutation($p:ID!,$n:Boolean){setPostLabels(id:$p,nsfw:$n){nsfw}}`
		if code := a.do(hide, setLabels, map[string]any{"p": adult, "n": false}).code(); code != "FORBIDDEN" {
			t.Fatalf("a stranger labelling a post: %q, want FORBIDDEN", code)
		}
		var set struct{ SetPostLabels struct{ NSFW bool } }
		a.do(mod, setLabels, map[string]any{"p": adult, "n": false}).decode(t, &set)
		if set.SetPostLabels.NSFW {
			t.Fatal("setPostLabels(nsfw: false) answered nsfw true")
		}
		a.do(lena, `mutation($p:ID!){editPost(id:$p,nsfw:true){id}}`, map[string]any{"p": safe}).decode(t, &struct{}{})
		a.settle()
		swapped := []string{"labelled adult", "labelled spoiler"}
		checkLabelViews(t, a, "a viewer who hides NSFW, after the labels changed", hide, swapped)
		checkLabelViews(t, a, "a viewer who shows NSFW, after the labels changed", show, all)
		// Turning the setting off hides them again.
		a.do(show, `mutation{updateProfile(showNsfw:false){id}}`, nil).decode(t, &struct{}{})
		checkLabelViews(t, a, "a viewer who turned NSFW off", show, swapped)
	})
}

// TestLabelsSpoilerBody: a spoiler is listed with its body withheld ("") unless asked for with
// revealSpoiler, for every viewer, in both executors' answers (a listing and a single post).
func TestLabelsSpoilerBody(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		tok, _ := a.signUp("sam")
		var c struct{ CreatePost struct{ ID string } }
		a.do(tok, `mutation{createPost(input:{title:"ending",body:"rosebud",spoiler:true}){id}}`, nil).decode(t, &c)
		var d struct {
			Post struct {
				Spoiler        bool
				Body, Revealed *string
			}
			Posts struct {
				Nodes []struct{ Body, Revealed *string }
			}
		}
		a.do("", `query($p:ID!){post(id:$p){spoiler body revealed:body(revealSpoiler:true)}
			posts(sort:NEW){nodes{body revealed:body(revealSpoiler:true)}}}`, map[string]any{"p": c.CreatePost.ID}).decode(t, &d)
		if !d.Post.Spoiler || deref(d.Post.Body) != "" || d.Post.Revealed == nil || *d.Post.Revealed != "rosebud" {
			t.Errorf("spoiler read by id: spoiler %v body %v revealed %v", d.Post.Spoiler, d.Post.Body, d.Post.Revealed)
		}
		if len(d.Posts.Nodes) != 1 || deref(d.Posts.Nodes[0].Body) != "" || d.Posts.Nodes[0].Revealed == nil {
			t.Errorf("spoiler listed: %+v", d.Posts.Nodes)
		}
	})
}

// TestLabelsCacheOneAnswerPerSetting: viewers who show NSFW posts and viewers who do not read the
// same pages at once, over and over, through the response cache: each gets only the answer of
// their setting, and the answer of a setting is shared (a second viewer of the same setting hits
// the first's entry) rather than kept per viewer.
func TestLabelsCacheOneAnswerPerSetting(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		author, _ := a.signUp("auth")
		a.do(author, `mutation{createPost(input:{title:"plain",groups:["mix"]}){id}}`, nil).decode(t, &struct{}{})
		var adult struct{ CreatePost struct{ ID string } }
		a.do(author, `mutation{createPost(input:{title:"adult",groups:["mix"],nsfw:true}){id}}`, nil).decode(t, &adult)
		var hiders, showers []string
		for i := range 3 {
			h, _ := a.signUp(fmt.Sprintf("hider%d", i))
			s, _ := a.signUp(fmt.Sprintf("shower%d", i))
			a.do(s, `mutation{updateProfile(showNsfw:true){id}}`, nil).decode(t, &struct{}{})
			hiders, showers = append(hiders, h), append(showers, s)
		}
		pages := []struct {
			q    string
			vars map[string]any
			// hidden and shown are what a part of the answer holds for each setting.
			hidden, shown string
		}{
			{`{posts(sort:NEW){totalCount nodes{title}}}`, nil, `"totalCount":1,"nodes":[{"title":"plain"}]`, `"totalCount":2,"nodes":[{"title":"adult"},{"title":"plain"}]`},
			{`{group(name:"mix"){postCount posts(sort:HOT){totalCount nodes{title}}}}`, nil, `"postCount":1`, `"postCount":2`},
			{`query($p:ID!){post(id:$p){title nsfwHidden}}`, map[string]any{"p": adult.CreatePost.ID}, `{"title":"","nsfwHidden":true}`, `{"title":"adult","nsfwHidden":false}`},
		}
		var wg sync.WaitGroup
		errs := make(chan string, 1000)
		readers := append(append([]string{""}, hiders...), showers...)
		for round := range 4 {
			for _, tok := range readers {
				wg.Go(func() {
					for _, p := range pages {
						body := raw(t, a.h, tok, p.q, p.vars)
						want, bad := p.hidden, p.shown
						if slices.Contains(showers, tok) {
							want, bad = p.shown, p.hidden
						}
						if !bytes.Contains(body, []byte(want)) || bytes.Contains(body, []byte(bad)) {
							errs <- fmt.Sprintf("round %d: %s got %s", round, p.q, body)
						}
					}
				})
			}
			wg.Wait()
		}
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		// Shared, not per viewer: after one viewer of each setting read a page, the others of
		// that setting are served the same entry.
		q := `{posts(sort:TOP){totalCount nodes{title nsfw}}}`
		for _, group := range [][]string{hiders, showers} {
			first, _ := rawCached(t, a.h, group[0], q, nil)
			for _, tok := range group[1:] {
				body, how := rawCached(t, a.h, tok, q, nil)
				if how != "hit" || !bytes.Equal(body, first) {
					t.Errorf("a second viewer of the same setting: %s %s, want a hit of %s", how, body, first)
				}
			}
		}
		if _, how := rawCached(t, a.h, "", q, nil); how != "hit" {
			t.Errorf("an anonymous reader after a signed-in one who hides NSFW: %s, want a hit", how)
		}
		_ = httpapi.CacheHeader
	})
}

// TestLabelsLiveFeeds: postPublished and feed deliver a new NSFW post to a subscriber who shows
// NSFW posts and not to one who does not (nor to an anonymous one), over every transport, while
// both get the posts that are not; postChanged of an NSFW post comes withheld to the latter.
func TestLabelsLiveFeeds(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		author, authorID := a.signUp("poster")
		hide, _ := a.signUp("hider")
		show, _ := a.signUp("shower")
		a.do(show, `mutation{updateProfile(showNsfw:true){id}}`, nil).decode(t, &struct{}{})
		for _, tok := range []string{hide, show} {
			a.do(tok, `mutation($id:ID!){follow(userId:$id){id}}`, map[string]any{"id": authorID}).decode(t, &struct{}{})
		}
		var adult struct{ CreatePost struct{ ID string } }
		a.do(author, `mutation{createPost(input:{title:"old adult",nsfw:true}){id}}`, nil).decode(t, &adult)
		post := func(title string, nsfw bool) {
			t.Helper()
			a.do(author, `mutation($t:String!,$n:Boolean){createPost(input:{title:$t,nsfw:$n}){id}}`,
				map[string]any{"t": title, "n": nsfw}).decode(t, &struct{}{})
		}
		for _, proto := range protos {
			t.Run(proto, func(t *testing.T) {
				published := `subscription{postPublished{title nsfw}}`
				anonPosts := subscribe(t, a.srv.URL, proto, "", published, nil)
				hidePosts := subscribe(t, a.srv.URL, proto, hide, published, nil)
				showPosts := subscribe(t, a.srv.URL, proto, show, published, nil)
				hideFeed := subscribe(t, a.srv.URL, proto, hide, `subscription{feed{title}}`, nil)
				showFeed := subscribe(t, a.srv.URL, proto, show, `subscription{feed{title}}`, nil)
				changed := `subscription($p:ID!){postChanged(postId:$p){title nsfwHidden upvotes}}`
				hideChanged := subscribe(t, a.srv.URL, proto, hide, changed, map[string]any{"p": adult.CreatePost.ID})
				showChanged := subscribe(t, a.srv.URL, proto, show, changed, map[string]any{"p": adult.CreatePost.ID})
				// What an event's response reads below it is read as the subscriber's queries read it.
				nested := `subscription{postPublished{title author{posts(first:50){nodes{title}}}}}`
				hideNested := subscribe(t, a.srv.URL, proto, hide, nested, nil)
				showNested := subscribe(t, a.srv.URL, proto, show, nested, nil)
				all := []sub{anonPosts, hidePosts, showPosts, hideFeed, showFeed, hideChanged, showChanged, hideNested, showNested}
				defer func() {
					for _, s := range all {
						s.close()
					}
					waitSubscribers(t, a, 0)
				}()
				waitSubscribers(t, a, len(all))

				post("adult "+proto, true)
				post("plain "+proto, false)
				a.do(hide, `mutation($p:ID!){votePost(postId:$p,direction:UP){id}}`, map[string]any{"p": adult.CreatePost.ID}).decode(t, &struct{}{})
				title := func(s sub, field string) string {
					t.Helper()
					var d map[string]struct{ Title *string }
					next(t, s, &d)
					if d[field].Title == nil || *d[field].Title == "" {
						return "<withheld>"
					}
					return *d[field].Title
				}
				for _, tc := range []struct{ who, got, want string }{
					{"an anonymous postPublished", title(anonPosts, "postPublished"), "plain " + proto},
					{"a hider's postPublished", title(hidePosts, "postPublished"), "plain " + proto},
					{"a shower's postPublished", title(showPosts, "postPublished"), "adult " + proto},
					{"a shower's postPublished", title(showPosts, "postPublished"), "plain " + proto},
					{"a hider's feed", title(hideFeed, "feed"), "plain " + proto},
					{"a shower's feed", title(showFeed, "feed"), "adult " + proto},
					{"a shower's feed", title(showFeed, "feed"), "plain " + proto},
					{"a hider's postChanged", title(hideChanged, "postChanged"), "<withheld>"},
					{"a shower's postChanged", title(showChanged, "postChanged"), "old adult"},
				} {
					if tc.got != tc.want {
						t.Errorf("%s: %q, want %q", tc.who, tc.got, tc.want)
					}
				}
				a.do(hide, `mutation($p:ID!){votePost(postId:$p,direction:NONE){id}}`, map[string]any{"p": adult.CreatePost.ID}).decode(t, &struct{}{})
				title(hideChanged, "postChanged")
				title(showChanged, "postChanged")
				authorsPosts := func(s sub) (string, map[string]bool) {
					t.Helper()
					var d struct {
						PostPublished struct {
							Title  string
							Author struct {
								Posts struct{ Nodes []struct{ Title string } }
							}
						}
					}
					next(t, s, &d)
					titles := map[string]bool{}
					for _, n := range d.PostPublished.Author.Posts.Nodes {
						titles[n.Title] = true
					}
					return d.PostPublished.Title, titles
				}
				if got, titles := authorsPosts(hideNested); got != "plain "+proto || titles["adult "+proto] || titles["old adult"] || !titles["plain "+proto] {
					t.Errorf("a hider's postPublished %q with its author's posts %v: want the NSFW ones left out", got, titles)
				}
				for _, want := range []string{"adult " + proto, "plain " + proto} {
					if got, titles := authorsPosts(showNested); got != want || !titles["adult "+proto] || !titles["old adult"] {
						t.Errorf("a shower's postPublished %q with its author's posts %v: want %q, the NSFW ones in", got, titles, want)
					}
				}

				// The thread of an NSFW post is withheld with it: its new comments reach only those
				// who show NSFW posts, and a notification from it comes withheld.
				var thread struct{ CreatePost struct{ ID string } }
				a.do(author, `mutation($t:String!){createPost(input:{title:$t,nsfw:true}){id}}`,
					map[string]any{"t": "thread " + proto}).decode(t, &thread)
				added := `subscription($p:ID!){commentAdded(postId:$p){body}}`
				vars := map[string]any{"p": thread.CreatePost.ID}
				hideAdded := subscribe(t, a.srv.URL, proto, hide, added, vars)
				showAdded := subscribe(t, a.srv.URL, proto, show, added, vars)
				hideNotes := subscribe(t, a.srv.URL, proto, hide, `subscription{notificationAdded{comment{body} post{title nsfwHidden}}}`, nil)
				defer func() {
					for _, s := range []sub{hideAdded, showAdded, hideNotes} {
						s.close()
					}
				}()
				waitSubscribers(t, a, len(all)+3)
				comment := func(tok, parent, body string) string {
					t.Helper()
					var d struct{ CreateComment struct{ ID string } }
					a.do(tok, `mutation($p:ID!,$r:ID,$b:String!){createComment(postId:$p,parentId:$r,body:$b){id}}`,
						map[string]any{"p": thread.CreatePost.ID, "r": parent, "b": body}).decode(t, &d)
					return d.CreateComment.ID
				}
				body := func(s sub) string {
					t.Helper()
					var d struct{ CommentAdded struct{ Body string } }
					next(t, s, &d)
					return d.CommentAdded.Body
				}
				mine := comment(hide, "", "a question")
				comment(author, mine, "an answer")
				a.settle() // the reply's notification
				// Each event is read when its subscribers take it (the post as it is then): the
				// label comes off after the first two comments and the notification were read.
				for _, want := range []string{"a question", "an answer"} {
					if got := body(showAdded); got != want {
						t.Errorf("a shower's commentAdded: %q, want %q", got, want)
					}
				}
				var note struct {
					NotificationAdded struct {
						Comment *struct{ Body *string }
						Post    struct {
							Title      string
							NSFWHidden bool
						}
					}
				}
				next(t, hideNotes, &note)
				if n := note.NotificationAdded; n.Comment == nil || n.Comment.Body != nil || n.Post.Title != "" || !n.Post.NSFWHidden {
					t.Errorf("a hider's notification of a reply in an NSFW thread: %+v, want its comment and post withheld", n)
				}
				a.do(author, `mutation($p:ID!){setPostLabels(id:$p,nsfw:false){nsfw}}`, vars).decode(t, &struct{}{})
				comment(author, "", "now for everyone")
				if got := body(showAdded); got != "now for everyone" {
					t.Errorf("a shower's commentAdded: %q, want %q", got, "now for everyone")
				}
				if got := body(hideAdded); got != "now for everyone" {
					t.Errorf("a hider's commentAdded: %q first, want the comments of the NSFW post left out", got)
				}
			})
		}
	})
}

// TestLabelsNSFWGroup: every post of a group labelled NSFW is NSFW — in that group and in every
// other list it is in (a post in two groups included) — from the moment the label is set, before
// the job that re-indexes the group's posts has run, and with totals that agree once it has; the
// label taken off brings them back. Only the group's moderators and admins label it.
func TestLabelsNSFWGroup(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		owner, _ := a.signUp("owner")
		hide, _ := a.signUp("hides")
		show, _ := a.signUp("shows")
		a.do(show, `mutation{updateProfile(showNsfw:true){id}}`, nil).decode(t, &struct{}{})
		var den struct{ CreateGroup struct{ NSFW bool } }
		a.do(owner, `mutation{createGroup(name:"den",nsfw:true){nsfw}}`, nil).decode(t, &den)
		if !den.CreateGroup.NSFW {
			t.Fatal("createGroup(nsfw: true) answered nsfw false")
		}
		a.do(owner, `mutation{createGroup(name:"open"){nsfw}}`, nil).decode(t, &struct{}{})
		post := func(title string, groups ...string) string {
			t.Helper()
			var d struct{ CreatePost struct{ ID string } }
			a.do(owner, `mutation($t:String!,$g:[String!]){createPost(input:{title:$t,groups:$g}){id}}`,
				map[string]any{"t": title, "g": groups}).decode(t, &d)
			return d.CreatePost.ID
		}
		post("in den", "den")
		cross := post("cross", "den", "open")
		post("free", "open")
		type view struct {
			Posts struct {
				TotalCount int
				Nodes      []struct {
					Title *string
					NSFW  bool
				}
			}
			Open struct {
				Posts struct {
					TotalCount int
					Nodes      []struct{ Title *string }
				}
			}
			Post struct {
				NSFW, NSFWHidden bool
			}
		}
		read := func(tok string) (titles []string, total int, open []string, openTotal int, p struct{ NSFW, NSFWHidden bool }) {
			t.Helper()
			var d view
			a.do(tok, `query($p:ID!){posts(sort:NEW){totalCount nodes{title nsfw}}
				open:group(name:"open"){posts(sort:NEW){totalCount nodes{title}}} post(id:$p){nsfw nsfwHidden}}`,
				map[string]any{"p": cross}).decode(t, &d)
			for _, n := range d.Posts.Nodes {
				titles = append(titles, *n.Title)
			}
			for _, n := range d.Open.Posts.Nodes {
				open = append(open, *n.Title)
			}
			slices.Sort(titles)
			slices.Sort(open)
			return titles, d.Posts.TotalCount, open, d.Open.Posts.TotalCount, d.Post
		}
		check := func(when string, wantHidden, wantOpen []string, totals bool) {
			t.Helper()
			got, total, open, openTotal, p := read(hide)
			if !slices.Equal(got, wantHidden) || !slices.Equal(open, wantOpen) {
				t.Errorf("%s: a viewer hiding NSFW sees %v and in open %v, want %v and %v", when, got, open, wantHidden, wantOpen)
			}
			if totals && (total != len(wantHidden) || openTotal != len(wantOpen)) {
				t.Errorf("%s: a viewer hiding NSFW sees totals %d and %d, want %d and %d", when, total, openTotal, len(wantHidden), len(wantOpen))
			}
			if !p.NSFW || !p.NSFWHidden {
				t.Errorf("%s: the post in den and open, read by id by a viewer hiding NSFW: %+v", when, p)
			}
			all, total, _, _, p := read(show)
			if len(all) != 3 || total != 3 || !p.NSFW || p.NSFWHidden {
				t.Errorf("%s: a viewer showing NSFW sees %v (total %d), %+v", when, all, total, p)
			}
		}
		check("den labelled at its creation", []string{"free"}, []string{"free"}, true)

		if code := a.do(hide, `mutation{updateGroup(name:"open",nsfw:true){nsfw}}`, nil).code(); code != "FORBIDDEN" {
			t.Fatalf("a stranger labelling a group: %q, want FORBIDDEN", code)
		}
		var upd struct{ UpdateGroup struct{ NSFW bool } }
		a.do(owner, `mutation{updateGroup(name:"open",nsfw:true){nsfw}}`, nil).decode(t, &upd)
		if !upd.UpdateGroup.NSFW {
			t.Fatal("updateGroup(nsfw: true) answered nsfw false")
		}
		// At once, before the job re-indexes the group's posts: none reaches a viewer hiding NSFW.
		check("open labelled, its posts not yet re-indexed", nil, nil, false)
		a.settle()
		check("open labelled and its posts re-indexed", nil, nil, true)
		a.do(owner, `mutation{updateGroup(name:"open",nsfw:false){nsfw}}`, nil).decode(t, &struct{}{})
		a.settle()
		check("open's label taken off", []string{"free"}, []string{"free"}, true)
	})
}

// deref is *s, "" for nil: a withheld title or body is "".
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestLabelsNSFWGroupsDirectory: through the API and its response cache, a viewer hiding NSFW
// (anonymous too) finds no NSFW group in the directory nor in searchGroups, with totals that
// count what they see, while one showing NSFW sees them all; a group's label change reaches both
// answers at once; and the moderator's label is in the group's moderation log.
func TestLabelsNSFWGroupsDirectory(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		owner, _ := a.signUp("owner")
		show, _ := a.signUp("shows")
		a.do(show, `mutation{updateProfile(showNsfw:true){id}}`, nil).decode(t, &struct{}{})
		a.do(owner, `mutation{createGroup(name:"den-owls",nsfw:true,description:"owls at night"){nsfw}}`, nil).decode(t, &struct{}{})
		a.do(owner, `mutation{createGroup(name:"open-owls",description:"owls by day"){nsfw}}`, nil).decode(t, &struct{}{})
		type conn struct {
			TotalCount int
			Nodes      []struct{ Name string }
		}
		read := func(tok string) (dir, found []string, dirTotal, foundTotal int) {
			t.Helper()
			var d struct{ Groups, SearchGroups conn }
			a.do(tok, `{groups(sort:NAME,first:10){totalCount nodes{name}} searchGroups(query:"owls"){totalCount nodes{name}}}`, nil).decode(t, &d)
			for _, n := range d.Groups.Nodes {
				dir = append(dir, n.Name)
			}
			for _, n := range d.SearchGroups.Nodes {
				found = append(found, n.Name)
			}
			slices.Sort(found)
			return dir, found, d.Groups.TotalCount, d.SearchGroups.TotalCount
		}
		check := func(when string, hidden, all []string) {
			t.Helper()
			for range 2 { // the second read is served by the cache
				for _, tok := range []string{"", owner, show} {
					want := hidden
					if tok == show {
						want = all
					}
					dir, found, dt, ft := read(tok)
					if !slices.Equal(dir, want) || !slices.Equal(found, want) || dt != len(want) || ft != len(want) {
						t.Errorf("%s: viewer %q sees directory %v (%d) and search %v (%d), want %v", when, tok, dir, dt, found, ft, want)
					}
				}
			}
		}
		check("den labelled at creation", []string{"open-owls"}, []string{"den-owls", "open-owls"})
		a.do(owner, `mutation{updateGroup(name:"open-owls",nsfw:true){nsfw}}`, nil).decode(t, &struct{}{})
		check("both labelled", nil, []string{"den-owls", "open-owls"})
		a.do(owner, `mutation{updateGroup(name:"den-owls",nsfw:false){nsfw}}`, nil).decode(t, &struct{}{})
		check("den's label taken off", []string{"den-owls"}, []string{"den-owls", "open-owls"})

		var log struct {
			ModLog struct {
				Nodes []struct {
					Action string
					Label  *string
				}
			}
		}
		a.do("", `{modLog(group:"den-owls",first:5){nodes{action label}}}`, nil).decode(t, &log)
		if n := log.ModLog.Nodes; len(n) != 1 || n[0].Action != "UNLABEL_GROUP" || n[0].Label == nil || *n[0].Label != "NSFW" {
			t.Errorf("den-owls' moderation log: %+v, want one UNLABEL_GROUP of NSFW", n)
		}
	})
}
