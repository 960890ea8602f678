package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// relayPage is one page of any list, reduced to what paging checks.
type relayPage struct {
	ids, cursors     []string
	ranks            []int // leaderboard pages: each item's rank
	hasPrev, hasNext bool
	total            int
}

func (p relayPage) start() string { return p.cursors[0] }
func (p relayPage) end() string   { return p.cursors[len(p.cursors)-1] }

// pageOfItems reduces a store page to a relayPage.
func pageOfItems[T any](p *store.Page[T], err error, id func(T) string) (relayPage, error) {
	if err != nil {
		return relayPage{}, err
	}
	rp := relayPage{cursors: p.Cursors, hasPrev: p.HasPrev, hasNext: p.HasNext, total: p.Total}
	for _, it := range p.Items {
		rp.ids = append(rp.ids, id(it))
	}
	return rp, nil
}

func postID(p *store.Post) string { return p.ID }

// relayList is one list as a connection pages it, and how the test changes it.
type relayList struct {
	// page reads one page with a fresh loader.
	page func(w store.Window) (relayPage, error)
	// grow adds an item to the list; nil when the test does not.
	grow func()
	// shrink removes the item id from the list; nil when the test does not.
	shrink func(id string)
}

// relayWorld is a store in which a test builds one list.
type relayWorld struct {
	t      *testing.T
	s      *store.Store
	ctx    context.Context
	now    func() time.Time
	names  int
	author store.UserKey // the author of the list's posts, for the kinds that need one
}

// user signs up a new user and returns their key.
func (w *relayWorld) user() store.UserKey {
	w.t.Helper()
	w.names++
	sess, err := w.s.SignUp(w.ctx, fmt.Sprintf("user%03d", w.names), "password1")
	if err != nil {
		w.t.Fatal(err)
	}
	return sess.User.Key()
}

