package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// NodeConfig is what one Redis master says of the settings that decide whether data survives:
// its eviction policy and persistence, and its version.
type NodeConfig struct {
	Addr    string
	Version string // redis_version of INFO server; "" when INFO did not say
	// Policy is maxmemory-policy: anything but "noeviction" lets Redis delete keys to make room,
	// which loses data silently.
	Policy     string
	AppendOnly bool   // appendonly yes
	Save       string // the RDB snapshot schedule; "" takes none
	MaxMemory  int64  // bytes; 0 is no limit
	// Unchecked says why CONFIG could not be read (a managed Redis that disables it, an ACL
	// that denies it), "" when it could: the fields above but Version are then unknown.
	Unchecked string
}

// Evicting reports whether the node's policy deletes keys when memory is full.
func (n NodeConfig) Evicting() bool { return n.Unchecked == "" && n.Policy != "noeviction" }

// Persistent reports whether the node writes its data to disk (AOF or RDB snapshots).
func (n NodeConfig) Persistent() bool { return n.Unchecked != "" || n.AppendOnly || n.Save != "" }

// RedisConfig reads the settings of every master: the one server, Sentinel's master, or each
// master of a cluster.
func (s *Store) RedisConfig(ctx context.Context) ([]NodeConfig, error) {
	var mu sync.Mutex
	var out []NodeConfig
	err := s.eachMaster(ctx, func(ctx context.Context, c *rdb.Client) error {
		n, err := nodeConfig(ctx, c)
		if err != nil {
			return err
		}
		mu.Lock()
		out = append(out, n)
		mu.Unlock()
		return nil
	})
	return out, err
}

// eachMaster runs fn on every master: on each of a cluster's, else on the one client.
func (s *Store) eachMaster(ctx context.Context, fn func(ctx context.Context, c *rdb.Client) error) error {
	switch c := s.rdb.(type) {
	case *rdb.ClusterClient:
		return c.ForEachMaster(ctx, fn)
	case *rdb.Client:
		return fn(ctx, c)
	}
	return fmt.Errorf("unsupported Redis client %T", s.rdb)
}

func nodeConfig(ctx context.Context, c *rdb.Client) (NodeConfig, error) {
	n := NodeConfig{Addr: c.Options().Addr}
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return n, fmt.Errorf("INFO server on %s: %w", n.Addr, rdb.Unavailable(ctx, err))
	}
	n.Version = infoField(info, "redis_version")
	get := func(name string) (string, error) {
		m, err := c.ConfigGet(ctx, name).Result()
		if err != nil {
			return "", err
		}
		v, ok := m[name]
		if !ok {
			return "", fmt.Errorf("CONFIG GET %s: not reported", name)
		}
		return v, nil
	}
	vals := map[string]string{}
	for _, name := range []string{"maxmemory-policy", "appendonly", "save", "maxmemory"} {
		v, err := get(name)
		if err != nil {
			if ctx.Err() != nil {
				return n, fmt.Errorf("CONFIG GET on %s: %w", n.Addr, rdb.Unavailable(ctx, err))
			}
			n.Unchecked = err.Error()
			return n, nil
		}
		vals[name] = v
	}
	n.Policy, n.AppendOnly, n.Save = vals["maxmemory-policy"], vals["appendonly"] == "yes", vals["save"]
	n.MaxMemory, _ = strconv.ParseInt(vals["maxmemory"], 10, 64)
	return n, nil
}

// infoField returns the value of field in the text of INFO.
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// MemoryUsage is the memory in use on the fullest Redis master (the one with the highest share
// of its maxmemory, or the most used where none has a limit).
type MemoryUsage struct {
	Addr string
	Used int64 // used_memory, bytes
	Max  int64 // maxmemory, bytes; 0 is no limit
	// Evicting names every master whose maxmemory-policy (INFO memory) evicts keys, as
	// "addr (policy)", in address order; a master that does not report its policy is not named.
	Evicting []string
}

// Ratio is Used over Max, 0 without a limit.
func (m MemoryUsage) Ratio() float64 {
	if m.Max <= 0 {
		return 0
	}
	return float64(m.Used) / float64(m.Max)
}

