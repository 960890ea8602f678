package store

import (
	"context"
	"strings"
)

// Layout 5 kept each write-once field of a comment's hash (parent, author, created, closes, depth,
// ord, and the author's name, aname) as a field of its own; layout 6 packs five of them into one
// and keeps the name alone, the author derived from it (comment_meta.go): 64 bytes less per
// typical comment (MEMORY USAGE 232 → 168 in the memory probe's keyspace). The migration from layout 5 packs every
// comment's hash, one script per comment (pack_comment.lua), safe beside traffic and to run
// again: a packed hash is left alone. Meanwhile every script reads either shape
// (scripts/lib/comment_meta.lua), and so does every Go read: the loader's reads ask for the
// fields under both names until the process has run the migration (Store.unpackedComments), the
// other reads always. A process of layout 5 still running beside the migration reads a packed
// comment as none, and writes comments unpacked; running the step again (agora rebuild) packs
// them.

// packCommentsDoes is what the step does, for `agora migrate --dry-run`.
const packCommentsDoes = "write every comment's hash ({p:<id>}:c:<number>) with its write-once fields (parent, " +
	"created, closes, depth, ord) packed into one field m and its author's name as n, the author derived from " +
	"it (a when the name is unknown), so that it is a smaller listpack (about 64 bytes less per comment)"

// commentHashPattern matches the keys of comment hashes, among those of their threads (and their
// reply orders, which commentHashKey tells apart): the short names of layout 6, which the step
// before this one gave them (layout_shortkeys.go).
var commentHashPattern = "{p:*}:c:[1-9]*"

// packComments packs the hash of every comment of layout 5 (the migration from layout 5) and
// returns how many it packed.
func (s *Store) packComments(ctx context.Context) (int, error) {
	return s.commentHashScripts(ctx, "pack_comment", "pack the comments' hashes")
}

// commentHashScripts runs script on the hash of every comment, one call each (in batches), and
// returns the sum of their replies: how many hashes it changed. what names the step in errors.
func (s *Store) commentHashScripts(ctx context.Context, script, what string) (int, error) {
	return s.scanScripts(ctx, s.k.prefix+commentHashPattern, what,
		func(key string) (scriptCall, bool) {
			if _, _, ok := commentHashKey(s.k, key); !ok {
				return scriptCall{}, false
			}
			return scriptCall{name: script, keys: []string{key}}, true
		})
}

// commentHashKey returns the post ("17") and the comment number ("000000000004") of
// "<prefix>{p:17}:c:4", and false for any other key.
func commentHashKey(k keys, key string) (pid, num string, ok bool) {
	rest, ok := strings.CutPrefix(key, k.prefix+"{p:")
	if !ok {
		return "", "", false
	}
	pid, num, ok = strings.Cut(rest, "}:c:")
	if !ok || !isDigits(pid) || len(num) > commentNumWidth || !isDigits(num) || key != k.comment(pid, num) {
		return "", "", false
	}
	return pid, padNum(num), true
}
