package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// exportDoc is the document Export writes, as far as the tests read it.
type exportDoc struct {
	Format string
	User   struct {
		ID, Name string
		Bio      *string
		Karma    int64
	}
	Posts          []struct{ ID, Title, Body string }
	ScheduledPosts []struct {
		ID, Title string
		PublishAt *time.Time
	}
	Comments []struct {
		ID, PostID, Text string
		ParentID         *string
	}
	SavedPosts    []struct{ PostID string }
	Following     []struct{ UserID string }
	Followers     []struct{ UserID string }
	Blocks        []struct{ UserID string }
	Groups        []struct{ GroupID string }
	Notifications []struct {
		Kind    string
		ActorID string
		Read    bool
	}
	Sessions []struct {
		Current               bool
		LastUsedAt, ExpiresAt time.Time
	}
	Complete bool
}

// TestExportAccount: the export holds every kind of thing the account owns, and only its own;
// no session token, digest or id.
func TestExportAccount(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clock := storetest.NewClock()
		s := b.NewStore(t, store.Options{Now: clock.Now, SessionTTL: time.Hour})
		ann, err := s.SignUp(ctx, "Ann", "password1")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"bob", "cat"} {
			if _, err := s.SignUp(ctx, name, "password1"); err != nil {
				t.Fatal(err)
			}
		}
		second, err := s.LogIn(ctx, "ann", "password1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateGroup(ctx, "bob", "gophers", nil); err != nil {
			t.Fatal(err)
		}
		mine, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "mine", Body: "<b>hello</b>"})
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "theirs"})
		if err != nil {
			t.Fatal(err)
		}
		later := clock.Now().Add(time.Hour)
		if _, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "later", PublishAt: later}); err != nil {
			t.Fatal(err)
		}
		top, err := s.CreateComment(ctx, "ann", store.NewComment{PostID: theirs.ID, Body: "a comment"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateComment(ctx, "ann", store.NewComment{PostID: theirs.ID, ParentID: top.ID, Body: "a reply"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateComment(ctx, "bob", store.NewComment{PostID: mine.ID, Body: "bob's"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SavePost(ctx, "ann", theirs.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Follow(ctx, "ann", "bob"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Follow(ctx, "bob", "ann"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Block(ctx, "ann", "cat"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.JoinGroup(ctx, "ann", "gophers"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}

		var buf bytes.Buffer
		if err := s.Export(ctx, "ann", second.Token, &buf); err != nil {
			t.Fatal(err)
		}
		text := buf.String()
		var d exportDoc
		if err := json.Unmarshal(buf.Bytes(), &d); err != nil {
			t.Fatalf("export is not JSON: %v\n%s", err, text)
		}
		_, annID, _ := store.SessionOf(ann.Token)
		_, secondID, _ := store.SessionOf(second.Token)
		for _, secret := range []string{ann.Token, second.Token, strings.SplitN(second.Token, ".", 2)[1], annID, secondID} {
			if strings.Contains(text, secret) {
				t.Errorf("the export holds a session token or id")
			}
		}
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(buf.Bytes(), &raw)
		if e, ok := raw["email"]; !ok || string(e) != "null" {
			t.Errorf("email = %s (present %v), want null", e, ok)
		}
		// With an address, the export holds it and whether it is verified.
		if _, err := s.SetEmail(ctx, "ann", "Ann@Example.com", "password1"); err != nil {
			t.Fatal(err)
		}
		var withEmail bytes.Buffer
		if err := s.Export(ctx, "ann", second.Token, &withEmail); err != nil {
			t.Fatal(err)
		}
		var mailed struct {
			Email *struct {
				Address  string
				Verified bool
			}
		}
		if err := json.Unmarshal(withEmail.Bytes(), &mailed); err != nil || mailed.Email == nil || !strings.EqualFold(mailed.Email.Address, "ann@example.com") || mailed.Email.Verified {
			t.Errorf("email in the export: %+v (%v)", mailed.Email, err)
		}
		check := func(what string, got, want any) {
			t.Helper()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s = %v, want %v", what, got, want)
			}
		}
		check("format", d.Format, store.ExportFormat)
		check("user", d.User.ID+" "+d.User.Name, "user:ann Ann")
		check("complete", d.Complete, true)
		check("posts", d.Posts, []any{struct{ ID, Title, Body string }{mine.ID, "mine", "<b>hello</b>"}})
		if len(d.ScheduledPosts) != 1 || d.ScheduledPosts[0].Title != "later" || d.ScheduledPosts[0].PublishAt == nil ||
			!d.ScheduledPosts[0].PublishAt.Equal(later) {
			t.Errorf("scheduled posts = %+v", d.ScheduledPosts)
		}
		if len(d.Comments) != 2 || d.Comments[0].Text != "a comment" || d.Comments[0].ParentID != nil ||
			d.Comments[1].ParentID == nil || *d.Comments[1].ParentID != top.ID || d.Comments[1].PostID != theirs.ID {
			t.Errorf("comments = %+v", d.Comments)
		}
		check("saved", d.SavedPosts, []any{struct{ PostID string }{theirs.ID}})
		check("following", d.Following, "[{user:bob}]")
		check("followers", d.Followers, "[{user:bob}]")
		check("blocks", d.Blocks, "[{user:cat}]")
		check("groups", d.Groups, "[{group:gophers}]")
		kinds := map[string]bool{}
		for _, n := range d.Notifications {
			check("notification actor", n.ActorID, "user:bob")
			kinds[n.Kind] = true
		}
		if !kinds["FOLLOW"] || !kinds["REPLY"] {
			t.Errorf("notifications = %+v, want bob's follow and reply", d.Notifications)
		}
		if len(d.Sessions) != 2 || d.Sessions[0].Current == d.Sessions[1].Current {
			t.Fatalf("sessions = %+v, want two, one current", d.Sessions)
		}
		// Redis counts a session's time to live on its own clock, not on the store's: a real
		// server has spent a little of it since the session started.
		for _, se := range d.Sessions {
			if d := clock.Now().Sub(se.LastUsedAt); d < 0 || d > time.Minute || se.ExpiresAt.Sub(se.LastUsedAt) != time.Hour {
				t.Errorf("session %+v, want last used now, expiring in an hour", se)
			}
		}

		if err := s.Export(ctx, "nobody", "", io.Discard); !store.IsKind(err, store.KindNotFound) {
			t.Errorf("export of no account: %v, want NOT_FOUND", err)
		}
	})
}

// TestExportRateLimit: an account may export ExportsPerDay times per 24 hours, exactly; a
// negative WriteLimit switches the limit off.
func TestExportRateLimit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clock := storetest.NewClock()
		s := b.NewStore(t, store.Options{Now: clock.Now, WriteLimit: 100, ExportsPerDay: 2})
		if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if err := s.Export(ctx, "ann", "", io.Discard); err != nil {
				t.Fatalf("export %d: %v", i+1, err)
			}
			clock.Add(time.Hour)
		}
		var buf bytes.Buffer
		err := s.Export(ctx, "ann", "", &buf)
		var se *store.Error
		if !store.IsKind(err, store.KindRateLimited) || !errors.As(err, &se) || se.RetryAfter != 22*time.Hour {
			t.Fatalf("third export in a day: %v, want RATE_LIMITED, retry in 22h", err)
		}
		if buf.Len() != 0 {
			t.Errorf("a refused export wrote %d bytes", buf.Len())
		}
		clock.Add(22*time.Hour - time.Millisecond)
		if err := s.Export(ctx, "ann", "", io.Discard); !store.IsKind(err, store.KindRateLimited) {
			t.Errorf("a millisecond early: %v, want RATE_LIMITED", err)
		}
		clock.Add(time.Millisecond)
		if err := s.Export(ctx, "ann", "", io.Discard); err != nil {
			t.Errorf("24 hours after the first: %v", err)
		}

		off := b.NewStore(t, store.Options{WriteLimit: -1, ExportsPerDay: 1})
		if _, err := off.SignUp(ctx, "bob", "password1"); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := off.Export(ctx, "bob", "", io.Discard); err != nil {
				t.Fatalf("export %d with the limits off: %v", i+1, err)
			}
		}
	})
}

// heapWriter discards what it is given and records the live heap, after a collection, at each
// write: the export writes whenever its buffer fills, in the middle of a page as between pages.
type heapWriter struct {
	peak uint64
}

func (w *heapWriter) Write(p []byte) (int, error) {
	w.sample()
	return len(p), nil
}

func (w *heapWriter) Flush() error {
	w.sample()
	return nil
}

func (w *heapWriter) sample() {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	w.peak = max(w.peak, m.HeapAlloc)
}

// TestExportStreamsFlat: the export of an account with thousands of posts and comments holds no
// more memory than that of an account with a few hundred: it is read, written and flushed page by
// page. The posts and comments are written into Redis directly, as the store keeps them, so that
// the test spends its time on the export. The backends run one after the other, and the test not
// in parallel with others, so that no other test's allocations are measured.
func TestExportStreamsFlat(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { exportStreamsFlat(t, b) })
	}
}

