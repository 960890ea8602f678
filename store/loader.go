package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Loader batches the reads of one request. Lookups made close together in time — the fields of
// one level of a GraphQL response, which gqlgen resolves concurrently — go to Redis in a single
// pipeline, whatever their kind (hashes, vote records, pages of child ids) and whatever hash slot
// they live in. Results are cached for the life of the Loader, so create one per request.
type Loader struct {
	s *Store

	mu      sync.Mutex
	pending []*call
	timer   *time.Timer
	first   time.Time // when the oldest pending call was queued
	cache   map[string]*call
	walked  map[*call]*Page[*Comment] // pages of comments whose subtrees prefetch has loaded
}

// call is one queued read. fill adds its command to the pipeline; done closes once it ran.
type call struct {
	fill func(ctx context.Context, p redis.Pipeliner) redis.Cmder
	cmd  redis.Cmder
	err  error
	done chan struct{}
	ctx  context.Context
}

// maxBatchWait bounds how long the first read of a batch waits while later ones keep arriving.
const maxBatchWait = 2 * time.Millisecond

// maxBatchSize sends a batch at once when it grows this large.
const maxBatchSize = 2000

// NewLoader returns a Loader for one request.
func (s *Store) NewLoader() *Loader {
	return &Loader{s: s, cache: make(map[string]*call)}
}

// read is one lookup: its cache key ("" for none) and the command it adds to a pipeline.
type read struct {
	key  string
	fill func(ctx context.Context, p redis.Pipeliner) redis.Cmder
}

// do queues a read (or joins an identical one, by key) and waits for its batch to run.
func (l *Loader) do(ctx context.Context, key string, fill func(ctx context.Context, p redis.Pipeliner) redis.Cmder) (redis.Cmder, error) {
	return l.queue(ctx, read{key: key, fill: fill})[0].wait(ctx)
}

// queue adds reads to the pending batch in one step, joining identical reads already queued or
// done, and returns their calls without waiting. Reads queued together share a pipeline (unless
// the batch outgrows maxBatchSize), which makes level-by-level batching independent of timing.
func (l *Loader) queue(ctx context.Context, reads ...read) []*call {
	out := make([]*call, len(reads))
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, r := range reads {
		c, ok := l.cache[r.key]
		if !ok {
			c = &call{fill: r.fill, done: make(chan struct{}), ctx: ctx}
			if r.key != "" {
				l.cache[r.key] = c
			}
			l.pending = append(l.pending, c)
			l.schedule()
		}
		out[i] = c
	}
	return out
}

// wait waits for a queued read to run.
func (c *call) wait(ctx context.Context) (redis.Cmder, error) {
	select {
	case <-c.done:
		return c.cmd, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// schedule arms or extends the batch timer; l.mu is held. Each new read gives the batch another
// LoaderWait, up to maxBatchWait after its first read.
func (l *Loader) schedule() {
	now := time.Now()
	if len(l.pending) >= maxBatchSize {
		if l.timer != nil {
			l.timer.Stop()
			l.timer = nil
		}
		batch := l.pending
		l.pending = nil
		go l.exec(batch)
		return
	}
	if l.timer == nil {
		l.first = now
		l.timer = time.AfterFunc(l.s.opts.LoaderWait, l.flush)
		return
	}
	if now.Sub(l.first) < maxBatchWait {
		l.timer.Reset(l.s.opts.LoaderWait)
	}
}

func (l *Loader) flush() {
	l.mu.Lock()
	batch := l.pending
	l.pending = nil
	l.timer = nil
	l.mu.Unlock()
	if len(batch) > 0 {
		l.exec(batch)
	}
}

// exec sends a batch as one pipeline. When Redis has lost its script cache it loads the scripts
// and sends the batch once more.
func (l *Loader) exec(batch []*call) {
	ctx := context.WithoutCancel(batch[0].ctx)
	run := func() bool {
		pipe := l.s.rdb.Pipeline()
		for _, c := range batch {
			c.cmd = c.fill(ctx, pipe)
		}
		_, _ = pipe.Exec(ctx)
		for _, c := range batch {
			if isNoScript(c.cmd.Err()) {
				return false
			}
		}
		return true
	}
	if !run() {
		if err := l.s.scripts.loadAll(ctx, l.s.rdb); err == nil {
			run()
		}
	}
	for _, c := range batch {
		if err := c.cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
			c.err = fmt.Errorf("redis read: %w", err)
		}
		close(c.done)
	}
}

// Clear forgets every cached result, so later reads see the writes made since. Mutations call it.
func (l *Loader) Clear() {
	l.mu.Lock()
	l.cache = make(map[string]*call)
	l.walked = nil
	l.mu.Unlock()
}

// hash loads a whole hash.
func (l *Loader) hash(ctx context.Context, key string) (map[string]string, error) {
	cmd, err := l.queue(ctx, hashRead(key))[0].wait(ctx)
	if err != nil {
		return nil, err
	}
	return cmd.(*redis.MapStringStringCmd).Val(), nil
}

// hashField loads one field of a hash; "" when absent.
func (l *Loader) hashField(ctx context.Context, key, field string) (string, error) {
	cmd, err := l.queue(ctx, hashFieldRead(key, field))[0].wait(ctx)
	if err != nil {
		return "", err
	}
	return cmd.(*redis.StringCmd).Val(), nil
}

// hashFields loads some fields of a hash.
func (l *Loader) hashFields(ctx context.Context, key string, fields ...string) ([]any, error) {
	cmd, err := l.queue(ctx, hashFieldsRead(key, fields...))[0].wait(ctx)
	if err != nil {
		return nil, err
	}
	return cmd.(*redis.SliceCmd).Val(), nil
}

// hashRead is the read of hash.
func hashRead(key string) read {
	return read{key: "h:" + key, fill: func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return p.HGetAll(ctx, key)
	}}
}

// hashFieldRead is the read of hashField.
func hashFieldRead(key, field string) read {
	return read{key: "f:" + key + "\x00" + field, fill: func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return p.HGet(ctx, key, field)
	}}
}

// hashFieldsRead is the read of hashFields.
func hashFieldsRead(key string, fields ...string) read {
	ck := "m:" + key
	for _, f := range fields {
		ck += "\x00" + f
	}
	return read{key: ck, fill: func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return p.HMGet(ctx, key, fields...)
	}}
}

// zcard loads the size of a sorted set.
func (l *Loader) zcard(ctx context.Context, key string) (int, error) {
	cmd, err := l.do(ctx, "zc:"+key, func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return p.ZCard(ctx, key)
	})
	if err != nil {
		return 0, err
	}
	return int(cmd.(*redis.IntCmd).Val()), nil
}

// page loads one page of a sorted set after cursor c.
func (l *Loader) page(ctx context.Context, key string, desc bool, first int, c cursor) (rawPage, error) {
	ck := fmt.Sprintf("pg:%s\x00%t\x00%d\x00%s\x00%s", key, desc, first, c.score, c.member)
	cmd, err := l.do(ctx, ck, func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return l.s.queuePage(ctx, p, key, desc, first, c)
	})
	if err != nil {
		return rawPage{}, err
	}
	return parsePage(cmd.(*redis.Cmd).Val(), first)
}
