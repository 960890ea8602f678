package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agora/agora/store"
)

func asStoreError(err error, target **store.Error) bool { return errors.As(err, target) }

// uk names a user by key for the store's API, from a key ("alice") or a global id ("user:alice").
func uk(s string) store.UserKey { return store.UserKey(strings.TrimPrefix(s, store.TypeUser+":")) }

// settle runs the jobs that are due (feed fan-out, say), as the background of a server would.
func settle(t testing.TB, s *store.Store) {
	t.Helper()
	if _, err := s.Jobs().RunDue(context.Background()); err != nil {
		t.Fatalf("run due jobs: %v", err)
	}
}
