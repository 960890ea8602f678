// Package store keeps all of agora's data in Redis: the keyspace, the Lua scripts that make each
// write atomic on one hash slot, the derived rankings, and the per-request loaders that batch reads
// into pipelines. It knows nothing of GraphQL.
package store

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
	"github.com/agora/agora/mail"
)

// Options configures a Store. The zero value of each field selects its default.
type Options struct {
	// Prefix starts every key, so tests and tenants can share one Redis. Default "agora:".
	Prefix string
	// VotingWindow is how long after publishing a post or comment accepts votes. Default 7 days.
	VotingWindow time.Duration
	// HotK is the weight of one net vote in the HOT score, in seconds. Default 432.
	HotK float64
	// SessionTTL is how long an unused session stays valid; each use extends it. Default 30 days.
	SessionTTL time.Duration
	// WriteLimit is how many writes one user may make per WriteWindow; negative disables the
	// limit. Default 120 per minute.
	WriteLimit  int
	WriteWindow time.Duration
	// ExportsPerDay is how many exports of their account (Export) one user may make per 24
	// hours. Default 3. Off, like every limit, with a negative WriteLimit.
	ExportsPerDay int
	// Auth bounds failed log-ins and sign-ups; see AuthLimits. Off with a negative WriteLimit.
	Auth AuthLimits
	// Password sets the argon2id cost. Default: 19 MiB, 2 passes, 1 lane (OWASP's minimum).
	Password PasswordParams
	// MaxCommentDepth is the deepest a reply may nest: a top-level comment has depth 0, a reply
	// to it depth 1, and so on. Default DefaultMaxCommentDepth (100).
	MaxCommentDepth int
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Feed bounds the home feed; see FeedOptions.
	Feed FeedOptions
	// Log receives what the store cannot report to a caller, such as a live event that could not
	// be published after its write succeeded. Default: discarded.
	Log *slog.Logger
	// WaitReplicas makes every atomic write wait (Redis WAIT) until this many replicas have
	// acknowledged it before the write is reported done, so that a failover to one of them cannot
	// lose it. Zero (the default) relies on asynchronous replication. See runWaiting.
	WaitReplicas int
	// AllowEviction says that the operator accepts a Redis whose maxmemory-policy evicts keys
	// (-allow-eviction): the memory watch (see Memory) then does not report a master that
	// evicts. Without it, a master found evicting after start-up (a failover to a node
	// configured otherwise, a CONFIG SET) is logged as an error at the next reading.
	AllowEviction bool
	// WaitTimeout bounds the wait for WaitReplicas; a write not acknowledged in time fails with
	// rdb.ErrNotReplicated (it may still have been applied). Default 1s. The wait is part of the
	// write's round trip, so with WaitReplicas it must be shorter than RedisTimeout.
	WaitTimeout time.Duration
	// RedisTimeout bounds each attempt of what the store sends to Redis: a pipeline of reads or
	// scripts, the reload of the scripts, a ping, the confirmation of a live-event subscription
	// (see rdb.Runner.Bounded). An attempt Redis has not answered in time fails with an Error of
	// KindUnavailable; attempts that Redis answered with "try again" (a cluster moving a slot)
	// are retried up to 8 times, each with its own bound. Make the client with the same bound
	// (rdb.ClientConfig.Timeout) so that the store's single commands and the client's sockets are
	// bounded too. Default DefaultRedisTimeout.
	RedisTimeout time.Duration
	// Jobs configures the job engine (see package jobs); its Prefix, Now, Log and Waiting are the
	// store's (a job that a full Redis refused waits for room without counting a try).
	Jobs jobs.Options
	// MaxScheduledPosts is how many scheduled posts one user may have pending. Default 10.
	MaxScheduledPosts int
	// SearchTextBytes bounds the text a phrase search's page, and as much its count, match
	// against the query; the searches of one request match at most twice it together (see
	// searchTextBytes). Default 1 MiB. Tests of the bound set less, with shorter texts.
	SearchTextBytes int
	// SearchListBytes bounds the posting lists one search reads, newest blocks first; the searches
	// of one request read at most twice it together (see searchListBytes). Default 4 MiB. Tests of
	// the bound set less, with a smaller corpus.
	SearchListBytes int
	// NoSearch turns the full-text index off: writes index nothing and searches fail with
	// KindForbidden (-search=false).
	NoSearch bool
	// Mail configures email addresses, password resets and their mails; see MailOptions.
	Mail MailOptions
	// RequireEmail makes sign-up take an email address (KindInvalid without one) and refuses the
	// writes a site ban refuses (see bans.go) by an account whose address is not verified, with
	// KindEmailUnverified; site admins are exempt (-require-email).
	RequireEmail bool
	// NewAccount limits what new accounts may write; see NewAccountLimits. Off with a negative
	// WriteLimit.
	NewAccount NewAccountLimits
	// ReportDismissals is how many of a user's reports may be dismissed within
	// ReportDismissalWindow before they lose the right to report until the oldest of them leaves
	// it (KindRateLimited). Default 10 in 30 days. Off with a negative WriteLimit.
	ReportDismissals      int
	ReportDismissalWindow time.Duration
	// Admins names the site admins (user names, any case): they moderate every group and may
	// ban users from the whole site. A name makes an admin only of an account created before
	// the setting first named it (see admins.go); the operator grants others with GrantAdmin.
	Admins []string
	// ReadOnly makes New write nothing, for a command that must change nothing (`agora migrate
	// --dry-run`): the names of Admins are not recorded, and make no admin.
	ReadOnly bool
	// Messages configures private messages; see MessageOptions.
	Messages MessageOptions
	// EventLogLength is how many live events the log of one channel keeps for subscribers that
	// resume (a thread's comments, a post's changes, a group's new posts, a user's notifications
	// and messages); the log of all new posts keeps ten times as many. Default 1,000.
	EventLogLength int
	// EventLogAge is how long a channel's log lives after its last event. Default 7 days.
	EventLogAge time.Duration

	// userRankCap replaces userRankCap when positive (tests: UserRankCap).
	userRankCap int
	// migrateLockTTL replaces migrateLockTTL when positive (tests: MigrateLockTTL).
	migrateLockTTL time.Duration
	// memoryInterval replaces memoryInterval when positive (tests: MemoryInterval).
	memoryInterval time.Duration
}

