package store_test

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// modFixture is a store with an admin (root), a moderator of group go (mia) and of rust (rex).
type modFixture struct {
	*fixture
	skew atomic.Int64
}

func newModFixture(t *testing.T, b storetest.Backend) *modFixture {
	f := &modFixture{}
	clock := func() time.Time { return time.Now().Add(time.Duration(f.skew.Load())) }
	f.fixture = newFixture(t, b, store.Options{Now: clock})
	f.admin("root")
	for _, u := range []string{"mia", "rex"} {
		f.user(u)
	}
	if err := f.s.SetModerator(f.ctx, "go", "mia"); err != nil {
		t.Fatal(err)
	}
	if err := f.s.SetModerator(f.ctx, "rust", "rex"); err != nil {
		t.Fatal(err)
	}
	return f
}

// repairLater moves the clock past the repair grace and runs what is due, as the repairer would
// after a process stopped.
func (f *modFixture) repairLater() {
	f.t.Helper()
	f.skew.Add(int64(store.RepairGrace + time.Second))
	settle(f.t, f.s)
}

// modLog lists the actions of the log ("" for the whole site's), oldest first, as
// "ACTION target group reason". Actions in one millisecond order by id.
func (f *modFixture) modLog(group string) []string {
	f.t.Helper()
	p, err := f.s.NewLoader().ModLog(f.ctx, group, store.Window{First: 100})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, a := range slices.Backward(p.Items) {
		r := ""
		if a.Reason != nil {
			r = *a.Reason
		}
		out = append(out, fmt.Sprintf("%s %s %s %s", a.Action, a.TargetID, a.Group, r))
	}
	return out
}

