package store

import "context"

// Layout 7 keeps a comment's hash smaller in two ways (the memory probe's typical comment: MEMORY
// USAGE 168 → 136, an 80-byte listpack become a 64-byte one, and three fields fewer):
//   - the times packed in its field m are short (comment_meta.go): created in base 36,
//     closes as its distance from created;
//   - its counts up, down and replies are left out until first raised (HINCRBY makes them), and
//     a missing count reads as 0 everywhere: in Go (atoi64 of ""), and in the scripts (creplies,
//     and comment_scores for the votes).
//
// The migration from layout 6 rewrites every comment's hash so, one script per comment
// (compact_comment.lua), safe beside traffic and to run again. Until it has run, a hash may still
// hold decimal times and counts of 0, which read the same: nothing waits for it.

// compactCommentsDoes is what the step does, for `agora migrate --dry-run`.
const compactCommentsDoes = "write every comment's hash ({p:<id>}:c:<number>) with the times packed in its field m " +
	"short (created in base 36, closes as its distance from created) and without its counts of 0 (up, down, " +
	"replies; a missing count reads as 0), so that it is a smaller listpack (about 30 bytes less per comment " +
	"without votes or replies)"

// compactComments rewrites every comment's hash of layout 6 as layout 7 keeps it (the migration
// from layout 6) and returns how many hashes it changed.
func (s *Store) compactComments(ctx context.Context) (int, error) {
	return s.commentHashScripts(ctx, "compact_comment", "compact the comments' hashes")
}
