package rdb

// Single commands through the runner.
//
// Every command goes through the one runner, Pipeline: one retry policy, the round-trip counter
// (RedisCount) and a span per pipeline. A command sent alone is Commands.HGet(ctx, key, field) and
// the like below (go-redis's names and arguments, so a call reads as the command it sends), and
// several commands that can share a round trip are ops of one Pipeline call.

import (
	"context"
)

// Commands sends single commands through the runner: retried, counted and traced like every
// read and write. The reply is the command go-redis returns, read as usual (Result, Val, Err;
// Nil for a missing key or field, as from the client).
type Commands struct{ r *Runner }

// Commands returns the runner's single commands.
func (r *Runner) Commands() Commands { return Commands{r} }

// oneOp is the op of a single command: the command fill adds, on the hash slot of key.
type oneOp struct {
	key  string
	fill func(p Pipeliner) Cmder
	sent Cmder
}

// Slot returns the key.
func (o *oneOp) Slot() string { return o.key }

// Send adds the command.
func (o *oneOp) Send(p Pipeliner) { o.sent = o.fill(p) }

// Sent returns the command added last.
func (o *oneOp) Sent() [2]Cmder { return [2]Cmder{o.sent, nil} }

// one sends the command fill adds to a pipeline, on the hash slot of key, alone through the
// runner, and returns it answered. A failure of the pipeline itself (retries ran out, ctx ended)
// becomes the command's error when the command has none of its own; one before the command was
// ever sent (a guard that refused, Runner.WithGuard; a cluster's master not found) makes the command on
// a pipeline that is never sent, to carry it.
func one[C Cmder](ctx context.Context, r *Runner, key string, fill func(p Pipeliner) C) C {
	var c C
	made := false
	ops := []oneOp{{key: key, fill: func(p Pipeliner) Cmder {
		c, made = fill(p), true
		return c
	}}}
	err := Pipeline(ctx, r, ops, false)
	if err != nil && !made {
		c = fill(r.client.Pipeline()) // never sent: it only carries the error
	}
	if err != nil && c.Err() == nil {
		c.SetErr(err)
	}
	return c
}

// Del sends DEL.
func (c Commands) Del(ctx context.Context, keys ...string) *IntCmd {
	return one(ctx, c.r, keys[0], func(p Pipeliner) *IntCmd { return p.Del(ctx, keys...) })
}

// Unlink sends UNLINK; the keys must share a hash slot, as for the client.
func (c Commands) Unlink(ctx context.Context, keys ...string) *IntCmd {
	return one(ctx, c.r, keys[0], func(p Pipeliner) *IntCmd { return p.Unlink(ctx, keys...) })
}

// Exists sends EXISTS of one key.
func (c Commands) Exists(ctx context.Context, key string) *IntCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *IntCmd { return p.Exists(ctx, key) })
}

// Incr sends INCR.
func (c Commands) Incr(ctx context.Context, key string) *IntCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *IntCmd { return p.Incr(ctx, key) })
}

// HGet sends HGET.
func (c Commands) HGet(ctx context.Context, key, field string) *StringCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *StringCmd { return p.HGet(ctx, key, field) })
}

// HMGet sends HMGET.
func (c Commands) HMGet(ctx context.Context, key string, fields ...string) *SliceCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *SliceCmd { return p.HMGet(ctx, key, fields...) })
}

// HGetAll sends HGETALL.
func (c Commands) HGetAll(ctx context.Context, key string) *MapStringStringCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *MapStringStringCmd { return p.HGetAll(ctx, key) })
}

// HKeys sends HKEYS.
func (c Commands) HKeys(ctx context.Context, key string) *StringSliceCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *StringSliceCmd { return p.HKeys(ctx, key) })
}

// SRandMemberN sends SRANDMEMBER with a count.
func (c Commands) SRandMemberN(ctx context.Context, key string, count int64) *StringSliceCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *StringSliceCmd { return p.SRandMemberN(ctx, key, count) })
}

