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
	"github.com/agora/agora/jobs"
)

// The layout of the keyspace is how the store keeps its data: which keys exist, what they hold.
// Its version is recorded in the hash {meta}:layout (fields version, migrating, started,
// finished). A binary knows the layouts up to Layout: it refuses a keyspace of a newer one
// (CheckLayout), and brings an older one up to Layout by running its migrations in order, one
// process at a time under the job engine's lock while the others serve (Migrate,
// RunBackground). Layout 1 is the data written by the release before layouts were recorded: no
// version hash, but data. A fresh keyspace starts at Layout.
const Layout = 8

// A Migration brings the keyspace from layout From to From+1. Its step is idempotent and safe
// beside traffic: a migration cut off (its process died) is resumed by running the step again,
// from the start, once the lock's lease has ended.
type Migration struct {
	From int
	// Does says what the migration does, for `agora migrate --dry-run` and the log.
	Does string
	run  func(ctx context.Context, s *Store) error
}

// migrations are the store's migrations, one per layout from 1 to Layout-1.
var migrations = []Migration{
	{From: 1, Does: "derive what the previous release did not keep (the search index, the windowed TOP, ACTIVE, " +
		"CONTROVERSIAL and MOST_COMMENTS rankings, the BEST and CONTROVERSIAL comment orders, the users' comment " +
		"lists, the directory of groups) by running rebuild's steps (Rebuild, RebuildUsers)",
		run: func(ctx context.Context, s *Store) error {
			if _, err := s.Rebuild(ctx); err != nil {
				return err
			}
			_, err := s.RebuildUsers(ctx)
			return err
		}},
	{From: 2, Does: "move every comment's body out of its hash into its thread's bodies ({p:<id>}:c:body), " +
		"so that comment hashes stay listpack-encoded (about 650 bytes less per comment with a 200-byte body), " +
		"and keep the threads' comment numbers short, so that their sets are intsets; write users' password " +
		"hashes compactly, so that user hashes stay listpack-encoded; derive the NSFW-free copies of the site's and " +
		"groups' rankings and of the users' post lists (content labels) by running rebuild's steps (Rebuild)",
		run: func(ctx context.Context, s *Store) error {
			if _, err := s.moveCommentBodies(ctx); err != nil {
				return err
			}
			if _, err := s.compactPasswords(ctx); err != nil {
				return err
			}
			_, err := s.Rebuild(ctx)
			return err
		}},
	{From: 3, Does: "keep every post list (the site's and groups' rankings, the users' post lists) in two disjoint " +
		"parts, the NSFW posts apart ({r:all}:n:hot, {u:<name>}:n:posts, ...), in place of the NSFW-free copies of " +
		"layout 3: re-index every NSFW post, which moves it into the NSFW parts, then delete the copies " +
		"({r:all}:s:*, {g:<name>}:s:*, {u:<name>}:posts:s and :posts:s:ver; about 1,100 bytes less per post); " +
		"first, derive the directory of groups with its NSFW-free orders and each user's index of what they " +
		"watch (rebuild's steps)",
		run: func(ctx context.Context, s *Store) error {
			// The directory and the watch indexes first: they are quick, and until the
			// directory's NSFW-free orders exist, readers who hide NSFW see an empty directory.
			if _, err := s.rebuildDirectory(ctx); err != nil {
				return err
			}
			if _, err := s.rebuildWatchIndex(ctx); err != nil {
				return err
			}
			if _, err := s.splitNSFWPosts(ctx); err != nil {
				return err
			}
			_, err := s.dropSFWCopies(ctx)
			return err
		}},
	{From: 4, Does: movePostTextsDoes + "; move every session into its user's sessions hash ({u:<name>}:s: " +
		"session id → expiry), in place of a string with a TTL per session ({u:<name>}:sess:<digest>) and an " +
		"index beside them ({u:<name>}:sessions; about 400 bytes less per user with one session), each with the " +
		"expiry it had, so that no one is signed out; write every inbox's notification records packed " +
		"(\"R<time> <actor>\") in place of JSON, so that inboxes' hashes stay listpack-encoded (about 110 bytes " +
		"less per notification); split every bucket's search dictionary ({sx:<kind>:<n>}:d) into parts by the " +
		"first two runes of its words ({sx:<kind>:<n>}:d:<head>), so that each stays listpack-encoded (about 85 " +
		"bytes less per word); move the posting list of every term that names one document into the term's " +
		"field of a hash of its bucket ({sx:<kind>:<n>}:r:<block>:<part>; about 70 bytes less per such term)",
		run: func(ctx context.Context, s *Store) error {
			if _, err := s.movePostTexts(ctx); err != nil {
				return err
			}
			if _, err := s.migrateSessions(ctx); err != nil {
				return err
			}
			if _, err := s.packNotices(ctx); err != nil {
				return err
			}
			if _, err := s.splitSearchDicts(ctx); err != nil {
				return err
			}
			_, err := s.packSearchLists(ctx)
			return err
		}},
	{From: 5, Does: shortKeysDoes + "; " + bucketCommentVotesDoes + "; " + packCommentsDoes + "; " + replyOrdersDoes + "; " + fileReportsDoes + "; " + splitSearchDictsDoes,
		run: func(ctx context.Context, s *Store) error {
			if _, err := s.shortenCommentKeys(ctx); err != nil { // first: the steps after it list comments by key
				return err
			}
			if _, err := s.bucketCommentVotes(ctx); err != nil {
				return err
			}
			if _, err := s.packComments(ctx); err != nil {
				return err
			}
			if _, err := s.migrateReplyOrders(ctx); err != nil {
				return err
			}
			if _, err := s.fileReports(ctx); err != nil {
				return err
			}
			_, err := s.splitSearchDictNodes(ctx)
			return err
		}},
	{From: 6, Does: shortKeysDoes + "; " + compactCommentsDoes + "; " + foldInboxesDoes,
		run: func(ctx context.Context, s *Store) error {
			// A keyspace written by layout 6 before comment keys were short has padded ones: the
			// step runs here too (on a keyspace migrated from layout 5 it finds none).
			if _, err := s.shortenCommentKeys(ctx); err != nil {
				return err
			}
			if _, err := s.compactComments(ctx); err != nil {
				return err
			}
			_, err := s.foldInboxes(ctx)
			return err
		}},
	{From: 7, Does: foldSessionsDoes,
		run: func(ctx context.Context, s *Store) error {
			_, err := s.foldSessions(ctx)
			return err
		}},
}

