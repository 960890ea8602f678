package store

// Single commands through the runner.
//
// Every command the store sends goes through the one runner, Store.pipeline (scripts through
// Store.runScripts, which uses it): one retry policy, the round-trip counter (RedisCount) and a
// span per pipeline. Domain code never calls the go-redis client: a command sent alone is
// s.cmd().HGet(ctx, key, field) and the like below (go-redis's names and arguments, so a call
// reads as the command it sends), and several commands that can share a round trip are ops of
// one s.pipeline call. TestOnlyTheRunnerUsesTheClient holds the boundary: outside the functions
// it allows, no non-test file of the package names the Store's rdb field.
//
// What talks to the client itself, and why:
//   - New (store.go) sets the client up and loads the scripts into it.
//   - Store.pipeline, Store.pipelineOnce (scripts.go): the runner itself.
//   - Store.Ping (store.go): the health check, one unretried round trip that must fail fast.
//   - Store.scanKeys (ranking.go): SCAN walks each master of a cluster with the master's own
//     client, which a pipeline of the cluster client cannot address.
//   - Store.eachMaster (redischeck.go): the start-up checks (INFO, CONFIG GET) of every master.
//   - Store.PubSubClient (events.go): live's pub/sub connections, which are not commands.

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// commands sends single commands through the runner (see Store.cmd).
type commands struct{ s *Store }

// cmd returns the commands of the store that send one command alone through the runner: retried,
// counted and traced like every read and write. The reply is the command go-redis returns, read
// as usual (Result, Val, Err; redis.Nil for a missing key or field, as from the client).
func (s *Store) cmd() commands { return commands{s} }

// one sends the command fill adds to a pipeline, on the hash slot of key, alone through the
// runner, and returns it answered. A failure of the pipeline itself (retries ran out, ctx ended)
// becomes the command's error when the command has none of its own.
func one[C redis.Cmder](ctx context.Context, s *Store, key string, fill func(p redis.Pipeliner) C) C {
	var c C
	err := s.pipeline(ctx, []op{{key: key, fill: func(p redis.Pipeliner) (redis.Cmder, redis.Cmder) {
		c = fill(p)
		return c, nil
	}}}, false)
	if err != nil && c.Err() == nil {
		c.SetErr(err)
	}
	return c
}

// Del sends DEL.
func (c commands) Del(ctx context.Context, keys ...string) *redis.IntCmd {
	return one(ctx, c.s, keys[0], func(p redis.Pipeliner) *redis.IntCmd { return p.Del(ctx, keys...) })
}

// Unlink sends UNLINK; the keys must share a hash slot, as for the client.
func (c commands) Unlink(ctx context.Context, keys ...string) *redis.IntCmd {
	return one(ctx, c.s, keys[0], func(p redis.Pipeliner) *redis.IntCmd { return p.Unlink(ctx, keys...) })
}

// Exists sends EXISTS of one key.
func (c commands) Exists(ctx context.Context, key string) *redis.IntCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.IntCmd { return p.Exists(ctx, key) })
}

// Incr sends INCR.
func (c commands) Incr(ctx context.Context, key string) *redis.IntCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.IntCmd { return p.Incr(ctx, key) })
}

// HGet sends HGET.
func (c commands) HGet(ctx context.Context, key, field string) *redis.StringCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.StringCmd { return p.HGet(ctx, key, field) })
}

// HMGet sends HMGET.
func (c commands) HMGet(ctx context.Context, key string, fields ...string) *redis.SliceCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.SliceCmd { return p.HMGet(ctx, key, fields...) })
}

// HGetAll sends HGETALL.
func (c commands) HGetAll(ctx context.Context, key string) *redis.MapStringStringCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.MapStringStringCmd { return p.HGetAll(ctx, key) })
}

// HKeys sends HKEYS.
func (c commands) HKeys(ctx context.Context, key string) *redis.StringSliceCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.StringSliceCmd { return p.HKeys(ctx, key) })
}

// SRandMemberN sends SRANDMEMBER with a count.
func (c commands) SRandMemberN(ctx context.Context, key string, count int64) *redis.StringSliceCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.StringSliceCmd { return p.SRandMemberN(ctx, key, count) })
}

// SMIsMember sends SMISMEMBER.
func (c commands) SMIsMember(ctx context.Context, key string, members ...any) *redis.BoolSliceCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.BoolSliceCmd { return p.SMIsMember(ctx, key, members...) })
}

