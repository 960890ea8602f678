package store

import (
	"context"
	"sync/atomic"
)

// RedisCount counts what one operation sent to Redis through the store: round trips (pipelines;
// on a cluster, one per master a pipeline went to) and commands.
type RedisCount struct {
	RoundTrips atomic.Int64
	Commands   atomic.Int64
}

type redisCountKey struct{}

// WithRedisCount returns ctx carrying a new RedisCount, which every pipeline the store sends
// with ctx (or a context derived from it) adds to: the reads of a response, its writes' scripts.
func WithRedisCount(ctx context.Context) (context.Context, *RedisCount) {
	c := &RedisCount{}
	return context.WithValue(ctx, redisCountKey{}, c), c
}

// countRedis adds one attempt of a pipeline to ctx's RedisCount, if it has one.
func countRedis(ctx context.Context, roundTrips, commands int) {
	if c, ok := ctx.Value(redisCountKey{}).(*RedisCount); ok {
		c.RoundTrips.Add(int64(roundTrips))
		c.Commands.Add(int64(commands))
	}
}
