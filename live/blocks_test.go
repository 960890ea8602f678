package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestWatchSessionFollowsLiveFilters: a session's watch starts with its user's block list and NSFW
// setting, and follows every block, unblock and change of the setting the user makes afterwards,
// on any process, while another user's watch does not change.
func TestWatchSessionFollowsLiveFilters(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := b.NewStore(t, store.Options{WriteLimit: -1})
		other := peer(t, b, st)
		h := newHub(t, st, live.Options{})
		var tokens []string
		for _, name := range []string{"alice", "bob", "carol", "dave"} {
			s, err := st.SignUp(ctx, name, "password1")
			if err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, s.Token)
		}
		if _, err := st.Block(ctx, "alice", "carol"); err != nil {
			t.Fatal(err)
		}
		watch := func(token string) *live.SessionWatch {
			t.Helper()
			w, err := h.WatchSession(ctx, token, 0)
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			t.Cleanup(w.Close)
			return w
		}
		alice, bob := watch(tokens[0]), watch(tokens[1])
		// becomes waits until w's list blocks user or not, as want says.
		becomes := func(what string, w *live.SessionWatch, user store.UserKey, want bool) {
			t.Helper()
			for deadline := time.Now().Add(eventWait); w.Blocks().Has(user) != want; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: the watch's list has %s = %v, want %v", what, user, !want, want)
				}
			}
		}
		if !alice.Blocks().Has("carol") || alice.Blocks().Has("bob") {
			t.Fatalf("the watch did not start with the list: carol %v, bob %v", alice.Blocks().Has("carol"), alice.Blocks().Has("bob"))
		}
		if _, err := other.Block(ctx, "alice", "bob"); err != nil {
			t.Fatal(err)
		}
		becomes("a block on another process", alice, "bob", true)
		if _, err := other.Unblock(ctx, "alice", "carol"); err != nil {
			t.Fatal(err)
		}
		becomes("an unblock on another process", alice, "carol", false)
		if !alice.Blocks().Has("bob") {
			t.Error("the unblock of carol took bob out of the list too")
		}
		// Repeating a block or an unblock changes nothing.
		if _, err := st.Block(ctx, "alice", "bob"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Unblock(ctx, "alice", "carol"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Block(ctx, "alice", "dave"); err != nil {
			t.Fatal(err)
		}
		becomes("a block after repeated ones", alice, "dave", true)
		if !alice.Blocks().Has("bob") || alice.Blocks().Has("carol") {
			t.Errorf("after repeats: bob %v (want true), carol %v (want false)", alice.Blocks().Has("bob"), alice.Blocks().Has("carol"))
		}
		if bob.Blocks().Len() != 0 {
			t.Errorf("alice's blocks changed bob's watch: %d blocked", bob.Blocks().Len())
		}

		// The NSFW setting: off at first, then followed as it changes, alice's alone.
		if alice.ShowNSFW() {
			t.Fatal("the watch starts with NSFW posts shown")
		}
		setNSFW := func(show bool) {
			t.Helper()
			if _, err := other.UpdateProfile(ctx, "alice", store.ProfileEdit{ShowNSFW: &show}); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(eventWait); alice.ShowNSFW() != show; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the watch's NSFW setting is %v, want %v", !show, show)
				}
			}
		}
		setNSFW(true)
		setNSFW(false)
		setNSFW(true)
		if bob.ShowNSFW() {
			t.Error("alice's setting changed bob's watch")
		}
		if !alice.Blocks().Has("bob") {
			t.Error("a change of the NSFW setting lost the block list")
		}
	})
}

// TestWatchSessionRereadsBlocksAfterAGap: a change of the block list that the watch's
// subscription missed (here made behind the store's back, so that nothing announces it) is read
// once the subscription comes back from a gap (its connection was killed).
func TestWatchSessionRereadsBlocksAfterAGap(t *testing.T) {
	s, rc, h := privateHub(t)
	ctx := context.Background()
	sess, err := s.SignUp(ctx, "alice", "password1")
	if err != nil {
		t.Fatal(err)
	}
	liveUser(t, s, "bob")
	w, err := h.WatchSession(ctx, sess.Token, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := rc.ZAdd(ctx, s.Options().Prefix+"{u:alice}:blocks", rdb.Z{Score: 1, Member: "bob"}).Err(); err != nil {
		t.Fatal(err)
	}
	if killed, err := rc.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); err != nil || killed != 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub = %d, %v; want 1 connection", killed, err)
	}
	waitFor(t, "the watch to read the list again", func() bool { return w.Blocks().Has("bob") })
}
