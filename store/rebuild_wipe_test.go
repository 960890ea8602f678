package store_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// derivedKeys matches, after the prefix, the keys that docs/OPERATIONS.md ("Rebuilding derived
// data") says `rebuild` derives from the primary data: the site's and groups' rankings (both
// parts, their guards and trim marks), the directory of groups, the leaderboard, the user
// directory, the search index, the users' post and comment lists, feeds, both sides' derived
// halves of follows, the users' copies of bans, watch indexes and report histories, the
// mailboxes of private messages and the threads' live bitmaps (read state). Revision counters and
// live-event logs are left: they are not listings.
var derivedKeys = regexp.MustCompile(`^(` +
	`\{r:all\}:(hot|new|act|cmt|con|top|td|th|tw|tm|ty|n:[a-z]+|ver|trim)` +
	`|\{g:[^}]+\}:(hot|new|act|cmt|con|top|td|th|tw|tm|ty|n:[a-z]+|ver|trim|members|members:ver)` +
	`|\{groups\}:(active|new|pop|name|s:[a-z]+|ver)` +
	`|\{lb\}:karma(:ver)?` +
	`|\{users\}` +
	`|\{nsfw\}:groups` +
	`|\{sx:[^}]+\}:(d|n|r|t).*` +
	`|\{u:[^}]+\}:(posts|n:posts|posts:ver|comments|comments:ver|feed|feed:by|followers|followers:ver|push|pull|pull:ver|bans|bans:ver|reports:filed|dismissed)` +
	`|\{mb:[^}]+\}:(convs|reqs|unread|runread|state|ver)` +
	`|\{p:[0-9]+\}:c:(live|[0-9]+:(rs|rb|rc))` +
	`)$`)

// TestRebuildFromPrimaryDataAlone builds a community through the store (every kind of write,
// newMoreCommunity), renders every listing, count, ranking, feed, leaderboard, search,
// conversation, unread count and export, deletes every derived key, runs `rebuild` (Rebuild,
// RebuildUsers) and renders again: the site must be the same, derived from its primary data
// alone.
func TestRebuildFromPrimaryDataAlone(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clock := newStepClock()
		c := newMoreCommunity()
		s := c.newStore(t, b, store.Options{Prefix: prefix, Now: clock.Now})
		c.run(t, s, clock, c.first())
		c.run(t, s, clock, c.then())
		big := c.runExtras(t, s, clock)
		clock.Add(store.RepairGrace + time.Minute)
		settle(t, s)
		before, exports := c.render(t, s)+c.renderExtras(t, s, big), c.exports(t, s)

		var doomed []string
		for _, k := range scanAll(t, b, prefix+"*") {
			if derivedKeys.MatchString(strings.TrimPrefix(k, prefix)) {
				doomed = append(doomed, k)
			}
		}
		if len(doomed) < 100 {
			t.Fatalf("only %d derived keys found: %v", len(doomed), doomed)
		}
		for _, k := range doomed {
			if err := b.Client.Del(ctx, k).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Rebuild(ctx); err != nil {
			t.Fatalf("rebuild: %v", err)
		}
		if _, err := s.RebuildUsers(ctx); err != nil {
			t.Fatalf("rebuild users: %v", err)
		}
		if got := c.render(t, s) + c.renderExtras(t, s, big); got != before {
			t.Errorf("the site rebuilt from its primary data differs:\n%s", lineDiff(got, before))
		}
		if got := c.exports(t, s); got != exports {
			t.Errorf("the exports after rebuild differ:\n%s", lineDiff(got, exports))
		}
	})
}

