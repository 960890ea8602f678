package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// Loader reads for one request. It never waits for more lookups to arrive: a read goes to Redis
// the moment it is asked for, and a whole level of a response goes in one pipeline because the
// level's parent asks for all of it at once (see Walk). Results are kept for the life of the
// Loader — two lookups of the same data share one read — so create one per request.
type Loader struct {
	s    *Store
	revs *Revisions // records what the response read, for the response cache; nil when off

	blocks *Blocks // the viewer's block list (SetBlocks); guarded by mu
	// hideNSFW: the viewer does not show NSFW posts (HideNSFW, labels.go); guarded by mu
	hideNSFW bool
	// nsfwGroups is the read of the set of NSFW groups, which the first batch makes (labels.go);
	// guarded by mu
	nsfwGroups *call

	mu    sync.Mutex
	cache map[string]*call
	pages map[string]keptPageEntry // pages Walk built, by pageKey, for the resolvers that list them
	users map[string]*User         // users read by userByKey, by key (nil when missing)
	named map[UserKey]*User        // authors as posts and comments keep them (NamedAuthor)

	noNeeds Needs // reads nothing below a user: an author read only for their name

	postGID struct{ pid, id string } // the global id of the post whose comments were parsed last; guarded by mu
	at      time.Time                // the loader's time for the windows of TOP (see clock); guarded by mu
	text    *textBudget              // the text its searches match (searchText); guarded by mu
	lists   *listBudget              // the posting lists its searches read (searchListBudget); guarded by mu
}

// call is one read: one or two commands (a page without a cursor is ZCARD and ZRANGE) in a
// pipeline. done closes once they ran; val caches what the reply was parsed into.
type call struct {
	r    read
	args []any // an HMGET's arguments, when exec gave them out (see fillHMGET)
	cmd  rdb.Cmder
	cmd2 rdb.Cmder
	body string // a comment read's body from its thread's bodies (read.body)
	// parts are the reads of a read that merges two (postListRead): filled, sent and checked
	// with it.
	parts []*call
	err   error
	done  chan struct{}
	val   any
}

// read is one read of Redis data. key names it in the loader's cache (two reads with one key are
// the same read); rkey is the Redis key it reads, whose hash tag names the aggregate it belongs
// to; fill adds its commands to a pipeline.
type read struct {
	key    string
	rkey   string
	fields []any // an HMGET's field names (see hmget), for fillHMGET
	fill   func(ctx context.Context, p rdb.Pipeliner, c *call)
	// body marks a comment read that also reads the comment's body from its thread's bodies
	// (keys.commentBodies): exec reads the bodies of a batch's comments of one thread in one
	// HMGET, not one command each.
	body bool
	// texts, for a post read (postReadOf), says which of the post's texts kept apart it reads
	// too, in cmd2, from tkey (keys.postTexts): 1 the title and url, 2 the body as well.
	texts int
	tkey  string
	// merge, for a read of both parts of a post list (postListRead), says how to merge them.
	merge *pageMerge
}

// NewLoader returns a Loader for one request. Its cache starts with room for 16 reads, which a
// page's first rounds fill: grown from nothing, the map was rebuilt twice on the way.
func (s *Store) NewLoader() *Loader {
	return &Loader{s: s, cache: make(map[string]*call, 16)}
}

// NewRecordingLoader returns a Loader for one request that records in revs the revision of
// every aggregate it reads, read in the same pipeline just before the aggregate's data.
func (s *Store) NewRecordingLoader(revs *Revisions) *Loader {
	l := s.NewLoader()
	l.revs = revs
	return l
}

// get runs one read, or joins the same read already made, and waits for it.
func (l *Loader) get(ctx context.Context, r read) (*call, error) {
	return l.getAll(ctx, r)[0].wait(ctx)
}

// getAll starts every read not yet made in one pipeline and returns their calls, without waiting.
func (l *Loader) getAll(ctx context.Context, reads ...read) []*call {
	calls, batch := l.enqueue(reads)
	if len(batch) > 0 {
		l.exec(ctx, batch)
	}
	return calls
}