// splitNSFWPosts re-indexes every live NSFW post (labelled, or in an NSFW group), which moves it
// out of its lists' first parts into their NSFW parts, and returns how many it re-indexed: the
// first step of the migration from layout 3. Each post's version is raised first (bump.lua), so
// that its entries replace the ones layout 3 wrote; running it again re-indexes the same posts.
func (s *Store) splitNSFWPosts(ctx context.Context) (int, error) {
	if err := s.relabelGroups(ctx); err != nil {
		return 0, err
	}
	n := 0
	err := s.scanKeys(ctx, s.k.prefix+"{p:*}", func(key string) error {
		pid, ok := postKeyFromHashKey(s.k.prefix, key)
		if !ok {
			return nil
		}
		v, err := s.cmd().HMGet(ctx, key, "nsfw", "groups").Result()
		if err != nil {
			return fmt.Errorf("read the labels of post %s: %w", pid, err)
		}
		if str(v[0]) != "1" {
			p := &Post{GroupNames: splitGroups(str(v[1]))}
			if err := s.groupLabels(ctx, p); err != nil || !p.NSFW {
				return err
			}
		}
		reply, err := s.run(ctx, "bump", []string{key, s.k.postTexts(pid)})
		if err != nil {
			return err
		}
		h, err := replyHash("bump", reply)
		if err != nil {
			return err
		}
		p := s.postFromHash(pid, h)
		if p == nil || h["deleted"] == "1" {
			return nil
		}
		n++
		return s.indexPostIn(ctx, p, nil, false, nil)
	})
	return n, err
}

