package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSessionCap: a user keeps MaxSessions sessions; one more ends the one used longest ago, and
// expired sessions leave the user's hash when a session starts. With every other field a user
// hash can hold, the hash stays a listpack.
func TestSessionCap(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clock := storetest.NewClock()
		s := b.NewStore(t, store.Options{Prefix: prefix, SessionTTL: time.Hour, WriteLimit: -1, Now: clock.Now})
		id := func(token string) string {
			_, id, _ := store.SessionOf(token)
			return id
		}
		user := prefix + "{u:ann}"
		sessions := func() int {
			t.Helper()
			fields, err := b.Client.HKeys(ctx, user).Result()
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range fields {
				if strings.HasPrefix(f, "s:") {
					n++
				}
			}
			return n
		}
		first, err := s.SignUp(ctx, "ann", "password1")
		if err != nil {
			t.Fatal(err)
		}
		// Every other field a user's hash may hold, each as long as it may be within a listpack.
		long := strings.Repeat("x", 64)
		if err := b.Client.HSet(ctx, user, "bio", long, "avatar", long, "nsfw", "1", "email", long, "emailv", "1").Err(); err != nil {
			t.Fatal(err)
		}
		// The first session was used before the others: it has less time left than they.
		clock.Add(time.Minute)
		var tokens []string
		for range store.MaxSessions {
			sess, err := s.LogIn(ctx, "ann", "password1")
			if err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, sess.Token)
		}
		if _, err := s.Authenticate(ctx, first.Token); !store.IsKind(err, store.KindUnauthenticated) {
			t.Errorf("the session used longest ago: %v, want it ended", err)
		}
		for i, tok := range tokens {
			if _, err := s.Authenticate(ctx, tok); err != nil {
				t.Fatalf("session %d: %v", i, err)
			}
		}
		if n := sessions(); n != store.MaxSessions {
			t.Errorf("the user's hash holds %d sessions, want %d", n, store.MaxSessions)
		}
		if enc, err := b.Client.ObjectEncoding(ctx, user).Result(); b.Name != "miniredis" && (err != nil || enc != "listpack") {
			t.Errorf("the user's hash is encoded %q (%v), want listpack", enc, err)
		}
		if u, err := s.NewLoader().User(ctx, "ann"); err != nil || u.Name != "ann" {
			t.Errorf("the profile beside %d sessions: %+v, %v", store.MaxSessions, u, err)
		}
		// An expired session leaves the hash at the next start, which then ends no other.
		if err := b.Client.HSet(ctx, user, "s:"+id(tokens[50]), clock.Now().UnixMilli()).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.LogIn(ctx, "ann", "password1"); err != nil {
			t.Fatal(err)
		}
		if n := sessions(); n != store.MaxSessions {
			t.Errorf("the user's hash holds %d sessions, want %d", n, store.MaxSessions)
		}
		for i, tok := range tokens {
			if _, err := s.Authenticate(ctx, tok); (err == nil) == (i == 50) {
				t.Errorf("session %d: %v", i, err)
			}
		}
	})
}
