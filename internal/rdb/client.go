package rdb

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora/agora/internal/fault"
)

// ClientConfig says how to reach Redis. Exactly one of URL, ClusterAddrs and SentinelAddrs
// chooses the deployment: one server, a Redis Cluster, or a master watched by Sentinel. The
// credentials and TLS settings apply to every mode.
type ClientConfig struct {
	// URL is a standalone server: redis://[user:password@]host:port[/db] or rediss:// for TLS.
	// A bare host:port is taken as redis://host:port.
	URL string
	// ClusterAddrs are seed addresses (host:port) of a Redis Cluster; the client discovers the
	// other nodes and follows MOVED and ASK redirects.
	ClusterAddrs []string
	// SentinelAddrs are the addresses of the Sentinels that watch the master SentinelMaster. The
	// client asks them for the current master and reconnects when they promote a replica.
	SentinelAddrs  []string
	SentinelMaster string

	// Username and Password authenticate to the Redis servers (ACL user, or only a password for
	// requirepass). They override credentials in URL when set.
	Username string
	Password string
	// SentinelUsername and SentinelPassword authenticate to the Sentinels themselves.
	SentinelUsername string
	SentinelPassword string

	// TLS turns TLS on for every connection (a rediss:// URL turns it on too).
	TLS bool
	// TLSCAFile is a PEM file of CA certificates to trust instead of the system pool.
	TLSCAFile string
	// TLSCertFile and TLSKeyFile are a PEM client certificate and key, for servers that require
	// client certificates (tls-auth-clients yes).
	TLSCertFile string
	TLSKeyFile  string
	// TLSServerName is the name to verify the servers' certificates against; by default the host
	// of the address dialled.
	TLSServerName string
	// TLSInsecure skips verification of the servers' certificates. For testing only.
	TLSInsecure bool

	// Timeout bounds every command and pipeline sent through the client, go-redis's own retries
	// and reconnections included: one that Redis has not answered in time fails with a fault.Error of
	// KindUnavailable. It also bounds dialling, each socket read and write, and the wait for a
	// pooled connection. Zero selects DefaultTimeout. Pub/sub connections are not bounded
	// while they wait for messages.
	Timeout time.Duration
}

// DefaultTimeout is the default of ClientConfig.Timeout and of store.Options.RedisTimeout: long
// enough for a Redis under load, a TLS handshake to a remote one and go-redis's retries of
// TRYAGAIN while a cluster moves a slot (about 2.5s), short enough that a frozen Redis costs a
// request seconds, not minutes.
const DefaultTimeout = 3 * time.Second

// Mode names the deployment the configuration selects: "standalone", "cluster", "sentinel", or
// "" when nothing is configured.
func (c ClientConfig) Mode() string {
	switch {
	case len(c.ClusterAddrs) > 0:
		return "cluster"
	case len(c.SentinelAddrs) > 0:
		return "sentinel"
	case c.URL != "":
		return "standalone"
	}
	return ""
}

// Addrs lists the addresses the configuration dials first, for logs.
func (c ClientConfig) Addrs() []string {
	switch c.Mode() {
	case "cluster":
		return c.ClusterAddrs
	case "sentinel":
		return c.SentinelAddrs
	case "standalone":
		if o, err := c.standaloneOptions(); err == nil {
			return []string{o.Addr}
		}
	}
	return nil
}

// Validate reports a configuration that names more than one deployment or lacks a part.
func (c ClientConfig) Validate() error {
	n := 0
	for _, set := range []bool{c.URL != "", len(c.ClusterAddrs) > 0, len(c.SentinelAddrs) > 0} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return errors.New("configure one Redis deployment: a URL, cluster addresses or sentinel addresses, not several")
	case len(c.SentinelAddrs) > 0 && c.SentinelMaster == "":
		return errors.New("sentinel mode needs the name of the master the sentinels watch")
	case len(c.SentinelAddrs) == 0 && c.SentinelMaster != "":
		return errors.New("a sentinel master name needs sentinel addresses")
	case (c.TLSCertFile == "") != (c.TLSKeyFile == ""):
		return errors.New("a TLS client certificate needs both the certificate and the key file")
	}
	for _, a := range append(append([]string(nil), c.ClusterAddrs...), c.SentinelAddrs...) {
		if a == "" || strings.Contains(a, "://") || !strings.Contains(a, ":") {
			return fmt.Errorf("address %q: want host:port", a)
		}
	}
	return nil
}

