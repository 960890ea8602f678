package store

// Single commands through the runner.
//
// Every command the store sends goes through the one runner, rdb.Pipeline (Store.pipeline; scripts
// through Store.runScripts, which uses it): one retry policy, the round-trip counter
// (rdb.RedisCount) and a span per pipeline. Domain code never calls the go-redis client: a command
// sent alone is s.cmd().HGet(ctx, key, field) and the like (rdb.Commands: go-redis's names and
// arguments, so a call reads as the command it sends), and several commands that can share a
// round trip are ops of one s.pipeline call. TestOnlyTheRunnerUsesTheClient holds the boundary:
// outside the functions it allows, no non-test file of the package names the Store's rdb field.
//
// What talks to the client itself, and why:
//   - New (store.go) sets the client up, loads the scripts into it and makes the runner of it.
//   - Store.Ping (store.go): the health check, one unretried round trip that must fail fast.
//   - Store.scanKeys (ranking.go): SCAN walks each master of a cluster with the master's own
//     client, which a pipeline of the cluster client cannot address.
//   - Store.eachMaster (redischeck.go): the start-up checks (INFO, CONFIG GET) of every master.

import "github.com/agora/agora/internal/rdb"

// cmd returns the commands that send one command alone through the store's runner: retried,
// counted and traced like every read and write.
func (s *Store) cmd() rdb.Commands { return s.runner.Commands() }