// enqueue finds or creates the calls of reads; batch holds the new ones, to be sent by the caller
// in one exec. They share one done channel, which exec closes when the batch's replies are in,
// and one allocation.
func (l *Loader) enqueue(reads []read) (calls, batch []*call) {
	calls = make([]*call, len(reads))
	l.mu.Lock()
	defer l.mu.Unlock()
	var done chan struct{}
	var slab []call // never grown past its capacity: its calls do not move
	for i, r := range reads {
		c, ok := l.cache[r.key]
		if !ok {
			if done == nil {
				done = make(chan struct{})
				slab = make([]call, 0, len(reads)-i)
				batch = make([]*call, 0, len(reads)-i+1) // +1: the NSFW groups' read may ride along
			}
			slab = append(slab, call{r: r, done: done})
			c = &slab[len(slab)-1]
			l.cache[r.key] = c
			batch = append(batch, c)
		}
		calls[i] = c
	}
	if l.nsfwGroups == nil && len(batch) > 0 {
		// The labels of groups ride with the first batch: posts read in it or later are marked
		// NSFW by their groups without a round trip of their own (labels.go).
		r := l.nsfwGroupsRead()
		c := &call{r: r, done: done}
		l.cache[r.key], l.nsfwGroups = c, c
		batch = append(batch, c)
	}
	return calls, batch
}

