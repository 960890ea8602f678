package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
		prefix := storetest.Prefix()
		clock := storetest.NewClock()
		opts := store.Options{Prefix: prefix, SessionTTL: time.Hour, WriteLimit: -1, Now: clock.Now}
		s := b.NewStore(t, opts)
		signIn := func(name string, up bool) string {
			t.Helper()
			f := s.LogIn
			if up {
				f = s.SignUp
			}
			sess, err := f(ctx, name, "password1")
			if err != nil {
				t.Fatal(err)
			}
			return sess.Token
		}
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
