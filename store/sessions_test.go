package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSessionCap: a user keeps MaxSessions sessions; one more ends the one used longest ago, and
// expired sessions leave the index when a session starts.
func TestSessionCap(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, SessionTTL: time.Hour, WriteLimit: -1})
		key := func(token string) string {
			sum := sha256.Sum256([]byte(token))
			return prefix + "{u:ann}:sess:" + hex.EncodeToString(sum[:])
		}
		index := prefix + "{u:ann}:sessions"
		first, err := s.SignUp(ctx, "ann", "password1")
		if err != nil {
			t.Fatal(err)
		}
		// The first session was last used long ago: it has less time left than the others.
		if err := b.Client.PExpire(ctx, key(first.Token), 10*time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
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
		if n := b.Client.ZCard(ctx, index).Val(); n != store.MaxSessions {
			t.Errorf("index holds %d sessions, want %d", n, store.MaxSessions)
		}
		// An expired session leaves the index at the next start, which then ends no other.
		if err := b.Client.Del(ctx, key(tokens[50])).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.LogIn(ctx, "ann", "password1"); err != nil {
			t.Fatal(err)
		}
		if n := b.Client.ZCard(ctx, index).Val(); n != store.MaxSessions {
			t.Errorf("index holds %d sessions, want %d", n, store.MaxSessions)
		}
		for i, tok := range tokens {
			if _, err := s.Authenticate(ctx, tok); (err == nil) == (i == 50) {
				t.Errorf("session %d: %v", i, err)
			}
		}
	})
}