// wait waits for the call's commands to run. Most calls are done by the time they are waited
// for — the exec that sent them ran in the waiting goroutine — and those return without a select
// or ctx.Done, which walks the request's chain of context values to its cancelCtx.
func (c *call) wait(ctx context.Context) (*call, error) {
	select {
	case <-c.done:
		return c, c.err
	default:
	}
	select {
	case <-c.done:
		return c, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// waitAll waits for every call and returns the first error.
func waitAll(ctx context.Context, calls []*call) error {
	for _, c := range calls {
		if _, err := c.wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// exec sends a batch as one pipeline (on a cluster, one pipeline per master, in parallel), through
// the store's one retry policy (see pipeline). When the loader records revisions, the revision of
// every aggregate the batch reads for the first time is read in the same pipeline, before its
// data: a write that lands in between raises the revision past the one recorded, so the recorded
// revisions can only be older than the data, never newer.
func (l *Loader) exec(parent context.Context, batch []*call) {
	// Other requests' lookups may join these reads. (A new variable, not ctx reassigned: the
	// closures below capture it, and a reassigned parameter they capture goes to the heap.)
	ctx := context.WithoutCancel(parent)
	var revs []*revRead
	if l.revs != nil {
		revs = l.revs.start(l.s.k, batch)
	}
	giveArgs(batch)
	bodies := bodyReads(ctx, batch)
	ops := make([]op, 0, len(revs)+len(batch)+len(bodies))
	for _, rr := range revs {
		ops = append(ops, op{key: rr.key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			rr.cmd = p.Get(ctx, rr.key)
			return rr.cmd, nil
		}})
	}
	for _, c := range batch {
		ops = append(ops, op{key: c.r.rkey, read: c, ctx: ctx})
	}
	for _, br := range bodies {
		ops = append(ops, op{key: br.key, fill: br.fill})
	}
	err := l.s.pipeline(ctx, ops, false)
	if l.revs != nil {
		l.revs.finish(revs, err)
	}
	if err != nil {
		err = fmt.Errorf("redis read: %w", err)
	}
	for _, br := range bodies {
		br.done(err)
	}
	for _, c := range batch {
		if c.err == nil {
			c.err = err
		}
		if c.err == nil {
			c.err = rdb.FirstErr([2]rdb.Cmder{c.cmd, c.cmd2})
			for _, pc := range c.parts {
				if c.err == nil {
					c.err = rdb.FirstErr([2]rdb.Cmder{pc.cmd, pc.cmd2})
				}
			}
			if c.err != nil {
				c.err = fmt.Errorf("redis read: %w", c.err)
			}
		}
	}
	close(batch[0].done) // the whole batch's: see enqueue
}

// parsed returns the value parse makes of a done call, parsing it once.
func (l *Loader) parsed(c *call, parse func(c *call) any) any {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.val == nil {
		c.val = parse(c)
	}
	return c.val
}

// Clear forgets every cached result, so later reads see the writes made since. Mutations call it.
func (l *Loader) Clear() {
	l.mu.Lock()
	l.cache = make(map[string]*call)
	l.pages, l.users, l.nsfwGroups = nil, nil, nil
	l.mu.Unlock()
}

// hashFieldsRead reads some fields of a hash (HMGET); fields are their names, boxed (see boxed).
func hashFieldsRead(key string, fields []any) read {
	return hashRead("m:"+key, fields)
}

// hashRead is hashFieldsRead of the hash whose key follows "m:" in ck, the read's cache key: the
// hot reads make the two strings in one allocation (keys.postIn, keys.userIn).
func hashRead(ck string, fields []any) read {
	return read{key: ck, rkey: ck[len("m:"):], fields: fields, fill: fillHMGET}
}

// fillHMGET adds the HMGET of a hash fields read to a pipeline. It is a plain function, not a
// closure, so that making the read of an item allocates nothing for it. Every HMGET the loader
// sends goes through it or hmget.
func fillHMGET(ctx context.Context, p rdb.Pipeliner, c *call) {
	if c.args == nil {
		c.args = hmgetArgs(make([]any, 0, 2+len(c.r.fields)), &c.r.rkey, c.r.fields)
	}
	c.cmd = sendHMGET(ctx, p, c.args)
}

// giveArgs gives the HMGETs of a batch their arguments, out of one allocation for the batch.
func giveArgs(batch []*call) {
	n := 0
	for _, c := range batch {
		if c.r.fields != nil {
			n += 2 + len(c.r.fields)
		}
		if c.r.texts > 0 {
			n += 2 + len(postTextArgs[c.r.texts-1])
		}
	}
	arena := make([]any, 0, n)
	for _, c := range batch {
		if c.r.fields != nil {
			start := len(arena)
			arena = hmgetArgs(arena, &c.r.rkey, c.r.fields)
			if c.r.texts > 0 { // a post read's second HMGET, after its first (fillPostRead)
				arena = hmgetArgs(arena, &c.r.tkey, postTextArgs[c.r.texts-1])
			}
			c.args = arena[start:len(arena):len(arena)]
		}
	}
}

// hmgetArgs appends the arguments of HMGET key fields... to args. The key goes by its address:
// go-redis writes a *string as the string, and boxing a pointer allocates nothing where boxing a
// string allocates its header (one allocation an item read; the calls' keys stay put in their
// slab, see enqueue).
func hmgetArgs(args []any, key *string, fields []any) []any {
	return append(append(args, "hmget", key), fields...)
}

// hmget adds HMGET key fields... to a pipeline. The field names come boxed, once for all reads:
// go-redis's HMGet boxes every name of every read anew, most of the allocations of a thread's
// reads. The values come back as strings, "" for a missing field (see fields), not boxed in
// interfaces one by one.
func hmget(ctx context.Context, p rdb.Pipeliner, key string, fields []any) *rdb.StringSliceCmd {
	return sendHMGET(ctx, p, hmgetArgs(make([]any, 0, 2+len(fields)), &key, fields))
}

// sendHMGET adds an HMGET of args (see hmgetArgs) to a pipeline.
func sendHMGET(ctx context.Context, p rdb.Pipeliner, args []any) *rdb.StringSliceCmd {
	cmd := rdb.NewStringSliceCmd(ctx, args...)
	_ = p.Process(ctx, cmd) // a pipeline only queues the command; its error comes with the reply
	return cmd
}

// boxed returns names as HMGET arguments for hmget.
func boxed(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

// hashFieldRead reads one field of a hash (HGET).
func hashFieldRead(key, field string) read {
	return read{key: "f:" + key + "\x00" + field, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.HGet(ctx, key, field)
	}}
}

// zcardRead reads the size of a sorted set (ZCARD).
func zcardRead(key string) read {
	return read{key: "zc:" + key, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.ZCard(ctx, key)
	}}
}

// zscoreRead reads the score of a member of a sorted set (ZSCORE).
func zscoreRead(key, member string) read {
	return read{key: "zs:" + key + "\x00" + member, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.ZScore(ctx, key, member)
	}}
}

// zrankRead reads the ascending rank of a member of a sorted set (ZRANK).
func zrankRead(key, member string) read {
	return read{key: "zr:" + key + "\x00" + member, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.ZRank(ctx, key, member)
	}}
}