func (w *relayWorld) post(author store.UserKey, groups ...string) *store.Post {
	w.t.Helper()
	w.names++
	p, err := w.s.CreatePost(w.ctx, author, store.NewPost{Title: fmt.Sprint("post ", w.names), Groups: groups})
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *relayWorld) comment(author store.UserKey, post *store.Post, parent *store.Comment) *store.Comment {
	w.t.Helper()
	in := store.NewComment{PostID: post.ID, Body: "a comment"}
	if parent != nil {
		in.ParentID = parent.ID
	}
	c, err := w.s.CreateComment(w.ctx, author, in)
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

func (w *relayWorld) follow(a, b store.UserKey) {
	w.t.Helper()
	if _, err := w.s.Follow(w.ctx, a, b); err != nil {
		w.t.Fatal(err)
	}
}

func (w *relayWorld) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

// posts is a list of posts that read pages; new posts by author (in groups) grow it.
func (w *relayWorld) posts(author store.UserKey, groups []string, read func(l *store.Loader, win store.Window) (*store.Page[*store.Post], error)) relayList {
	return relayList{
		page: func(win store.Window) (relayPage, error) {
			settle(w.t, w.s) // feeds: the pushes of new posts, the removal of deleted ones
			p, err := read(w.s.NewLoader(), win)
			return pageOfItems(p, err, postID)
		},
		grow: func() { w.post(author, groups...) },
		shrink: func(id string) {
			p, err := w.s.NewLoader().Post(w.ctx, id)
			w.must(err)
			w.must(w.s.DeletePost(w.ctx, p.Author, id))
		},
	}
}

// relayKinds builds every kind of list a connection pages, each with about ten items.
var relayKinds = []struct {
	name  string
	opts  store.Options
	build func(w *relayWorld) relayList
}{
	{"posts NEW", store.Options{}, func(w *relayWorld) relayList {
		a := w.user()
		for range 10 {
			w.post(a)
		}
		return w.posts(a, nil, func(l *store.Loader, win store.Window) (*store.Page[*store.Post], error) {
			return l.Posts(w.ctx, store.SortNew, "", win, nil)
		})
	}},
	{"posts TOP", store.Options{}, func(w *relayWorld) relayList {
		a, b := w.user(), w.user()
		for i := range 10 {
			p := w.post(a)
			if i%3 == 0 {
				_, err := w.s.VotePost(w.ctx, b, p.ID, 1)
				w.must(err)
			}
		}
		return w.posts(a, nil, func(l *store.Loader, win store.Window) (*store.Page[*store.Post], error) {
			return l.Posts(w.ctx, store.SortTop, "", win, nil)
		})
	}},
	{"group posts HOT", store.Options{}, func(w *relayWorld) relayList {
		a := w.user()
		for i := range 13 {
			if i%4 == 3 {
				w.post(a) // not in the group
			} else {
				w.post(a, "go")
			}
		}
		return w.posts(a, []string{"go"}, func(l *store.Loader, win store.Window) (*store.Page[*store.Post], error) {
			return l.Posts(w.ctx, store.SortHot, "go", win, nil)
		})
	}},
	{"user posts", store.Options{}, func(w *relayWorld) relayList {
		a, b := w.user(), w.user()
		for range 10 {
			w.post(a)
			w.post(b)
		}
		return w.posts(a, nil, func(l *store.Loader, win store.Window) (*store.Page[*store.Post], error) {
			return l.UserPosts(w.ctx, a, store.SortNew, win, nil)
		})
	}},
	{"posts NEW, NSFW shown", store.Options{}, nsfwPostsOf(nil, func(w *relayWorld, l *store.Loader, win store.Window) (*store.Page[*store.Post], error) {
		return l.Posts(w.ctx, store.SortNew, "", win, nil)
	})},
	{"group posts TOP_DAY, NSFW shown", store.Options{}, nsfwPostsOf([]string{"go"}, func(w *relayWorld, l *store.Loader, win store.Window) (*store.Page[*store.Post], error) {
		return l.Posts(w.ctx, store.SortTopDay, "go", win, nil)
	})},
	{"user posts, NSFW shown", store.Options{}, nsfwPostsOf(nil, func(w *relayWorld, l *store.Loader, win store.Window) (*store.Page[*store.Post], error) {
		return l.UserPosts(w.ctx, w.author, store.SortNew, win, nil)
	})},
	{"comments NEW", store.Options{}, commentsOf(store.CommentsNew, false)},
	{"comments OLD", store.Options{}, commentsOf(store.CommentsOld, false)},
	{"comments TOP", store.Options{}, commentsOf(store.CommentsTop, false)},
	{"comments BEST", store.Options{}, commentsOf(store.CommentsBest, false)},
	{"comments CONTROVERSIAL", store.Options{}, commentsOf(store.CommentsControversial, false)},
	{"replies BEST", store.Options{}, commentsOf(store.CommentsBest, true)},
	{"replies NEW", store.Options{}, commentsOf(store.CommentsNew, true)},
	{"followers", store.Options{}, func(w *relayWorld) relayList {
		target := w.user()
		for range 10 {
			w.follow(w.user(), target)
		}
		return relayList{
			page: func(win store.Window) (relayPage, error) {
				p, err := w.s.NewLoader().Followers(w.ctx, target, win, nil)
				return pageOfItems(p, err, func(u *store.User) string { return u.ID })
			},
			grow: func() { w.follow(w.user(), target) },
			shrink: func(id string) {
				_, err := w.s.Unfollow(w.ctx, uk(id), target)
				w.must(err)
			},
		}
	}},
	{"following", store.Options{}, func(w *relayWorld) relayList {
		me := w.user()
		for range 10 {
			w.follow(me, w.user())
		}
		return relayList{
			page: func(win store.Window) (relayPage, error) {
				p, err := w.s.NewLoader().Following(w.ctx, me, win, nil)
				return pageOfItems(p, err, func(u *store.User) string { return u.ID })
			},
			grow: func() { w.follow(me, w.user()) },
			shrink: func(id string) {
				_, err := w.s.Unfollow(w.ctx, me, uk(id))
				w.must(err)
			},
		}
	}},
	{"leaderboard", store.Options{}, func(w *relayWorld) relayList {
		var users []store.UserKey
		for range 10 {
			users = append(users, w.user())
		}
		// Some karma, so that the list has both distinct scores and ties.
		for i, u := range users[:4] {
			p := w.post(u)
			for _, v := range users[5 : 6+i] {
				_, err := w.s.VotePost(w.ctx, v, p.ID, 1)
				w.must(err)
			}
		}
		return relayList{
			page: func(win store.Window) (relayPage, error) {
				p, err := w.s.NewLoader().Leaderboard(w.ctx, win, nil)
				rp, err := pageOfItems(p, err, func(r *store.Ranked) string { return r.User.ID })
				if err == nil {
					for _, r := range p.Items {
						rp.ranks = append(rp.ranks, r.Rank)
					}
				}
				return rp, err
			},
			grow: func() { w.user() },
		}
	}},
	{"notifications", store.Options{}, notificationsOf(false)},
	{"notifications unread", store.Options{}, notificationsOf(true)},
	{"feed pushed", store.Options{}, feedOf(false)},
	{"feed pulled", store.Options{Feed: store.FeedOptions{FanoutLimit: 1}}, feedOf(true)},
	{"feed full", store.Options{Feed: store.FeedOptions{FanoutLimit: 1, Cap: 6}}, func(w *relayWorld) relayList {
		// The reader gets a's posts pushed and reads b's: a's fill the feed, which then keeps
		// only the newest six, and b's older than those are left out.
		reader, a, b := w.user(), w.user(), w.user()
		w.follow(w.user(), b)
		w.follow(reader, a)
		w.follow(reader, b)
		for range 9 {
			w.post(a)
			w.post(b)
		}
		l := w.posts(b, nil, func(l *store.Loader, win store.Window) (*store.Page[*store.Post], error) {
			return l.Feed(w.ctx, reader, win, nil)
		})
		l.grow = nil // a new post pushes the oldest out of a full feed
		return l
	}},
	{"scheduled posts", store.Options{MaxScheduledPosts: 50}, func(w *relayWorld) relayList {
		me := w.user()
		at := w.now().Add(time.Hour)
		n := 0
		schedule := func() {
			n++
			// Three posts a minute: ties, whatever the clock.
			_, err := w.s.CreatePost(w.ctx, me, store.NewPost{Title: "later", PublishAt: at.Add(time.Duration(n/3) * time.Minute)})
			w.must(err)
		}
		for range 10 {
			schedule()
		}
		return relayList{
			page: func(win store.Window) (relayPage, error) {
				p, err := w.s.NewLoader().ScheduledPosts(w.ctx, me, win)
				return pageOfItems(p, err, postID)
			},
			grow:   schedule,
			shrink: func(id string) { w.must(w.s.CancelScheduledPost(w.ctx, me, id)) },
		}
	}},
}

// commentsOf builds a post's comments, or a comment's replies, in a sort.
func commentsOf(sort store.CommentSort, replies bool) func(w *relayWorld) relayList {
	return func(w *relayWorld) relayList {
		a, b := w.user(), w.user()
		post := w.post(a)
		var parent *store.Comment
		if replies {
			parent = w.comment(a, post, nil)
			w.comment(b, post, nil) // a sibling, not in the list
		}
		for i := range 10 {
			c := w.comment(b, post, parent)
			if i%4 == 1 || i%4 == 2 {
				_, err := w.s.VoteComment(w.ctx, a, c.ID, 1)
				w.must(err)
			}
			if i%4 == 2 { // split votes, for CONTROVERSIAL
				_, err := w.s.VoteComment(w.ctx, w.user(), c.ID, -1)
				w.must(err)
			}
		}
		return relayList{
			page: func(win store.Window) (relayPage, error) {
				l := w.s.NewLoader()
				var p *store.Page[*store.Comment]
				if parent == nil {
					fresh, err := l.Post(w.ctx, post.ID)
					if err != nil {
						return relayPage{}, err
					}
					p, err = l.PostComments(w.ctx, fresh, sort, win, nil)
					return pageOfItems(p, err, func(c *store.Comment) string { return c.ID })
				}
				fresh, err := l.Comment(w.ctx, parent.ID)
				if err != nil {
					return relayPage{}, err
				}
				p, err = l.Replies(w.ctx, fresh, sort, win, nil)
				return pageOfItems(p, err, func(c *store.Comment) string { return c.ID })
			},
			grow:   func() { w.comment(b, post, parent) },
			shrink: func(id string) { w.must(w.s.DeleteComment(w.ctx, b, id)) },
		}
	}
}

// nsfwPostsOf builds a list of one author's posts in groups, every third NSFW, read by a viewer
// who shows NSFW posts: the list's two parts merged (nsfw_lists.go). It grows by posts NSFW and
// not in turn; votes spread the TOP scores.
func nsfwPostsOf(groups []string, read func(w *relayWorld, l *store.Loader, win store.Window) (*store.Page[*store.Post], error)) func(w *relayWorld) relayList {
	return func(w *relayWorld) relayList {
		w.author = w.user()
		voter := w.user()
		n := 0
		add := func() {
			n++
			w.names++
			p, err := w.s.CreatePost(w.ctx, w.author, store.NewPost{Title: fmt.Sprint("post ", w.names), Groups: groups, NSFW: n%3 == 0})
			w.must(err)
			if n%4 == 1 {
				_, err := w.s.VotePost(w.ctx, voter, p.ID, 1)
				w.must(err)
			}
		}
		for range 10 {
			add()
		}
		l := w.posts(w.author, groups, func(l *store.Loader, win store.Window) (*store.Page[*store.Post], error) {
			return read(w, l, win)
		})
		l.grow = add
		return l
	}
}

// notificationsOf builds an inbox of follow notifications: all of them, or the unread ones
// (which reading shrinks).
func notificationsOf(unreadOnly bool) func(w *relayWorld) relayList {
	return func(w *relayWorld) relayList {
		me := w.user()
		for range 10 {
			w.follow(w.user(), me)
		}
		l := relayList{
			page: func(win store.Window) (relayPage, error) {
				settle(w.t, w.s)
				p, err := w.s.NewLoader().Notifications(w.ctx, me, win, unreadOnly, nil)
				return pageOfItems(p, err, func(n *store.Notification) string { return n.ID })
			},
			grow: func() { w.follow(w.user(), me) },
		}
		if unreadOnly {
			l.shrink = func(id string) {
				_, err := w.s.MarkNotificationsRead(w.ctx, me, []string{id}, false)
				w.must(err)
			}
		}
		return l
	}
}

// feedOf builds a home feed of three authors' posts, pushed to the reader, or with pulled ones:
// the first author's followers are full before the reader follows.
func feedOf(pulled bool) func(w *relayWorld) relayList {
	return func(w *relayWorld) relayList {
		reader := w.user()
		authors := []store.UserKey{w.user(), w.user(), w.user()}
		if pulled {
			w.follow(w.user(), authors[0])
		}
		for _, a := range authors {
			w.follow(reader, a)
		}
		for range 4 {
			for _, a := range authors {
				w.post(a)
			}
		}
		return w.posts(authors[0], nil, func(l *store.Loader, win store.Window) (*store.Page[*store.Post], error) {
			return l.Feed(w.ctx, reader, win, nil)
		})
	}
}

// relayClocks are the clocks lists are built with: one that never moves, so that every item has
// the same time and lists are ordered by their ties, and one that moves a millisecond per read.
var relayClocks = []struct {
	name string
	now  func() func() time.Time
}{
	{"ties", func() func() time.Time {
		at := time.Now().Truncate(time.Second)
		return func() time.Time { return at }
	}},
	{"distinct", tickingClock},
}

// TestPagingBothWays pages every kind of list forwards with first and then backwards with last
// and before from the end cursor, on lists ordered by distinct scores and by ties alone: both
// ways give the whole list in order, with the same cursors and the right hasPreviousPage and
// hasNextPage. Then it pages each way while items are added and removed between pages: no item
// present throughout is skipped or repeated.
func TestPagingBothWays(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		for _, kind := range relayKinds {
			for _, clock := range relayClocks {
				t.Run(kind.name+"/"+clock.name, func(t *testing.T) {
					opts := kind.opts
					opts.Now, opts.WriteLimit = clock.now(), -1
					w := &relayWorld{t: t, s: b.NewStore(t, opts), ctx: context.Background(), now: opts.Now}
					list := kind.build(w)
					checkBothWays(t, list)
					for _, backward := range []bool{false, true} {
						checkUnderChanges(t, list, backward)
					}
				})
			}
		}
	})
}