// runExtras makes the writes the community does not: a group made without a post, members who
// join and leave groups, a thread of 33 top-level comments with votes (a parent that keeps its
// vote orders) and a scheduled post. It returns the thread's post.
func (c *community) runExtras(t *testing.T, s *store.Store, clock *storetest.Clock) *store.Post {
	t.Helper()
	ws := []write{func(ctx context.Context, s *store.Store) error {
		_, err := s.CreateGroup(ctx, c.uid(0), "empty", nil)
		return err
	}}
	for _, j := range []struct {
		user  int
		group string
		leave bool
	}{{1, "go", false}, {0, "go", false}, {5, "go", false}, {1, "redis", false}, {0, "empty", false}, {5, "go", true}} {
		ws = append(ws, func(ctx context.Context, s *store.Store) error {
			var err error
			if j.leave {
				_, err = s.LeaveGroup(ctx, c.uid(j.user), j.group)
			} else {
				_, err = s.JoinGroup(ctx, c.uid(j.user), j.group)
			}
			return err
		})
	}
	var big *store.Post
	ws = append(ws, func(ctx context.Context, s *store.Store) error {
		var err error
		big, err = s.CreatePost(ctx, c.uid(0), store.NewPost{Title: "a long thread", Groups: []string{"ops"}})
		return err
	})
	for i := range 33 {
		ws = append(ws, func(ctx context.Context, s *store.Store) error {
			_, err := s.CreateComment(ctx, c.uid([]int{1, 3, 5, 0}[i%4]), store.NewComment{PostID: big.ID, Body: fmt.Sprintf("reply %d", i)})
			return err
		})
	}
	for i := range 33 {
		for v := range i % 4 {
			ws = append(ws, func(ctx context.Context, s *store.Store) error {
				_, err := s.VoteComment(ctx, c.uid([]int{0, 1, 5}[v]), fmt.Sprintf("%s:%d", strings.Replace(big.ID, "post:", "comment:", 1), i+1), 1-2*((i+v)%3/2))
				if store.IsKind(err, store.KindForbidden) {
					err = nil
				}
				return err
			})
		}
	}
	ws = append(ws, func(ctx context.Context, s *store.Store) error {
		_, err := s.CreatePost(ctx, c.uid(1), store.NewPost{Title: "later", Groups: []string{"go"}, PublishAt: clock.Now().Add(48 * time.Hour)})
		return err
	})
	c.run(t, s, clock, ws)
	return big
}

// renderExtras renders what runExtras wrote and render does not read: the directory of groups in
// every order (whole and NSFW-free), suggested groups, members, the users' groups, the long
// thread in every order and the scheduled posts.
func (c *community) renderExtras(t *testing.T, s *store.Store, big *store.Post) string {
	t.Helper()
	ctx := context.Background()
	w := store.Window{First: 100}
	var b strings.Builder
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, hide := range []bool{false, true} {
		for sort := store.GroupsPopular; sort <= store.GroupsName; sort++ {
			l := s.NewLoader()
			l.HideNSFW(hide)
			p, err := l.Groups(ctx, sort, w, nil)
			must(err)
			fmt.Fprintf(&b, "groups sort %d hide %t (%d):", sort, hide, p.Total)
			for _, g := range p.Items {
				n, err := l.GroupMemberCount(ctx, g)
				must(err)
				fmt.Fprintf(&b, " %s/%d", g.Name, n)
			}
			b.WriteString("\n")
		}
	}
	l := s.NewLoader()
	for _, prefix := range []string{"e", "g", "o", "r"} {
		gs, err := l.SuggestGroups(ctx, prefix, 10, nil)
		must(err)
		fmt.Fprintf(&b, "suggest groups %q:", prefix)
		for _, g := range gs {
			fmt.Fprintf(&b, " %s", g.Name)
		}
		b.WriteString("\n")
	}
	for _, u := range c.users {
		gs, err := l.UserGroups(ctx, store.UserKey(u), w, nil)
		must(err)
		fmt.Fprintf(&b, "groups of %s (%d):", u, gs.Total)
		for _, g := range gs.Items {
			fmt.Fprintf(&b, " %s", g.Name)
		}
		b.WriteString("\n")
		sp, err := l.ScheduledPosts(ctx, store.UserKey(u), w)
		must(err)
		fmt.Fprintf(&b, "scheduled of %s (%d)\n", u, sp.Total)
	}
	p, err := l.Post(ctx, big.ID)
	must(err)
	for sort := store.CommentsNew; sort <= store.CommentsControversial; sort++ {
		cs, err := l.PostComments(ctx, p, sort, w, nil)
		must(err)
		fmt.Fprintf(&b, "comments of %s sort %d (%d):", big.ID, sort, cs.Total)
		for _, c := range cs.Items {
			fmt.Fprintf(&b, " %s[%+d/%d]", c.ID, c.Upvotes, c.Downvotes)
		}
		b.WriteString("\n")
	}
	return b.String()
}