// hashField loads one field of a hash; "" when absent.
func (l *Loader) hashField(ctx context.Context, key, field string) (string, error) {
	c, err := l.get(ctx, hashFieldRead(key, field))
	if err != nil {
		return "", err
	}
	return c.cmd.(*rdb.StringCmd).Val(), nil
}

// zcard loads the size of a sorted set.
func (l *Loader) zcard(ctx context.Context, key string) (int, error) {
	c, err := l.get(ctx, zcardRead(key))
	if err != nil {
		return 0, err
	}
	return int(c.cmd.(*rdb.IntCmd).Val()), nil
}

// zscore loads the score of a member of a sorted set; ok is false when it is absent.
func (l *Loader) zscore(ctx context.Context, key, member string) (score float64, ok bool, err error) {
	c, err := l.get(ctx, zscoreRead(key, member))
	if err != nil {
		return 0, false, err
	}
	fc := c.cmd.(*rdb.FloatCmd)
	if errors.Is(fc.Err(), rdb.Nil) {
		return 0, false, nil
	}
	return fc.Val(), true, nil
}

// zrank loads the 0-based ascending rank of a member of a sorted set; ok is false when absent.
func (l *Loader) zrank(ctx context.Context, key, member string) (rank int64, ok bool, err error) {
	c, err := l.get(ctx, zrankRead(key, member))
	if err != nil {
		return 0, false, err
	}
	ic := c.cmd.(*rdb.IntCmd)
	if errors.Is(ic.Err(), rdb.Nil) {
		return 0, false, nil
	}
	return ic.Val(), true, nil
}

// pageReadKey is the cache key of pageRead, made in one allocation (a thread page reads 300
// pages): a plain read's names what it reads besides the members.
func pageReadKey(key string, desc bool, sp span, plain, total, scores bool) string {
	var b strings.Builder
	// The separators, the booleans and the numbers take at most 72 bytes.
	b.Grow(72 + len(key) + len(sp.after.score) + len(sp.after.member) + len(sp.before.score) + len(sp.before.member))
	b.WriteString("pg:")
	b.WriteString(key)
	b.WriteByte(0)
	b.WriteString(strconv.FormatBool(desc))
	b.WriteByte(0)
	var scratch [96]byte
	b.Write(sp.appendKey(scratch[:0]))
	if plain {
		b.WriteByte(0)
		b.WriteString(strconv.FormatBool(total))
		b.WriteString(strconv.FormatBool(scores))
	}
	return b.String()
}

// pageRead is the read of the page of a sorted set that sp names. A page without a cursor is plain
// commands: ZRANGE (REV for desc) by rank of one more item than the page holds, to tell whether
// more follow (a first page, from rank 0) or precede (a last page, from rank -n-1), with the
// scores when the cursors are wanted, after ZCARD when the total is. A page after or before a
// cursor is the page script, which finds the cursors' places among ties in the same call.
func pageRead(key string, desc bool, sp span, total, scores bool, sc *rdb.Script) read {
	plain := sp.open() && sp.cut.set == ""
	ck := pageReadKey(key, desc, sp, plain, total, scores)
	if plain {
		start, stop := int64(0), int64(sp.n)
		if sp.backward {
			start, stop = int64(-sp.n-1), -1
		}
		return read{key: ck, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, cl *call) {
			// cl.r is this read: the key goes by its address in the call (see sendZRange).
			rng := sendZRange(ctx, p, &cl.r.rkey, start, stop, desc, scores)
			if total {
				cl.cmd, cl.cmd2 = sendZCard(ctx, p, &cl.r.rkey), rng
			} else {
				cl.cmd, cl.cmd2 = nil, rng
			}
		}}
	}
	order, dir := "asc", "first"
	if desc {
		order = "desc"
	}
	if sp.backward {
		dir = "last"
	}
	// The scripts' closures capture a copy of sp made here: captured by reference (a span is
	// larger than what Go captures by value), sp itself would go to the heap on entry, for the
	// plain reads above as well (one allocation a page read).
	cp := sp
	if cp.cut.set != "" {
		return read{key: ck, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, cl *call) {
			cl.cmd = sc.EvalSha(ctx, p, []string{key, cp.cut.times, cp.cut.marks}, order, cp.n, dir,
				cp.after.score, cp.after.member, cp.before.score, cp.before.member, "", cp.cut.cutoff, cp.cut.set)
		}}
	}
	return read{key: ck, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, cl *call) {
		cl.cmd = sc.EvalSha(ctx, p, []string{key}, order, cp.n, dir,
			cp.after.score, cp.after.member, cp.before.score, cp.before.member)
	}}
}

