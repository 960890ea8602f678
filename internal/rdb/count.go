package rdb

import (
	"context"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// RedisCount counts what one operation sent to Redis through the runner: round trips (pipelines;
// on a cluster, one per master a pipeline went to) and commands.
type RedisCount struct {
	RoundTrips atomic.Int64
	Commands   atomic.Int64
}

type redisCountKey struct{}

// WithRedisCount returns ctx carrying a new RedisCount, which every pipeline the runner sends
// with ctx (or a context derived from it) adds to: the reads of a response, its writes' scripts.
func WithRedisCount(ctx context.Context) (context.Context, *RedisCount) {
	c := &RedisCount{}
	return context.WithValue(ctx, redisCountKey{}, c), c
}

// pipelineSpan starts the span of one pipeline, as a child of the span in ctx: a traced
// operation's (see httpapi's tracing). Without one it is a no-op.
func pipelineSpan(ctx context.Context, roundTrips, commands int) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, trace.SpanFromContext(context.Background()) // a no-op span, to end
	}
	return parent.TracerProvider().Tracer("github.com/agora/agora/store").Start(ctx, "redis pipeline",
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String("db.system", "redis"),
			attribute.Int("agora.redis.round_trips", roundTrips),
			attribute.Int("agora.redis.commands", commands)))
}

// countRedis adds one attempt of a pipeline to ctx's RedisCount, if it has one.
func countRedis(ctx context.Context, roundTrips, commands int) {
	if c, ok := ctx.Value(redisCountKey{}).(*RedisCount); ok {
		c.RoundTrips.Add(int64(roundTrips))
		c.Commands.Add(int64(commands))
	}
}

type guardKey struct{}

// WithGuard returns ctx carrying guard, which the runner calls before each attempt of every
// pipeline it sends with ctx (or a context derived from it, context.WithoutCancel's included):
// an error from it fails the pipeline unsent. A process migrating the keyspace guards its steps
// with its hold of the migration lock, so that it stops before its next command once it can no
// longer be sure to hold it. The guard is in force until release is called (once its commands
// are done: ctx's end does not end it, as a command sent under context.WithoutCancel(ctx) must
// still be guarded); until then every pipeline of the runner looks for a guard in its context.
func (r *Runner) WithGuard(ctx context.Context, guard func() error) (_ context.Context, release func()) {
	r.guards.Add(1)
	var once sync.Once
	return context.WithValue(ctx, guardKey{}, guard), func() { once.Do(func() { r.guards.Add(-1) }) }
}

// checkGuard runs ctx's guard, if it has one. While none is in force it looks for none: a lookup
// of a value in a context under context.WithoutCancel allocates (its Value boxes the context),
// and every read runs a pipeline.
func (r *Runner) checkGuard(ctx context.Context) error {
	if r.guards.Load() == 0 {
		return nil
	}
	if g, ok := ctx.Value(guardKey{}).(func() error); ok {
		return g()
	}
	return nil
}
