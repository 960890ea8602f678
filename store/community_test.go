package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// newStepClock returns a clock that stands still until the test moves it, at a fixed start, so
// that two stores fed the same writes end with the same times.
func newStepClock() *storetest.Clock {
	return storetest.NewClockAt(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

// community is a small site written through the store in steps, each a minute after the last:
// users, follows, posts in groups, comments and replies, votes on both. Two stores given the
// same steps on clocks that start alike hold the same primary data.
type community struct {
	users  []string
	groups []string
	posts  []string // global ids, in order of creation
	// more adds the private, moderation and account writes (community_more_test.go); mail holds
	// the mail of each store they write to (newStore).
	more bool
	mail map[*store.Store]*mailbox
}

func newCommunity() *community {
	return &community{groups: []string{"go", "redis", "ops"}}
}

// write is one write of a step; must reports its error.
type write func(ctx context.Context, s *store.Store) error

// run applies the writes in order, moving clock a minute before each, and fails on any error.
func (c *community) run(t *testing.T, s *store.Store, clock *storetest.Clock, ws []write) {
	t.Helper()
	for i, w := range ws {
		clock.Add(time.Minute)
		if err := w(context.Background(), s); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	settle(t, s)
}

// first is the writes before the snapshot: five users who follow each other, eight posts,
// comments with replies, votes on posts and comments.
func (c *community) first() []write {
	var ws []write
	for i := range 5 {
		name := fmt.Sprintf("user%d", i)
		c.users = append(c.users, name)
		ws = append(ws, func(ctx context.Context, s *store.Store) error {
			_, err := s.SignUp(ctx, name, "password1")
			return err
		})
	}
	for _, f := range [][2]int{{0, 1}, {1, 2}, {2, 0}, {3, 0}, {4, 1}, {0, 3}} {
		ws = append(ws, c.follow(f[0], f[1]))
	}
	for i := range 8 {
		ws = append(ws, c.post(i%5, fmt.Sprintf("first post %d about redis", i), c.groups[:1+i%3]))
	}
	for i := range 8 {
		ws = append(ws, c.comment((i+1)%5, i, "", fmt.Sprintf("comment on %d", i)))
		ws = append(ws, c.comment((i+2)%5, i, "", fmt.Sprintf("another on %d", i)))
		ws = append(ws, c.comment((i+3)%5, i, "comment:"+postKey(i)+":1", fmt.Sprintf("reply on %d", i)))
	}
	for i := range 8 {
		for v := 1; v <= i%4+1; v++ {
			ws = append(ws, c.votePost((i+v)%5, i, 1-2*(v%3/2)))
		}
		ws = append(ws, c.voteComment((i+4)%5, i, 1, 1), c.voteComment((i+3)%5, i, 2, -1))
	}
	if c.more {
		ws = append(ws, c.firstMore()...)
	}
	return ws
}

// then is the writes after the snapshot: a new user, new posts, comments and votes on old posts,
// a bio, a post's edit and its change of groups, a deleted post and comment, an unfollow and a
// follow.
func (c *community) then() []write {
	ws := []write{func(ctx context.Context, s *store.Store) error {
		_, err := s.SignUp(ctx, "late", "password1")
		return err
	}}
	late := len(c.users)
	c.users = append(c.users, "late")
	ws = append(ws, c.follow(late, 0), c.follow(1, late), c.unfollow(0, 1))
	for i := range 4 {
		ws = append(ws, c.post(late-i%2, fmt.Sprintf("later post %d about go", i), c.groups[i%3:]))
	}
	for i := range 4 {
		ws = append(ws, c.votePost(late, i, -1), c.comment(late, i, "", "late comment"),
			c.voteComment(late, i, 1, -1))
	}
	bio, title := "a night owl", "later post 0 about owls"
	ws = append(ws,
		func(ctx context.Context, s *store.Store) error {
			_, err := s.UpdateProfile(ctx, store.UserKey("late"), store.ProfileEdit{Bio: &bio})
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.EditPost(ctx, store.UserKey(c.users[late]), c.posts[8], store.PostEdit{Title: &title})
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.SetPostGroups(ctx, store.UserKey(c.users[late-1]), c.posts[9], []string{"go"}, []string{"ops"})
			return err
		})
	ws = append(ws,
		func(ctx context.Context, s *store.Store) error {
			return s.DeletePost(ctx, store.UserKey(c.users[5%5]), c.posts[5])
		},
		func(ctx context.Context, s *store.Store) error {
			return s.DeleteComment(ctx, store.UserKey(c.users[(6+1)%5]), "comment:"+postKey(6)+":1")
		})
	if c.more {
		ws = append(ws, c.thenMore(late)...)
	}
	return ws
}

// postKey is the key of the i-th post created: ids are handed out in order from 1.
func postKey(i int) string { return fmt.Sprint(i + 1) }

func (c *community) follow(a, b int) write {
	return func(ctx context.Context, s *store.Store) error {
		_, err := s.Follow(ctx, store.UserKey(c.users[a]), store.UserKey(c.users[b]))
		return err
	}
}

func (c *community) unfollow(a, b int) write {
	return func(ctx context.Context, s *store.Store) error {
		_, err := s.Unfollow(ctx, store.UserKey(c.users[a]), store.UserKey(c.users[b]))
		return err
	}
}

func (c *community) post(author int, title string, groups []string) write {
	c.posts = append(c.posts, "post:"+postKey(len(c.posts)))
	want := c.posts[len(c.posts)-1]
	return func(ctx context.Context, s *store.Store) error {
		p, err := s.CreatePost(ctx, store.UserKey(c.users[author]), store.NewPost{Title: title, Body: title + ", at length", Groups: groups})
		if err == nil && p.ID != want {
			err = fmt.Errorf("created %s, want %s", p.ID, want)
		}
		return err
	}
}

func (c *community) comment(author, post int, parent, body string) write {
	return func(ctx context.Context, s *store.Store) error {
		_, err := s.CreateComment(ctx, store.UserKey(c.users[author]), store.NewComment{PostID: c.posts[post], ParentID: parent, Body: body})
		return err
	}
}

func (c *community) votePost(voter, post, dir int) write {
	return func(ctx context.Context, s *store.Store) error {
		_, err := s.VotePost(ctx, store.UserKey(c.users[voter]), c.posts[post], dir)
		if store.IsKind(err, store.KindForbidden) { // one's own post
			err = nil
		}
		return err
	}
}

func (c *community) voteComment(voter, post, num, dir int) write {
	return func(ctx context.Context, s *store.Store) error {
		_, err := s.VoteComment(ctx, store.UserKey(c.users[voter]), fmt.Sprintf("comment:%s:%d", postKey(post), num), dir)
		if store.IsKind(err, store.KindForbidden) { // one's own comment
			err = nil
		}
		return err
	}
}

// render writes out, in one text, every listing, count, ranking, feed and leaderboard a client
// can read of the community, as the store answers them: two stores that render alike serve the
// same site.
func (c *community) render(t *testing.T, s *store.Store) string {
	t.Helper()
	ctx := context.Background()
	l := s.NewLoader()
	w := store.Window{First: 100}
	var b strings.Builder
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("render %s: %v", what, err)
		}
	}
	posts := func(label string, p *store.Page[*store.Post], err error) {
		t.Helper()
		must(label, err)
		fmt.Fprintf(&b, "%s (%d):", label, p.Total)
		for _, p := range p.Items {
			fmt.Fprintf(&b, " %s[%+d/%d c%d hot%.0f %v active%d]", p.ID, p.Upvotes, p.Downvotes, p.CommentCount, p.HotRank, p.GroupNames, p.ActiveAt.Unix())
		}
		b.WriteString("\n")
	}
	comments := func(label string, p *store.Page[*store.Comment], err error) {
		t.Helper()
		must(label, err)
		fmt.Fprintf(&b, "%s (%d):", label, p.Total)
		for _, c := range p.Items {
			fmt.Fprintf(&b, " %s[%+d/%d r%d d%t]", c.ID, c.Upvotes, c.Downvotes, c.ReplyCount, c.Deleted)
		}
		b.WriteString("\n")
	}
	users := func(label string, p *store.Page[*store.User], err error) {
		t.Helper()
		must(label, err)
		fmt.Fprintf(&b, "%s (%d):", label, p.Total)
		for _, u := range p.Items {
			fmt.Fprintf(&b, " %s", u.ID)
		}
		b.WriteString("\n")
	}
	for sort := store.SortHot; sort <= store.SortMostComments; sort++ {
		for _, g := range append([]string{""}, c.groups...) {
			p, err := l.Posts(ctx, sort, g, w, nil)
			posts(fmt.Sprintf("posts sort %d group %q", sort, g), p, err)
		}
	}
	for _, g := range c.groups {
		n, err := l.GroupPostCount(ctx, g)
		must("group post count", err)
		fmt.Fprintf(&b, "group %s: %d posts\n", g, n)
	}
	for _, id := range c.posts {
		p, err := l.Post(ctx, id)
		must("post", err)
		if p == nil {
			fmt.Fprintf(&b, "%s: none\n", id)
			continue
		}
		for sort := store.CommentsNew; sort <= store.CommentsControversial; sort++ {
			cs, err := l.PostComments(ctx, p, sort, w, nil)
			comments(fmt.Sprintf("comments of %s sort %d", id, sort), cs, err)
		}
	}
	for _, name := range c.users {
		uid := store.UserKey(name)
		u, err := l.User(ctx, uid)
		must("user", err)
		if u == nil {
			fmt.Fprintf(&b, "user %s: none\n", name)
			continue
		}
		karma, err := l.Karma(ctx, u)
		must("karma", err)
		rank, ok, err := l.Rank(ctx, u)
		must("rank", err)
		followers, err := l.FollowerCount(ctx, u)
		must("followers", err)
		following, err := l.FollowingCount(ctx, u)
		must("following", err)
		np, err := l.UserPostCount(ctx, uid)
		must("user posts", err)
		nc, err := l.UserCommentCount(ctx, uid)
		must("user comments", err)
		fmt.Fprintf(&b, "user %s: karma %d rank %d %t, %d followers, %d following, %d posts, %d comments\n",
			name, karma, rank, ok, followers, following, np, nc)
		up, err := l.UserPosts(ctx, uid, store.SortNew, w, nil)
		posts("posts of "+name, up, err)
		for _, sort := range []store.CommentSort{store.CommentsNew, store.CommentsOld, store.CommentsTop,
			store.CommentsBest, store.CommentsControversial} {
			uc, err := l.UserComments(ctx, uid, sort, w)
			comments(fmt.Sprintf("comments of %s sort %d", name, sort), uc, err)
		}
		feed, err := l.Feed(ctx, uid, w, nil)
		posts("feed of "+name, feed, err)
		fs, err := l.Followers(ctx, uid, w, nil)
		users("followers of "+name, fs, err)
		fg, err := l.Following(ctx, uid, w, nil)
		users("following of "+name, fg, err)
	}
	lb, err := l.Leaderboard(ctx, w, nil)
	must("leaderboard", err)
	fmt.Fprintf(&b, "leaderboard (%d):", lb.Total)
	for _, r := range lb.Items {
		fmt.Fprintf(&b, " %d.%s=%d", r.Rank, r.User.ID, r.Karma)
	}
	b.WriteString("\n")
	for _, q := range []string{"redis", "go", "length", "owls"} {
		sp, err := l.SearchPosts(ctx, store.PostSearch{Query: q}, w, nil)
		posts("search "+q, sp, err)
	}
	// The name index (autocomplete) and the users' search index, both derived from sign-ups.
	for _, prefix := range []string{"u", "la"} {
		us, err := l.SuggestUsers(ctx, prefix, 20, nil)
		must("suggest users", err)
		fmt.Fprintf(&b, "suggest users %q:", prefix)
		for _, u := range us {
			fmt.Fprintf(&b, " %s", u.ID)
		}
		b.WriteString("\n")
	}
	for _, q := range []string{"late", "user3", "owl"} {
		us, err := l.SearchUsers(ctx, q, w)
		users("search users "+q, us, err)
	}
	if c.more {
		c.renderMore(t, s, &b)
	}
	return b.String()
}