// read reads a page, failing the test on an error.
func (l relayList) read(t *testing.T, w store.Window) relayPage {
	t.Helper()
	p, err := l.page(w)
	if err != nil {
		t.Fatalf("page %+v: %v", w, err)
	}
	return p
}

// checkBothWays checks paging over a list that does not change.
func checkBothWays(t *testing.T, l relayList) {
	t.Helper()
	all := l.read(t, store.Window{First: 100})
	n := len(all.ids)
	if n < 8 || all.hasPrev || all.hasNext || all.total < n {
		t.Fatalf("the whole list: %d items, %+v", n, all)
	}
	at := make(map[string]int, n)
	for i, id := range all.ids {
		if _, dup := at[id]; dup {
			t.Fatalf("%s twice in %v", id, all.ids)
		}
		at[id] = i
	}
	// Every page must show each item with its cursor from the whole list, and its rank.
	same := func(what string, p relayPage, want []string) {
		t.Helper()
		if !slices.Equal(p.ids, want) {
			t.Fatalf("%s: %v, want %v", what, p.ids, want)
		}
		for i, id := range p.ids {
			if p.cursors[i] != all.cursors[at[id]] {
				t.Errorf("%s: the cursor of %s differs from the whole list's", what, id)
			}
			if p.ranks != nil && p.ranks[i] != at[id]+1 {
				t.Errorf("%s: %s ranked %d, want %d", what, id, p.ranks[i], at[id]+1)
			}
		}
	}
	flags := func(what string, p relayPage, prev, next bool) {
		t.Helper()
		if p.hasPrev != prev || p.hasNext != next {
			t.Errorf("%s: hasPreviousPage %v hasNextPage %v, want %v %v", what, p.hasPrev, p.hasNext, prev, next)
		}
	}

	// Forwards in pages of 3.
	var fwd []string
	var last relayPage
	after := ""
	for i := 0; ; i++ {
		last = l.read(t, store.Window{First: 3, After: after})
		what := fmt.Sprintf("forward page %d", i)
		same(what, last, all.ids[len(fwd):min(len(fwd)+3, n)])
		flags(what, last, i > 0, len(fwd)+len(last.ids) < n)
		fwd = append(fwd, last.ids...)
		if !last.hasNext {
			break
		}
		after = last.end()
	}
	// Backwards in pages of 3 from the end cursor: the end item follows every page.
	back := []string{all.ids[n-1]}
	before := last.end()
	for i := 0; ; i++ {
		p := l.read(t, store.Window{Last: 3, Before: before})
		what := fmt.Sprintf("backward page %d", i)
		from := max(n-len(back)-3, 0)
		same(what, p, all.ids[from:n-len(back)])
		flags(what, p, from > 0, true)
		back = append(slices.Clone(p.ids), back...)
		if !p.hasPrev {
			break
		}
		before = p.start()
	}
	if !slices.Equal(back, all.ids) {
		t.Fatalf("backwards: %v, want %v", back, all.ids)
	}

	// The ends, without cursors.
	tail := l.read(t, store.Window{Last: 3})
	same("last 3", tail, all.ids[n-3:])
	flags("last 3", tail, true, false)
	whole := l.read(t, store.Window{Last: 100})
	same("last 100", whole, all.ids)
	flags("last 100", whole, false, false)
	if whole.total != all.total || tail.total != all.total {
		t.Errorf("totalCount: last 3 %d, last 100 %d, first 100 %d", tail.total, whole.total, all.total)
	}

	// Between two cursors, each way; a cursor from a backward page works as after.
	c := all.cursors
	mid := l.read(t, store.Window{First: 100, After: c[1], Before: c[n-2]})
	same("after and before", mid, all.ids[2:n-2])
	flags("after and before", mid, true, true)
	midBack := l.read(t, store.Window{Last: 2, After: c[1], Before: c[n-2]})
	same("last 2 after and before", midBack, all.ids[n-4:n-2])
	flags("last 2 after and before", midBack, true, true)
	midFwd := l.read(t, store.Window{First: 2, After: c[1], Before: c[4]})
	same("first 2 after and before", midFwd, all.ids[2:4])
	none := l.read(t, store.Window{First: 5, After: c[4], Before: c[2]})
	same("crossed cursors", none, nil)
	flags("crossed cursors", none, true, true)
	on := l.read(t, store.Window{First: 3, After: tail.start()})
	same("after a backward page's start", on, all.ids[n-2:])
	flags("after a backward page's start", on, true, false)

	for _, w := range []store.Window{
		{First: 3, Last: 3},
		{Last: -1},
		{Last: 101},
		{Last: 3, Before: "not a cursor"},
		{Last: 3, After: "not a cursor"},
	} {
		if _, err := l.page(w); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("window %+v: %v, want invalid", w, err)
		}
	}
}