// dropSFWCopies deletes the NSFW-free copies of layout 3 (legacySFWRanking, legacyUserPostsSFW)
// and returns how many keys it deleted: the second step of the migration from layout 3.
func (s *Store) dropSFWCopies(ctx context.Context) (int, error) {
	var doomed []string
	copies := func(group string) map[string]bool {
		r := s.k.legacySFWRanking(group)
		out := map[string]bool{r.ver: true, r.trim: true}
		for _, k := range r.sets() {
			out[k] = true
		}
		return out
	}
	site := copies("")
	patterns := []string{s.k.prefix + "{r:all}:s:*", s.k.prefix + "{g:*}:s:*", s.k.prefix + "{u:*}:posts:s*"}
	for _, pat := range patterns {
		err := s.scanKeys(ctx, pat, func(key string) error {
			rest := strings.TrimPrefix(key, s.k.prefix)
			switch {
			case site[key]:
			case strings.HasPrefix(rest, "{g:"):
				g, _, ok := strings.Cut(strings.TrimPrefix(rest, "{g:"), "}:s:")
				if !ok || !validGroupName(g) || !copies(g)[key] {
					return nil
				}
			case strings.HasPrefix(rest, "{u:"):
				u, _, ok := strings.Cut(strings.TrimPrefix(rest, "{u:"), "}:posts:s")
				if !ok || !validUserName(u) || (key != s.k.legacyUserPostsSFW(u) && key != s.k.legacyUserPostsSFWVer(u)) {
					return nil
				}
			default:
				return nil
			}
			doomed = append(doomed, key)
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("list the NSFW-free copies: %w", err)
		}
	}
	for _, key := range doomed {
		if err := s.cmd().Unlink(ctx, key).Err(); err != nil {
			return 0, fmt.Errorf("delete %s: %w", key, err)
		}
	}
	return len(doomed), nil
}

// compactPasswords writes every user's password hash in the compact encoding (see encodeHash)
// and returns how many it rewrote: the migration from layout 2's step for users.
func (s *Store) compactPasswords(ctx context.Context) (int, error) {
	n := 0
	err := s.scanKeys(ctx, s.k.prefix+"{u:*}", func(key string) error {
		if _, ok := userKeyFromHashKey(s.k.prefix, key); !ok {
			return nil
		}
		var pass *rdb.StringCmd
		if err := s.pipeline(ctx, []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			pass = p.HGet(ctx, key, "pass")
			return pass, nil
		}}}, false); err != nil && !isNil(err) {
			return fmt.Errorf("read the password hash of %s: %w", key, err)
		}
		old := pass.Val()
		compact := compactedHash(old)
		if compact == old {
			return nil
		}
		v, err := s.run(ctx, "compact_user", []string{key}, old, compact)
		if err != nil {
			return fmt.Errorf("compact the password hash of %s: %w", key, err)
		}
		done, err := replyInt("compact_user", v)
		if err != nil {
			return err
		}
		if done == 1 {
			n++
		}
		return nil
	})
	return n, err
}

// moveBatch bounds the comments one move_bodies call moves.
const moveBatch = 200

// moveCommentBodies moves the bodies of every thread's comments out of their hashes into the
// thread's bodies and shortens the numbers in its ids set (the migration from layout 2), in
// bounded batches, and returns how many bodies moved.
// Each batch is one script on the thread's slot, safe beside traffic and to run again.
func (s *Store) moveCommentBodies(ctx context.Context) (int, error) {
	pids, err := s.threadPosts(ctx)
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, pid := range pids {
		if _, err := s.run(ctx, "shorten_ids", []string{s.k.threadIDs(pid)}); err != nil {
			return moved, fmt.Errorf("shorten the comment numbers of post %s: %w", pid, err)
		}
		nums, err := s.threadNums(ctx, pid)
		if err != nil {
			return moved, err
		}
		for start := 0; start < len(nums); start += moveBatch {
			part := nums[start:min(start+moveBatch, len(nums))]
			keys := []string{s.k.commentBodies(pid)}
			args := make([]any, len(part))
			for i, n := range part {
				keys, args[i] = append(keys, s.k.comment(pid, n)), n
			}
			v, err := s.run(ctx, "move_bodies", keys, args...)
			if err != nil {
				return moved, fmt.Errorf("move the comment bodies of post %s: %w", pid, err)
			}
			n, err := replyInt("move_bodies", v)
			if err != nil {
				return moved, err
			}
			moved += int(n)
		}
	}
	return moved, nil
}

