package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestMigrateSessions writes sessions as layout 4 kept them — a string per session with its TTL,
// indexed per user — and migrates them into the users' sessions hashes: before the migration
// (the keyspace says layout 4) a session is found where layout 4 kept it and can be used, checked,
// ended one by one or all at once; after it every session left is in its user's hash with the
// expiry its TTL gave it, under the same token, nothing of layout 4 is left, and a second run
// changes nothing.
func TestMigrateSessions(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, opts, clock := sessionsStore(t, b)
		prefix := opts.Prefix
		signIn := func(name string, up bool) string { return signIn(t, s, name, up) }
		used, unused, other := signIn("ann", true), signIn("ann", false), signIn("ann", false)
		ended, everywhere := signIn("bob", true), signIn("cat", true)
		gone := signIn("ann", false) // expired under layout 4: its string is gone, its index entry not

		// Layout 4: each session a string with its TTL, in an index; no hash.
		left := map[string]time.Duration{used: 50 * time.Minute, unused: 40 * time.Minute, other: 30 * time.Minute,
			ended: time.Hour, everywhere: time.Hour, gone: 0}
		for tok, ttl := range left {
			user, _, _ := store.SessionOf(tok)
			sum := sha256.Sum256([]byte(tok))
			dig := hex.EncodeToString(sum[:])
			u := prefix + "{u:" + string(user) + "}"
			if err := b.Client.HDel(ctx, u, "s:"+dig[:32]).Err(); err != nil {
				t.Fatal(err)
			}
			if ttl > 0 {
				if err := b.Client.Set(ctx, u+":sess:"+dig, string(user), ttl).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Client.ZAdd(ctx, u+":sessions", rdb.Z{Score: float64(clock.Now().Add(ttl).UnixMilli()), Member: dig}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Client.HSet(ctx, prefix+"{meta}:layout", "version", 4).Err(); err != nil {
			t.Fatal(err)
		}
		// A process started on layout 4 data, before the migration.
		s = b.NewStore(t, opts)
		if _, err := s.CheckLayout(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, used); err != nil {
			t.Fatalf("a layout-4 session used before the migration: %v", err)
		}
		if on, err := s.SessionActive(ctx, unused); err != nil || !on {
			t.Fatalf("a layout-4 session checked before the migration: %v, %v", on, err)
		}
		if err := s.LogOut(ctx, ended); err != nil {
			t.Fatal(err)
		}
		if err := s.LogOutEverywhere(ctx, "cat"); err != nil {
			t.Fatal(err)
		}
		for _, tok := range []string{ended, everywhere, gone} {
			if on, err := s.SessionActive(ctx, tok); err != nil || on {
				t.Fatalf("an ended session is on before the migration: %v, %v", on, err)
			}
		}

		clock.Add(time.Minute)
		check := func(when string) {
			t.Helper()
			ran, err := s.Migrate(ctx, 10*time.Millisecond)
			if err != nil || len(ran) != store.Layout-4 || ran[0].From != 4 {
				t.Fatalf("%s: ran %+v, %v; want the migration from 4", when, ran, err)
			}
			for _, pat := range []string{prefix + "{u:*}:sess:*", prefix + "{u:*}:sessions", prefix + "{u:*}:s"} {
				if keys := scanAll(t, b, pat); len(keys) != 0 {
					t.Fatalf("%s: layout 4's keys left: %q", when, keys)
				}
			}
			// The expiries are those the TTLs give, from the migration's now (Redis's clock has not
			// moved with the test's); the used session's moved an hour past its use.
			want := map[string]time.Time{unused: clock.Now().Add(40 * time.Minute), other: clock.Now().Add(30 * time.Minute),
				used: clock.Now().Add(59 * time.Minute)}
			for tok, exp := range want {
				_, id, _ := store.SessionOf(tok)
				ms, err := b.Client.HGet(ctx, prefix+"{u:ann}", "s:"+id).Int64()
				if d := time.UnixMilli(ms).Sub(exp); err != nil || d < -2*time.Second || d > 2*time.Second {
					t.Errorf("%s: a session expires at %v (%v), want %v", when, time.UnixMilli(ms), err, exp)
				}
			}
			for u, want := range map[string]int{"ann": 3, "bob": 0, "cat": 0} {
				if n := len(storedSessions(t, b, prefix, u)); n != want {
					t.Errorf("%s: %s has %d sessions, want %d", when, u, n, want)
				}
			}
		}
		check("migration")
		// A second run (the migration resumed after it was cut off) moves nothing.
		if err := b.Client.HSet(ctx, prefix+"{meta}:layout", "version", 4).Err(); err != nil {
			t.Fatal(err)
		}
		check("second run")

		for _, tok := range []string{used, unused, other} {
			if u, err := s.Authenticate(ctx, tok); err != nil || u != "ann" {
				t.Fatalf("a session after the migration: %q, %v; want ann", u, err)
			}
		}
		for _, tok := range []string{ended, everywhere, gone} {
			if _, err := s.Authenticate(ctx, tok); !store.IsKind(err, store.KindUnauthenticated) {
				t.Fatalf("an ended session after the migration: %v, want unauthenticated", err)
			}
		}
		// The sessions' expiries run on: an hour unused, they end.
		clock.Add(time.Hour)
		if _, err := s.Authenticate(ctx, used); !store.IsKind(err, store.KindUnauthenticated) {
			t.Fatalf("a migrated session an hour unused: %v, want unauthenticated", err)
		}
	})
}

// storedSessions returns the sessions kept in the hash of user uid, id → expiry (Unix ms).
func storedSessions(t *testing.T, b storetest.Backend, prefix, uid string) map[string]int64 {
	t.Helper()
	h, err := b.Client.HGetAll(context.Background(), prefix+"{u:"+uid+"}").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for f, v := range h {
		if id, ok := strings.CutPrefix(f, "s:"); ok {
			exp, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("session %s of %s expires at %q", id, uid, v)
			}
			out[id] = exp
		}
	}
	return out
}