// NewClient returns the one client agora uses for the configured deployment: a
// *redis.Client for a standalone server, a *redis.ClusterClient for a cluster, and a failover
// *redis.Client (which follows the Sentinels' choice of master) for Sentinel. Every command and
// pipeline it sends is bounded by c.Timeout (see deadlineHook).
//
// Without these settings go-redis ignores a context's deadline on the socket and waits its own
// ReadTimeout (5s) for each reply, then retries (MaxRetries 3) on a new connection whose
// handshake waits 5s more: a pipeline sent to a frozen Redis took 40s to fail, and a Ping given
// a 2s context 5s. With ContextTimeoutEnabled the deadline reaches the socket, and the hook puts
// one deadline over the whole command, retries included.
func NewClient(c ClientConfig) (redis.UniversalClient, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t := c.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	var client redis.UniversalClient
	switch c.Mode() {
	case "cluster":
		tc, err := c.tlsConfig(nil)
		if err != nil {
			return nil, err
		}
		client = redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: c.ClusterAddrs, Username: c.Username, Password: c.Password, TLSConfig: tc,
			// While a slot migrates, a script whose keys are split between the two nodes gets
			// TRYAGAIN until the last of them has moved; go-redis retries with a backoff doubling
			// from 8ms to 512ms, and 8 attempts (go-redis defaults to 3) wait out about 2.5s.
			MaxRedirects: clusterMaxRedirects,
			DialTimeout:  t, ReadTimeout: t, WriteTimeout: t, PoolTimeout: t, ContextTimeoutEnabled: true,
		})
	case "sentinel":
		tc, err := c.tlsConfig(nil)
		if err != nil {
			return nil, err
		}
		client = redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: c.SentinelMaster, SentinelAddrs: c.SentinelAddrs,
			SentinelUsername: c.SentinelUsername, SentinelPassword: c.SentinelPassword,
			Username: c.Username, Password: c.Password, TLSConfig: tc,
			DialTimeout: t, ReadTimeout: t, WriteTimeout: t, PoolTimeout: t, ContextTimeoutEnabled: true,
		})
	case "standalone":
		o, err := c.standaloneOptions()
		if err != nil {
			return nil, err
		}
		if o.TLSConfig, err = c.tlsConfig(o.TLSConfig); err != nil {
			return nil, err
		}
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.ContextTimeoutEnabled = t, t, t, t, true
		client = redis.NewClient(o)
	default:
		return nil, errors.New("no Redis configured")
	}
	h := deadlineHook{timeout: t}
	client.AddHook(h)
	if cc, ok := client.(*redis.ClusterClient); ok {
		// The store also talks to single nodes: the pipelines that end with WAIT, and SCAN.
		cc.OnNewNode(func(node *redis.Client) { node.AddHook(h) })
	}
	return client, nil
}

// deadlineHook bounds each command and each pipeline by timeout, from the call to its last
// reply: go-redis's retries, reconnections and waits for a pooled connection all happen inside
// it, and a caller's earlier deadline still wins. A timeout becomes an Error of KindUnavailable,
// in the returned error and in the commands, so that it reaches the client as UNAVAILABLE
// whichever store call made it. The store sends no blocking command (BLPOP and the like), which
// would need a bound of its own; pub/sub connections do not pass through hooks, so a
// subscription waits for messages as long as it likes.
type deadlineHook struct{ timeout time.Duration }

// DialHook passes dialling through: DialTimeout and the command's deadline bound it.
func (h deadlineHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// bound returns ctx bounded by the hook's timeout. A ctx already due within it — every call
// through the runner, which bounds each attempt (Runner.Bounded) — is returned as it is: a second
// bound would add a context, and its registration with the first, to every pipeline for nothing.
func (h deadlineHook) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= h.timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, h.timeout)
}

// ProcessHook bounds one command.
func (h deadlineHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		ctx, cancel := h.bound(ctx)
		defer cancel()
		err := next(ctx, cmd)
		if u := Unavailable(ctx, err); u != err {
			cmd.SetErr(u)
			return u
		}
		return err
	}
}