// LayoutState is what the keyspace's version hash says.
type LayoutState struct {
	// Version is the layout of the data: 0 for a fresh keyspace (no data, nothing recorded), 1
	// for data without a version hash (written before layouts were recorded).
	Version int
	// Recorded says that the version hash exists.
	Recorded bool
	// Migrating is the layout a migration in progress (or cut off) is making, 0 when none.
	Migrating int
	// Started and Finished are the times of the last migration, zero when none.
	Started, Finished time.Time
}

// Pending returns the migrations that would bring the keyspace from l to Layout, in order: none
// for a fresh keyspace, which starts at Layout.
func (l LayoutState) Pending() []Migration {
	if l.Version == 0 {
		return nil
	}
	var out []Migration
	for _, m := range migrations {
		if m.From >= l.Version {
			out = append(out, m)
		}
	}
	return out
}

// ErrLayoutTooNew is returned by CheckLayout and Migrate for a keyspace written by a newer
// release, whose layout this binary does not know.
var ErrLayoutTooNew = errors.New("the keyspace has a newer layout than this binary knows")

// ReadLayout returns the layout of the keyspace without changing anything. Where no version hash
// exists it looks for data (posts, users, groups) to tell the previous release's data (layout 1)
// from a fresh keyspace (0).
func (s *Store) ReadLayout(ctx context.Context) (LayoutState, error) {
	h, err := s.cmd().HGetAll(ctx, s.k.layout()).Result()
	if err != nil {
		return LayoutState{}, fmt.Errorf("read layout: %w", rdb.Unavailable(ctx, err))
	}
	if v, ok := h["version"]; ok {
		st := LayoutState{Recorded: true, Version: int(atoi64(v)), Migrating: int(atoi64(h["migrating"]))}
		if ms := atoi64(h["started"]); ms > 0 {
			st.Started = time.UnixMilli(ms).UTC()
		}
		if ms := atoi64(h["finished"]); ms > 0 {
			st.Finished = time.UnixMilli(ms).UTC()
		}
		return st, nil
	}
	data, err := s.hasData(ctx)
	if err != nil {
		return LayoutState{}, err
	}
	if data {
		return LayoutState{Version: 1}, nil
	}
	return LayoutState{}, nil
}

// errFound stops a scan at its first key.
var errFound = errors.New("found")

// hasData reports whether the keyspace holds any data: the post counter, the user or group
// registries, or else (a SCAN that stops at the first) any user.
func (s *Store) hasData(ctx context.Context) (bool, error) {
	// The three keys, on three slots, in one round trip.
	keys := []string{s.k.postSeq(), s.k.userNames(), s.k.groups()}
	found := make([]*rdb.IntCmd, len(keys))
	ops := make([]op, len(keys))
	for i, k := range keys {
		ops[i] = op{key: k, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			found[i] = p.Exists(ctx, k)
			return found[i], nil
		}}
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return false, fmt.Errorf("look for data: %w", rdb.Unavailable(ctx, err))
	}
	for _, c := range found {
		n, err := c.Result()
		if err != nil {
			return false, fmt.Errorf("look for data: %w", rdb.Unavailable(ctx, err))
		}
		if n > 0 {
			return true, nil
		}
	}
	err := s.scanKeys(ctx, s.k.prefix+"{u:*", func(string) error { return errFound })
	switch {
	case errors.Is(err, errFound):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("look for data: %w", rdb.Unavailable(ctx, err))
	}
	return false, nil
}

