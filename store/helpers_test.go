package store_test

import (
	"errors"
	"strings"

	"github.com/agora/agora/store"
)

func asStoreError(err error, target **store.Error) bool { return errors.As(err, target) }

// uk names a user by key for the store's API, from a key ("alice") or a global id ("user:alice").
func uk(s string) store.UserKey { return store.UserKey(strings.TrimPrefix(s, store.TypeUser+":")) }
