// Command agora is a GraphQL API server for community sites with Redis as its only store.
//
// Usage:
//
//	agora [flags]          serve (see -h for the flags and their environment variables)
//	agora [flags] rebuild  re-derive rankings and indexes from the posts, then exit
//	agora [flags] migrate [--dry-run]   bring the keyspace to this release's layout, then exit
//	agora [flags] dead-jobs             list the jobs set aside after failing, then exit
//	agora [flags] retry-job <id>        put a dead job back in the queue, then exit
//	agora [flags] admin grant|revoke <name>   make an account a site admin, or no longer, then exit
//	agora [flags] admin list            list the site admins, then exit
package main

//go:generate go run github.com/99designs/gqlgen generate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agora/agora/gctune"
	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
	"github.com/agora/agora/live"
	"github.com/agora/agora/mail"
	"github.com/agora/agora/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // -h: the usage was asked for and printed
		}
		fmt.Fprintln(os.Stderr, "agora:", err)
		os.Exit(1)
	}
}

// config is everything the flags and environment set.
type config struct {
	addr           string
	mail           mailConfig
	redis          rdb.ClientConfig
	waitReplicas   int
	waitTimeout    time.Duration
	redisTimeout   time.Duration
	prefix         string
	votingWindow   time.Duration
	hotK           float64
	sessionTTL     time.Duration
	writeLimit     int
	maxConns       int
	auth           store.AuthLimits
	feed           store.FeedOptions
	messages       store.MessageOptions
	commentDepth   int
	maxScheduled   int
	admins         []string // user names of the site admins
	requireEmail   bool     // sign-up takes an address; unverified accounts cannot write
	jobWorkers     int
	jobTries       int
	limits         httpapi.Limits
	live           httpapi.Live
	eventBuffer    int
	eventLogLength int           // -event-log-length: events a channel's log keeps
	eventLogAge    time.Duration // -event-log-age: how long a log lives after its last event
	responseCache  int           // MiB; 0 turns the response cache off
	queryCache     int           // MiB of parsed documents
	gcHeadroom     int           // MiB above the live heap before a collection; 0 leaves Go's pacing
	gogcSet        bool
	trustedDocs    string
	metricsAddr    string
	publicMaxAge   time.Duration
	logJSON        bool
	graphiql       bool
	search         bool              // keep the full-text index and answer searches
	allowEviction  bool              // start on a Redis whose maxmemory-policy evicts keys
	ready          func(addr string) // called with the listening address; for tests

	// safety: the new-account limits (hours, karma, posts and comments per hour) and the
	// dismissed reports that take the right to report away.
	newAccountHours, newAccountKarma, newAccountPosts, newAccountComments, newAccountRequests, reportDismissals int
}

