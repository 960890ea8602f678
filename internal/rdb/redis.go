// Package rdb is agora's one door to Redis, and the only package that imports go-redis (the
// boundary test of this package holds that). It holds the client and its configuration, with the
// deadline that bounds every command (client.go); the one runner through which every pipeline,
// script and single command goes, with its one retry policy, its round-trip counting and its
// tracing (runner.go, commands.go); the classification of Redis's errors (errors.go); the
// scripts (script.go); and the pub/sub connections of live events (pubsub.go).
//
// Domain code queues commands on pipelines with go-redis's own names and arguments, so that a
// call reads as the command it sends: this file gives those types names of this package (type
// aliases, the very go-redis types), so that no other package needs to import go-redis.
package rdb

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Clients and their options.
type (
	// UniversalClient is any of the clients NewClient makes.
	UniversalClient = redis.UniversalClient
	// Client is a client of one server (or of a master found by Sentinel).
	Client = redis.Client
	// ClusterClient is a client of a Redis Cluster.
	ClusterClient = redis.ClusterClient
	// SentinelClient talks to one Sentinel.
	SentinelClient = redis.SentinelClient
	// Options configures a Client (see NewPlainClient).
	Options = redis.Options
	// ClusterOptions configures a ClusterClient.
	ClusterOptions = redis.ClusterOptions
	// Cmdable is what both a client and a pipeline can send.
	Cmdable = redis.Cmdable
	// Pipeliner queues commands to send in one round trip.
	Pipeliner = redis.Pipeliner
	// ProcessHook, ProcessPipelineHook and DialHook are the steps a client hook wraps.
	ProcessHook         = redis.ProcessHook
	ProcessPipelineHook = redis.ProcessPipelineHook
	DialHook            = redis.DialHook
)

// Commands and their replies.
type (
	Cmder              = redis.Cmder
	Cmd                = redis.Cmd
	StringCmd          = redis.StringCmd
	IntCmd             = redis.IntCmd
	BoolCmd            = redis.BoolCmd
	FloatCmd           = redis.FloatCmd
	DurationCmd        = redis.DurationCmd
	SliceCmd           = redis.SliceCmd
	StringSliceCmd     = redis.StringSliceCmd
	BoolSliceCmd       = redis.BoolSliceCmd
	FloatSliceCmd      = redis.FloatSliceCmd
	MapStringStringCmd = redis.MapStringStringCmd
	ScanCmd            = redis.ScanCmd
	ZSliceCmd          = redis.ZSliceCmd
	XMessageSliceCmd   = redis.XMessageSliceCmd
	Z                  = redis.Z
	ZRangeBy           = redis.ZRangeBy
	ZRangeArgs         = redis.ZRangeArgs
	ZStore             = redis.ZStore
	XMessage           = redis.XMessage
	// Message is a message received on a pub/sub channel.
	Message = redis.Message
)

// Nil is the reply to a read of a key or field that does not exist (errors.Is finds it).
const Nil = redis.Nil

// ErrPoolTimeout is the error of a command that found no free pooled connection in time.
var ErrPoolTimeout = redis.ErrPoolTimeout

// NewPlainClient returns go-redis's client of one server with options o, with none of the
// settings of NewClient (no deadline hook): for tests that need a client as go-redis makes it.
func NewPlainClient(o *Options) *Client { return redis.NewClient(o) }

// NewPlainClusterClient returns go-redis's cluster client with options o, with none of the
// settings of NewClient.
func NewPlainClusterClient(o *ClusterOptions) *ClusterClient { return redis.NewClusterClient(o) }

// NewSentinelClient returns a client of one Sentinel.
func NewSentinelClient(o *Options) *SentinelClient { return redis.NewSentinelClient(o) }

// NewStringSliceCmd returns a command with args whose reply is a list of strings, to queue on a
// pipeline with Process (the loader's HMGET with arguments it reuses).
func NewStringSliceCmd(ctx context.Context, args ...any) *StringSliceCmd {
	return redis.NewStringSliceCmd(ctx, args...)
}

// NewZSliceCmd returns a command with args whose reply is a list of members with their scores,
// to queue on a pipeline with Process (the loader's ZRANGE … WITHSCORES).
func NewZSliceCmd(ctx context.Context, args ...any) *ZSliceCmd {
	return redis.NewZSliceCmd(ctx, args...)
}

// NewIntCmd returns a command with args whose reply is an integer, to queue on a pipeline with
// Process (the loader's ZCARD).
func NewIntCmd(ctx context.Context, args ...any) *IntCmd {
	return redis.NewIntCmd(ctx, args...)
}
