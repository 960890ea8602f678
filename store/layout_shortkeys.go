package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Up to layout 6 a comment's keys were named by its number in stored form, 12 digits: its hash
// {p:17}:c:000000012345 and its reply orders {p:17}:c:000000012345:rt (:rs, :rb, :rc). Layout 7
// names them by the short number, as the thread's ids set does ({p:17}:c:12345; keys.go): with a
// prefix like "agora:" the key is 22 bytes instead of 29, which Redis keeps in a 32-byte
// allocation instead of a 48-byte one, 16 bytes less per comment hash and per reply order. The
// members of the reply orders keep the stored form (their ties order by it), and so does layout
// 5's votes hash of a comment ({p:17}:c:000000012345:votes), which the migration moves into the
// buckets (layout_cvotes.go) instead.
//
// The migrations from layouts 5 and 6 rename every such key (shortenCommentKeys: thread by thread,
// then what a SCAN of the padded names still finds), first of their steps, so that the steps after
// it find every comment under its new name (from layout 6 it finds only the keys that layout 6
// wrote: a keyspace migrated from layout 5 has none left). Keys only move: RENAME keeps the value and
// the TTL, and a key whose short name exists already is left (see shorten_keys.lua).
//
// Beside traffic, reads and writes stay exact by never reaching a thread before its keys have
// their new names: while the keyspace may still hold padded names (Store.paddedCommentKeys: the
// layout was older than 7 when the process started, and it has not seen the migration finish),
// every pipeline and every script call that names a key of a post's thread ({p:<id>}:c:…) first
// renames that whole thread (shortenThread: its ids set's numbers and the comments the call names,
// a bounded batch per script), once per thread and process (Store.shortThreads). Renaming only
// moves keys from padded to short names, and no process of this release writes a padded name, so
// a thread renamed stays renamed: the process then reads and writes it as any thread of layout 7,
// with no fallback and nothing to merge, and its scripts never create a short key while the
// padded one exists. The cost is one script per thread a process touches first while the
// migration runs, and a parse of the keys of each pipeline until then; once the process has seen
// the migration finish (its own rename step, or the version hash read at most every
// shortKeysRecheck) it is none. A process of an earlier layout still running beside the migration loses
// sight of the comments of the threads renamed (as it does of the packed hashes,
// layout_comments.go), and the comments it writes get padded names: running the step again (it
// is Rebuild's too), once no such process is left, renames them.
//
// The other way, reads that fall back to the padded name where the short one is missing, would
// take every read of a comment key (a dozen, in pipelines of different shapes) reading both names
// and merging, and an empty reply order cannot tell a leaf from a parent not yet renamed: a
// second round trip for every leaf until the migration ends. Renaming first keeps one way to
// read and write.

// shortKeysDoes is what the step does, for `agora migrate --dry-run`.
const shortKeysDoes = "rename every comment's hash and reply orders ({p:<id>}:c:000000000004, :rt, :rs, :rb, :rc) " +
	"to the short number ({p:<id>}:c:4, ...), so that each key takes a 32-byte allocation instead of 48 (about 16 " +
	"bytes less per comment hash and per reply order)"

// commentKeySuffixes are the suffixes of a comment's keys that the migration renames: its hash
// and its reply orders (keys.go replyOrders).
var commentKeySuffixes = [...]string{"", ":rt", ":rs", ":rb", ":rc"}

// shortenBatch bounds the comments one shorten_keys call of shortenThread renames.
const shortenBatch = 100

// shortKeysLayout is the layout from which no comment key has a padded name.
const shortKeysLayout = 7

// shortKeysRecheck is how often, at most, a process that may still meet padded names reads the
// version hash to learn that the migration has finished.
const shortKeysRecheck = 5 * time.Second

// shortKeysOwn marks a context whose calls are the renaming's own, which must not rename again.
type shortKeysOwn struct{}

// paddedCommentKey returns the post ("17"), the number ("000000000004") and the suffix (":rt") of
// "<prefix>{p:17}:c:000000000004:rt", a comment key of layout 5 that the migration renames, and
// false for any other key.
func paddedCommentKey(k keys, key string) (pid, num, suffix string, ok bool) {
	rest, ok := strings.CutPrefix(key, k.prefix+"{p:")
	if !ok {
		return "", "", "", false
	}
	pid, rest, ok = strings.Cut(rest, "}:c:")
	if !ok || len(rest) < commentNumWidth || !isDigits(pid) {
		return "", "", "", false
	}
	num, suffix = rest[:commentNumWidth], rest[commentNumWidth:]
	if !isDigits(num) || shortNum(num) == topLevel {
		return "", "", "", false
	}
	for _, s := range commentKeySuffixes {
		if suffix == s {
			return pid, num, suffix, true
		}
	}
	return "", "", "", false
}