// String says how much memory is in use, for /readyz and the log.
func (m MemoryUsage) String() string {
	if m.Max <= 0 {
		return fmt.Sprintf("%s used, no maxmemory (%s)", mib(m.Used), m.Addr)
	}
	return fmt.Sprintf("%s of %s maxmemory (%.0f%%, %s)", mib(m.Used), mib(m.Max), 100*m.Ratio(), m.Addr)
}

func mib(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }

// ReadMemory reads INFO memory on every master and returns the fullest, with the masters whose
// policy evicts keys.
func (s *Store) ReadMemory(ctx context.Context) (MemoryUsage, error) {
	var mu sync.Mutex
	var full MemoryUsage
	var evicting []string
	first := true
	err := s.eachMaster(ctx, func(ctx context.Context, c *rdb.Client) error {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			return fmt.Errorf("INFO memory on %s: %w", c.Options().Addr, err)
		}
		m := MemoryUsage{Addr: c.Options().Addr}
		m.Used, _ = strconv.ParseInt(infoField(info, "used_memory"), 10, 64)
		m.Max, _ = strconv.ParseInt(infoField(info, "maxmemory"), 10, 64)
		policy := infoField(info, "maxmemory_policy")
		mu.Lock()
		defer mu.Unlock()
		if policy != "" && policy != "noeviction" {
			evicting = append(evicting, m.Addr+" ("+policy+")")
		}
		if first || m.Ratio() > full.Ratio() || (m.Ratio() == full.Ratio() && m.Used > full.Used) {
			full, first = m, false
		}
		return nil
	})
	slices.Sort(evicting)
	full.Evicting = evicting
	return full, err
}

// Memory returns the memory in use last read by RunBackground, and false before the first
// reading (or where Redis does not report it, as the embedded one does not).
func (s *Store) Memory() (MemoryUsage, bool) {
	m := s.memory.Load()
	if m == nil {
		return MemoryUsage{}, false
	}
	return *m, true
}

// memoryInterval is how often each process reads the memory of Redis.
const memoryInterval = 15 * time.Second

// memoryLevels are the shares of maxmemory past which the log warns.
var memoryLevels = []float64{0.80, 0.95}

// watchMemory reads the memory of Redis every memoryInterval for Memory (the metric and /readyz),
// and warns in the log when it rises past 80% and 95% of maxmemory. Unless Options.AllowEviction
// is set, it also logs an error when a master's maxmemory-policy evicts keys, once each time the
// set of such masters changes: the start-up check (server.go's checkRedis) sees only the masters
// of the moment, and a failover to a replica configured otherwise, a master added to a cluster or
// a CONFIG SET since then would lose keys silently when memory fills.
func (s *Store) watchMemory(ctx context.Context) {
	level := 0       // memoryLevels passed at the last reading
	failing := false // the last reading failed (and was logged)
	evicting := ""   // the masters that evict keys, as last logged
	every := memoryInterval
	if s.opts.memoryInterval > 0 {
		every = s.opts.memoryInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		m, err := s.ReadMemory(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			if !failing {
				s.opts.Log.InfoContext(ctx, "cannot read the memory of Redis", "err", err)
			}
			failing = true
		case err == nil:
			failing = false
			s.memory.Store(&m)
			l := 0
			for _, v := range memoryLevels {
				if m.Ratio() >= v {
					l++
				}
			}
			if l > level {
				s.opts.Log.WarnContext(ctx, "Redis memory is filling up: when it is full, writes fail", "memory", m.String(),
					"hint", "raise maxmemory, add memory or cluster masters, or delete data")
			}
			level = l
			if now := strings.Join(m.Evicting, ", "); !s.opts.AllowEviction && now != evicting {
				if now != "" {
					s.opts.Log.ErrorContext(ctx, "Redis evicts keys when memory is full: every evicted key is lost data",
						"masters", now, "hint", "set maxmemory-policy noeviction on every master and replica (CONFIG SET and redis.conf), "+
							"or start with -allow-eviction if you mean it")
				} else {
					s.opts.Log.InfoContext(ctx, "Redis no longer evicts keys: every master's maxmemory-policy is noeviction")
				}
				evicting = now
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