// postList reads the first 50 posts of a list of a user's: "feed" or "posts".
func (f *modFixture) postList(list, uid string) []string {
	f.t.Helper()
	l := f.s.NewLoader()
	read := func(ctx context.Context, uid store.UserKey, w store.Window, needs func() *store.Needs) (*store.Page[*store.Post], error) {
		return l.UserPosts(ctx, uid, store.SortNew, w, needs)
	}
	if list == "feed" {
		read = f.s.NewLoader().Feed
	}
	p, err := read(f.ctx, uk(uid), store.Window{First: 50}, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return ids(p.Items)
}

func TestRemovedPostLeavesEveryListingAndComesBack(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		ann, fred, bob := f.user("ann"), f.user("fred"), f.user("bob")
		if _, err := f.s.Follow(f.ctx, uk(fred), uk(ann)); err != nil {
			t.Fatal(err)
		}
		p1 := f.post(ann, "first", "go")
		p2 := f.post(ann, "second", "go", "ops")
		scoreBefore := f.vote(bob, p1.ID, 1).HotRank
		settle(t, f.s)

		listings := func() map[string][]string {
			l := f.s.NewLoader()
			count, err := l.GroupPostCount(f.ctx, "go")
			if err != nil {
				t.Fatal(err)
			}
			return map[string][]string{
				"site hot": f.ids(store.SortHot, "", 10), "site new": f.ids(store.SortNew, "", 10),
				"site top": f.ids(store.SortTop, "", 10), "group go": f.ids(store.SortHot, "go", 10),
				"group go new": f.ids(store.SortNew, "go", 1), "author's": f.postList("posts", ann),
				"fred's feed": f.postList("feed", fred), "go count": {fmt.Sprint(count)},
			}
		}
		before := listings()
		for name, ids := range before {
			if name != "go count" && !slices.Contains(ids, p1.ID) {
				t.Fatalf("%s lacks %s before the removal: %v", name, p1.ID, ids)
			}
		}

		// Only the moderators of its groups and the admins may remove it.
		_, err := f.s.RemovePost(f.ctx, "rex", p1.ID, "spam")
		wantKind(t, err, store.KindForbidden, "a moderator of another group")
		_, err = f.s.RemovePost(f.ctx, uk(bob), p1.ID, "spam")
		wantKind(t, err, store.KindForbidden, "a user")
		_, err = f.s.RemovePost(f.ctx, "mia", p1.ID, "")
		wantKind(t, err, store.KindInvalid, "no reason")

		for range 2 { // a retried request changes nothing more and logs nothing more
			p, err := f.s.RemovePost(f.ctx, "mia", p1.ID, "spam")
			if err != nil || !p.Removed {
				t.Fatalf("remove: %+v %v", p, err)
			}
		}
		settle(t, f.s)
		after := listings()
		for name, ids := range after {
			if slices.Contains(ids, p1.ID) {
				t.Errorf("%s still holds %s after its removal: %v", name, p1.ID, ids)
			}
		}
		if after["go count"][0] != "1" {
			t.Errorf("group go counts %s posts after the removal, want 1", after["go count"][0])
		}
		if p, err := f.s.NewLoader().Post(f.ctx, p1.ID); err != nil || p == nil || !p.Removed {
			t.Fatalf("the removed post loads as %+v, %v", p, err)
		}
		// It takes no votes and no comments; its author is told it was removed.
		_, err = f.s.VotePost(f.ctx, uk(bob), p1.ID, -1)
		wantKind(t, err, store.KindNotFound, "a vote")
		_, err = f.s.CreateComment(f.ctx, uk(bob), store.NewComment{PostID: p1.ID, Body: "hi"})
		wantKind(t, err, store.KindNotFound, "a comment")
		_, err = f.s.CreateComment(f.ctx, uk(ann), store.NewComment{PostID: p1.ID, Body: "hi"})
		wantKind(t, err, store.KindForbidden, "its author's comment")
		_, err = f.s.SetPostGroups(f.ctx, uk(ann), p1.ID, []string{"mine"}, []string{"go"})
		wantKind(t, err, store.KindForbidden, "moving it out of the group")
		// A rebuild derives the indexes from the hashes: the removed post stays out.
		if _, err := f.s.Rebuild(f.ctx); err != nil {
			t.Fatal(err)
		}
		if ids := f.ids(store.SortHot, "go", 10); slices.Contains(ids, p1.ID) {
			t.Fatalf("rebuild put the removed post back: %v", ids)
		}

		// The admin restores it: everything comes back, with its score.
		p, err := f.s.RestorePost(f.ctx, "root", p1.ID)
		if err != nil || p.Removed || p.HotRank != scoreBefore {
			t.Fatalf("restore: %+v %v (score before %v)", p, err, scoreBefore)
		}
		settle(t, f.s)
		restored := listings()
		for name, ids := range before {
			if !slices.Equal(restored[name], ids) {
				t.Errorf("%s after the restoration: %v, want %v", name, restored[name], ids)
			}
		}
		if _, err := f.s.VotePost(f.ctx, uk(bob), p1.ID, -1); err != nil {
			t.Fatalf("a vote after the restoration: %v", err)
		}
		want := []string{"REMOVE_POST " + p1.ID + " go spam", "RESTORE_POST " + p1.ID + " go "}
		if got := f.modLog(""); !slices.Equal(got, want) {
			t.Fatalf("mod log %q, want %q", got, want)
		}
		if got := f.modLog("go"); !slices.Equal(got, want) {
			t.Fatalf("group go's mod log %q, want %q", got, want)
		}
		_ = p2
	})
}

func TestAdminsModerateAnywhere(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		ann := f.user("ann")
		loose := f.post(ann, "in no group")
		inRust := f.post(ann, "rust", "rust", "go")
		_, err := f.s.RemovePost(f.ctx, "mia", loose.ID, "spam")
		wantKind(t, err, store.KindForbidden, "a moderator, a post in no group")
		if _, err := f.s.RemovePost(f.ctx, "root", loose.ID, "spam"); err != nil {
			t.Fatal(err)
		}
		// mia moderates go, the post's second group: her authority comes through it.
		if _, err := f.s.LockPost(f.ctx, "mia", inRust.ID, true, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.LockPost(f.ctx, "root", inRust.ID, false, nil); err != nil {
			t.Fatal(err)
		}
		// An admin's action is undone by the admins only.
		if _, err := f.s.LockPost(f.ctx, "root", inRust.ID, true, nil); err != nil {
			t.Fatal(err)
		}
		_, err = f.s.LockPost(f.ctx, "mia", inRust.ID, false, nil)
		wantKind(t, err, store.KindForbidden, "a moderator undoing an admin's lock")
		want := []string{"LOCK_POST " + inRust.ID + " go ", "LOCK_POST " + inRust.ID + " rust ", "REMOVE_POST " + loose.ID + "  spam",
			"UNLOCK_POST " + inRust.ID + " rust "}
		if got := sorted(f.modLog("")); !slices.Equal(got, want) {
			t.Fatalf("mod log %q, want %q", got, want)
		}
	})
}

