package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func TestSignUpAndLogIn(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		sess, err := s.SignUp(ctx, "Alice_1", "correct horse")
		if err != nil {
			t.Fatal(err)
		}
		if sess.User.ID != "user:alice_1" || sess.User.Name != "Alice_1" || len(sess.Token) < 40 {
			t.Fatalf("session %+v", sess)
		}
		id, err := s.Authenticate(ctx, sess.Token)
		if err != nil || id != sess.User.Key() || id.ID() != sess.User.ID {
			t.Fatalf("authenticate = %q, %v", id, err)
		}
		// Names are unique ignoring case.
		if _, err := s.SignUp(ctx, "ALICE_1", "another pass"); !store.IsKind(err, store.KindConflict) {
			t.Fatalf("duplicate name: %v", err)
		}
		// Log in ignoring the case of the name; the display name keeps its case.
		in, err := s.LogIn(ctx, "alice_1", "correct horse")
		if err != nil || in.User.Name != "Alice_1" {
			t.Fatalf("log in: %+v %v", in, err)
		}
		for _, tc := range []struct{ name, pass string }{
			{"alice_1", "wrong password"},
			{"nobody", "correct horse"},
			{"x", "correct horse"},
		} {
			if _, err := s.LogIn(ctx, tc.name, tc.pass); !store.IsKind(err, store.KindUnauthenticated) {
				t.Errorf("LogIn(%q, %q) = %v, want unauthenticated", tc.name, tc.pass, err)
			}
		}
		// Logging out ends that session only.
		if err := s.LogOut(ctx, sess.Token); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, sess.Token); !store.IsKind(err, store.KindUnauthenticated) {
			t.Fatalf("token after log out: %v", err)
		}
		if _, err := s.Authenticate(ctx, in.Token); err != nil {
			t.Fatalf("other session: %v", err)
		}
	})
}

func TestSignUpValidation(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		s := b.NewStore(t, store.Options{})
		for _, tc := range []struct{ name, pass string }{
			{"ab", "password1"},
			{strings.Repeat("a", 33), "password1"},
			{"has space", "password1"},
			{"émile", "password1"},
			{"good_name", "short"},
			{"good_name", strings.Repeat("p", 257)},
		} {
			if _, err := s.SignUp(context.Background(), tc.name, tc.pass); !store.IsKind(err, store.KindInvalid) {
				t.Errorf("SignUp(%q, %d-byte password) = %v, want invalid", tc.name, len(tc.pass), err)
			}
		}
	})
}

func TestPasswordsAreHashedWithArgon2id(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix})
		sess, err := s.SignUp(ctx, "carol", "secret password")
		if err != nil {
			t.Fatal(err)
		}
		pass, err := b.Client.HGet(ctx, prefix+"{u:carol}", "pass").Result()
		if err != nil {
			t.Fatal(err)
		}
		// Kept compactly (see encodeHash): the same argon2id hash as the PHC string.
		if !strings.HasPrefix(store.PHCForTest(pass), "$argon2id$v=19$m=") || len(pass) > 64 ||
			strings.Contains(pass, "secret password") {
			t.Fatalf("stored password %q", pass)
		}
		// The token itself is never stored, only a digest of it, in a field of the user's hash.
		var ids []string
		fields, err := b.Client.HKeys(ctx, prefix+"{u:carol}").Result()
		for _, f := range fields {
			if id, ok := strings.CutPrefix(f, "s:"); ok {
				ids = append(ids, id)
			}
		}
		if err != nil || len(ids) != 1 || strings.Contains(sess.Token, ids[0]) {
			t.Fatalf("sessions stored as %q (%v), want one id that is not the token", ids, err)
		}
	})
}

func TestSessionTTLSlidesOnUse(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clock := storetest.NewClock()
		s := b.NewStore(t, store.Options{Prefix: prefix, SessionTTL: time.Hour, Now: clock.Now})
		sess, err := s.SignUp(ctx, "dave", "password1")
		if err != nil {
			t.Fatal(err)
		}
		// Used 59 minutes later, the session lives an hour from then: 2 hours in, it is on.
		for range 2 {
			clock.Add(59 * time.Minute)
			if _, err := s.Authenticate(ctx, sess.Token); err != nil {
				t.Fatalf("a use within the TTL of the last: %v", err)
			}
		}
		// Left unused for an hour, it has ended, exactly then.
		clock.Add(time.Hour)
		if _, err := s.Authenticate(ctx, sess.Token); !store.IsKind(err, store.KindUnauthenticated) {
			t.Fatalf("after an hour unused: %v, want unauthenticated", err)
		}
		_, id, _ := store.SessionOf(sess.Token)
		if n, err := b.Client.HExists(ctx, prefix+"{u:dave}", "s:"+id).Result(); err != nil || n {
			t.Errorf("the expired session stays stored: %v, %v", n, err)
		}
	})
}

func scanAll(t *testing.T, b storetest.Backend, pattern string) []string {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var keys []string
	collect := func(ctx context.Context, c *rdb.Client) error {
		ks, err := c.Keys(ctx, pattern).Result() // tests only; the store never uses KEYS
		mu.Lock()
		keys = append(keys, ks...)
		mu.Unlock()
		return err
	}
	var err error
	if cc, ok := b.Client.(*rdb.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, collect)
	} else {
		err = collect(ctx, b.Client.(*rdb.Client))
	}
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