// ProcessPipelineHook bounds one pipeline (or MULTI/EXEC transaction) as a whole.
func (h deadlineHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		ctx, cancel := h.bound(ctx)
		defer cancel()
		err := next(ctx, cmds)
		markUnavailable(ctx, cmds)
		return Unavailable(ctx, err)
	}
}

// markUnavailable gives the commands of a pipeline bounded by ctx that did not complete in time
// an error of KindUnavailable (see Unavailable).
func markUnavailable(ctx context.Context, cmds []redis.Cmder) {
	for _, c := range cmds {
		if c == nil {
			continue
		}
		if err := c.Err(); err != nil {
			if u := Unavailable(ctx, err); u != err {
				c.SetErr(u)
			}
		}
	}
}

// clusterMaxRedirects is how often a cluster client follows MOVED and ASK or retries TRYAGAIN and
// CLUSTERDOWN for one command.
const clusterMaxRedirects = 8

// standaloneOptions parses URL and applies the credentials.
func (c ClientConfig) standaloneOptions() (*redis.Options, error) {
	u := c.URL
	if !strings.Contains(u, "://") {
		u = "redis://" + u
	}
	o, err := redis.ParseURL(u)
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", err)
	}
	if c.Username != "" {
		o.Username = c.Username
	}
	if c.Password != "" {
		o.Password = c.Password
	}
	return o, nil
}

// tlsConfig returns the TLS settings, starting from base (a rediss:// URL's), or nil when TLS is
// off.
func (c ClientConfig) tlsConfig(base *tls.Config) (*tls.Config, error) {
	if base == nil && !c.TLS {
		return nil, nil
	}
	tc := &tls.Config{}
	if base != nil {
		tc = base.Clone()
	}
	if tc.MinVersion == 0 {
		tc.MinVersion = tls.VersionTLS12
	}
	if c.TLSServerName != "" {
		tc.ServerName = c.TLSServerName
	}
	tc.InsecureSkipVerify = c.TLSInsecure // an explicit switch, documented as for testing only
	if c.TLSCAFile != "" {
		pem, err := os.ReadFile(c.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("read TLS CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA file %s holds no PEM certificate", c.TLSCAFile)
		}
		tc.RootCAs = pool
	}
	if c.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("load TLS client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// SplitAddrs splits a comma-separated address list, dropping blanks.
func SplitAddrs(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// CheckConnection pings Redis within timeout and, when that fails, says why in one line an
// operator can act on: unreachable, refused, authentication failed, TLS mismatch, no answer.
func CheckConnection(ctx context.Context, client redis.UniversalClient, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := client.Ping(ctx).Err()
	if err == nil {
		return nil
	}
	msg := err.Error()
	var se *fault.Error
	if errors.As(err, &se) && se.Unwrap() != nil {
		msg = se.Unwrap().Error() // what went wrong, under the client's "did not answer in time"
	}
	var why string
	switch {
	case strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "NOAUTH"), strings.Contains(msg, "invalid password"),
		strings.Contains(msg, "without any password configured"), strings.Contains(msg, "invalid username-password"):
		why = "authentication failed: check the user name and password (-redis-username, REDIS_PASSWORD or the URL)"
	case strings.Contains(msg, "tls:"), strings.Contains(msg, "x509:"), strings.Contains(msg, "TLS handshake"):
		why = "TLS failed (" + msg + "): a rediss:// URL or -redis-tls needs a server that speaks TLS, and a TLS server needs them"
	case strings.Contains(msg, "connection refused"):
		why = "connection refused: is Redis listening there?"
	case strings.Contains(msg, "no such host"), strings.Contains(msg, "server misbehaving"):
		why = "unknown host"
	case IsTimeout(err): // a deadline or an i/o timeout, typed KindUnavailable by the client or not
		why = fmt.Sprintf("no answer within %s: the host is unreachable, or it does not speak the protocol asked for (TLS to a plain server, or plain to a TLS one)", timeout)
	case strings.Contains(msg, "EOF"), strings.Contains(msg, "connection reset"):
		why = "the server closed the connection: a TLS server reached without TLS, or not a Redis server"
	default:
		why = msg
	}
	return fmt.Errorf("cannot use Redis: %s", why)
}
