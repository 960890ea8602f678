package storetest

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// Slot returns the Redis Cluster hash slot of key: CRC16 (XMODEM) of its hash tag — the part
// between the first { and the next } when that is not empty — or of the whole key, mod 16384.
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// SlotCheck is a go-redis hook that makes any Redis behave like a Redis Cluster towards
// multi-key operations: a script, a multi-key command or a MULTI/EXEC transaction whose keys lie
// in more than one hash slot fails with CROSSSLOT before it is sent. Every backend of Backends
// carries it, so that code which would break on a cluster fails on miniredis too.
type SlotCheck struct{}

// DialHook passes dialling through.
func (SlotCheck) DialHook(next rdb.DialHook) rdb.DialHook { return next }

// ProcessHook checks one command.
func (SlotCheck) ProcessHook(next rdb.ProcessHook) rdb.ProcessHook {
	return func(ctx context.Context, cmd rdb.Cmder) error {
		if err := checkSlots(cmd.Args(), keysOf(cmd.Args())); err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook checks every command of a pipeline and, for a transaction, all of them
// together.
func (SlotCheck) ProcessPipelineHook(next rdb.ProcessPipelineHook) rdb.ProcessPipelineHook {
	return func(ctx context.Context, cmds []rdb.Cmder) error {
		var tx []string
		multi := len(cmds) > 0 && cmds[0].Name() == "multi"
		for _, cmd := range cmds {
			keys := keysOf(cmd.Args())
			err := checkSlots(cmd.Args(), keys)
			if multi {
				if keys == nil {
					keys = firstKey(cmd.Args())
				}
				tx = append(tx, keys...)
				if err == nil {
					err = checkSlots([]any{"MULTI/EXEC"}, tx)
				}
			}
			if err != nil {
				for _, c := range cmds {
					c.SetErr(err)
				}
				return err
			}
		}
		return next(ctx, cmds)
	}
}

// checkSlots fails when keys span more than one slot.
func checkSlots(args []any, keys []string) error {
	for _, k := range keys[min(1, len(keys)):] {
		if Slot(k) != Slot(keys[0]) {
			return fmt.Errorf("CROSSSLOT (storetest.SlotCheck) %v: keys %q and %q are in different hash slots", args[0], keys[0], k)
		}
	}
	return nil
}

// keyless lists the commands without keys that may appear in a transaction.
var keyless = map[string]bool{"multi": true, "exec": true, "discard": true, "ping": true, "echo": true,
	"wait": true, "publish": true, "spublish": true, "time": true, "select": true, "info": true}

// firstKey returns the key of a single-key command: its first argument.
func firstKey(args []any) []string {
	if len(args) < 2 || keyless[strings.ToLower(ArgString(args[0]))] {
		return nil
	}
	return []string{ArgString(args[1])}
}

// ArgString returns a command's argument as Redis receives it: go-redis writes a *string as
// the string it points to (the store's reads pass keys and fields so, to box them without an
// allocation), where fmt would print the pointer.
func ArgString(a any) string {
	if p, ok := a.(*string); ok && p != nil {
		return *p
	}
	return fmt.Sprint(a)
}

// keysOf returns the keys of the multi-key commands a cluster checks; single-key commands return
// nil.
func keysOf(args []any) []string {
	if len(args) < 2 {
		return nil
	}
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = ArgString(a)
	}
	name := strings.ToLower(s[0])
	numkeys := func(at int) []string { // keys follow a count at position at
		if at >= len(s) {
			return nil
		}
		n, err := strconv.Atoi(s[at])
		if err != nil || at+1+n > len(s) {
			return nil
		}
		return s[at+1 : at+1+n]
	}
	switch name {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
		return numkeys(2)
	case "mget", "del", "unlink", "exists", "touch", "watch", "sinter", "sunion", "sdiff",
		"sinterstore", "sunionstore", "sdiffstore", "pfcount", "pfmerge", "rename", "renamenx",
		"smove", "rpoplpush", "lmove", "copy", "zrangestore":
		keys := s[1:]
		switch name {
		case "smove", "rpoplpush", "lmove", "copy", "zrangestore", "rename", "renamenx":
			keys = s[1:min(3, len(s))]
		}
		return keys
	case "mset", "msetnx":
		var keys []string
		for i := 1; i < len(s); i += 2 {
			keys = append(keys, s[i])
		}
		return keys
	case "zunionstore", "zinterstore", "zdiffstore":
		return append([]string{s[1]}, numkeys(2)...)
	case "zunion", "zinter", "zdiff", "zintercard", "sintercard", "lmpop", "zmpop":
		return numkeys(1)
	case "blpop", "brpop", "bzpopmin", "bzpopmax":
		return s[1 : len(s)-1]
	case "bitop":
		return s[2:]
	}
	return nil
}