// asLayout7 moves the sessions of user uid out of the user's hash into the hash of their own that
// layouts 5 to 7 kept ({u:<name>}:s, session id → expiry), as a keyspace of layout 7 holds them.
func asLayout7(t *testing.T, b storetest.Backend, prefix, uid string) {
	t.Helper()
	ctx := context.Background()
	u := prefix + "{u:" + uid + "}"
	for id, exp := range storedSessions(t, b, prefix, uid) {
		if err := b.Client.HSet(ctx, u+":s", id, exp).Err(); err != nil {
			t.Fatal(err)
		}
		if err := b.Client.HDel(ctx, u, "s:"+id).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigrateSessionsFromLayout7 writes sessions, puts them back as layout 7 kept them (a hash of
// their own per user, {u:<name>}:s) and migrates them into the users' hashes. Beside the
// migration, a process of layout 8 checks a session of layout 7 without moving anything, and
// moves a user's sessions into the user's hash before it uses, logs out, ends (a password change
// keeps its own session) or exports them, or deletes the account; a session that a process of
// layout 7 starts meanwhile is found too. The step then moves what is left, each session under
// its token with its expiry (the expired ones dropped, at most MaxSessions a user), leaves no hash
// of layout 7, changes nothing when run again, and Rebuild runs it for a session that a process of
// layout 7 started after the migration.
func TestMigrateSessionsFromLayout7(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, opts, clock := sessionsStore(t, b)
		prefix := opts.Prefix
		signIn := func(name string, up bool) string { return signIn(t, s, name, up) }
		id := func(token string) string {
			_, id, _ := store.SessionOf(token)
			return id
		}
		used, unused, expired := signIn("ann", true), signIn("ann", false), signIn("ann", false)
		kept, stolen, loggedOut := signIn("bob", true), signIn("bob", false), signIn("bob", false)
		deleted := signIn("cat", true)
		moved, moved2 := signIn("dee", true), signIn("dee", false)
		exported := signIn("eve", true)
		users := []string{"ann", "bob", "cat", "dee", "eve"}
		clock.Add(10 * time.Minute)
		started := clock.Now() // the sessions above expire 50 minutes from here

		// Layout 7: every user's sessions in a hash of their own; one of ann's expired.
		for _, u := range users {
			asLayout7(t, b, prefix, u)
		}
		apart := func(uid string) string { return prefix + "{u:" + uid + "}:s" }
		if err := b.Client.HSet(ctx, apart("ann"), id(expired), started.UnixMilli()-1).Err(); err != nil {
			t.Fatal(err)
		}
		if err := b.Client.HSet(ctx, prefix+"{meta}:layout", "version", 7).Err(); err != nil {
			t.Fatal(err)
		}
		s = b.NewStore(t, opts) // a process started on layout 7's keyspace
		if _, err := s.CheckLayout(ctx); err != nil {
			t.Fatal(err)
		}
		exists := func(key string) bool {
			t.Helper()
			n, err := b.Client.Exists(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			return n == 1
		}
		expiries := func(uid string, want map[string]time.Time, when string) {
			t.Helper()
			got := storedSessions(t, b, prefix, uid)
			if len(got) != len(want) {
				t.Errorf("%s: %s has %d sessions in the user's hash, want %d", when, uid, len(got), len(want))
			}
			for tok, exp := range want {
				if d := time.UnixMilli(got[id(tok)]).Sub(exp); d < -time.Second || d > time.Second {
					t.Errorf("%s: a session of %s expires at %v, want %v", when, uid, time.UnixMilli(got[id(tok)]), exp)
				}
			}
		}

		// A check reads both places and moves nothing.
		for tok, want := range map[string]bool{unused: true, expired: false, moved: true} {
			if on, err := s.SessionActive(ctx, tok); err != nil || on != want {
				t.Errorf("a session of layout 7 checked: %v, %v; want %v", on, err, want)
			}
		}
		if !exists(apart("ann")) || len(storedSessions(t, b, prefix, "ann")) != 0 {
			t.Fatal("a check moved sessions")
		}
		// A use moves the user's sessions, the live ones, then extends its own.
		if u, err := s.Authenticate(ctx, used); err != nil || u != "ann" {
			t.Fatalf("a session of layout 7 used: %q, %v", u, err)
		}
		if exists(apart("ann")) {
			t.Error("a use left the user's sessions of layout 7")
		}
		expiries("ann", map[string]time.Time{used: clock.Now().Add(time.Hour), unused: started.Add(50 * time.Minute)}, "after a use")
		if _, err := s.Authenticate(ctx, expired); !store.IsKind(err, store.KindUnauthenticated) {
			t.Errorf("an expired session of layout 7: %v, want unauthenticated", err)
		}
		// A log-out of a session of layout 7 ends it there.
		if err := s.LogOut(ctx, loggedOut); err != nil {
			t.Fatal(err)
		}
		if on, err := s.SessionActive(ctx, loggedOut); err != nil || on {
			t.Errorf("a session of layout 7 logged out: %v, %v; want ended", on, err)
		}
		// A password change from a session of layout 7 keeps it, and ends the other.
		if err := s.ChangePassword(ctx, "bob", kept, "password1", "password2"); err != nil {
			t.Fatal(err)
		}
		if exists(apart("bob")) {
			t.Error("a password change left the user's sessions of layout 7")
		}
		expiries("bob", map[string]time.Time{kept: started.Add(50 * time.Minute)}, "after a password change")
		for tok, want := range map[string]bool{kept: true, stolen: false} {
			if _, err := s.Authenticate(ctx, tok); (err == nil) != want {
				t.Errorf("after a password change: a session %v, want on = %v", err, want)
			}
		}
		// An account's deletion ends its sessions of layout 7.
		if err := s.DeleteAccount(ctx, "cat", "password1", false); err != nil {
			t.Fatal(err)
		}
		if exists(apart("cat")) || len(storedSessions(t, b, prefix, "cat")) != 0 {
			t.Error("a deleted account keeps sessions")
		}
		if _, err := s.Authenticate(ctx, deleted); !store.IsKind(err, store.KindUnauthenticated) {
			t.Errorf("a session of a deleted account: %v, want unauthenticated", err)
		}
		// An export lists the sessions of layout 7, and folds them first: past the cap, those used
		// longest ago end (announced, as every end of a session is).
		for i := range store.MaxSessions + 5 {
			exp := clock.Now().Add(time.Duration(i+1) * time.Second).UnixMilli()
			if err := b.Client.HSet(ctx, apart("eve"), fmt.Sprintf("e%031x", i), exp).Err(); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if err := s.Export(ctx, "eve", exported, &buf); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Sessions []struct{ Current bool }
		}
		current := func() int {
			n := 0
			for _, ss := range doc.Sessions {
				if ss.Current {
					n++
				}
			}
			return n
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || len(doc.Sessions) != store.MaxSessions || current() != 1 {
			t.Errorf("the export of a user with %d sessions of layout 7 lists %d (%d current, %v), want %d with the current one",
				store.MaxSessions+6, len(doc.Sessions), current(), err, store.MaxSessions)
		}
		// A process of layout 7 starts a session of ann's beside the migration, in the hash of its
		// own (its id made up: no token names it).
		late := strings.Repeat("a", 32)
		if err := b.Client.HSet(ctx, apart("ann"), late, clock.Now().Add(time.Hour).UnixMilli()).Err(); err != nil {
			t.Fatal(err)
		}
		// A user past MaxSessions once both shapes are counted: those used longest ago end.
		fill := map[string]int64{}
		for i := range store.MaxSessions + 5 {
			exp := clock.Now().Add(time.Duration(i+1) * time.Second).UnixMilli()
			fill[fmt.Sprintf("%032x", i)] = exp
			if err := b.Client.HSet(ctx, apart("dee"), fmt.Sprintf("%032x", i), exp).Err(); err != nil {
				t.Fatal(err)
			}
		}

		// The step, twice.
		for run, want := range []int{3 + store.MaxSessions + 5, 0} {
			n, err := s.FoldSessionsForTest(ctx)
			if err != nil || n != want {
				t.Fatalf("run %d moved %d sessions, %v; want %d", run, n, err, want)
			}
			if keys := scanAll(t, b, prefix+"{u:*}:s"); len(keys) != 0 {
				t.Fatalf("run %d left hashes of layout 7: %q", run, keys)
			}
			deeHas := storedSessions(t, b, prefix, "dee")
			if len(deeHas) != store.MaxSessions || deeHas[id(moved)] == 0 || deeHas[id(moved2)] == 0 ||
				deeHas[fmt.Sprintf("%032x", 6)] != 0 || deeHas[fmt.Sprintf("%032x", 7)] == 0 {
				t.Errorf("run %d: dee keeps %d sessions, want the %d used last", run, len(deeHas), store.MaxSessions)
			}
			if got := storedSessions(t, b, prefix, "ann")[late]; got != clock.Now().Add(time.Hour).UnixMilli() {
				t.Errorf("run %d: the session started by a process of layout 7 expires at %d", run, got)
			}
		}
		ran, err := s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != 1 || ran[0].From != 7 {
			t.Fatalf("ran %+v, %v; want the migration from layout 7", ran, err)
		}
		for tok, want := range map[string]string{used: "ann", unused: "ann", kept: "bob", moved: "dee", moved2: "dee", exported: "eve"} {
			if u, err := s.Authenticate(ctx, tok); err != nil || string(u) != want {
				t.Errorf("a session after the migration: %q, %v; want %s", u, err, want)
			}
		}
		for _, tok := range []string{expired, stolen, loggedOut, deleted} {
			if _, err := s.Authenticate(ctx, tok); !store.IsKind(err, store.KindUnauthenticated) {
				t.Errorf("an ended session after the migration: %v, want unauthenticated", err)
			}
		}
		// A process of layout 7 still running starts a session after the migration: Rebuild
		// moves it.
		if err := b.Client.HSet(ctx, apart("eve"), late, clock.Now().Add(time.Hour).UnixMilli()).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		if exists(apart("eve")) || storedSessions(t, b, prefix, "eve")[late] == 0 {
			t.Error("Rebuild did not move a session of layout 7")
		}
	})
}

// signIn signs name up (up) or in on s with the password "password1" and returns the session's
// token.
func signIn(t *testing.T, s *store.Store, name string, up bool) string {
	t.Helper()
	f := s.LogIn
	if up {
		f = s.SignUp
	}
	sess, err := f(context.Background(), name, "password1")
	if err != nil {
		t.Fatal(err)
	}
	return sess.Token
}

// sessionsStore returns a store of its own prefix whose sessions last an hour on clock, for the
// tests of the sessions' migrations, with its options.
func sessionsStore(t *testing.T, b storetest.Backend) (*store.Store, store.Options, *storetest.Clock) {
	clock := storetest.NewClock()
	opts := store.Options{Prefix: storetest.Prefix(), SessionTTL: time.Hour, WriteLimit: -1, Now: clock.Now}
	return b.NewStore(t, opts), opts, clock
}
