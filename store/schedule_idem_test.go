package store_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestIdempotencyKeyAcrossScheduling: a createPost repeated with its idempotency key returns the
// first post (or NOT_FOUND when that one is gone), whether the first request or the repeat
// scheduled it, and whatever became of it meanwhile: a repeat never schedules the post again,
// never makes a second post, never brings back a cancelled one.
func TestIdempotencyKeyAcrossScheduling(t *testing.T) {
	for _, tc := range []struct {
		name      string
		firstAt   time.Duration // 0: published at once
		between   string        // "", "cancel", "publish"
		repeatAt  time.Duration
		notFound  bool
		scheduled bool // the repeat answers with a post still scheduled
		wantPosts int  // posts published in the end
	}{
		{name: "scheduled then cancelled, repeated", firstAt: time.Hour, between: "cancel", repeatAt: time.Hour, notFound: true},
		{name: "published at once, repeated scheduled", repeatAt: time.Hour, wantPosts: 1},
		{name: "scheduled, repeated scheduled later", firstAt: time.Hour, repeatAt: 2 * time.Hour, scheduled: true, wantPosts: 1},
		{name: "scheduled and published, repeated at once", firstAt: time.Hour, between: "publish", wantPosts: 1},
		{name: "scheduled and published, repeated scheduled", firstAt: time.Hour, between: "publish", repeatAt: 2 * time.Hour, wantPosts: 1},
		{name: "scheduled, repeated at once", firstAt: time.Hour, scheduled: true, wantPosts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				clk := storetest.NewClock()
				f := newFixture(t, b, store.Options{Now: clk.Now})
				amy := f.user("amy")
				in := store.NewPost{Title: "once", IdempotencyKey: "k1"}
				if tc.firstAt != 0 {
					in.PublishAt = clk.Now().Add(tc.firstAt)
				}
				first, err := f.s.CreatePost(f.ctx, uk(amy), in)
				if err != nil {
					t.Fatal(err)
				}
				switch tc.between {
				case "cancel":
					if err := f.s.CancelScheduledPost(f.ctx, uk(amy), first.ID); err != nil {
						t.Fatal(err)
					}
				case "publish":
					clk.Add(tc.firstAt)
					settle(t, f.s)
				}
				in.PublishAt = time.Time{}
				if tc.repeatAt != 0 {
					in.PublishAt = clk.Now().Add(tc.repeatAt)
				}
				again, err := f.s.CreatePost(f.ctx, uk(amy), in)
				switch {
				case tc.notFound:
					if !store.IsKind(err, store.KindNotFound) {
						t.Fatalf("repeat: %+v %v, want NOT_FOUND", again, err)
					}
				case err != nil || again.ID != first.ID:
					t.Fatalf("repeat: %+v %v, want post %s again", again, err, first.ID)
				case (again.PublishAt != nil) != tc.scheduled:
					t.Fatalf("repeat: publishAt %v, want it scheduled: %v", again.PublishAt, tc.scheduled)
				case tc.scheduled && !again.PublishAt.Equal(first.CreatedAt):
					t.Fatalf("repeat: publishAt %v, want the first request's %v", again.PublishAt, first.CreatedAt)
				}
				pending := 0
				if tc.scheduled {
					pending = 1
				}
				if got := f.scheduled(amy); len(got) != pending {
					t.Errorf("scheduledPosts after the repeat %v, want %d", got, pending)
				}
				if got := f.ids(store.SortNew, "", 10); len(got) != tc.wantPosts-pending {
					t.Errorf("posts after the repeat %v, want %d", got, tc.wantPosts-pending)
				}
				clk.Add(3 * time.Hour)
				settle(t, f.s)
				if got := f.scheduled(amy); len(got) != 0 {
					t.Errorf("scheduledPosts in the end %v, want none", got)
				}
				if got := f.ids(store.SortNew, "", 10); len(got) != tc.wantPosts {
					t.Errorf("posts in the end %v, want %d", got, tc.wantPosts)
				}
			})
		})
	}
}

// TestIdempotencyKeyScheduledAndImmediateAtOnce: two createPost requests with one idempotency
// key, one scheduling the post and one publishing it at once, run concurrently: the second
// arrives after the first bound the key and before it wrote anything. One of them makes the post,
// as the first request asked; the other makes nothing — never a post published at once with a
// draft of the same id left pending (shown by scheduledPosts and counted against the cap until
// its publication is dropped as an id taken by another post).
func TestIdempotencyKeyScheduledAndImmediateAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name           string
		firstScheduled bool
	}{
		{name: "scheduled first, immediate repeat", firstScheduled: true},
		{name: "immediate first, scheduled repeat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				clk := storetest.NewClock()
				prefix := storetest.Prefix()
				f := newFixture(t, b, store.Options{Prefix: prefix, Now: clk.Now})
				hook := &beforeScript{}
				hb := b.Hooked(t, hook.hook())
				first := hb.NewStore(t, store.Options{Prefix: prefix, Now: clk.Now})
				amy := f.user("amy")
				title := "racing title"
				in := store.NewPost{Title: title, IdempotencyKey: "k1"}
				other := in
				at := clk.Now().Add(time.Hour)
				if tc.firstScheduled {
					in.PublishAt = at
				} else {
					other.PublishAt = at
				}
				var again *store.Post
				var againErr error
				ran := false
				hook.arm(func(arg string) bool { return strings.Contains(arg, title) }, func() {
					ran = true
					again, againErr = f.s.CreatePost(f.ctx, uk(amy), other)
				})
				p, err := first.CreatePost(f.ctx, uk(amy), in)
				if err != nil {
					t.Fatal(err)
				}
				if !ran {
					t.Fatal("the hook did not run")
				}
				if againErr == nil && again.ID != p.ID {
					t.Fatalf("the repeat made post %s, the first %s", again.ID, p.ID)
				}
				// The key's value is the post's number alone, as an older release reads it (its
				// scheduling is a mark beside it).
				n, _ := strings.CutPrefix(p.ID, "post:")
				sum := sha256.Sum256([]byte("k1")) // the key's digest, as the store makes it
				idem := prefix + "{u:" + amy + "}:idem:" + hex.EncodeToString(sum[:16])
				v, err := b.Client.Get(f.ctx, idem).Result()
				if err != nil {
					t.Fatal(err)
				}
				bound := []string{v}
				if len(bound) != 1 || bound[0] != n {
					t.Errorf("the idempotency key holds %q, want [%s]", bound, n)
				}
				pending := 0
				if tc.firstScheduled {
					pending = 1
				}
				if got := f.scheduled(amy); len(got) != pending {
					t.Errorf("scheduledPosts %v, want %d", got, pending)
				}
				if got := f.ids(store.SortNew, "", 10); len(got) != 1-pending {
					t.Errorf("posts %v, want %d", got, 1-pending)
				}
				clk.Add(2 * time.Hour)
				settle(t, f.s)
				if got := f.scheduled(amy); len(got) != 0 {
					t.Errorf("scheduledPosts in the end %v, want none", got)
				}
				got := f.ids(store.SortNew, "", 10)
				if len(got) != 1 {
					t.Fatalf("posts in the end %v, want 1", got)
				}
				// The post is the first request's: published at once, or at its publish time.
				want := p.CreatedAt
				q, err := f.s.NewLoader().Post(f.ctx, p.ID)
				if err != nil || q == nil || !q.CreatedAt.Equal(want) {
					t.Fatalf("the post in the end: %+v %v, want it created at %v", q, err, want)
				}
			})
		})
	}
}
