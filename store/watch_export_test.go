package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// exportedWatches decodes the watches of uid's export: thread or group id → mode.
func exportedWatches(t *testing.T, s *store.Store, uid string) map[string]string {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Export(context.Background(), store.UserKey(uid), "", &buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Watches []struct {
			PostID  string `json:"postId"`
			GroupID string `json:"groupId"`
			Mode    string `json:"mode"`
			Since   string `json:"since"`
		} `json:"watches"`
		Complete bool `json:"complete"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || !doc.Complete {
		t.Fatalf("decode the export (complete %v): %v", doc.Complete, err)
	}
	got := map[string]string{}
	for _, w := range doc.Watches {
		id := w.PostID + w.GroupID
		if (w.PostID == "") == (w.GroupID == "") || w.Since == "" {
			t.Fatalf("exported watch %+v: want one of postId and groupId, and since", w)
		}
		if _, dup := got[id]; dup {
			t.Fatalf("exported watches list %s twice", id)
		}
		got[id] = w.Mode
	}
	return got
}

// TestWatchModesExportedErasedAndRebuilt: the watch modes an account chose are in its export (the
// mode it holds now, once per thread or group, none for a mode set back to the default); deleting
// the account takes it off every thread and group it watched; Rebuild derives the user's index of
// watches again from the watched side.
func TestWatchModesExportedErasedAndRebuilt(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
		if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
			t.Fatal(err)
		}
		signUp(t, s, "bob")
		post := func(title string, groups ...string) *store.Post {
			t.Helper()
			p, err := s.CreatePost(ctx, "bob", store.NewPost{Title: title, Groups: groups})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		p1, p2, p3 := post("one", "golang"), post("two", "rust"), post("three")
		steps := []struct {
			post, group string
			mode        store.WatchMode
		}{
			{post: p1.ID, mode: store.WatchMuted},
			{post: p1.ID, mode: store.WatchAll}, // changed
			// REPLIES is kept (and exported) where it is a choice: on a post of a group with a mode.
			{group: "rust", mode: store.WatchMuted},
			{post: p2.ID, mode: store.WatchReplies},
			{group: "golang", mode: store.WatchAll},
		}
		for _, st := range steps {
			var err error
			if st.post != "" {
				err = s.WatchPost(ctx, "ann", st.post, st.mode)
			} else {
				err = s.WatchGroup(ctx, "ann", st.group, st.mode)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := s.WatchGroup(ctx, "ann", "nosuchgroup", store.WatchAll); !store.IsKind(err, store.KindNotFound) {
			t.Fatalf("watching a missing group: %v, want NOT_FOUND", err)
		}
		if err := s.WatchPost(ctx, "bob", p3.ID, store.WatchMuted); err != nil { // someone else's
			t.Fatal(err)
		}
		want := map[string]string{p1.ID: "ALL", p2.ID: "REPLIES", "group:golang": "ALL", "group:rust": "MUTED"}
		check := func(when string) {
			t.Helper()
			got := exportedWatches(t, s, "ann")
			if len(got) != len(want) {
				t.Fatalf("%s: exported watches %v, want %v", when, got, want)
			}
			for id, m := range want {
				if got[id] != m {
					t.Fatalf("%s: exported watches %v, want %v", when, got, want)
				}
			}
		}
		check("after watching")

		// Rebuild derives the index again from the watched side.
		if err := b.Client.Del(ctx, prefix+"{u:ann}:watches").Err(); err != nil {
			t.Fatal(err)
		}
		if got := exportedWatches(t, s, "ann"); len(got) != 0 {
			t.Fatalf("export without the index: %v, want nothing (the test must see the index)", got)
		}
		st, err := s.Rebuild(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Watches != 5 { // ann's four and bob's one
			t.Errorf("Rebuild found %d watch modes, want 5", st.Watches)
		}
		check("after Rebuild")

		if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
			t.Fatal(err)
		}
		for range 12 {
			if _, err := s.Jobs().RunDue(ctx); err != nil {
				t.Fatal(err)
			}
		}
		pid1, _ := store.PostKey(p1.ID)
		pid2, _ := store.PostKey(p2.ID)
		for _, key := range []string{"{p:" + pid1 + "}:watch", "{p:" + pid1 + "}:watch:all", "{p:" + pid2 + "}:watch",
			"{g:golang}:watch", "{g:golang}:watch:all", "{g:rust}:watch"} {
			var named bool
			var err error
			if bytes.HasSuffix([]byte(key), []byte(":all")) {
				named, err = b.Client.SIsMember(ctx, prefix+key, "ann").Result()
			} else {
				named, err = b.Client.HExists(ctx, prefix+key, "ann").Result()
			}
			if err != nil || named {
				t.Errorf("%s still names the deleted account (%v)", key, err)
			}
		}
		if n, err := b.Client.Exists(ctx, prefix+"{u:ann}:watches").Result(); err != nil || n != 0 {
			t.Errorf("the deleted account's watch index is still there (%v)", err)
		}
		pid3, _ := store.PostKey(p3.ID)
		if m, err := b.Client.HGet(ctx, prefix+"{p:"+pid3+"}:watch", "bob").Result(); err != nil || m != "M" {
			t.Errorf("bob's mode of post three after ann's deletion: %q, %v; want M", m, err)
		}
	})
}

// TestRefusedWatchesLeaveNoIndex: a watch of a post that is not there (never was, or deleted) is
// refused and leaves nothing in the user's index of watches, so that refused watches cannot grow
// it; an accepted one is indexed.
func TestRefusedWatchesLeaveNoIndex(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: -1})
		if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
			t.Fatal(err)
		}
		p, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "kept"})
		if err != nil {
			t.Fatal(err)
		}
		gone, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "deleted"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeletePost(ctx, "ann", gone.ID); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			if err := s.WatchPost(ctx, "ann", store.TypePost+":"+strconv.Itoa(900000+i), store.WatchAll); !store.IsKind(err, store.KindNotFound) {
				t.Fatalf("watching a post that never was: %v, want NOT_FOUND", err)
			}
		}
		if err := s.WatchPost(ctx, "ann", gone.ID, store.WatchAll); !store.IsKind(err, store.KindNotFound) {
			t.Fatalf("watching a deleted post: %v, want NOT_FOUND", err)
		}
		if err := s.WatchPost(ctx, "ann", p.ID, store.WatchMuted); err != nil {
			t.Fatal(err)
		}
		items, err := b.Client.ZRange(ctx, prefix+"{u:ann}:watches", 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"p:" + strings.TrimPrefix(p.ID, store.TypePost+":")}
		if !slices.Equal(items, want) {
			t.Fatalf("ann's watch index holds %q, want %q", items, want)
		}
	})
}