func TestLockedPostRefusesCommentsAndVotes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		ann, bob := f.user("ann"), f.user("bob")
		p := f.post(ann, "flame war", "go")
		c, err := f.s.CreateComment(f.ctx, uk(ann), store.NewComment{PostID: p.ID, Body: "first"})
		if err != nil {
			t.Fatal(err)
		}
		why := "calm down"
		locked, err := f.s.LockPost(f.ctx, "mia", p.ID, true, &why)
		if err != nil || !locked.Locked {
			t.Fatalf("lock: %+v %v", locked, err)
		}
		_, err = f.s.CreateComment(f.ctx, uk(bob), store.NewComment{PostID: p.ID, Body: "more"})
		wantKind(t, err, store.KindLocked, "a comment")
		_, err = f.s.CreateComment(f.ctx, uk(bob), store.NewComment{PostID: p.ID, ParentID: c.ID, Body: "more"})
		wantKind(t, err, store.KindLocked, "a reply")
		_, err = f.s.VotePost(f.ctx, uk(bob), p.ID, 1)
		wantKind(t, err, store.KindLocked, "a vote on the post")
		_, err = f.s.VoteComment(f.ctx, uk(bob), c.ID, 1)
		wantKind(t, err, store.KindLocked, "a vote on a comment")
		if _, err := f.s.LockPost(f.ctx, "mia", p.ID, false, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.VotePost(f.ctx, uk(bob), p.ID, 1); err != nil {
			t.Fatalf("a vote once unlocked: %v", err)
		}
		want := []string{"LOCK_POST " + p.ID + " go calm down", "UNLOCK_POST " + p.ID + " go "}
		if got := f.modLog(""); !slices.Equal(got, want) {
			t.Fatalf("mod log %q, want %q", got, want)
		}
	})
}

// TestModerationIsLoggedAfterACrash runs only the atomic steps of actions, as a process that
// stops right after them would: the repair jobs then derive the indexes and log each action,
// once, also when the request is retried afterwards.
func TestModerationIsLoggedAfterACrash(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		ann := f.user("ann")
		p := f.post(ann, "spam", "go")
		q := f.post(ann, "news", "go")
		if err := f.s.ModeratePostScriptOnly(f.ctx, "mia", p.ID, store.ModRemovePost, "spam"); err != nil {
			t.Fatal(err)
		}
		if err := f.s.PinScriptOnly(f.ctx, "mia", q.ID, "go"); err != nil {
			t.Fatal(err)
		}
		if got := f.modLog(""); len(got) != 0 {
			t.Fatalf("logged before any repair: %q", got)
		}
		f.repairLater()
		if ids := f.ids(store.SortNew, "", 10); slices.Contains(ids, p.ID) {
			t.Fatalf("the repair left the removed post in the ranking: %v", ids)
		}
		// The client retries: nothing more is logged.
		if _, err := f.s.RemovePost(f.ctx, "mia", p.ID, "spam"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.PinPost(f.ctx, "mia", q.ID, "go", true, nil); err != nil {
			t.Fatal(err)
		}
		f.repairLater()
		want := sorted([]string{"REMOVE_POST " + p.ID + " go spam", "PIN_POST " + q.ID + " go "})
		if got := sorted(f.modLog("")); !slices.Equal(got, want) {
			t.Fatalf("mod log %q, want %q", got, want)
		}
	})
}