// envOr returns the environment value of key, or def.
func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (*config, []string, error) {
	fs := flag.NewFlagSet("agora", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage:
  agora [flags]          serve GraphQL on -addr (the API at /query, GraphiQL at / unless -graphiql=false)
  agora [flags] rebuild  re-derive rankings, group indexes, user lists, karma, the follow graph's
                         derived records and the message mailboxes from the primary data, finish
                         interrupted thread deletions,
                         then exit (needs a real Redis: -redis, -redis-cluster or -redis-sentinel)
  agora [flags] migrate [--dry-run]
                         bring the keyspace to this release's layout (the server does it in the
                         background too), then exit; --dry-run prints what would run
  agora [flags] dead-jobs
                         list the background jobs set aside after failing -job-tries times, with
                         their last error, then exit
  agora [flags] retry-job <id>
                         put a dead job back in the queue (after fixing its cause), then exit
  agora [flags] admin grant <name> | admin revoke <name> | admin list
                         make an existing account a site admin, or no longer one, on every
                         replica within seconds; or list the admins; then exit

Every flag has an environment variable; a flag wins over its variable. Tracing is on when the
standard OpenTelemetry variables name an endpoint: OTEL_EXPORTER_OTLP_ENDPOINT (or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), with the other OTEL_EXPORTER_OTLP_* settings,
OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.

Flags:
`)
		fs.PrintDefaults()
	}
	c := &config{}
	// envErrs collects environment values that do not parse: refusing to start beats running
	// with a default the operator did not ask for.
	var envErrs []error
	bad := func(env string, err error) {
		envErrs = append(envErrs, fmt.Errorf("%s=%q: %w", env, getenv(env), err))
	}
	// Every flag has an environment variable; the flag wins when both are set.
	str := func(p *string, name, env, def, usage string) {
		fs.StringVar(p, name, envOr(getenv, env, def), usage+" (env "+env+")")
	}
	dur := func(p *time.Duration, name, env string, def time.Duration, usage string) {
		d, err := time.ParseDuration(envOr(getenv, env, def.String()))
		if err != nil {
			bad(env, err)
			d = def
		}
		fs.DurationVar(p, name, d, usage+" (env "+env+")")
	}
	num := func(p *int, name, env string, def int, usage string) {
		n, err := strconv.Atoi(envOr(getenv, env, strconv.Itoa(def)))
		if err != nil {
			bad(env, err)
			n = def
		}
		fs.IntVar(p, name, n, usage+" (env "+env+")")
	}
	str(&c.addr, "addr", "ADDR", ":8080", "listen address")
	boolean := func(p *bool, name, env string, def bool, usage string) {
		b, err := strconv.ParseBool(envOr(getenv, env, strconv.FormatBool(def)))
		if err != nil {
			bad(env, err)
			b = def
		}
		fs.BoolVar(p, name, b, usage+" (env "+env+")")
	}
	var cluster, sentinels string
	r := &c.redis
	str(&r.URL, "redis", "REDIS_URL", "", "standalone Redis: redis://[user:pass@]host:port[/db], rediss:// for TLS, or host:port; "+
		"with no -redis, -redis-cluster or -redis-sentinel an embedded in-memory Redis is used")
	str(&cluster, "redis-cluster", "REDIS_CLUSTER_ADDRS", "", "Redis Cluster: comma-separated seed addresses host:port")
	str(&sentinels, "redis-sentinel", "REDIS_SENTINEL_ADDRS", "", "Redis Sentinel: comma-separated sentinel addresses host:port")
	str(&r.SentinelMaster, "redis-master", "REDIS_SENTINEL_MASTER", "", "name of the master the sentinels watch")
	str(&r.Username, "redis-username", "REDIS_USERNAME", "", "Redis ACL user name")
	str(&r.Password, "redis-password", "REDIS_PASSWORD", "", "Redis password (prefer the environment variable: flags show in ps)")
	str(&r.SentinelUsername, "redis-sentinel-username", "REDIS_SENTINEL_USERNAME", "", "ACL user name for the sentinels")
	str(&r.SentinelPassword, "redis-sentinel-password", "REDIS_SENTINEL_PASSWORD", "", "password for the sentinels")
	boolean(&r.TLS, "redis-tls", "REDIS_TLS", false, "connect to Redis over TLS (a rediss:// URL does too)")
	str(&r.TLSCAFile, "redis-tls-ca", "REDIS_TLS_CA", "", "PEM file of CA certificates that sign the Redis servers' certificates")
	str(&r.TLSCertFile, "redis-tls-cert", "REDIS_TLS_CERT", "", "PEM client certificate, for servers with tls-auth-clients yes")
	str(&r.TLSKeyFile, "redis-tls-key", "REDIS_TLS_KEY", "", "PEM key of the client certificate")
	str(&r.TLSServerName, "redis-tls-server-name", "REDIS_TLS_SERVER_NAME", "", "name to verify the servers' certificates against (default: the host dialled)")
	boolean(&r.TLSInsecure, "redis-tls-insecure", "REDIS_TLS_INSECURE", false, "do not verify the servers' certificates (testing only)")
	num(&c.waitReplicas, "redis-wait-replicas", "REDIS_WAIT_REPLICAS", 0,
		"acknowledge a write only once this many replicas have it (WAIT); 0 relies on asynchronous replication")
	dur(&c.waitTimeout, "redis-wait-timeout", "REDIS_WAIT_TIMEOUT", time.Second, "longest wait for the replicas of -redis-wait-replicas")
	dur(&c.redisTimeout, "redis-timeout", "REDIS_TIMEOUT", store.DefaultRedisTimeout,
		"longest wait for Redis to answer one command or pipeline, retries included; a request it fails is answered UNAVAILABLE "+
			"and /readyz 503 (raise it for rebuild on a large keyspace)")
	str(&c.prefix, "prefix", "AGORA_PREFIX", "agora:", "prefix of every Redis key")
	dur(&c.votingWindow, "voting-window", "AGORA_VOTING_WINDOW", 7*24*time.Hour, "how long after publishing votes are accepted")
	hot := envOr(getenv, "AGORA_HOT_K", "432")
	k, err := strconv.ParseFloat(hot, 64)
	if err != nil {
		bad("AGORA_HOT_K", err)
		k = 432
	}
	fs.Float64Var(&c.hotK, "hot-k", k, "seconds one net vote is worth in the HOT score (env AGORA_HOT_K)")
	dur(&c.sessionTTL, "session-ttl", "AGORA_SESSION_TTL", 30*24*time.Hour, "idle lifetime of a session")
	num(&c.writeLimit, "write-limit", "AGORA_WRITE_LIMIT", 120, "writes per user per minute; -1 disables it, every limit on log-ins and sign-ups, and the per-address limits on live streams (for load tests from one machine)")
	num(&c.auth.FailedLoginsPerAccount, "login-failures", "AGORA_LOGIN_FAILURES", 10, "failed log-ins one account accepts per 15 minutes before refusing log-ins")
	num(&c.auth.FailedLoginsPerAddress, "login-failures-per-address", "AGORA_LOGIN_FAILURES_PER_ADDRESS", 50, "failed log-ins one client address may make per 15 minutes")
	num(&c.auth.SignUpsPerAddress, "signups-per-address", "AGORA_SIGNUPS_PER_ADDRESS", 10, "sign-ups one client address may make per hour")
	num(&c.commentDepth, "max-comment-depth", "AGORA_MAX_COMMENT_DEPTH", 100, "deepest reply level below a top-level comment")
	num(&c.feed.Cap, "feed-cap", "AGORA_FEED_CAP", 500, "most entries one home feed keeps")
	num(&c.feed.FanoutLimit, "feed-fanout", "AGORA_FEED_FANOUT", 1000, "most followers a new post is pushed to; the rest read it at read time")
	num(&c.feed.Backfill, "feed-backfill", "AGORA_FEED_BACKFILL", 50, "latest posts copied into a new follower's feed")
	num(&c.feed.MaxPulledAuthors, "feed-max-pulled", "AGORA_FEED_MAX_PULLED", 100, "most authors one home feed reads at read time; a follower beyond it is pushed to, past -feed-fanout")
	dur(&c.messages.RequestCooldown, "request-cooldown", "AGORA_REQUEST_COOLDOWN", store.DefaultRequestCooldown,
		"how long declining a message request refuses further requests from its sender")
	num(&c.messages.PerWindow, "message-limit", "AGORA_MESSAGE_LIMIT", store.DefaultMessagesPerMinute,
		"private messages one user may send per minute (besides -write-limit); off with -write-limit -1")
	num(&c.maxScheduled, "max-scheduled-posts", "AGORA_MAX_SCHEDULED_POSTS", 10, "scheduled posts one user may have pending; one more is LIMIT_REACHED")
	num(&c.newAccountHours, "new-account-hours", "AGORA_NEW_ACCOUNT_HOURS", 24, "an account younger than this many hours is new: a few posts and comments an hour, no links in posts; 0: none by age "+
		"(with the embedded Redis, 0 unless set)")
	num(&c.newAccountKarma, "new-account-karma", "AGORA_NEW_ACCOUNT_KARMA", 0, "an account with less karma than this is new, whatever its age; 0 disables the karma gate")
	num(&c.newAccountPosts, "new-account-posts", "AGORA_NEW_ACCOUNT_POSTS", 3, "posts a new account may make per sliding hour; one more is RATE_LIMITED")
	num(&c.newAccountComments, "new-account-comments", "AGORA_NEW_ACCOUNT_COMMENTS", 20, "comments a new account may make per sliding hour; one more is RATE_LIMITED")
	num(&c.newAccountRequests, "new-account-requests", "AGORA_NEW_ACCOUNT_REQUESTS", 5, "message requests (messages to users who have not accepted its messages) a new account may send per sliding hour; one more is RATE_LIMITED")
	num(&c.reportDismissals, "report-dismissals", "AGORA_REPORT_DISMISSALS", 10, "dismissed reports in 30 days that take a user's right to report away until the oldest is 30 days old")
	var admins string
	str(&admins, "admins", "AGORA_ADMINS", "", "comma-separated names of the site admins: they moderate every group and may ban users from the site; "+
		"a name makes an admin only of an account created before the setting first named it (see `agora admin grant`)")
	m := &c.mail
	str(&m.smtpURL, "smtp-url", "AGORA_SMTP_URL", "", "SMTP server for mail: smtp://user:pass@host:port (STARTTLS, port 587) or smtps:// (TLS, port 465); "+
		"none writes each mail to the log instead")
	str(&m.from, "mail-from", "AGORA_MAIL_FROM", "", "sender address of mails (required with -smtp-url)")
	str(&m.publicURL, "public-url", "AGORA_PUBLIC_URL", "http://localhost:8080", "the site's public address, the start of the links in mails")
	str(&m.templates, "mail-templates", "AGORA_MAIL_TEMPLATES", "", "directory whose verify.txt, verify.html, reset.txt, reset.html replace the embedded mail templates")
	dur(&m.resetTTL, "reset-ttl", "AGORA_RESET_TTL", time.Hour, "how long a password-reset link works")
	boolean(&c.requireEmail, "require-email", "AGORA_REQUIRE_EMAIL", false, "sign-up requires an email address, and an account cannot write "+
		"(EMAIL_UNVERIFIED) until it verifies its address; site admins are exempt")
	num(&c.jobWorkers, "job-workers", "AGORA_JOB_WORKERS", 16, "background jobs this process runs at once")
	num(&c.jobTries, "job-tries", "AGORA_JOB_TRIES", 10, "tries of a failing background job before it is set aside as a dead letter")
	d := httpapi.DefaultLimits
	max := int(d.MaxBodyBytes)
	num(&max, "max-body", "AGORA_MAX_BODY", max, "largest request body in bytes")
	num(&c.limits.MaxTokens, "max-tokens", "AGORA_MAX_TOKENS", d.MaxTokens, "most lexer tokens in a query")
	num(&c.limits.MaxDepth, "max-depth", "AGORA_MAX_DEPTH", d.MaxDepth, "deepest selection nesting")
	num(&c.limits.MaxAliases, "max-aliases", "AGORA_MAX_ALIASES", d.MaxAliases, "most aliases in a query")
	num(&c.limits.MaxComplexity, "max-complexity", "AGORA_MAX_COMPLEXITY", d.MaxComplexity, "highest estimated query cost")
	dur(&c.limits.BodyTimeout, "body-timeout", "AGORA_BODY_TIMEOUT", d.BodyTimeout, "longest a request body may take to arrive (then 408)")
	num(&c.maxConns, "max-conns", "AGORA_MAX_CONNS", 10000, "most client connections open at once; more are answered 503 and closed (keep it under the file-descriptor limit)")
	num(&c.limits.MaxRepeats, "max-repeats", "AGORA_MAX_REPEATS", d.MaxRepeats, "most selections of one field (response name) in one selection set, fragments merged")
	dl := httpapi.DefaultLive
	dur(&c.live.InitTimeout, "ws-init-timeout", "AGORA_WS_INIT_TIMEOUT", dl.InitTimeout, "how long a WebSocket may wait before connection_init (then closed with 4408)")
	dur(&c.live.KeepAlive, "keepalive", "AGORA_KEEPALIVE", dl.KeepAlive, "interval of WebSocket and server-sent-event keep-alives, and of a signed-in stream's check that its session is still on")
	dur(&c.live.WriteTimeout, "stream-write-timeout", "AGORA_STREAM_WRITE_TIMEOUT", dl.WriteTimeout, "longest wait for a streaming client to take one message before it is disconnected")
	num(&c.live.MaxSubscriptions, "max-subscriptions", "AGORA_MAX_SUBSCRIPTIONS", dl.MaxSubscriptions, "most subscriptions open at once on one WebSocket")
	socketBytes := int(dl.MaxSocketBytes)
	num(&socketBytes, "max-socket-bytes", "AGORA_MAX_SOCKET_BYTES", socketBytes, "most bytes of documents (queries and variables) the open subscriptions of one WebSocket may hold")
	num(&c.live.MaxSocketCost, "max-socket-cost", "AGORA_MAX_SOCKET_COST", dl.MaxSocketCost, "highest summed cost (as -max-complexity counts it) of the subscriptions open on one WebSocket or event stream of a signed-in client")
	num(&c.live.MaxAnonSocketCost, "max-anon-socket-cost", "AGORA_MAX_ANON_SOCKET_COST", dl.MaxAnonSocketCost, "highest summed cost of the subscriptions open on one WebSocket or event stream of an anonymous client")
	num(&c.live.MaxAddressCost, "max-address-cost", "AGORA_MAX_ADDRESS_COST", dl.MaxAddressCost, "highest summed cost of the subscriptions open from one client address; -1: no limit")
	num(&c.live.MaxAnonAddressCost, "max-anon-address-cost", "AGORA_MAX_ANON_ADDRESS_COST", dl.MaxAnonAddressCost, "highest summed cost of the anonymous subscriptions open from one client address; -1: no limit")
	num(&c.live.MaxProcessCost, "max-live-cost", "AGORA_MAX_LIVE_COST", dl.MaxProcessCost, "highest summed cost of all the subscriptions open on this process")
	num(&c.live.MaxStreamsPerAddress, "max-streams-per-address", "AGORA_MAX_STREAMS_PER_ADDRESS", dl.MaxStreamsPerAddress, "most WebSockets and event streams open at once from one client address (more are answered 429); -1: no limit")
	var origins, wsOrigins string
	str(&origins, "cors-origins", "AGORA_CORS_ORIGINS", "", "comma-separated origin patterns of web apps allowed to call the API (HTTP with CORS, and WebSockets) besides the server's own host (e.g. *.example.com,https://app.example.org)")
	str(&wsOrigins, "ws-origins", "AGORA_WS_ORIGINS", "", "older name of -cors-origins; both lists are allowed")
	num(&c.eventLogLength, "event-log-length", "AGORA_EVENT_LOG_LENGTH", store.DefaultEventLogLength,
		"live events the log of one channel keeps for subscribers that resume (a thread's comments, a post's changes, a group's new posts, "+
			"a user's notifications and messages); the log of all new posts keeps ten times as many")
	dur(&c.eventLogAge, "event-log-age", "AGORA_EVENT_LOG_AGE", store.DefaultEventLogAge, "how long a channel's log of live events lives after its last event")
	num(&c.eventBuffer, "event-buffer", "AGORA_EVENT_BUFFER", 64, "live responses a subscriber may fall behind before it is ended with SLOW_SUBSCRIBER")
	str(&c.metricsAddr, "metrics-addr", "AGORA_METRICS_ADDR", defaultMetricsAddr,
		`address of the Prometheus metrics (GET /metrics), apart from -addr so that they are not public; "off" serves none, "public" serves them at /metrics on -addr`)
	str(&c.trustedDocs, "trusted-documents", "AGORA_TRUSTED_DOCUMENTS", "", "a manifest of the only documents to run (Apollo's persisted-query manifest, or a JSON object of SHA-256 → document); others are refused with TRUSTED_DOCUMENTS_ONLY")
	dur(&c.publicMaxAge, "public-max-age", "AGORA_PUBLIC_MAX_AGE", 0, "how long a CDN may keep the answer to an anonymous query over GET (Cache-Control: public, max-age); 0 sends no-store")
	num(&c.queryCache, "query-cache", "AGORA_QUERY_CACHE", httpapi.DefaultQueryCacheMiB,
		"MiB of parsed query documents kept (their text and syntax trees), so that a query seen before is not parsed and validated again")
	num(&c.responseCache, "response-cache", "AGORA_RESPONSE_CACHE", httpapi.DefaultResponseCacheMiB,
		"MiB of query responses kept and served again once Redis confirms nothing they read changed; 0 turns the cache off")
	num(&c.gcHeadroom, "gc-headroom", "AGORA_GC_HEADROOM", 128,
		"MiB the heap may grow above what is live before the garbage collector runs (at least Go's default, the live heap again); "+
			"0 leaves Go's pacing; ignored when GOGC is set")
	c.gogcSet = getenv("GOGC") != ""
	boolean(&c.logJSON, "log-json", "AGORA_LOG_JSON", false, "log as JSON lines")
	boolean(&c.search, "search", "AGORA_SEARCH", true, "keep the full-text search index; false indexes nothing and answers the search fields with FORBIDDEN")
	boolean(&c.allowEviction, "allow-eviction", "AGORA_ALLOW_EVICTION", false, "start on a Redis whose maxmemory-policy evicts keys "+
		"(anything but noeviction), which loses data silently when memory is full; without it such a Redis is refused")
	boolean(&c.graphiql, "graphiql", "AGORA_GRAPHIQL", true, "serve the GraphiQL IDE at / (embedded: it needs no internet access); false answers / with 404")
	if len(envErrs) > 0 {
		return nil, nil, fmt.Errorf("bad environment: %w", errors.Join(envErrs...))
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	for _, a := range strings.Split(admins, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.admins = append(c.admins, a)
		}
	}
	if c.maxConns < 1 {
		return nil, nil, fmt.Errorf("-max-conns: want at least 1 (got %d)", c.maxConns)
	}
	if c.gcHeadroom < 0 {
		return nil, nil, fmt.Errorf("-gc-headroom: want a size in MiB, 0 for Go's own pacing (got %d)", c.gcHeadroom)
	}
	if c.queryCache < 1 {
		return nil, nil, fmt.Errorf("-query-cache: want a size in MiB, at least 1 (got %d)", c.queryCache)
	}
	if c.responseCache < 0 {
		return nil, nil, fmt.Errorf("-response-cache: want a size in MiB, 0 to turn the cache off (got %d)", c.responseCache)
	}
	if c.eventLogLength < 1 {
		return nil, nil, fmt.Errorf("-event-log-length: want at least 1 event (got %d)", c.eventLogLength)
	}
	if c.eventLogAge < time.Second {
		return nil, nil, fmt.Errorf("-event-log-age: want at least a second (got %s)", c.eventLogAge)
	}
	if c.redisTimeout <= 0 {
		return nil, nil, fmt.Errorf("-redis-timeout: want a positive duration (got %s)", c.redisTimeout)
	}
	if c.waitReplicas > 0 && c.waitTimeout >= c.redisTimeout {
		return nil, nil, fmt.Errorf("-redis-wait-timeout (%s) must be shorter than -redis-timeout (%s): the wait for replicas is part of a write's round trip",
			c.waitTimeout, c.redisTimeout)
	}
	r.ClusterAddrs, r.SentinelAddrs = rdb.SplitAddrs(cluster), rdb.SplitAddrs(sentinels)
	if err := r.Validate(); err != nil {
		return nil, nil, err
	}
	// The embedded Redis is for trying agora out, its data gone with the process: there the
	// new-account limits, which would refuse a first session's fourth post or first link, are off
	// unless -new-account-hours asks for them.
	if r.Mode() == "" && !isSet(fs, getenv, "new-account-hours", "AGORA_NEW_ACCOUNT_HOURS") {
		c.newAccountHours = 0
	}
	c.limits.MaxBodyBytes = int64(max)
	c.live.MaxSocketBytes = int64(socketBytes)
	if c.writeLimit < 0 {
		// The load-test switch: one machine opens every stream, so per-address limits are off too.
		c.live.MaxAddressCost, c.live.MaxAnonAddressCost, c.live.MaxStreamsPerAddress = -1, -1, -1
	}
	for _, o := range strings.Split(origins+","+wsOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.live.AllowedOrigins = append(c.live.AllowedOrigins, o)
		}
	}
	if c.metricsAddr == "" {
		return nil, nil, fmt.Errorf(`-metrics-addr: want an address (say %s), %q or %q`, defaultMetricsAddr, metricsOff, metricsPublic)
	}
	if err := c.live.CheckOrigins(); err != nil {
		return nil, nil, fmt.Errorf("-ws-origins: %w", err)
	}
	return c, fs.Args(), nil
}

// run is the whole program: it parses flags, connects to Redis (or starts an embedded one),
// and serves until ctx ends, then shuts down gracefully.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runWith(ctx, args, getenv, stdout, stderr, nil)
}

func runWith(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready func(string)) error {
	cfg, rest, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	cfg.ready = ready
	var h slog.Handler = slog.NewTextHandler(stdout, nil)
	if cfg.logJSON {
		h = slog.NewJSONHandler(stdout, nil)
	}
	log := slog.New(h)
	switch {
	case cfg.gogcSet:
		log.Info("GOGC is set: the garbage collector keeps its pacing, -gc-headroom is ignored")
	case cfg.gcHeadroom > 0:
		defer gctune.Start(uint64(cfg.gcHeadroom) << 20).Stop()
	}

	client, closeRedis, err := connect(cfg, log)
	if err != nil {
		return err
	}
	defer closeRedis()

	mailOpts, err := cfg.mail.options(log)
	if err != nil {
		return err
	}
	st, err := store.New(ctx, client, store.Options{
		Prefix: cfg.prefix, VotingWindow: cfg.votingWindow, HotK: cfg.hotK,
		SessionTTL: cfg.sessionTTL, WriteLimit: cfg.writeLimit, Auth: cfg.auth, Feed: cfg.feed,
		MaxCommentDepth: cfg.commentDepth, Log: log,
		WaitReplicas: cfg.waitReplicas, WaitTimeout: cfg.waitTimeout, RedisTimeout: cfg.redisTimeout, AllowEviction: cfg.allowEviction,
		MaxScheduledPosts: cfg.maxScheduled, NoSearch: !cfg.search, Admins: cfg.admins, Jobs: jobs.Options{Workers: cfg.jobWorkers, MaxTries: cfg.jobTries},
		EventLogLength: cfg.eventLogLength, EventLogAge: cfg.eventLogAge,
		Mail: mailOpts, RequireEmail: cfg.requireEmail, Messages: cfg.messages,
		NewAccount: store.NewAccountLimits{Age: newAccountAge(cfg.newAccountHours), Karma: cfg.newAccountKarma,
			Posts: cfg.newAccountPosts, Comments: cfg.newAccountComments, Requests: cfg.newAccountRequests},
		ReportDismissals: cfg.reportDismissals,
		ReadOnly:         dryRun(rest),
	})
	if err != nil {
		return fmt.Errorf("start store: %w", err)
	}

	if len(rest) > 0 {
		if rest[0] == "migrate" {
			return migrateCommand(ctx, cfg, st, rest[1:], stdout, log)
		}
		l, err := st.ReadLayout(ctx)
		if err != nil {
			return err
		}
		if l.Version > store.Layout {
			return fmt.Errorf("%w: layout %d, this binary knows up to %d: use the release that wrote it", store.ErrLayoutTooNew, l.Version, store.Layout)
		}
		if rest[0] == "rebuild" && l.Version > 0 && l.Version < store.Layout {
			// Rebuild assumes this release's layout, and redoes steps of the migrations (moving
			// post texts, renaming comment keys, writing the search index anew): run on an older
			// keyspace it would change the forms that replicas of the older release still read.
			return olderLayoutError(l)
		}
		if rest[0] == "admin" {
			if cfg.redis.Mode() == "" {
				return errors.New("admin needs the Redis of the deployment: set -redis, -redis-cluster or -redis-sentinel (the embedded Redis starts empty)")
			}
			return adminCommand(ctx, st, rest[1:], stdout, log)
		}
		if want := map[string]int{"retry-job": 2}[rest[0]]; len(rest) != max(want, 1) {
			if want == 2 && len(rest) == 1 {
				return errors.New("retry-job needs the id of a dead job (see dead-jobs)")
			}
			return fmt.Errorf("unexpected arguments after %q: %q (flags go before the command)", rest[0], rest[1:])
		}
		switch rest[0] {
		case "dead-jobs":
			dead, err := st.Jobs().Dead(ctx, 1000)
			if err != nil {
				return err
			}
			for _, j := range dead {
				fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", j.ID, j.Kind, j.At.Format(time.RFC3339), j.Err)
			}
			log.Info("dead jobs listed", "count", len(dead))
			return nil
		case "retry-job":
			ok, err := st.Jobs().Retry(ctx, rest[1])
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("no dead job %q (see dead-jobs)", rest[1])
			}
			log.Info("dead job queued again", "job", rest[1])
			return nil
		case "rebuild":
			if cfg.redis.Mode() == "" {
				return errors.New("rebuild needs the Redis to repair: set -redis, -redis-cluster or -redis-sentinel (the embedded Redis starts empty)")
			}
			stats, err := st.Rebuild(ctx)
			if err != nil {
				return fmt.Errorf("rebuild: %w", err)
			}
			log.Info("rebuilt derived data", "posts", stats.Posts, "deleted", stats.Deleted, "orphans", stats.Orphans, "named", stats.Named, "scored", stats.Scored, "conversations", stats.Conversations, "watches", stats.Watches, "seats", stats.Seats)
			ustats, err := st.RebuildUsers(ctx)
			if err != nil {
				return fmt.Errorf("rebuild users: %w", err)
			}
			log.Info("rebuilt user indexes and follows", "users", ustats.Users, "follows", ustats.Follows, "scheduled_posts", ustats.Drafts,
				"memberships", ustats.Memberships, "bans", ustats.Bans)
			return nil
		default:
			return fmt.Errorf("unknown command %q (the commands are rebuild, migrate, dead-jobs, retry-job and admin)", rest[0])
		}
	}
	if err := checkRedis(ctx, cfg, st, log); err != nil {
		return err
	}
	layout, err := st.CheckLayout(ctx)
	if err != nil {
		return err
	}
	if layout.Version < store.Layout {
		log.Warn("the keyspace has an older layout: one replica at a time migrates it in the background while all serve; "+
			"until it is done, what the migration derives (see `agora migrate --dry-run`) is incomplete",
			"layout", layout.String(), "target", store.Layout)
	} else {
		log.Info("keyspace layout", "layout", layout.Version)
	}
	// Every replica runs jobs (publications, fan-out, repairs of half-done writes). On the way
	// out, running jobs finish or go back to the queue before Redis is closed.
	background, stopBackground := context.WithCancel(ctx)
	backgroundDone := make(chan struct{})
	go func() { defer close(backgroundDone); st.RunBackground(background) }()
	defer func() { stopBackground(); <-backgroundDone }()
	var trusted httpapi.TrustedDocuments
	if cfg.trustedDocs != "" {
		if trusted, err = httpapi.LoadTrustedDocuments(cfg.trustedDocs); err != nil {
			return err
		}
		log.Info("running trusted documents only", "documents", len(trusted))
	}
	hub := live.New(st, live.Options{EventBuffer: cfg.eventBuffer, Log: log})
	endStreams := func() {
		if err := hub.Close(); err != nil {
			log.Warn("end live streams", "err", err)
		}
	}
	defer endStreams() // when serve fails before its shutdown ends them
	tp, stopTracing, err := tracerFromEnv(ctx, getenv)
	if err != nil {
		return err
	}
	defer stopTracing()
	if tp != nil {
		log.Info("tracing operations to OpenTelemetry", "endpoint", firstOf(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), getenv("OTEL_EXPORTER_OTLP_ENDPOINT")))
	}
	api := httpapi.New(httpapi.Config{Store: st, Hub: hub, Log: log, Tracing: tp, Limits: cfg.limits, Live: cfg.live,
		ResponseCacheMiB: cacheMiB(cfg.responseCache), QueryCacheMiB: cfg.queryCache, TrustedDocuments: trusted, PublicMaxAge: cfg.publicMaxAge,
		MetricsPublic: cfg.metricsAddr == metricsPublic, GraphiQL: cfg.graphiql})
	if cfg.metricsAddr != metricsOff && cfg.metricsAddr != metricsPublic {
		stop, err := serveMetrics(ctx, cfg.metricsAddr, api.Metrics(), log)
		if err != nil {
			return err
		}
		defer stop()
	}
	return serve(ctx, cfg, log, api, endStreams)
}

// adminCommand runs `agora admin grant NAME`, `agora admin revoke NAME` or `agora admin list`:
// the operator's grants of site admin, kept in Redis by user key and read by every replica (see
// store.GrantAdmin).
func adminCommand(ctx context.Context, st *store.Store, args []string, stdout io.Writer, log *slog.Logger) error {
	const usage = "usage: agora admin grant <name> | admin revoke <name> | admin list"
	switch {
	case len(args) == 1 && args[0] == "list":
		configured, granted := st.Admins()
		for _, u := range configured {
			fmt.Fprintf(stdout, "%s\tsetting\n", u)
		}
		for _, u := range granted {
			fmt.Fprintf(stdout, "%s\tgranted\n", u)
		}
		return nil
	case len(args) == 2 && args[0] == "grant":
		if err := st.GrantAdmin(ctx, args[1]); err != nil {
			return fmt.Errorf("admin grant: %w", err)
		}
		log.Info("site admin granted; every replica sees it within seconds", "name", args[1])
		return nil
	case len(args) == 2 && args[0] == "revoke":
		if err := st.RevokeAdmin(ctx, args[1]); err != nil {
			return fmt.Errorf("admin revoke: %w", err)
		}
		log.Info("site admin revoked; every replica sees it within seconds", "name", args[1])
		return nil
	}
	return errors.New(usage)
}

// connect returns a Redis client for the configuration, starting an embedded one when no Redis is
// configured.
func connect(cfg *config, log *slog.Logger) (rdb.UniversalClient, func(), error) {
	if cfg.redis.Mode() == "" {
		m := miniredis.NewMiniRedis()
		m.ClockTTL(true) // let TTLs (sessions, idempotency keys) expire in real time
		if err := m.Start(); err != nil {
			return nil, nil, fmt.Errorf("start embedded redis: %w", err)
		}
		log.Warn("no Redis configured: using an embedded in-memory Redis; all data is lost when the process exits",
			"hint", "set -redis, -redis-cluster or -redis-sentinel for a real Redis")
		client, err := rdb.NewClient(rdb.ClientConfig{URL: m.Addr(), Timeout: cfg.redisTimeout})
		if err != nil {
			m.Close()
			return nil, nil, fmt.Errorf("connect to the embedded redis: %w", err)
		}
		return client, func() { _ = client.Close(); m.Close() }, nil
	}
	rc := cfg.redis
	rc.Timeout = cfg.redisTimeout
	client, err := rdb.NewClient(rc)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to redis: %w", err)
	}
	if err := rdb.CheckConnection(context.Background(), client, cfg.redisTimeout); err != nil {
		_ = client.Close()
		return nil, nil, fmt.Errorf("%s Redis at %s: %w", cfg.redis.Mode(), strings.Join(cfg.redis.Addrs(), ","), err)
	}
	log.Info("using redis", "mode", cfg.redis.Mode(), "addrs", cfg.redis.Addrs(), "master", cfg.redis.SentinelMaster,
		"tls", cfg.redis.TLS || strings.HasPrefix(cfg.redis.URL, "rediss://"), "wait_replicas", cfg.waitReplicas)
	return client, func() { _ = client.Close() }, nil
}

// serve runs the HTTP server until ctx ends, then drains it for up to 10 seconds: it stops
// accepting, lets requests in flight finish (their contexts are not cancelled, so no write is cut
// between its atomic step and its derived writes) and calls endStreams, which ends live
// subscriptions with UNAVAILABLE so that their clients reconnect elsewhere.
func serve(ctx context.Context, cfg *config, log *slog.Logger, h http.Handler, endStreams func()) error {
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	ln = httpapi.LimitConnections(ln, cfg.maxConns)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	srv.RegisterOnShutdown(endStreams)
	if cfg.graphiql {
		log.Info("agora listening", "addr", ln.Addr().String(), "graphiql", "http://"+displayAddr(ln.Addr())+"/")
	} else {
		log.Info("agora listening", "addr", ln.Addr().String())
	}
	if cfg.ready != nil {
		cfg.ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// tracerFromEnv returns an OpenTelemetry tracer provider exporting over OTLP/HTTP when the
// standard variables name an endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; the exporter reads the other OTEL_EXPORTER_OTLP_* settings,
// the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES), and nil when none does or
// OTEL_SDK_DISABLED is true. stop flushes what is buffered.
func tracerFromEnv(ctx context.Context, getenv func(string) string) (trace.TracerProvider, func(), error) {
	nothing := func() {}
	if getenv("OTEL_SDK_DISABLED") == "true" || firstOf(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) == "" {
		return nil, nothing, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nothing, fmt.Errorf("start the OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "agora")), resource.WithFromEnv())
	if err != nil {
		return nil, nothing, fmt.Errorf("describe the traced service: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, func() {
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(shutdownCtx)
	}, nil
}

// firstOf returns the first of its arguments that is not empty.
func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// The values of -metrics-addr: its default, a loopback address that only the host (and its
// Prometheus agent) reaches; "off"; and "public", which serves the metrics at /metrics on -addr
// for operators who want them there.
const (
	defaultMetricsAddr = "127.0.0.1:9090"
	metricsOff         = "off"
	metricsPublic      = "public"
)

// serveMetrics serves the metrics at /metrics on addr until stop is called.
func serveMetrics(ctx context.Context, addr string, metrics http.Handler, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serve metrics", "err", err)
		}
	}()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return func() {
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}, nil
}

func displayAddr(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok && t.IP.IsUnspecified() {
		return "localhost:" + strconv.Itoa(t.Port)
	}
	return a.String()
}

// cacheMiB maps -response-cache (0 is off) to httpapi.Config.ResponseCacheMiB (0 is the default,
// negative is off).
func cacheMiB(flag int) int {
	if flag == 0 {
		return -1
	}
	return flag
}

// mailConfig is the flags of mail delivery.
type mailConfig struct {
	smtpURL, from, publicURL, templates string
	resetTTL                            time.Duration
}

// options builds the store's mail options: an SMTP sender with -smtp-url, else the log.
func (m mailConfig) options(log *slog.Logger) (store.MailOptions, error) {
	o := store.MailOptions{PublicURL: m.publicURL, ResetTTL: m.resetTTL}
	t, err := mail.LoadTemplates(m.templates)
	if err != nil {
		return o, err
	}
	o.Templates = t
	if m.smtpURL == "" {
		o.Sender = mail.Log{Log: log}
		return o, nil
	}
	smtp, err := mail.NewSMTP(m.smtpURL, m.from, mail.SMTPOptions{})
	if err != nil {
		return o, err
	}
	o.Sender = smtp
	return o, nil
}

// minRedisVersion is the oldest Redis the store's scripts and commands run on.
const minRedisVersion = "6.2"

// checkRedis is the start-up check of the Redis the server is given, on every master: it refuses
// an eviction policy other than noeviction (an evicted key is lost data) unless -allow-eviction
// is set, warns where nothing is kept on disk (a restart loses everything) and where the version
// is older than minRedisVersion, and says so where CONFIG is disabled (managed Redis) and it
// could not check. The embedded Redis is not checked.
func checkRedis(ctx context.Context, cfg *config, st *store.Store, log *slog.Logger) error {
	if cfg.redis.Mode() == "" {
		log.Info("embedded Redis: its eviction policy and persistence are not checked")
		return nil
	}
	nodes, err := st.RedisConfig(ctx)
	if err != nil {
		return fmt.Errorf("check the Redis configuration: %w", err)
	}
	var evicting []string
	for _, n := range nodes {
		l := log.With("node", n.Addr, "version", n.Version)
		if olderVersion(n.Version, minRedisVersion) {
			l.Warn("Redis is older than " + minRedisVersion + ", which agora needs")
		}
		switch {
		case n.Unchecked != "":
			l.Warn("could not check the eviction policy and persistence of Redis: CONFIG is disabled or denied (as on managed Redis); "+
				"make sure that maxmemory-policy is noeviction and that persistence is on", "err", n.Unchecked)
			continue
		case n.Evicting() && cfg.allowEviction:
			l.Warn("Redis evicts keys when memory is full (-allow-eviction): every evicted key is lost data", "maxmemory_policy", n.Policy)
		case n.Evicting():
			evicting = append(evicting, n.Addr+" ("+n.Policy+")")
		}
		if !n.Persistent() {
			l.Warn("Redis keeps nothing on disk (appendonly no, no save schedule): a restart loses every piece of data",
				"hint", "turn on AOF: appendonly yes, appendfsync everysec")
		}
		l.Info("redis checked", "maxmemory_policy", n.Policy, "appendonly", n.AppendOnly, "save", n.Save, "maxmemory", n.MaxMemory)
	}
	if len(evicting) > 0 {
		return fmt.Errorf("refusing a Redis that evicts keys when memory is full, losing data silently: maxmemory-policy of %s; "+
			"set it to noeviction (CONFIG SET maxmemory-policy noeviction, and in redis.conf), or start with -allow-eviction if you mean it",
			strings.Join(evicting, ", "))
	}
	return nil
}

// olderVersion reports whether the dotted version v is older than min; an unknown v is not.
func olderVersion(v, min string) bool {
	if v == "" {
		return false
	}
	a, b := strings.Split(v, "."), strings.Split(min, ".")
	for i := range b {
		if i >= len(a) {
			return true
		}
		x, err1 := strconv.Atoi(a[i])
		y, err2 := strconv.Atoi(b[i])
		if err1 != nil || err2 != nil {
			return false
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// olderLayoutError is the refusal of `agora rebuild` on a keyspace of an older layout than this
// release's.
func olderLayoutError(l store.LayoutState) error {
	wait := "run `agora migrate` first (the servers of this release also migrate in the background; " +
		"`agora migrate --dry-run` shows what it would run)"
	if l.Migrating > 0 {
		wait = fmt.Sprintf("a migration to layout %d is in progress: wait for it (`agora migrate` waits for it and says when "+
			"the keyspace is at layout %d)", l.Migrating, store.Layout)
	}
	return fmt.Errorf("rebuild: the keyspace has layout %s, older than this release's %d, and rebuild works on layout %d only: "+
		"%s, then rebuild", l, store.Layout, store.Layout, wait)
}

// dryRun reports whether the command line's command is `migrate --dry-run`, which must write
// nothing: not even what a start records (store.Options.ReadOnly).
func dryRun(rest []string) bool {
	return len(rest) > 1 && rest[0] == "migrate" && (slices.Contains(rest[1:], "--dry-run") || slices.Contains(rest[1:], "-dry-run"))
}

// migrateCommand runs `agora migrate [--dry-run]`: it prints the keyspace's layout and the
// migrations that bring it to this release's, and runs them in the foreground (under the lock
// the servers' background migration takes, so it waits for or takes over one in progress), or
// with --dry-run only prints them and changes nothing.
func migrateCommand(ctx context.Context, cfg *config, st *store.Store, args []string, stdout io.Writer, log *slog.Logger) error {
	dry := false
	for _, a := range args {
		if a != "--dry-run" && a != "-dry-run" {
			return fmt.Errorf("migrate: unexpected argument %q (usage: agora [flags] migrate [--dry-run])", a)
		}
		dry = true
	}
	if cfg.redis.Mode() == "" {
		return errors.New("migrate needs the Redis of the deployment: set -redis, -redis-cluster or -redis-sentinel (the embedded Redis starts empty)")
	}
	layout, err := st.ReadLayout(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "keyspace layout: %s\nthis release's layout: %d\n", layout, store.Layout)
	if layout.Version > store.Layout {
		return fmt.Errorf("%w: layout %d, this binary knows up to %d: use the release that wrote it", store.ErrLayoutTooNew, layout.Version, store.Layout)
	}
	pending := layout.Pending()
	if dry {
		switch {
		case layout.Version == 0:
			fmt.Fprintf(stdout, "nothing to migrate: a fresh keyspace starts at layout %d\n", store.Layout)
		case len(pending) == 0:
			fmt.Fprintln(stdout, "nothing to migrate")
		}
		for _, m := range pending {
			fmt.Fprintf(stdout, "would migrate %d → %d: %s\n", m.From, m.From+1, m.Does)
		}
		return nil
	}
	if err := checkRedis(ctx, cfg, st, log); err != nil {
		return err
	}
	ran, err := st.Migrate(ctx, time.Second)
	for _, m := range ran {
		fmt.Fprintf(stdout, "migrated %d → %d: %s\n", m.From, m.From+1, m.Does)
	}
	if err != nil {
		return err
	}
	if len(ran) == 0 {
		fmt.Fprintln(stdout, "nothing left to migrate")
	}
	fmt.Fprintf(stdout, "keyspace layout: %d\n", store.Layout)
	return nil
}

// isSet reports whether the flag name was given on the command line or its variable env in the
// environment.
func isSet(fs *flag.FlagSet, getenv func(string) string, name, env string) bool {
	set := getenv(env) != ""
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// newAccountAge is -new-account-hours as NewAccountLimits.Age: 0 (or less) makes no account new by
// its age.
func newAccountAge(hours int) time.Duration {
	if hours <= 0 {
		return -1
	}
	return time.Duration(hours) * time.Hour
}