// shortenPairs appends to keys the padded and the short name of each key of comment num (either
// form) of post pid (commentKeySuffixes), as shorten_keys takes them.
func (k keys) shortenPairs(keys []string, pid, num string) []string {
	short := shortNum(num)
	padded := padNum(short)
	for _, s := range commentKeySuffixes {
		keys = append(keys, k.inThread(pid, padded, s), k.inThread(pid, short, s))
	}
	return keys
}

// shortenCommentKeys renames every comment key of layouts 5 and 6 to its name of layout 7 (the
// migrations from layouts 5 and 6, and a step of Rebuild for the keys a process of an earlier layout wrote after
// it) and returns how many it renamed. It lists the threads first (their ids sets) and renames
// each (shortenThread), then renames what a SCAN of the padded names still finds (a removal
// marker, out of its thread's ids set), collected before any is renamed: a SCAN is only sure to
// return every key when the keys it walks stay put meanwhile.
func (s *Store) shortenCommentKeys(ctx context.Context) (int, error) {
	ctx = context.WithValue(ctx, shortKeysOwn{}, true)
	pids, err := s.threadPosts(ctx)
	if err != nil {
		return 0, err
	}
	renamed, both := 0, 0
	for _, pid := range pids {
		r, b, err := s.shortenThread(ctx, pid, nil)
		if err != nil {
			return renamed, err
		}
		renamed, both = renamed+r, both+b
	}
	var left []scriptCall
	pattern := s.k.prefix + "{p:*}:c:" + strings.Repeat("[0-9]", commentNumWidth) + "*"
	err = s.scanKeys(ctx, pattern, func(key string) error {
		if pid, num, suffix, ok := paddedCommentKey(s.k, key); ok {
			left = append(left, scriptCall{name: "shorten_keys", keys: []string{key, s.k.inThread(pid, shortNum(num), suffix)}})
		}
		return nil
	})
	if err != nil {
		return renamed, fmt.Errorf("list the comment keys left: %w", err)
	}
	for start := 0; start < len(left); start += scanScriptsBatch {
		calls := left[start:min(start+scanScriptsBatch, len(left))]
		vals, err := s.runScripts(ctx, calls)
		if err != nil {
			return renamed, fmt.Errorf("rename the comments' keys: %w", err)
		}
		for i, v := range vals {
			r, b, err := shortenReply(v)
			if err != nil {
				return renamed, fmt.Errorf("rename %s: %w", calls[i].keys[0], err)
			}
			renamed, both = renamed+r, both+b
		}
	}
	// Every key is renamed, and only a process of an earlier layout names a key the old way: this process
	// need not rename threads before it touches them any more.
	s.shortKeysDone()
	if both > 0 {
		s.opts.Log.WarnContext(ctx, "comment keys under both names left as they are: a process of an earlier layout wrote them "+
			"beside the migration; this release reads the short ones", "keys", both)
	}
	return renamed, nil
}