// sendZRange adds ZRANGE key start stop [REV] [WITHSCORES] to a pipeline, the command go-redis's
// ZRangeArgs and ZRangeArgsWithScores send, with the key by its address (see hmgetArgs): boxing
// the string would allocate its header, one allocation a page read. The reply is a
// *rdb.StringSliceCmd, or with scores a *rdb.ZSliceCmd.
func sendZRange(ctx context.Context, p rdb.Pipeliner, key *string, start, stop int64, rev, scores bool) rdb.Cmder {
	args := make([]any, 4, 6)
	args[0], args[1], args[2], args[3] = "zrange", key, start, stop
	if rev {
		args = append(args, "rev")
	}
	var cmd rdb.Cmder
	if scores {
		cmd = rdb.NewZSliceCmd(ctx, append(args, "withscores")...)
	} else {
		cmd = rdb.NewStringSliceCmd(ctx, args...)
	}
	_ = p.Process(ctx, cmd) // a pipeline only queues the command; its error comes with the reply
	return cmd
}

// sendZCard adds ZCARD key to a pipeline, the key by its address (see sendZRange).
func sendZCard(ctx context.Context, p rdb.Pipeliner, key *string) *rdb.IntCmd {
	cmd := rdb.NewIntCmd(ctx, "zcard", key)
	_ = p.Process(ctx, cmd)
	return cmd
}

// pageOf parses a done page read of the span sp.
func pageOf(c *call, sp span) (rawPage, error) {
	if c.parts != nil && c.r.merge == nil { // a reply list's page and time order (replyListRead)
		return pageOf(c.parts[0], sp)
	}
	if c.parts != nil {
		a, err := pageOf(c.parts[0], sp)
		if err != nil {
			return rawPage{}, err
		}
		b, err := pageOf(c.parts[1], sp)
		if err != nil {
			return rawPage{}, err
		}
		return mergePages(a, b, sp, *c.r.merge), nil
	}
	if c.cmd2 == nil {
		return parsePage(c.cmd.(*rdb.Cmd).Val(), sp.cut.set != "")
	}
	var rp rawPage
	switch rng := c.cmd2.(type) {
	case *rdb.ZSliceCmd:
		zs := rng.Val()
		rp.members = make([]string, 0, len(zs))
		rp.scores = make([]string, 0, len(zs))
		for _, z := range zs {
			m, _ := z.Member.(string)
			rp.members = append(rp.members, m)
			rp.scores = append(rp.scores, formatScore(z.Score))
		}
	case *rdb.StringSliceCmd:
		rp.members = rng.Val()
	}
	rp.trim(sp.n, sp.backward)
	if c.cmd != nil {
		rp.total = int(c.cmd.(*rdb.IntCmd).Val())
		if sp.backward {
			// ZCARD and ZRANGE go in one pipeline, not one script: a write landing between the
			// two can shift the position of a last page by the items it added or removed.
			rp.start = max(rp.total-len(rp.members), 0)
		}
	}
	return rp, nil
}