func TestPinnedPostsComeFirst(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		ann := f.user("ann")
		var posts []*store.Post
		for i := range 8 {
			posts = append(posts, f.post(ann, fmt.Sprintf("p%d", i), "go"))
		}
		other := f.post(ann, "elsewhere", "rust")
		_, err := f.s.PinPost(f.ctx, "rex", posts[0].ID, "go", true, nil)
		wantKind(t, err, store.KindForbidden, "a moderator of another group")
		_, err = f.s.PinPost(f.ctx, "mia", other.ID, "go", true, nil)
		wantKind(t, err, store.KindInvalid, "a post not in the group")
		for _, i := range []int{2, 5, 0} { // pinned in this order
			if _, err := f.s.PinPost(f.ctx, "mia", posts[i].ID, "go", true, nil); err != nil {
				t.Fatal(err)
			}
			f.skew.Add(int64(time.Millisecond))
		}
		_, err = f.s.PinPost(f.ctx, "root", posts[7].ID, "go", true, nil)
		wantKind(t, err, store.KindLimitReached, "a fourth pin")
		if _, err := f.s.PinPost(f.ctx, "mia", posts[5].ID, "go", true, nil); err != nil {
			t.Fatalf("pinning again: %v", err)
		}

		pinnedFirst := []string{posts[0].ID, posts[5].ID, posts[2].ID}
		var rest []string
		for i := 7; i >= 0; i-- {
			if i != 0 && i != 2 && i != 5 {
				rest = append(rest, posts[i].ID)
			}
		}
		want := append(append([]string{}, pinnedFirst...), rest...)
		for _, n := range []int{1, 2, 3, 4, 20} {
			if got := f.ids(store.SortNew, "go", n); !slices.Equal(got, want) {
				t.Fatalf("pages of %d: %v, want %v", n, got, want)
			}
		}
		// The site-wide listing has no pins.
		if got := f.ids(store.SortNew, "", 20); got[0] != other.ID {
			t.Fatalf("site listing %v", got)
		}
		// A backward page pages the ranked part only.
		l := f.s.NewLoader()
		last, err := l.Posts(f.ctx, store.SortNew, "go", store.Window{Last: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(last.Items); !slices.Equal(got, rest) || last.HasPrev || last.Total != 8 {
			t.Fatalf("last 10: %v (hasPrev %v, total %d), want %v", got, last.HasPrev, last.Total, rest)
		}
		if in, err := l.PinnedIn(f.ctx, posts[5]); err != nil || len(in) != 1 || in[0].Name != "go" {
			t.Fatalf("pinnedIn %v %v", in, err)
		}
		// A removed post leaves the pins; an unpinned one goes back to its place.
		if _, err := f.s.RemovePost(f.ctx, "mia", posts[5].ID, "off topic"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.PinPost(f.ctx, "mia", posts[2].ID, "go", false, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.PinPost(f.ctx, "mia", posts[7].ID, "go", true, nil); err != nil {
			t.Fatalf("a pin once there is room: %v", err)
		}
		want = []string{posts[7].ID, posts[0].ID, posts[6].ID, posts[4].ID, posts[3].ID, posts[2].ID, posts[1].ID}
		if got := f.ids(store.SortNew, "go", 2); !slices.Equal(got, want) {
			t.Fatalf("after changes: %v, want %v", got, want)
		}
		want = sorted([]string{"PIN_POST " + posts[2].ID + " go ", "PIN_POST " + posts[5].ID + " go ", "PIN_POST " + posts[0].ID + " go ",
			"REMOVE_POST " + posts[5].ID + " go off topic", "UNPIN_POST " + posts[2].ID + " go ", "PIN_POST " + posts[7].ID + " go "})
		if got := sorted(f.modLog("go")); !slices.Equal(got, want) {
			t.Fatalf("group go's log %q, want %q", got, want)
		}
	})
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// modThread is a post's thread for the comment tests: comments by number.
type modThread struct {
	f    *modFixture
	post *store.Post
	ids  map[string]string // name → comment id
}

func (th *modThread) add(name, parent, author string) {
	th.f.t.Helper()
	c, err := th.f.s.CreateComment(th.f.ctx, uk(author), store.NewComment{PostID: th.post.ID, ParentID: th.ids[parent], Body: name})
	if err != nil {
		th.f.t.Fatalf("comment %s: %v", name, err)
	}
	th.ids[name] = c.ID
}

// list reads a list of replies (parent "" for the top level) as "name" or "(removed)" for a
// removed comment, with its total.
func (th *modThread) list(parent string) ([]string, int) {
	th.f.t.Helper()
	l := th.f.s.NewLoader()
	var p *store.Page[*store.Comment]
	var err error
	if parent == "" {
		post, _ := l.Post(th.f.ctx, th.post.ID)
		p, err = l.PostComments(th.f.ctx, post, store.CommentsOld, store.Window{First: 50}, nil)
	} else {
		c, _ := l.Comment(th.f.ctx, th.ids[parent])
		p, err = l.Replies(th.f.ctx, c, store.CommentsOld, store.Window{First: 50}, nil)
	}
	if err != nil {
		th.f.t.Fatal(err)
	}
	var out []string
	for _, c := range p.Items {
		s := c.Text
		if c.Removed {
			s += "(removed)"
		}
		if c.Deleted {
			s = "(deleted)"
		}
		out = append(out, s)
	}
	return out, p.Total
}

func (th *modThread) counts() (comments int, replies map[string]int) {
	th.f.t.Helper()
	l := th.f.s.NewLoader()
	p, err := l.Post(th.f.ctx, th.post.ID)
	if err != nil {
		th.f.t.Fatal(err)
	}
	replies = map[string]int{}
	for name, id := range th.ids {
		if c, _ := l.Comment(th.f.ctx, id); c != nil {
			replies[name] = c.ReplyCount
		}
	}
	return p.CommentCount, replies
}

func (th *modThread) check() {
	th.f.t.Helper()
	if err := th.f.s.CheckThread(th.f.ctx, th.post.Key()); err != nil {
		th.f.t.Fatal(err)
	}
}

func TestRemovedCommentsLeaveTheThreadAndComeBack(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		ann, bob := f.user("ann"), f.user("bob")
		th := &modThread{f: f, post: f.post(ann, "thread", "go"), ids: map[string]string{}}
		th.add("a", "", bob)
		th.add("a1", "a", ann)
		th.add("a1x", "a1", bob)
		th.add("b", "", ann)
		th.check()
		want := func(parent string, items ...string) {
			t.Helper()
			got, total := th.list(parent)
			if !slices.Equal(got, items) || total != len(items) {
				t.Fatalf("replies of %q: %v (total %d), want %v", parent, got, total, items)
			}
		}
		// a has replies: it stays, a tombstone.
		if c, err := f.s.RemoveComment(f.ctx, "mia", th.ids["a"], "rude"); err != nil || !c.Removed {
			t.Fatalf("remove a: %+v %v", c, err)
		}
		want("", "a(removed)", "b")
		_, err := f.s.CreateComment(f.ctx, uk(ann), store.NewComment{PostID: th.post.ID, ParentID: th.ids["a"], Body: "x"})
		wantKind(t, err, store.KindNotFound, "a reply to a removed comment")
		_, err = f.s.VoteComment(f.ctx, uk(ann), th.ids["a"], 1)
		wantKind(t, err, store.KindNotFound, "a vote on a removed comment")
		// a1x has none: it leaves, and a1 deleted, then a (removed), left without replies, go too.
		if err := f.s.DeleteComment(f.ctx, uk(ann), th.ids["a1"]); err != nil {
			t.Fatal(err)
		}
		th.check()
		if _, err := f.s.RemoveComment(f.ctx, "root", th.ids["a1x"], "spam"); err != nil {
			t.Fatal(err)
		}
		th.check()
		want("", "b")
		if n, _ := th.counts(); n != 1 {
			t.Fatalf("comment count %d, want 1", n)
		}
		// Restoring a1x brings back the chain above it, each in its place (an admin removed it:
		// an admin restores it).
		if _, err := f.s.RestoreComment(f.ctx, "root", th.ids["a1x"]); err != nil {
			t.Fatal(err)
		}
		th.check()
		want("", "a(removed)", "b")
		want("a", "(deleted)")
		want("a1", "a1x")
		if _, err := f.s.RestoreComment(f.ctx, "mia", th.ids["a"]); err != nil {
			t.Fatal(err)
		}
		th.check()
		want("", "a", "b")
		if n, replies := th.counts(); n != 3 || replies["a"] != 1 || replies["a1"] != 1 {
			t.Fatalf("counts %d %v", n, replies)
		}
		// A deletion under a removed comment keeps what a restore may bring back.
		if _, err := f.s.RemoveComment(f.ctx, "mia", th.ids["a1x"], "again"); err != nil {
			t.Fatal(err)
		}
		th.check()
		want("", "a", "b")
		want("a")
		if err := f.s.DeleteComment(f.ctx, uk(bob), th.ids["a"]); err != nil {
			t.Fatal(err)
		}
		th.check()
		want("", "b")
		if _, err := f.s.RestoreComment(f.ctx, "mia", th.ids["a1x"]); err != nil {
			t.Fatal(err)
		}
		th.check()
		want("", "(deleted)", "b")
		want("a1", "a1x")
		log := f.modLog("go")
		if len(log) != 6 {
			t.Fatalf("mod log %q", log)
		}
	})
}

// TestCommentCountsAreExactUnderConcurrency removes, restores, adds and deletes comments of one
// thread at once, then compares every counter with a recount.
func TestCommentCountsAreExactUnderConcurrency(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		users := []string{f.user("ann"), f.user("bob"), f.user("cat")}
		th := &modThread{f: f, post: f.post(users[0], "busy", "go"), ids: map[string]string{}}
		var mu sync.Mutex
		var names []string
		authors := map[string]string{}
		for i := range 12 {
			name := fmt.Sprintf("c%d", i)
			parent := ""
			if i > 2 {
				parent = names[rand.Intn(len(names))]
			}
			th.add(name, parent, users[i%3])
			names, authors[name] = append(names, name), users[i%3]
		}
		var wg sync.WaitGroup
		for w := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewSource(int64(w)))
				for i := range 25 {
					mu.Lock()
					name := names[rng.Intn(len(names))]
					id, a := th.ids[name], authors[name]
					mu.Unlock()
					var err error
					switch rng.Intn(5) {
					case 0, 1:
						_, err = f.s.RemoveComment(f.ctx, "mia", id, "x")
					case 2:
						_, err = f.s.RestoreComment(f.ctx, "root", id)
					case 3:
						var c *store.Comment
						c, err = f.s.CreateComment(context.Background(), uk(users[w%3]), store.NewComment{PostID: th.post.ID, ParentID: id, Body: "r"})
						if err == nil {
							mu.Lock()
							n := fmt.Sprintf("w%d-%d", w, i)
							th.ids[n], names, authors[n] = c.ID, append(names, n), users[w%3]
							mu.Unlock()
						}
					case 4:
						err = f.s.DeleteComment(f.ctx, uk(a), id)
					}
					if err != nil && !store.IsKind(err, store.KindNotFound) {
						t.Errorf("%v", err)
					}
				}
			}()
		}
		wg.Wait()
		th.check()
		// Restoring every comment brings the counts back to the live comments.
		for _, id := range th.ids {
			if _, err := f.s.RestoreComment(f.ctx, "root", id); err != nil && !store.IsKind(err, store.KindNotFound) {
				t.Fatal(err)
			}
		}
		th.check()
	})
}