// checkUnderChanges pages through a list one way in pages of 3, adding an item and removing the
// item of the cursor between pages: every item present throughout is seen once, in list order.
func checkUnderChanges(t *testing.T, l relayList, backward bool) {
	t.Helper()
	if l.grow == nil && l.shrink == nil {
		return
	}
	start := l.read(t, store.Window{First: 100}).ids
	seen := make(map[string]int)
	removed := make(map[string]bool)
	var got []string
	w := store.Window{First: 3}
	if backward {
		w = store.Window{Last: 3}
	}
	for round := 0; ; round++ {
		if round > 30 {
			t.Fatalf("backward %v: paging does not end", backward)
		}
		p := l.read(t, w)
		for _, id := range p.ids {
			seen[id]++
		}
		if backward {
			got = append(slices.Clone(p.ids), got...)
			if round > 0 && !p.hasNext {
				t.Errorf("backward page %d says nothing follows", round)
			}
		} else {
			got = append(got, p.ids...)
			if round > 0 && !p.hasPrev {
				t.Errorf("forward page %d says nothing precedes", round)
			}
		}
		more := p.hasNext
		if backward {
			more = p.hasPrev
		}
		if !more || len(p.ids) == 0 {
			break
		}
		if l.grow != nil {
			l.grow()
		}
		// The item the next page's cursor names goes.
		edge := p.ids[len(p.ids)-1]
		if backward {
			edge = p.ids[0]
		}
		if l.shrink != nil && round%2 == 0 {
			l.shrink(edge)
			removed[edge] = true
		}
		if backward {
			w.Before = p.start()
		} else {
			w.After = p.end()
		}
	}
	var kept []string
	for _, id := range start {
		if !removed[id] && seen[id] != 1 {
			t.Errorf("backward %v: %s seen %d times", backward, id, seen[id])
		}
		if seen[id] > 0 {
			kept = append(kept, id)
		}
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("backward %v: %s seen %d times", backward, id, n)
		}
	}
	// The items of the start in the order the pages gave them: the start's order.
	var order []string
	for _, id := range got {
		if slices.Contains(start, id) {
			order = append(order, id)
		}
	}
	if !slices.Equal(order, kept) {
		t.Errorf("backward %v: pages gave %v, want the order %v", backward, order, kept)
	}
}