func exportStreamsFlat(t *testing.T, b storetest.Backend) {
	{
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix})
		body := strings.Repeat("x", 1000)
		seed := func(user string, n int) {
			t.Helper()
			if _, err := s.SignUp(ctx, user, "password1"); err != nil {
				t.Fatal(err)
			}
			created := time.Now().UnixMilli()
			p := b.Client.Pipeline()
			for i := range n {
				pid := user + strconv.Itoa(i)
				at := float64(created + int64(i/3)) // ties of three: pages split runs of equal scores
				// Every third post and comment was removed by a moderator: out of the lists, in
				// their guards (removedPosts, removedComments).
				removed := []any{}
				if i%3 == 2 {
					removed = []any{"removed", "1"}
				}
				p.HSet(ctx, prefix+"{p:"+pid+"}", append([]any{"title", "post " + strconv.Itoa(i), "body", body, "author", user,
					"created", created, "closes", created + 1e6, "ver", 1}, removed...)...)
				p.HSet(ctx, prefix+"{u:"+user+"}:posts:ver", pid, 1)
				if len(removed) == 0 {
					p.ZAdd(ctx, prefix+"{u:"+user+"}:posts", rdb.Z{Score: at, Member: pid})
				}
				p.HSet(ctx, prefix+"{p:"+pid+"}:c:1", append([]any{"parent", "0", "author", user, "body", body,
					"created", created, "depth", 0, "ver", 1}, removed...)...)
				p.HSet(ctx, prefix+"{u:"+user+"}:comments:ver", pid+":1", 1)
				if len(removed) == 0 {
					p.ZAdd(ctx, prefix+"{u:"+user+"}:comments", rdb.Z{Score: at, Member: pid + ":1"})
				}
				if i%500 == 499 {
					if _, err := p.Exec(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		const small, large = 300, 3000
		seed("small", small)
		seed("large", large)
		growth := func(user string, want int) uint64 {
			t.Helper()
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			w := &heapWriter{}
			counted := &countingWriter{w: w}
			if err := s.Export(ctx, store.UserKey(user), "", counted); err != nil {
				t.Fatal(err)
			}
			// Each post's id and each comment's postId, listed or removed.
			if got := counted.posts; got != 2*want {
				t.Fatalf("%s: %d posts and comments written, want %d", user, got, 2*want)
			}
			if w.peak < m.HeapAlloc {
				return 0
			}
			return w.peak - m.HeapAlloc
		}
		growth("small", small) // warm up: pools, scripts, connections
		g1, g2 := growth("small", small), growth("large", large)
		t.Logf("live heap growth: %d items %d KiB, %d items %d KiB", small, g1>>10, large, g2>>10)
		// Held whole, the large account's posts and comments alone would be 6 MB of text.
		if g2 > g1+1<<20 {
			t.Errorf("exporting %d items grew the heap by %d KiB, %d items by %d KiB: it grows with the account",
				large, g2>>10, small, g1>>10)
		}
	}
}

// countingWriter passes writes on to w and counts, in what it passes, the posts' ids.
type countingWriter struct {
	w     *heapWriter
	posts int
	tail  []byte // the end of the last write, shorter than the pattern: a match may span writes
}

func (c *countingWriter) Write(p []byte) (int, error) {
	pattern := []byte(`"post:`)
	joined := append(c.tail, p...)
	c.posts += bytes.Count(joined, pattern)
	c.tail = append(c.tail[:0], joined[max(0, len(joined)-len(pattern)+1):]...)
	return c.w.Write(p)
}

func (c *countingWriter) Flush() error { return c.w.Flush() }

// TestExportPagesExactlyAmongTies: a list whose members share one score (one millisecond) across
// a page edge is exported whole, each member once, though members come and go among the ties
// between two pages: the pages go on from the last member written (its score and itself), not
// from a count of the ties written. Before, a saved post unsaved between the pages made the next
// page skip one, and one saved made it repeat one.
func TestExportPagesExactlyAmongTies(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		for _, tc := range []struct {
			name   string
			change func(f *fixture, uid string, first, extra *store.Post)
		}{
			{"a member before the edge leaves", func(f *fixture, uid string, first, _ *store.Post) {
				if _, err := f.s.UnsavePost(f.ctx, store.UserKey(uid), first.ID); err != nil {
					t.Fatal(err)
				}
			}},
			{"a member before the edge comes", func(f *fixture, uid string, _, extra *store.Post) {
				if _, err := f.s.SavePost(f.ctx, store.UserKey(uid), extra.ID); err != nil {
					t.Fatal(err)
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				at := time.UnixMilli(1_800_000_000_000)
				f := newFixture(t, b, store.Options{WriteLimit: -1, Now: func() time.Time { return at }})
				uid := f.user("ann")
				var posts []*store.Post
				for i := range store.ExportPage + 60 {
					posts = append(posts, f.post(uid, fmt.Sprintf("post %d", i)))
				}
				// The member first in byte order is on the first page; the extra post, saved
				// between the pages, sorts before the edge too.
				slices.SortFunc(posts, func(a, b *store.Post) int { return strings.Compare(a.Key(), b.Key()) })
				extra := posts[0]
				for _, p := range posts[1:] {
					if _, err := f.s.SavePost(f.ctx, store.UserKey(uid), p.ID); err != nil {
						t.Fatal(err)
					}
				}
				done := false
				w := &hookWriter{marker: `"savedPosts":[{`, hook: func() {
					done = true
					tc.change(f, uid, posts[1], extra)
				}}
				if err := f.s.Export(f.ctx, store.UserKey(uid), "", w); err != nil {
					t.Fatal(err)
				}
				var doc exportDoc
				if err := json.Unmarshal(w.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
				seen := map[string]int{}
				for _, s := range doc.SavedPosts {
					seen[s.PostID]++
				}
				for _, p := range posts[1:] {
					if seen[p.ID] != 1 {
						t.Errorf("saved post %s exported %d times, want once", p.Key(), seen[p.ID])
					}
				}
				if !done || len(doc.SavedPosts) != len(posts)-1 {
					t.Errorf("%d saved posts exported (the change ran: %v), want %d", len(doc.SavedPosts), done, len(posts)-1)
				}
			})
		}
	})
}