// page loads the page of a sorted set that sp names.
func (l *Loader) page(ctx context.Context, key string, desc bool, sp span) (rawPage, error) {
	cl, err := l.get(ctx, l.pageRead(key, desc, sp))
	if err != nil {
		return rawPage{}, err
	}
	return pageOf(cl, sp)
}

// pageRead is pageRead of the whole page (total and cursors) with the store's page script.
func (l *Loader) pageRead(key string, desc bool, sp span) read {
	return pageRead(key, desc, sp, true, true, l.s.scripts.get("page"))
}

// shownPageRead is pageRead of what the response shows of the page of w (see Window.NoTotal).
func (l *Loader) shownPageRead(key string, desc bool, sp span, w Window) read {
	return pageRead(key, desc, sp, !w.NoTotal, !w.NoCursors, l.s.scripts.get("page"))
}

// tagOf returns the hash tag of a key, braces included ("{p:42}"), or "" when it has none.
func tagOf(key string) string {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(key[i:], '}')
	if j < 0 {
		return ""
	}
	return key[i : i+j+1]
}

// bodyRead is the HMGET of the bodies of a batch's comments of one thread: args are the command
// (HMGET, the thread's bodies, a field per comment), calls the comment reads the values go to.
// The key and the fields go in args by their addresses, in key and nums (see hmgetArgs).
type bodyRead struct {
	ctx   context.Context
	key   string
	nums  []string
	args  []any
	calls []*call
	cmd   *rdb.StringSliceCmd
}

// fill adds the HMGET to a pipeline (an op's fill).
func (br *bodyRead) fill(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
	br.cmd = sendHMGET(br.ctx, p, br.args)
	return br.cmd, nil
}

// done hands each comment read its body once the pipeline ran (err: the pipeline's).
func (br *bodyRead) done(err error) {
	if err == nil && br.cmd != nil {
		err = br.cmd.Err()
	}
	if err != nil {
		for _, c := range br.calls {
			c.err = fmt.Errorf("redis read: %w", err)
		}
		return
	}
	if br.cmd == nil {
		return
	}
	vals := br.cmd.Val()
	for i, c := range br.calls {
		if i < len(vals) {
			c.body = vals[i]
		}
	}
}

// bodyReads groups the comment reads of batch that read a body by thread, in the order the
// threads first appear: one HMGET each. A comment read's key is <thread>4; its body is field 4
// of <thread>body.
func bodyReads(ctx context.Context, batch []*call) []*bodyRead {
	n := 0
	for _, c := range batch {
		if c.r.body {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	var out []*bodyRead
	var prefixes []string             // of out's threads, by index: the keys' part before the number
	var byPrefix map[string]*bodyRead // past the first thread
	for _, c := range batch {
		if !c.r.body {
			continue
		}
		key := c.r.rkey
		i := strings.LastIndexByte(key, ':') + 1
		prefix := key[:i]
		var br *bodyRead
		if len(out) > 0 && prefixes[len(prefixes)-1] == prefix { // most batches read one thread
			br = out[len(out)-1]
		} else if byPrefix != nil {
			br = byPrefix[prefix]
		}
		if br == nil {
			// The first thread's read is sized for the whole batch: it is usually the only one.
			size := 1
			if len(out) == 0 {
				size = n
			}
			br = &bodyRead{ctx: ctx, key: prefix + "body", nums: make([]string, 0, size), args: make([]any, 2, 2+size),
				calls: make([]*call, 0, size)}
			br.args[0], br.args[1] = "hmget", &br.key
			if len(out) == 1 {
				byPrefix = map[string]*bodyRead{prefixes[0]: out[0]}
			}
			if byPrefix != nil {
				byPrefix[prefix] = br
			}
			out, prefixes = append(out, br), append(prefixes, prefix)
		}
		// A field goes by its address in nums, which never grows past its capacity for the first
		// thread; a later thread's may grow, and what args hold still points at the same strings.
		// The key names the comment by its short number, and so do the bodies (keys.go).
		br.nums = append(br.nums, key[i:])
		br.args, br.calls = append(br.args, &br.nums[len(br.nums)-1]), append(br.calls, c)
	}
	return out
}
