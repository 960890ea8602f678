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

// do queues a read (or joins an identical one, by key) and waits for its batch to run.
func (l *Loader) do(ctx context.Context, key string, fill func(ctx context.Context, p redis.Pipeliner) redis.Cmder) (redis.Cmder, error) {
	l.mu.Lock()
	c, ok := l.cache[key]
	if !ok {
		c = &call{fill: fill, done: make(chan struct{}), ctx: ctx}
		if key != "" {
			l.cache[key] = c
		}
		l.pending = append(l.pending, c)
		l.schedule()
	}
	l.mu.Unlock()
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

// exec sends a batch as one pipeline (on a cluster, one pipeline per master, in parallel). Reads
// that fail for a passing reason are sent again: after NOSCRIPT (Redis lost its script cache in a
// restart or failover, or a slot moved to a node that never loaded the scripts) once the scripts
// are loaded again, and after TRYAGAIN, CLUSTERDOWN and the like (a slot moving or a failover in
// progress) after a short pause. MOVED and ASK redirects go-redis follows itself.
func (l *Loader) exec(batch []*call) {
	ctx := context.WithoutCancel(batch[0].ctx)
	pending := batch
	for attempt := 0; len(pending) > 0 && attempt < maxRedirectAttempts; attempt++ {
		pipe := l.s.rdb.Pipeline()
		for _, c := range pending {
			c.cmd = c.fill(ctx, pipe)
		}
		_, _ = pipe.Exec(ctx)
		var again []*call
		noScript := false
		for _, c := range pending {
			switch err := c.cmd.Err(); {
			case isNoScript(err):
				noScript = true
				again = append(again, c)
			case isTransient(err):
				again = append(again, c)
			}
		}
		if noScript {
			if err := l.s.scripts.loadAll(ctx, l.s.rdb); err != nil {
				break
			}
		} else if len(again) > 0 {
			_ = sleepCtx(ctx, backoff(attempt+1))
		}
		pending = again
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
	l.mu.Unlock()
}

// hash loads a whole hash.
func (l *Loader) hash(ctx context.Context, key string) (map[string]string, error) {
	cmd, err := l.do(ctx, "h:"+key, func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return p.HGetAll(ctx, key)
	})
	if err != nil {
		return nil, err
	}
	return cmd.(*redis.MapStringStringCmd).Val(), nil
}

// hashField loads one field of a hash; "" when absent.
func (l *Loader) hashField(ctx context.Context, key, field string) (string, error) {
	cmd, err := l.do(ctx, "f:"+key+"\x00"+field, func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return p.HGet(ctx, key, field)
	})
	if err != nil {
		return "", err
	}
	return cmd.(*redis.StringCmd).Val(), nil
}

// hashFields loads some fields of a hash.
func (l *Loader) hashFields(ctx context.Context, key string, fields ...string) ([]any, error) {
	ck := "m:" + key
	for _, f := range fields {
		ck += "\x00" + f
	}
	cmd, err := l.do(ctx, ck, func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return p.HMGet(ctx, key, fields...)
	})
	if err != nil {
		return nil, err
	}
	return cmd.(*redis.SliceCmd).Val(), nil
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
