package store

import "context"

// movePostTextsDoes is what the migration from layout 4 does, for `agora migrate --dry-run`.
const movePostTextsDoes = "move every post's body out of its hash into its thread's bodies ({p:<id>}:c:body, " +
	"field b), so that post hashes whose title and url are short are listpack-encoded again (about 640 bytes " +
	"less per post with a 400-byte body); empty urls leave the hashes"

// movePostTexts moves every post's body out of its hash (move_post_texts.lua: the
// migration from layout 4) and returns how many posts it changed. Each post is one script on its
// slot, safe beside traffic and to run again: a post already moved is left as it is, so a
// migration cut off resumes by running it again from the start. A process of layout 4 still
// running beside it writes texts into the hash again (edits, new posts); they stay readable (a
// text in the hash wins over one apart) and the hash they were written to may be a hashtable
// again: running the step again, once no such process is left, moves them.
func (s *Store) movePostTexts(ctx context.Context) (int, error) {
	return s.scanScripts(ctx, s.k.prefix+"{p:*}", "move the texts of posts", func(key string) (scriptCall, bool) {
		pid, ok := postKeyFromHashKey(s.k.prefix, key)
		return scriptCall{name: "move_post_texts", keys: []string{key, s.k.postTexts(pid)}}, ok
	})
}