// threadPosts lists the posts that have a thread (an ids set), by a SCAN.
func (s *Store) threadPosts(ctx context.Context) ([]string, error) {
	var pids []string
	err := s.scanKeys(ctx, s.k.threadIDs("*"), func(key string) error {
		if pid, ok := threadPostKey(s.k.prefix, key); ok {
			pids = append(pids, pid)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the threads: %w", err)
	}
	return pids, nil
}

// shortenReply parses shorten_keys's reply.
func shortenReply(v any) (renamed, both int, err error) {
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return 0, 0, fmt.Errorf("shorten_keys replied %v", v)
	}
	r, err := replyInt("shorten_keys", a[0])
	if err != nil {
		return 0, 0, err
	}
	b, err := replyInt("shorten_keys", a[1])
	return int(r), int(b), err
}

// shortenTouched renames the padded comment keys of every thread that keys name (see the
// top of this file) and that this process has not renamed yet: the first step of every pipeline
// and script call while the keyspace may hold padded names, nothing otherwise.
func (s *Store) shortenTouched(ctx context.Context, keys []string) error {
	if !s.paddedCommentKeys.Load() || ctx.Value(shortKeysOwn{}) != nil {
		return nil
	}
	var todo map[string][]string // post → the comment numbers the keys name
	for _, key := range keys {
		pid, name, ok := threadKeyOf(s.k, key)
		if !ok {
			continue
		}
		if _, done := s.shortThreads.Load(pid); done {
			continue
		}
		if todo == nil {
			todo = map[string][]string{}
		}
		name, _, _ = strings.Cut(name, ":")
		if isDigits(name) && shortNum(name) != topLevel {
			todo[pid] = append(todo[pid], name)
		} else if _, ok := todo[pid]; !ok {
			todo[pid] = nil
		}
	}
	if len(todo) == 0 {
		return nil
	}
	ctx = context.WithValue(ctx, shortKeysOwn{}, true)
	if finished, err := s.shortKeysFinished(ctx); err != nil || finished {
		return err
	}
	for pid, nums := range todo {
		if _, _, err := s.shortenThread(ctx, pid, nums); err != nil {
			return err
		}
	}
	return nil
}

// threadKeyOf returns the post ("17") and the rest ("4:rt", "ids") of a key of a post's thread,
// "<prefix>{p:17}:c:4:rt", and false for any other key.
func threadKeyOf(k keys, key string) (pid, rest string, ok bool) {
	rest, ok = strings.CutPrefix(key, k.prefix+"{p:")
	if !ok {
		return "", "", false
	}
	pid, rest, ok = strings.Cut(rest, "}:c:")
	if !ok || !isDigits(pid) {
		return "", "", false
	}
	return pid, rest, true
}

// shortKeysFinished reads the version hash, at most every shortKeysRecheck, and reports whether
// the migration to layout 7 has finished: then no key has a padded name left, and this process
// stops renaming (paddedCommentKeys).
func (s *Store) shortKeysFinished(ctx context.Context) (bool, error) {
	now := time.Now().UnixMilli()
	last := s.shortKeysChecked.Load()
	if now-last < shortKeysRecheck.Milliseconds() || !s.shortKeysChecked.CompareAndSwap(last, now) {
		return false, nil
	}
	st, err := s.ReadLayout(ctx)
	if err != nil {
		return false, err
	}
	if st.Version < shortKeysLayout { // (a migration to a later layout leaves the names alone)
		return false, nil
	}
	s.shortKeysDone()
	return true, nil
}

// shortKeysDone records that no comment key has a padded name left.
func (s *Store) shortKeysDone() {
	s.paddedCommentKeys.Store(false)
	s.shortThreads.Clear()
}

// shortenThread renames the padded comment keys of post pid's thread: those of every
// comment in its ids set, and of nums (comments the caller names, which may be out of it: a
// removal marker), in batches of shortenBatch comments, then records the thread as renamed. It
// returns how many keys it renamed, and how many it left because both names exist.
func (s *Store) shortenThread(ctx context.Context, pid string, nums []string) (renamed, both int, err error) {
	all, err := s.threadNums(ctx, pid)
	if err != nil {
		return 0, 0, err
	}
	all = append(all, nums...)
	for start := 0; start < len(all); start += shortenBatch {
		var keys []string
		batch := all[start:min(start+shortenBatch, len(all))]
		args := make([]any, len(batch))
		for i, n := range batch {
			keys = s.k.shortenPairs(keys, pid, n)
			args[i] = n
		}
		keys = append(keys, s.k.commentBodies(pid)) // and the fields of their bodies
		v, err := s.run(ctx, "shorten_keys", keys, args...)
		if err != nil {
			return renamed, both, fmt.Errorf("rename the comment keys of post %s: %w", pid, err)
		}
		r, b, err := shortenReply(v)
		if err != nil {
			return renamed, both, err
		}
		renamed, both = renamed+r, both+b
	}
	s.shortThreads.Store(pid, struct{}{})
	return renamed, both, nil
}

// shortenThreadOf is shortenTouched for a read of comment num of post pid that goes to Redis
// alone, outside any pipeline (commentFieldsNow), ahead of a deletion or a moderation notice. It
// renames the comment's own keys even in a thread renamed already: a comment removed for good
// before the upgrade leaves a short-lived marker out of the ids set (see keys.go comment), which
// the thread's renaming does not see, and a repeated deletion must find it.
func (s *Store) shortenThreadOf(ctx context.Context, pid, num string) error {
	if !s.paddedCommentKeys.Load() {
		return nil
	}
	if err := s.shortenTouched(ctx, []string{s.k.comment(pid, num)}); err != nil || !s.paddedCommentKeys.Load() {
		return err
	}
	v, err := s.run(context.WithValue(ctx, shortKeysOwn{}, true), "shorten_keys", s.k.shortenPairs(nil, pid, num))
	if err != nil {
		return fmt.Errorf("rename the keys of comment %s: %w", commentID(pid, num), err)
	}
	_, _, err = shortenReply(v)
	return err
}