// ZRange sends ZRANGE by rank.
func (c commands) ZRange(ctx context.Context, key string, start, stop int64) *redis.StringSliceCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.StringSliceCmd { return p.ZRange(ctx, key, start, stop) })
}

// ZRevRangeWithScores sends ZREVRANGE WITHSCORES.
func (c commands) ZRevRangeWithScores(ctx context.Context, key string, start, stop int64) *redis.ZSliceCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.ZSliceCmd { return p.ZRevRangeWithScores(ctx, key, start, stop) })
}

// ZScore sends ZSCORE.
func (c commands) ZScore(ctx context.Context, key, member string) *redis.FloatCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.FloatCmd { return p.ZScore(ctx, key, member) })
}

// ZRem sends ZREM.
func (c commands) ZRem(ctx context.Context, key string, members ...any) *redis.IntCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.IntCmd { return p.ZRem(ctx, key, members...) })
}

// XRevRangeN sends XREVRANGE with a count.
func (c commands) XRevRangeN(ctx context.Context, key, start, stop string, count int64) *redis.XMessageSliceCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.XMessageSliceCmd { return p.XRevRangeN(ctx, key, start, stop, count) })
}

// Publish sends PUBLISH.
func (c commands) Publish(ctx context.Context, channel string, msg any) *redis.IntCmd {
	return one(ctx, c.s, channel, func(p redis.Pipeliner) *redis.IntCmd { return p.Publish(ctx, channel, msg) })
}

// SPublish sends SPUBLISH, which a cluster routes by the channel's hash slot.
func (c commands) SPublish(ctx context.Context, channel string, msg any) *redis.IntCmd {
	return one(ctx, c.s, channel, func(p redis.Pipeliner) *redis.IntCmd { return p.SPublish(ctx, channel, msg) })
}

// SScan sends one SSCAN.
func (c commands) SScan(ctx context.Context, key string, cursor uint64, match string, count int64) *redis.ScanCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.ScanCmd { return p.SScan(ctx, key, cursor, match, count) })
}

// ZScan sends one ZSCAN.
func (c commands) ZScan(ctx context.Context, key string, cursor uint64, match string, count int64) *redis.ScanCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.ScanCmd { return p.ZScan(ctx, key, cursor, match, count) })
}

// HScan sends one HSCAN.
func (c commands) HScan(ctx context.Context, key string, cursor uint64, match string, count int64) *redis.ScanCmd {
	return one(ctx, c.s, key, func(p redis.Pipeliner) *redis.ScanCmd { return p.HScan(ctx, key, cursor, match, count) })
}

// ZScanIterator walks a sorted set with ZSCAN, one page per round trip through the runner, as
// go-redis's ScanIterator does: members and scores alternate.
func (c commands) ZScanIterator(key, match string, count int64) *scanIterator {
	return &scanIterator{page: func(ctx context.Context, cursor uint64) *redis.ScanCmd {
		return c.ZScan(ctx, key, cursor, match, count)
	}}
}

// HScanIterator walks a hash with HSCAN, one page per round trip through the runner, as
// go-redis's ScanIterator does: fields and values alternate.
func (c commands) HScanIterator(key, match string, count int64) *scanIterator {
	return &scanIterator{page: func(ctx context.Context, cursor uint64) *redis.ScanCmd {
		return c.HScan(ctx, key, cursor, match, count)
	}}
}

// scanIterator is go-redis's ScanIterator over pages read through the runner.
type scanIterator struct {
	page   func(ctx context.Context, cursor uint64) *redis.ScanCmd
	vals   []string
	pos    int
	cursor uint64
	begun  bool
	err    error
}

// Next advances to the next value, reading the next page with ctx when it needs one, and reports
// whether there is one.
func (it *scanIterator) Next(ctx context.Context) bool {
	for it.err == nil {
		if it.pos < len(it.vals) {
			it.pos++
			return true
		}
		if it.begun && it.cursor == 0 {
			return false
		}
		it.begun = true
		it.vals, it.cursor, it.err = it.page(ctx, it.cursor).Result()
		it.pos = 0
	}
	return false
}

// Val returns the value Next advanced to.
func (it *scanIterator) Val() string {
	if it.pos == 0 || it.pos > len(it.vals) {
		return ""
	}
	return it.vals[it.pos-1]
}

// Err returns the error that ended the walk, if any.
func (it *scanIterator) Err() error { return it.err }
