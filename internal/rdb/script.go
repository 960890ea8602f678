package rdb

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Script is a Lua script, sent by its SHA1 (EVALSHA) once loaded.
type Script struct{ s *redis.Script }

// NewScript returns the script of Lua source src.
func NewScript(src string) *Script { return &Script{redis.NewScript(src)} }

// EvalSha queues EVALSHA of the script with keys and args on p and returns the command.
func (s *Script) EvalSha(ctx context.Context, p Pipeliner, keys []string, args ...any) *Cmd {
	return s.s.EvalSha(ctx, p, keys, args...)
}

// Scripts are scripts by name.
type Scripts map[string]*Script

// LoadAll sends SCRIPT LOAD for every script. EVALSHA inside a pipeline cannot fall back to EVAL,
// so scripts must be in the script cache before the first pipelined read. On a cluster client
// go-redis sends SCRIPT LOAD to every master.
func (sc Scripts) LoadAll(ctx context.Context, client UniversalClient) error {
	for name, s := range sc {
		if err := s.s.Load(ctx, client).Err(); err != nil {
			return fmt.Errorf("load script %s: %w", name, err)
		}
	}
	return nil
}