// SMIsMember sends SMISMEMBER.
func (c Commands) SMIsMember(ctx context.Context, key string, members ...any) *BoolSliceCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *BoolSliceCmd { return p.SMIsMember(ctx, key, members...) })
}

// ZRange sends ZRANGE by rank.
func (c Commands) ZRange(ctx context.Context, key string, start, stop int64) *StringSliceCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *StringSliceCmd { return p.ZRange(ctx, key, start, stop) })
}

// ZRevRangeWithScores sends ZREVRANGE WITHSCORES.
func (c Commands) ZRevRangeWithScores(ctx context.Context, key string, start, stop int64) *ZSliceCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *ZSliceCmd { return p.ZRevRangeWithScores(ctx, key, start, stop) })
}

// ZScore sends ZSCORE.
func (c Commands) ZScore(ctx context.Context, key, member string) *FloatCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *FloatCmd { return p.ZScore(ctx, key, member) })
}

// ZRem sends ZREM.
func (c Commands) ZRem(ctx context.Context, key string, members ...any) *IntCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *IntCmd { return p.ZRem(ctx, key, members...) })
}

// XRevRangeN sends XREVRANGE with a count.
func (c Commands) XRevRangeN(ctx context.Context, key, start, stop string, count int64) *XMessageSliceCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *XMessageSliceCmd { return p.XRevRangeN(ctx, key, start, stop, count) })
}

// Publish sends PUBLISH.
func (c Commands) Publish(ctx context.Context, channel string, msg any) *IntCmd {
	return one(ctx, c.r, channel, func(p Pipeliner) *IntCmd { return p.Publish(ctx, channel, msg) })
}

// SPublish sends SPUBLISH, which a cluster routes by the channel's hash slot.
func (c Commands) SPublish(ctx context.Context, channel string, msg any) *IntCmd {
	return one(ctx, c.r, channel, func(p Pipeliner) *IntCmd { return p.SPublish(ctx, channel, msg) })
}

// SScan sends one SSCAN.
func (c Commands) SScan(ctx context.Context, key string, cursor uint64, match string, count int64) *ScanCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *ScanCmd { return p.SScan(ctx, key, cursor, match, count) })
}

// ZScan sends one ZSCAN.
func (c Commands) ZScan(ctx context.Context, key string, cursor uint64, match string, count int64) *ScanCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *ScanCmd { return p.ZScan(ctx, key, cursor, match, count) })
}

// HScan sends one HSCAN.
func (c Commands) HScan(ctx context.Context, key string, cursor uint64, match string, count int64) *ScanCmd {
	return one(ctx, c.r, key, func(p Pipeliner) *ScanCmd { return p.HScan(ctx, key, cursor, match, count) })
}

// ZScanIterator walks a sorted set with ZSCAN, one page per round trip through the runner, as
// go-redis's ScanIterator does: members and scores alternate.
func (c Commands) ZScanIterator(key, match string, count int64) *ScanIterator {
	return &ScanIterator{page: func(ctx context.Context, cursor uint64) *ScanCmd {
		return c.ZScan(ctx, key, cursor, match, count)
	}}
}

// HScanIterator walks a hash with HSCAN, one page per round trip through the runner, as
// go-redis's ScanIterator does: fields and values alternate.
func (c Commands) HScanIterator(key, match string, count int64) *ScanIterator {
	return &ScanIterator{page: func(ctx context.Context, cursor uint64) *ScanCmd {
		return c.HScan(ctx, key, cursor, match, count)
	}}
}

// ScanIterator is go-redis's ScanIterator over pages read through the runner.
type ScanIterator struct {
	page   func(ctx context.Context, cursor uint64) *ScanCmd
	vals   []string
	pos    int
	cursor uint64
	begun  bool
	err    error
}

// Next advances to the next value, reading the next page with ctx when it needs one, and reports
// whether there is one.
func (it *ScanIterator) Next(ctx context.Context) bool {
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
func (it *ScanIterator) Val() string {
	if it.pos == 0 || it.pos > len(it.vals) {
		return ""
	}
	return it.vals[it.pos-1]
}

// Err returns the error that ended the walk, if any.
func (it *ScanIterator) Err() error { return it.err }
