package store_test

import (
	"errors"

	"github.com/agora/agora/store"
)

func asStoreError(err error, target **store.Error) bool { return errors.As(err, target) }
