package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	gen     uint64    // the generation of timer; a firing of an older one does nothing
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

// do queues a read (or joins an identical one, by key) and waits for its batch to run.
func (l *Loader) do(ctx context.Context, key string, fill func(ctx context.Context, p redis.Pipeliner) redis.Cmder) (redis.Cmder, error) {
	l.mu.Lock()
	c, queued := l.enqueue(ctx, key, fill)
	if queued {
		l.schedule()
	}
	l.mu.Unlock()
	return c.wait(ctx)
}

// queue adds reads to the pending batch in one step, joining identical reads already queued or
// done, and returns their calls without waiting. Reads queued together share a pipeline (unless
// the batch outgrows maxBatchSize).
func (l *Loader) queue(ctx context.Context, reads ...read) []*call {
	out := make([]*call, len(reads))
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, r := range reads {
		c, queued := l.enqueue(ctx, r.key, r.fill)
		if queued {
			l.schedule()
		}
		out[i] = c
	}
	return out
}

// enqueue adds a read to the pending batch unless an identical one is cached; l.mu is held.
func (l *Loader) enqueue(ctx context.Context, key string, fill func(ctx context.Context, p redis.Pipeliner) redis.Cmder) (*call, bool) {
	if c, ok := l.cache[key]; ok {
		return c, false
	}
	c := &call{fill: fill, done: make(chan struct{}), ctx: ctx}
	if key != "" {
		l.cache[key] = c
	}
	l.pending = append(l.pending, c)
	return c, true
}

