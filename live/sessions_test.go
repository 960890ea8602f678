package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// ended reports whether a watch's session has ended, waiting up to eventWait when want is true.
func ended(w *live.SessionWatch, want bool) bool {
	if !want {
		select {
		case <-w.Ended():
			return true
		default:
			return false
		}
	}
	select {
	case <-w.Ended():
		return true
	case <-time.After(eventWait):
		return false
	}
}

// TestWatchSession: a watch ends with its session — announced by another process (a log-out, an
// account's deletion), or found gone by a recheck (an expired session is not announced) — and not
// with another session of the same user or another user's.
func TestWatchSession(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := b.NewStore(t, store.Options{})
		other := peer(t, b, st)
		h := newHub(t, st, live.Options{})
		first, err := st.SignUp(ctx, "alice", "password1")
		if err != nil {
			t.Fatal(err)
		}
		var tokens []string
		for range 2 {
			s, err := st.LogIn(ctx, "alice", "password1")
			if err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, s.Token)
		}
		watch := func(token string, recheck time.Duration) *live.SessionWatch {
			t.Helper()
			w, err := h.WatchSession(ctx, token, recheck)
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			t.Cleanup(w.Close)
			return w
		}
		loggedOut, kept, expiring := watch(first.Token, 0), watch(tokens[0], 0), watch(tokens[1], 5*time.Millisecond)

		if err := other.LogOut(ctx, first.Token); err != nil {
			t.Fatal(err)
		}
		if !ended(loggedOut, true) {
			t.Error("logOut on another process did not end the watch of its session")
		}
		if ended(kept, false) {
			t.Error("logOut of one session ended the watch of another")
		}

		user, id, _ := store.SessionOf(tokens[1])
		if err := b.Client.HDel(ctx, st.Options().Prefix+"{u:"+string(user)+"}", "s:"+id).Err(); err != nil {
			t.Fatal(err)
		}
		if !ended(expiring, true) {
			t.Error("a session gone without an announcement was not found by the recheck")
		}

		if w := watch(first.Token, 0); !ended(w, false) {
			t.Error("a watch of a session that had already ended did not end")
		}
		if w := watch("not a token", 0); !ended(w, false) {
			t.Error("a watch of a malformed token did not end")
		}
		if ended(kept, false) {
			t.Error("the kept session's watch ended")
		}

		// An account's deletion on another process ends the watches of its sessions, announced,
		// and not another user's.
		bob, err := st.SignUp(ctx, "bob", "password1")
		if err != nil {
			t.Fatal(err)
		}
		bobs := watch(bob.Token, 0)
		if err := other.DeleteAccount(ctx, "alice", "password1", false); err != nil {
			t.Fatal(err)
		}
		if !ended(kept, true) {
			t.Error("the account's deletion did not end the watch of its session")
		}
		if ended(bobs, false) {
			t.Error("alice's deletion ended the watch of bob's session")
		}
	})
}

// TestWatchSessionEndsWithTheCap: a session ended to make room for a new one (a user keeps
// store.MaxSessions) is announced like a log-out, so that its watch ends at once on every
// process, without waiting for a recheck; the sessions kept keep their watches.
func TestWatchSessionEndsWithTheCap(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clock := storetest.NewClock()
		st := b.NewStore(t, store.Options{Now: clock.Now, WriteLimit: -1})
		other := peer(t, b, st)
		h := newHub(t, st, live.Options{})
		first, err := st.SignUp(ctx, "alice", "password1")
		if err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Minute) // the first session has less time left than those that follow
		second, err := other.LogIn(ctx, "alice", "password1")
		if err != nil {
			t.Fatal(err)
		}
		oldest, err := h.WatchSession(ctx, first.Token, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(oldest.Close)
		kept, err := h.WatchSession(ctx, second.Token, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(kept.Close)
		for range store.MaxSessions - 2 {
			if _, err := other.LogIn(ctx, "alice", "password1"); err != nil {
				t.Fatal(err)
			}
		}
		if ended(oldest, false) || ended(kept, false) {
			t.Fatal("a watch ended while the user held no more than MaxSessions sessions")
		}
		if _, err := other.LogIn(ctx, "alice", "password1"); err != nil { // one past the cap
			t.Fatal(err)
		}
		if !ended(oldest, true) {
			t.Error("the session the cap ended kept its watch: the end was not announced")
		}
		if ended(kept, false) {
			t.Error("the cap ended the watch of a session it kept")
		}
	})
}