// CheckLayout is the start-up check of the layout: it refuses a keyspace of a newer layout than
// Layout with ErrLayoutTooNew, and records the layout where none is recorded yet (Layout for a
// fresh keyspace, 1 for the previous release's data), so that the migrations of RunBackground
// or Migrate find it. It returns the layout found.
func (s *Store) CheckLayout(ctx context.Context) (LayoutState, error) {
	st, err := s.ReadLayout(ctx)
	if err != nil {
		return st, err
	}
	s.bodiesInHashes.Store(st.Version > 0 && st.Version < 3)
	s.legacySessions.Store(st.Version > 0 && st.Version < 5)
	s.postBodiesInHashes.Store(st.Version > 0 && st.Version < 5)
	s.legacyCommentVotes.Store(st.Version > 0 && st.Version < 6)
	s.unpackedComments.Store(st.Version > 0 && st.Version < 6)
	s.paddedCommentKeys.Store(st.Version > 0 && st.Version < 7)
	s.legacyUnread.Store(st.Version > 0 && st.Version < 7)
	s.sessionsApart.Store(st.Version > 0 && st.Version < 8)
	if st.Version > Layout {
		return st, fmt.Errorf("%w: layout %d, this binary knows up to %d; run a release that knows layout %d (a newer one), "+
			"or restore a backup taken before the upgrade", ErrLayoutTooNew, st.Version, Layout, st.Version)
	}
	if !st.Recorded {
		v := st.Version
		if v == 0 {
			v = Layout
		}
		if _, err := s.setLayout(ctx, "init", 0, v); err != nil {
			return st, err
		}
		return s.ReadLayout(ctx)
	}
	return st, nil
}