// A pinned post's cursor pages on to the pins after it and then the ranked list even when its own
// pin is gone by the next page — unpinned, or its post removed or moved out of the group: the
// pins that followed it are neither skipped nor repeated, and an unpinned post shows in its place.
func TestPinCursorOutlivesItsPin(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		for _, tc := range []struct {
			name string
			gone func(f *modFixture, ann, pid string)
		}{
			{"unpinned", func(f *modFixture, _, pid string) {
				if _, err := f.s.PinPost(f.ctx, "mia", pid, "go", false, nil); err != nil {
					f.t.Fatal(err)
				}
			}},
			{"removed", func(f *modFixture, _, pid string) {
				if _, err := f.s.RemovePost(f.ctx, "mia", pid, "off topic"); err != nil {
					f.t.Fatal(err)
				}
			}},
			{"left the group", func(f *modFixture, ann, pid string) {
				if _, err := f.s.SetPostGroups(f.ctx, uk(ann), pid, nil, []string{"go"}); err != nil {
					f.t.Fatal(err)
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := newModFixture(t, b)
				f.t = t
				ann := f.user("ann")
				var posts []*store.Post
				for i := range 5 {
					posts = append(posts, f.post(ann, fmt.Sprintf("p%d", i), "go", "misc"))
					f.skew.Add(int64(time.Millisecond))
				}
				for _, i := range []int{1, 3, 0} { // pinned in this order: shown 0, 3, 1
					if _, err := f.s.PinPost(f.ctx, "mia", posts[i].ID, "go", true, nil); err != nil {
						t.Fatal(err)
					}
					f.skew.Add(int64(time.Millisecond))
				}
				first, err := f.s.NewLoader().Posts(f.ctx, store.SortNew, "go", store.Window{First: 1}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := ids(first.Items); !slices.Equal(got, []string{posts[0].ID}) || !first.HasNext {
					t.Fatalf("first page %v (hasNext %v), want the last pin, %s", got, first.HasNext, posts[0].ID)
				}
				tc.gone(f, ann, posts[0].ID)
				next, err := f.s.NewLoader().Posts(f.ctx, store.SortNew, "go", store.Window{First: 10, After: first.EndCursor()}, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := []string{posts[3].ID, posts[1].ID, posts[4].ID, posts[2].ID}
				if tc.name == "unpinned" {
					want = append(want, posts[0].ID)
				}
				if got := ids(next.Items); !slices.Equal(got, want) || next.HasNext || !next.HasPrev {
					t.Fatalf("after the pin's cursor: %v (next %v, prev %v), want %v", got, next.HasNext, next.HasPrev, want)
				}
			})
		}
	})
}

// A pin that no longer holds — its post deleted, removed or moved out of the group by the time
// the pin's script ran — is skipped by the reads, and must not keep its place among the group's
// MaxPins: the next pin that finds the group full frees such places first.
func TestStalePinsFreeTheirPlaces(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		f := newModFixture(t, b)
		ann := f.user("ann")
		gone := f.post(ann, "deleted", "go")
		moved := f.post(ann, "moved", "go")
		var live []*store.Post
		for i := range 3 {
			live = append(live, f.post(ann, fmt.Sprintf("p%d", i), "go"))
		}
		if err := f.s.DeletePost(f.ctx, store.UserKey(ann), gone.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.SetPostGroups(f.ctx, store.UserKey(ann), moved.ID, []string{"rust"}, []string{"go"}); err != nil {
			t.Fatal(err)
		}
		// Both pins land after the post changed: the pin's checks read it before.
		for _, p := range []*store.Post{gone, moved} {
			if err := f.s.PinScriptOnly(f.ctx, "mia", p.ID, "go"); err != nil {
				t.Fatal(err)
			}
		}
		for i, p := range live {
			if _, err := f.s.PinPost(f.ctx, "mia", p.ID, "go", true, nil); err != nil {
				t.Fatalf("pin %d of 3 live posts, with stale pins in the group: %v", i+1, err)
			}
		}
		want := []string{live[2].ID, live[1].ID, live[0].ID}
		if got := f.ids(store.SortNew, "go", 3); !slices.Equal(got, want) {
			t.Fatalf("first page %v, want the pins %v", got, want)
		}
		_, err := f.s.PinPost(f.ctx, "mia", moved.ID, "rust", true, nil)
		wantKind(t, err, store.KindForbidden, "mia pinning in rust")
	})
}
