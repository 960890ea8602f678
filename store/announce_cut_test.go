package store_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// diesAfterScript returns b on a client of a process that dies once the store's script name has
// run: every command after it fails, unsent.
func diesAfterScript(t *testing.T, b storetest.Backend, name string) storetest.Backend {
	t.Helper()
	dead := new(atomic.Bool)
	sha := store.ScriptSHA(name)
	return b.Hooked(t, storetest.Dying(dead, errors.New("the process died"), func(cmds []rdb.Cmder) bool {
		return slices.ContainsFunc(cmds, func(c rdb.Cmder) bool {
			a := c.Args()
			return c.Name() == "evalsha" && len(a) > 1 && storetest.ArgString(a[1]) == sha
		})
	}))
}

// TestCutOffCommentIsAnnounced: a comment whose process died right after its atomic step is
// finished by the repair job — and announced by it: its thread's subscribers, and those who
// resume with a cursor, receive commentAdded (and postChanged for its count) once, as for any
// comment. Before, the repair derived the comment into every list but published nothing, so the
// live streams never carried it, against "none is lost silently". The creation's own
// announcement and the repair's are one: a retry of the creation (its idempotency key) after the
// repair announces nothing again.
func TestCutOffCommentIsAnnounced(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clock := newStepClock()
		opts := store.Options{Prefix: storetest.Prefix(), Now: clock.Now, WriteLimit: -1, NewAccount: store.NewAccountLimits{Age: -1}}
		s := b.NewStore(t, opts)
		signUp(t, s, "ann", "bob")
		p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "a post", Body: "its body"})
		if err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		pid, _ := store.PostKey(p.ID)

		dying := diesAfterScript(t, b, "create_comment").NewStore(t, opts)
		in := store.NewComment{PostID: p.ID, Body: "cut off after its atomic step", IdempotencyKey: "k1"}
		if _, err := dying.CreateComment(ctx, "bob", in); err == nil {
			t.Fatal("the comment of a process that died was answered")
		}
		clock.Add(store.RepairGrace + time.Second)
		settle(t, s)

		comments := func() []string {
			t.Helper()
			evs, err := s.ReplayLog(ctx, s.Channels().Comments(pid), store.FromStart)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, e := range evs {
				if e.Comment != "" {
					ids = append(ids, e.Comment)
				}
			}
			return ids
		}
		l := s.NewLoader()
		post, err := l.Post(ctx, p.ID)
		if err != nil || post == nil {
			t.Fatalf("the post: %v, %v", post, err)
		}
		thread, err := l.PostComments(ctx, post, store.CommentsNew, store.Window{First: 10}, nil)
		if err != nil || thread == nil || len(thread.Items) != 1 {
			t.Fatalf("the thread after the repair: %+v, %v; want the comment", thread, err)
		}
		want := []string{thread.Items[0].ID}
		if got := comments(); !slices.Equal(got, want) {
			t.Errorf("commentAdded events after the repair: %v, want %v", got, want)
		}
		// The client's retry finds its comment, announced already.
		if _, err := s.CreateComment(ctx, "bob", in); err != nil {
			t.Fatal(err)
		}
		if got := comments(); !slices.Equal(got, want) {
			t.Errorf("commentAdded events after the retry: %v, want %v", got, want)
		}
	})
}

// TestCutOffPostIsAnnounced: a post whose process died right after its atomic step is finished
// by the repair job — which pushes it to its followers' feeds and notifies its mentions, as it
// did — and announced to the subscribers of new posts and of its groups, once. Before, the repair
// announced nothing, so those live streams never carried the post. A retry of the creation (its
// idempotency key) after the repair announces nothing again.
func TestCutOffPostIsAnnounced(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clock := newStepClock()
		opts := store.Options{Prefix: storetest.Prefix(), Now: clock.Now, WriteLimit: -1, NewAccount: store.NewAccountLimits{Age: -1}}
		s := b.NewStore(t, opts)
		signUp(t, s, "ann")
		dying := diesAfterScript(t, b, "create_post").NewStore(t, opts)
		in := store.NewPost{Title: "cut off", Body: "after its atomic step", Groups: []string{"go"}, IdempotencyKey: "k1"}
		if _, err := dying.CreatePost(ctx, "ann", in); err == nil {
			t.Fatal("the post of a process that died was answered")
		}
		clock.Add(store.RepairGrace + time.Second)
		settle(t, s)

		published := func() map[string][]string {
			t.Helper()
			out := map[string][]string{}
			for _, g := range []string{"", "go"} {
				evs, err := s.ReplayLog(ctx, s.Channels().Published(g), store.FromStart)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range evs {
					if e.Post != "" {
						out[g] = append(out[g], e.Post)
					}
				}
			}
			return out
		}
		page, err := s.NewLoader().Posts(ctx, store.SortNew, "", store.Window{First: 10}, nil)
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("the front page after the repair: %+v, %v; want the post", page, err)
		}
		id := page.Items[0].ID
		want := map[string][]string{"": {id}, "go": {id}}
		if got := published(); !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("new-post events after the repair: %v, want %v", got, want)
		}
		if _, err := s.CreatePost(ctx, "ann", in); err != nil {
			t.Fatal(err)
		}
		if got := published(); !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("new-post events after the retry: %v, want %v", got, want)
		}
	})
}
