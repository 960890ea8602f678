package store

import (
	"context"
	"strings"
)

// Layout 5 kept the votes on each comment in a hash of its own, {p:<id>}:c:<number>:votes (voter
// → 1 | -1): ~80 bytes of key for a comment with a vote or two, most of what a comment vote cost.
// Layout 6 keeps them in buckets of commentVoteBucket comments each (keys.go commentVotes). The
// migration from layout 5 moves every such hash into its bucket, one script per comment
// (move_comment_votes.lua), safe beside traffic and to run again: a hash moved is gone. Meanwhile
// every script that writes or drops a comment's votes takes the comment's hash of layout 5 too,
// and moves it into the bucket (vote_comment) or drops it, so that no vote is counted twice; and
// until the migration has run (Store.legacyCommentVotes) the reads of a vote (a viewer's, an
// export's, a vote log's compaction) look for it in both places. A process of layout 5 still
// running beside the migration writes hashes again; running the step again, once no such process
// is left, moves them.

// bucketCommentVotesDoes is what the migration from layout 5 does, for `agora migrate --dry-run`.
const bucketCommentVotesDoes = "move the votes on every comment out of its hash ({p:<id>}:c:<number>:votes) into " +
	"its thread's buckets of 8 comments each ({p:<id>}:c:v<bucket>, field <number>:<voter>), so that a " +
	"comment with votes costs no key of its own (about 40 bytes less per comment vote)"

// legacyCommentVotes is layout 5's hash of the votes on comment num (stored form) of post pid,
// voter user key → "1" or "-1".
func (k keys) legacyCommentVotes(pid, num string) string { return k.inThread(pid, num, ":votes") }

// bucketCommentVotes moves the votes on every comment that layout 5 kept in a hash of the
// comment's into its bucket (the migration from layout 5) and returns how many votes it moved.
func (s *Store) bucketCommentVotes(ctx context.Context) (int, error) {
	return s.scanScripts(ctx, s.k.prefix+"{p:*}:c:*:votes", "move the votes on comments into buckets",
		func(key string) (scriptCall, bool) {
			pid, num, ok := legacyCommentVotesKey(s.k, key)
			return scriptCall{name: "move_comment_votes", keys: []string{s.k.commentVotes(pid, num), key}, args: []any{num}}, ok
		})
}

// legacyCommentVotesKey returns the post ("17") and the comment number ("000000000004") of
// "<prefix>{p:17}:c:000000000004:votes", and false for any other key.
func legacyCommentVotesKey(k keys, key string) (pid, num string, ok bool) {
	rest, ok := strings.CutPrefix(key, k.prefix+"{p:")
	if !ok {
		return "", "", false
	}
	pid, rest, ok = strings.Cut(rest, "}:c:")
	if !ok {
		return "", "", false
	}
	num, ok = strings.CutSuffix(rest, ":votes")
	if !ok || !isDigits(pid) || len(num) != commentNumWidth || !isDigits(shortNum(num)) || key != k.legacyCommentVotes(pid, num) {
		return "", "", false
	}
	return pid, num, true
}