// setLayout runs the layout script's op and returns the version recorded after it.
func (s *Store) setLayout(ctx context.Context, op string, from, to int) (int, error) {
	reply, err := s.run(ctx, "layout", []string{s.k.layout()}, op, from, to, s.now().UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("layout %s %d→%d: %w", op, from, to, err)
	}
	n, err := replyInt("layout", reply)
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// migrateLockTTL is the lease of the migration lock: a process that dies while migrating is
// taken over within it. The holder renews it every third of it.
const migrateLockTTL = 30 * time.Second

// lockTTL is the migration lock's lease (migrateLockTTL).
func (s *Store) lockTTL() time.Duration {
	if s.opts.migrateLockTTL > 0 {
		return s.opts.migrateLockTTL
	}
	return migrateLockTTL
}

// Migrate brings the keyspace to Layout, if it is older, and returns the migrations this process
// ran. It runs them under the job engine's lock named "migrate", one process at a time: while
// another holds it, it waits (polling every poll) and returns once the layout is Layout, or takes
// the migration over when the holder's lease ends. Each migration is marked in progress in the
// version hash before its step runs and recorded as done after, so a process cut off leaves it
// to be run again. A process that loses the lock (its lease ran out) stops before its next
// command and waits like the others. A keyspace whose layout is not recorded is checked first
// (CheckLayout).
func (s *Store) Migrate(ctx context.Context, poll time.Duration) ([]Migration, error) {
	if _, err := s.CheckLayout(ctx); err != nil {
		return nil, err
	}
	lock := s.jobs.NewLock("migrate", s.lockTTL())
	var ran []Migration
	for {
		st, err := s.ReadLayout(ctx)
		if err != nil {
			return ran, err
		}
		if st.Version > Layout {
			return ran, fmt.Errorf("%w: layout %d, this binary knows up to %d", ErrLayoutTooNew, st.Version, Layout)
		}
		if st.Version >= Layout {
			return ran, nil
		}
		sent := time.Now()
		held, err := lock.Acquire(ctx)
		if err != nil {
			return ran, err
		}
		if held {
			done, err := s.migrateHolding(ctx, lock, sent)
			ran = append(ran, done...)
			if rerr := lock.Release(context.WithoutCancel(ctx)); rerr != nil && err == nil {
				err = rerr
			}
			if !errors.Is(err, errLostMigrationLock) {
				if err != nil {
					return ran, err
				}
				continue
			}
			s.opts.Log.WarnContext(ctx, "stopped migrating: another process may carry the migration on", "err", err)
		}
		select {
		case <-ctx.Done():
			return ran, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// errLostMigrationLock is why a migrating process stops when it can no longer be sure that it
// holds the migration lock: another process may hold it and migrate.
var errLostMigrationLock = errors.New("lost the migration lock")

// migrationLease is a process's hold of the migration lock as the process knows it. The lock
// frees itself its TTL after the last renewal Redis applied, so the process is sure to hold it
// only until the TTL after it sent the last renewal that Redis confirmed, less a margin (the
// time Redis measures may run a little faster); measured on the monotonic clock, not
// Options.Now, since Redis expires the lock in real time.
type migrationLease struct {
	ttl   time.Duration
	mu    sync.Mutex
	until time.Time
	lost  error
}

// margin is how long before the lock's expiry, as the process reckons it, the process stops.
func (l *migrationLease) margin() time.Duration { return l.ttl / 6 }

// renewed records a renewal (or the acquisition) sent at sent that Redis confirmed.
func (l *migrationLease) renewed(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := sent.Add(l.ttl - l.margin()); u.After(l.until) {
		l.until = u
	}
}

// lose records that the lock is not held.
func (l *migrationLease) lose(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil {
		l.lost = err
	}
}

// deadline is when the process stops being sure to hold the lock.
func (l *migrationLease) deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// check returns an error wrapping errLostMigrationLock once the process is no longer sure to hold
// the lock: the guard of every command of a migration's step (rdb.Runner.WithGuard).
func (l *migrationLease) check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != nil {
		return l.lost
	}
	if time.Now().After(l.until) {
		l.lost = fmt.Errorf("%w: its lease ran out (no renewal confirmed since %s)", errLostMigrationLock,
			l.until.Add(l.margin()-l.ttl).UTC().Format(time.RFC3339Nano))
		return l.lost
	}
	return nil
}

// migrateHolding runs the pending migrations while this process holds lock, which it acquired
// with a request sent at acquired, renewing it every third of its TTL (and sooner after a failed
// renewal). Every command of the migrations is guarded by the lease (migrationLease.check): once
// a renewal says the lock is another's, or no renewal was confirmed in time, the step stops
// before its next command, and migrateHolding returns an error wrapping errLostMigrationLock
// (another process then carries on); so it does when the version hash says that another process
// migrated meanwhile.
func (s *Store) migrateHolding(ctx context.Context, lock *jobs.Lock, acquired time.Time) ([]Migration, error) {
	ttl := s.lockTTL()
	lease := &migrationLease{ttl: ttl}
	lease.renewed(acquired)
	rctx, cancel := context.WithCancelCause(ctx)
	renewing := make(chan struct{})
	defer func() { cancel(nil); <-renewing }()
	go func() {
		defer close(renewing)
		next := ttl / 3
		for {
			t := time.NewTimer(min(next, time.Until(lease.deadline())))
			select {
			case <-rctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			if err := lease.check(); err != nil {
				cancel(err)
				return
			}
			sent := time.Now()
			held, err := lock.Renew(rctx)
			switch {
			case err != nil:
				if rctx.Err() == nil {
					s.opts.Log.WarnContext(rctx, "renew the migration lock", "err", err)
				}
				next = ttl / 30
			case !held:
				err := fmt.Errorf("%w to another process", errLostMigrationLock)
				lease.lose(err)
				cancel(err)
				return
			default:
				lease.renewed(sent)
				next = ttl / 3
			}
		}
	}()
	ctx, unguard := s.runner.WithGuard(rctx, lease.check)
	defer unguard()
	// stopped says why a failure of the step ended it, when the lease did.
	stopped := func(err error) error {
		if lerr := lease.check(); lerr != nil && !errors.Is(err, errLostMigrationLock) {
			return fmt.Errorf("%w (%w)", err, lerr)
		}
		return err
	}
	st, err := s.ReadLayout(ctx)
	if err != nil {
		return nil, err
	}
	var ran []Migration
	for _, m := range st.Pending() {
		log := s.opts.Log.With("from", m.From, "to", m.From+1)
		// Make sure of the lock before each migration: a failover may have lost it.
		sent := time.Now()
		if held, err := lock.Renew(ctx); err == nil && !held {
			lease.lose(fmt.Errorf("%w to another process", errLostMigrationLock))
		} else if err == nil {
			lease.renewed(sent)
		}
		v, err := s.setLayout(ctx, "begin", m.From, m.From+1)
		if err != nil {
			return ran, stopped(err)
		}
		if v != m.From {
			return ran, fmt.Errorf("%w: the version hash says %d before the migration from %d: another process migrated meanwhile",
				errLostMigrationLock, v, m.From)
		}
		log.InfoContext(ctx, "migrating the keyspace", "does", m.Does)
		start := time.Now()
		if err := m.run(ctx, s); err != nil {
			return ran, fmt.Errorf("migrate layout %d→%d: %w", m.From, m.From+1, stopped(err))
		}
		v, err = s.setLayout(ctx, "finish", m.From, m.From+1)
		if err != nil {
			return ran, stopped(err)
		}
		if v != m.From+1 {
			return ran, fmt.Errorf("%w: migrate layout %d→%d: the version hash says %d after it: another process migrated meanwhile",
				errLostMigrationLock, m.From, m.From+1, v)
		}
		if m.From == 2 {
			s.bodiesInHashes.Store(false) // every comment's body is in its thread's bodies now
		}
		if m.From == 4 {
			s.legacySessions.Store(false)     // every session is in its user's sessions hash now
			s.postBodiesInHashes.Store(false) // every post's body is in its thread's bodies now
		}
		if m.From == 5 {
			s.legacyCommentVotes.Store(false) // every comment vote is in its thread's buckets now
			s.unpackedComments.Store(false)   // every comment hash is packed now
		}
		if m.From == 6 {
			s.shortKeysDone()           // every comment key has its short name now
			s.legacyUnread.Store(false) // every inbox's read state is in its records now
		}
		if m.From == 7 {
			s.sessionsApart.Store(false) // every session is in its user's hash now
		}
		log.InfoContext(ctx, "migrated the keyspace", "took", time.Since(start).Round(time.Millisecond))
		ran = append(ran, m)
	}
	return ran, nil
}

// migrateInBackground is RunBackground's share of migrations: where the keyspace's recorded
// layout is older than Layout (CheckLayout recorded it at start-up), it runs Migrate, so that
// one process migrates while the others serve, and a process that takes the lock over after the
// migrating one died resumes it. A keyspace whose layout is not recorded is left alone (a test's
// store, or a tool that did not run CheckLayout).
func (s *Store) migrateInBackground(ctx context.Context) {
	st, err := s.ReadLayout(ctx)
	for err != nil {
		if ctx.Err() != nil {
			return
		}
		s.opts.Log.WarnContext(ctx, "read the layout", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(migrateLockTTL / 3):
		}
		st, err = s.ReadLayout(ctx)
	}
	if !st.Recorded || st.Version >= Layout {
		return
	}
	for {
		_, err := s.Migrate(ctx, time.Second)
		if err == nil || ctx.Err() != nil {
			return
		}
		s.opts.Log.ErrorContext(ctx, "migration failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(migrateLockTTL / 3):
		}
	}
}

// String describes l for the log and `agora migrate`.
func (l LayoutState) String() string {
	switch {
	case l.Version == 0:
		return "fresh (no data, nothing recorded)"
	case !l.Recorded:
		return strconv.Itoa(l.Version) + " (data of the previous release, no version recorded)"
	case l.Migrating > 0:
		return fmt.Sprintf("%d (migration to %d in progress or cut off, started %s)", l.Version, l.Migrating, l.Started.Format(time.RFC3339))
	}
	return strconv.Itoa(l.Version)
}