func (c *call) wait(ctx context.Context) (redis.Cmder, error) {
	select {
	case <-c.done:
		return c.cmd, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// read is one read for doAll.
type read struct {
	key  string
	fill func(ctx context.Context, p redis.Pipeliner) redis.Cmder
}

// doAll queues many reads and sends them at once, together with whatever else is pending, then
// waits for all of them. Resolvers of a list use it to load a whole level in one round trip
// without waiting for a timer.
func (l *Loader) doAll(ctx context.Context, reads []read) ([]redis.Cmder, error) {
	calls, batch := l.enqueueAll(ctx, reads)
	if len(batch) > 0 {
		l.exec(batch)
	}
	out := make([]redis.Cmder, len(calls))
	for i, c := range calls {
		cmd, err := c.wait(ctx)
		if err != nil {
			return nil, err
		}
		out[i] = cmd
	}
	return out, nil
}

// enqueueAll queues reads and takes the whole pending batch, stopping its timer.
func (l *Loader) enqueueAll(ctx context.Context, reads []read) ([]*call, []*call) {
	calls := make([]*call, len(reads))
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, r := range reads {
		calls[i], _ = l.enqueue(ctx, r.key, r.fill)
	}
	batch := l.pending
	l.pending = nil
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	return calls, batch
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
		l.gen++
		gen := l.gen
		l.timer = time.AfterFunc(l.s.opts.LoaderWait, func() { l.flush(gen) })
		return
	}
	// Reset re-arms a timer that has already fired, whose flush may be waiting for l.mu; the
	// generation makes that second firing a no-op instead of an early send of a later batch.
	if now.Sub(l.first) < maxBatchWait {
		l.timer.Reset(l.s.opts.LoaderWait)
	}
}

// flush sends the pending batch when the timer of generation gen fires, unless that timer has
// been replaced (its batch was taken by doAll, Prefetch or a full batch) since.
func (l *Loader) flush(gen uint64) {
	l.mu.Lock()
	if gen != l.gen || l.timer == nil {
		l.mu.Unlock()
		return
	}
	l.gen++
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
// progress) after a short pause. MOVED and ASK redirects go-redis follows itself. A read script
// that reads keys it did not declare (page.lua inlining comment hashes) fails while one of them
// is being migrated; it is read-only, so it is sent again too.
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
			case isTransient(err) || isNonLocalKey(err):
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
	l.walked = nil
	l.mu.Unlock()
}

// hashRead reads a whole hash (HGETALL).
func hashRead(key string) read {
	return read{"h:" + key, func(ctx context.Context, p redis.Pipeliner) redis.Cmder { return p.HGetAll(ctx, key) }}
}

// hashFieldRead reads one field of a hash (HGET).
func hashFieldRead(key, field string) read {
	return read{"f:" + key + "\x00" + field, func(ctx context.Context, p redis.Pipeliner) redis.Cmder { return p.HGet(ctx, key, field) }}
}

// hashFieldsRead reads some fields of a hash (HMGET).
func hashFieldsRead(key string, fields ...string) read {
	ck := "m:" + key + "\x00" + strings.Join(fields, "\x00")
	return read{ck, func(ctx context.Context, p redis.Pipeliner) redis.Cmder { return p.HMGet(ctx, key, fields...) }}
}

// zcardRead reads the size of a sorted set (ZCARD).
func zcardRead(key string) read {
	return read{"zc:" + key, func(ctx context.Context, p redis.Pipeliner) redis.Cmder { return p.ZCard(ctx, key) }}
}

// one runs a single read through the timer-batched path.
func (l *Loader) one(ctx context.Context, r read) (redis.Cmder, error) {
	return l.do(ctx, r.key, r.fill)
}

// hash loads a whole hash.
func (l *Loader) hash(ctx context.Context, key string) (map[string]string, error) {
	cmd, err := l.one(ctx, hashRead(key))
	if err != nil {
		return nil, err
	}
	return cmd.(*redis.MapStringStringCmd).Val(), nil
}

// hashField loads one field of a hash; "" when absent.
func (l *Loader) hashField(ctx context.Context, key, field string) (string, error) {
	cmd, err := l.one(ctx, hashFieldRead(key, field))
	if err != nil {
		return "", err
	}
	return cmd.(*redis.StringCmd).Val(), nil
}

// hashFields loads some fields of a hash.
func (l *Loader) hashFields(ctx context.Context, key string, fields ...string) ([]any, error) {
	cmd, err := l.one(ctx, hashFieldsRead(key, fields...))
	if err != nil {
		return nil, err
	}
	return cmd.(*redis.SliceCmd).Val(), nil
}

// zcard loads the size of a sorted set.
func (l *Loader) zcard(ctx context.Context, key string) (int, error) {
	cmd, err := l.one(ctx, zcardRead(key))
	if err != nil {
		return 0, err
	}
	return int(cmd.(*redis.IntCmd).Val()), nil
}

// Prefetch sends reads at once without waiting for their results; later lookups of the same data
// find them in flight or cached. Resolvers of a list call it with what the next level will ask for.
func (l *Loader) Prefetch(ctx context.Context, reads ...Read) {
	if len(reads) == 0 {
		return
	}
	rs := make([]read, len(reads))
	for i, r := range reads {
		rs[i] = read(r)
	}
	// Queue now, so that the resolvers that run next find these reads in flight; send in the
	// background, so that the caller can return its level at once.
	if _, batch := l.enqueueAll(ctx, rs); len(batch) > 0 {
		go l.exec(batch)
	}
}

// Read is a read to prefetch; build one with the Store's *Read methods.
type Read read

// UserRead is the read Loader.User makes for the user id.
func (s *Store) UserRead(id string) (Read, bool) {
	uid, err := UserKey(id)
	if err != nil {
		return Read{}, false
	}
	return Read(hashFieldsRead(s.k.user(uid), userFields...)), true
}

// PostVoteRead is the read Loader.PostVote makes for a viewer's vote on a post.
func (s *Store) PostVoteRead(p *Post, viewerID string) (Read, bool) {
	uid, err := UserKey(viewerID)
	if err != nil || viewerID == p.AuthorID {
		return Read{}, false
	}
	return Read(hashFieldRead(s.k.postVotes(p.Key()), uid)), true
}

// GroupPostCountRead is the read Loader.GroupPostCount makes.
func (s *Store) GroupPostCountRead(name string) Read { return Read(zcardRead(s.k.ranking(name).new)) }

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
