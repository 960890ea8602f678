package store

import (
	"context"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// The names the store had for the plumbing that moved to package rdb, for the code not yet
// rewritten to name rdb itself (scripts/rdb-qualify.sh does it; this file then goes).

type (
	ClientConfig = rdb.ClientConfig
	RedisCount   = rdb.RedisCount
)

const MaxRedirectAttempts = rdb.MaxRedirectAttempts

var ErrNotReplicated = rdb.ErrNotReplicated

func NewClient(c ClientConfig) (rdb.UniversalClient, error) { return rdb.NewClient(c) }
func SplitAddrs(s string) []string                          { return rdb.SplitAddrs(s) }
func CheckConnection(ctx context.Context, client rdb.UniversalClient, timeout time.Duration) error {
	return rdb.CheckConnection(ctx, client, timeout)
}
func WithRedisCount(ctx context.Context) (context.Context, *RedisCount) {
	return rdb.WithRedisCount(ctx)
}
func Pause(ctx context.Context, d time.Duration) error { return rdb.Pause(ctx, d) }
func RetryPause(attempt int) time.Duration             { return rdb.RetryPause(attempt) }
func firstErr(cmds [2]rdb.Cmder) error                 { return rdb.FirstErr(cmds) }
func unavailable(ctx context.Context, err error) error { return rdb.Unavailable(ctx, err) }
func storageFull(err error) error                      { return rdb.StorageFull(err) }