func (o Options) withDefaults() Options {
	if o.Prefix == "" {
		o.Prefix = "agora:"
	}
	if o.VotingWindow == 0 {
		o.VotingWindow = 7 * 24 * time.Hour
	}
	if o.HotK == 0 {
		o.HotK = 432
	}
	if o.SessionTTL == 0 {
		o.SessionTTL = 30 * 24 * time.Hour
	}
	if o.WriteLimit == 0 {
		o.WriteLimit = 120
	}
	if o.WriteWindow == 0 {
		o.WriteWindow = time.Minute
	}
	if o.ExportsPerDay <= 0 {
		o.ExportsPerDay = 3
	}
	if o.Password == (PasswordParams{}) {
		o.Password = DefaultPasswordParams
	}
	if o.MaxCommentDepth == 0 {
		o.MaxCommentDepth = DefaultMaxCommentDepth
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Feed = o.Feed.withDefaults()
	o.Messages = o.Messages.withDefaults()
	o.Auth = o.Auth.withDefaults()
	o.NewAccount = o.NewAccount.withDefaults()
	if o.ReportDismissals <= 0 {
		o.ReportDismissals = 10
	}
	if o.ReportDismissalWindow <= 0 {
		o.ReportDismissalWindow = 30 * 24 * time.Hour
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	o.Mail = o.Mail.withDefaults(func() mail.Sender { return mail.Log{Log: o.Log} })
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = time.Second
	}
	if o.RedisTimeout <= 0 {
		o.RedisTimeout = DefaultRedisTimeout
	}
	if o.SearchTextBytes <= 0 {
		o.SearchTextBytes = searchTextBytes
	}
	if o.SearchListBytes <= 0 {
		o.SearchListBytes = searchListBytes
	}
	if o.MaxScheduledPosts <= 0 {
		o.MaxScheduledPosts = 10
	}
	if o.EventLogLength <= 0 {
		o.EventLogLength = DefaultEventLogLength
	}
	if o.EventLogAge <= 0 {
		o.EventLogAge = DefaultEventLogAge
	}
	o.Jobs.Prefix, o.Jobs.Now, o.Jobs.Log = o.Prefix, o.Now, o.Log
	// A job that a full Redis refused has not failed: it waits for room, untried.
	o.Jobs.Waiting = func(err error) bool { return IsKind(err, KindStorageFull) }
	admins := make([]string, 0, len(o.Admins))
	for _, a := range o.Admins {
		if a = strings.ToLower(strings.TrimSpace(a)); a != "" {
			admins = append(admins, a)
		}
	}
	o.Admins = admins
	return o
}

// DefaultRedisTimeout is the default of Options.RedisTimeout: the client's own default
// (rdb.DefaultTimeout), so that the store's bound and the client's agree.
const DefaultRedisTimeout = rdb.DefaultTimeout

// Store is agora's data layer. It is safe for concurrent use.
type Store struct {
	rdb     rdb.UniversalClient
	runner  *rdb.Runner // every command goes through it (see pipeline)
	k       keys
	opts    Options
	scripts scripts
	sharded bool // publish and subscribe with sharded pub/sub (a Redis 7 cluster)
	jobs    *jobs.Engine

	// hashing bounds concurrent argon2id runs: each takes Options.Password.Memory, so a burst of
	// sign-ups or log-ins queues here instead of exhausting memory.
	hashing chan struct{}
	// decoy is a hash of a random password, verified when a log-in names no user so that the
	// answer takes as long as for a real user.
	decoy string
	// admins is who is a site admin (admins.go); adminMu orders its refreshes.
	admins  atomic.Pointer[adminSet]
	adminMu sync.Mutex
	// filters is this process's copy of the site filters (sitefilters.go).
	filters atomic.Pointer[filterState]
	// memory is the memory of Redis last read by RunBackground (redischeck.go).
	memory atomic.Pointer[MemoryUsage]
	// onVerify, when set (by tests), is called before each argon2id verification of a password.
	onVerify func()
	// onChecked, when set (by tests), is called with the user of each write whose first round
	// trip's checks (limits, bans, the account's deletion) passed, before the write goes on.
	onChecked func(uid string)
	// onTextMatch, when set (by tests), is called with the length of each text a search matches
	// against its query (textBudget.take).
	onTextMatch func(n int)
	// onWindowBacklog, when set (by tests), is called with how many posts past its window each
	// windowed TOP page read filtered (see trimBacklog).
	onWindowBacklog func(n int)
	// trimNoted is when this process last queued the trim of each set of rankings' windowed TOP
	// sets, by group (windows_trim.go); trimMu guards it.
	trimNoted map[string]time.Time
	trimMu    sync.Mutex
	// msgSeq makes the last digits of the message ids this store makes (see newMessageID).
	msgSeq atomic.Uint32
	// leases are the send leases this process was granted (message_leases.go).
	leases sendLeases
	// bodiesInHashes says that comments may still keep their body in their hash: the keyspace was
	// of a layout before 3 when CheckLayout read it, and this process has not migrated it past
	// 2 (see commentRead).
	bodiesInHashes atomic.Bool
	// legacySessions says that sessions may still be kept as layout 4 kept them: the keyspace was
	// of a layout before 5 when CheckLayout read it, and this process has not migrated it past 4
	// (see layout_sessions.go).
	legacySessions atomic.Bool
	// sessionsApart says that sessions may still be kept as layouts 5 to 7 kept them, in a hash
	// of their own per user: the keyspace was of a layout before 8 when CheckLayout read it, and
	// this process has not migrated it past 7 (see layout_sessions.go). It is set whenever
	// legacySessions is.
	sessionsApart atomic.Bool
	// postBodiesInHashes says that posts may still keep their body in their hash: the keyspace
	// was of a layout before 5 when CheckLayout read it, and this process has not migrated it past
	// 4 (see postReadOf).
	postBodiesInHashes atomic.Bool
	// unpackedComments says that comment hashes may still be of layout 5, their write-once fields
	// not yet packed into one (comment_meta.go): the keyspace was of an earlier layout when the
	// process started, and it has not run that migration since.
	unpackedComments atomic.Bool
	// legacyCommentVotes says that comment votes may still be kept as layout 5 kept them, a hash
	// per comment: the keyspace was of a layout before 6 when CheckLayout read it, and this process
	// has not migrated it past 5 (see layout_cvotes.go).
	legacyCommentVotes atomic.Bool
	// paddedCommentKeys says that comment keys may still be named by the padded number, as layouts
	// 5 and 6 named them: the keyspace was of a layout before 7 when CheckLayout read it, and this
	// process has not seen the migration to 7 finish; shortThreads holds the posts whose threads
	// this process has renamed meanwhile, and shortKeysChecked when it last read the version hash
	// (Unix ms). See layout_shortkeys.go.
	paddedCommentKeys atomic.Bool
	shortThreads      sync.Map
	shortKeysChecked  atomic.Int64
	// legacyUnread says that inboxes may still keep their unread ids as layout 6 kept them, in a
	// sorted set apart: the keyspace was of a layout before 7 when CheckLayout read it, and this
	// process has not migrated it past 6 (see layout_unread.go).
	legacyUnread atomic.Bool
	// searchGuess is what searches last read of the index, to read it in fewer round trips.
	searchGuess searchGuesses
	// searchCommon is the terms this process knows to have more than one posting.
	searchCommon searchCommonTerms
}

// New returns a Store on client (made by rdb.NewClient) and loads its Lua scripts into Redis.
func New(ctx context.Context, client rdb.UniversalClient, opts Options) (*Store, error) {
	if err := checkPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	s := &Store{rdb: client, opts: opts.withDefaults()}
	s.msgSeq.Store(binary.BigEndian.Uint32(randomBytes(4))) // see newMessageID
	for _, a := range s.opts.Admins {
		if !validUserName(a) {
			return nil, fmt.Errorf("admin %q is not a user name (3–32 of A-Z a-z 0-9 _ -)", a)
		}
	}
	if s.opts.WaitReplicas > 0 && s.opts.WaitTimeout >= s.opts.RedisTimeout {
		return nil, fmt.Errorf("the wait for replicas (%s) must be shorter than the Redis timeout (%s): it is part of a write's round trip",
			s.opts.WaitTimeout, s.opts.RedisTimeout)
	}
	s.k = newKeys(s.opts.Prefix)
	s.hashing = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))
	s.decoy = s.hashPassword(randomHex(16))
	s.jobs = jobs.New(jobRunner{s}, s.opts.Jobs)
	s.handleJobs()
	var err error
	if s.scripts, err = loadScripts(); err != nil {
		return nil, err
	}
	if err := rdb.Scripts(s.scripts).LoadAll(ctx, client); err != nil {
		return nil, err
	}
	if s.sharded, err = shardedPubSub(ctx, client); err != nil {
		return nil, err
	}
	s.runner = rdb.NewRunner(client, rdb.Scripts(s.scripts), rdb.RunnerOptions{Timeout: s.opts.RedisTimeout,
		WaitReplicas: s.opts.WaitReplicas, WaitTimeout: s.opts.WaitTimeout, ShardedPubSub: s.sharded})
	if err := s.resolveAdmins(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Runner returns the store's runner: live events subscribe through it (rdb.NewSubscription) and
// bound their waits for Redis by it (Runner.Bounded), as the store bounds its own.
func (s *Store) Runner() *rdb.Runner { return s.runner }

// Options returns the options in effect, defaults filled in.
func (s *Store) Options() Options { return s.opts }

// Ping reports whether Redis answers within Options.RedisTimeout and ctx's deadline. It returns
// when the deadline passes even if the client would wait longer (a client not made by NewClient
// may keep its socket waiting past a context's deadline), so that a readiness check answers in
// time; the ping left behind ends with the client's own timeout.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RedisTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.rdb.Ping(ctx).Err() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("ping redis: %w", rdb.Unavailable(ctx, err))
	}
	return nil
}

func (s *Store) now() time.Time { return s.opts.Now().UTC() }

// searchOn reports whether the full-text index is on.
func (o Options) searchOn() bool { return !o.NoSearch }

// randomBytes returns n bytes from crypto/rand.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return b
}

// randomHex returns n random bytes as hex.
func randomHex(n int) string { return hex.EncodeToString(randomBytes(n)) }

// fromMillis converts Unix milliseconds to a UTC time.
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
