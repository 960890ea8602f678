package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed scripts/*.lua
var scriptFS embed.FS

// scripts holds every Lua script by its file name without ".lua".
type scripts map[string]*redis.Script

func loadScripts() (scripts, error) {
	files, err := fs.Glob(scriptFS, "scripts/*.lua")
	if err != nil {
		return nil, fmt.Errorf("list scripts: %w", err)
	}
	out := make(scripts, len(files))
	for _, f := range files {
		src, err := scriptFS.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read script %s: %w", f, err)
		}
		out[strings.TrimSuffix(path.Base(f), ".lua")] = redis.NewScript(string(src))
	}
	return out, nil
}

// loadAll sends SCRIPT LOAD for every script. EVALSHA inside a pipeline cannot fall back to EVAL,
// so scripts must be in the script cache before the first pipelined read. On a cluster client
// go-redis sends SCRIPT LOAD to every master.
func (sc scripts) loadAll(ctx context.Context, rdb redis.UniversalClient) error {
	for name, s := range sc {
		if err := s.Load(ctx, rdb).Err(); err != nil {
			return fmt.Errorf("load script %s: %w", name, err)
		}
	}
	return nil
}

func (sc scripts) get(name string) *redis.Script {
	s, ok := sc[name]
	if !ok {
		panic("store: no script " + name) // a programming error, caught by any test of the caller
	}
	return s
}

// run runs a script by name with EVALSHA, falling back to EVAL when Redis lost its script cache
// (a restart or failover), and maps the scripts' error replies to typed errors.
func (s *Store) run(ctx context.Context, name string, keys []string, args ...any) (any, error) {
	v, err := s.scripts.get(name).Run(ctx, s.rdb, keys, args...).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, scriptError(name, err)
	}
	return v, nil
}

// isNoScript reports whether err is Redis's NOSCRIPT reply.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
