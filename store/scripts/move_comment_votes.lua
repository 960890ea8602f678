-- move_comment_votes: move the votes on one comment from its hash of layout 5 into its thread's
-- bucket (layout 5 → 6; see lib/comment_votes).
-- KEYS[1]  the comment's votes bucket {p:<id>}:c:v<bucket>   KEYS[2] its votes hash of layout 5
--          {p:<id>}:c:<number>:votes
-- ARGV[1]  the comment's number (stored form)
-- Reply    how many votes it moved.
-- Writes   only KEYS (see create_comment for why). The counts (up, down) are the comment's own and
--          stay as they are.
-- Repeat   the hash is gone once moved: a second run moves nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include comment_votes
redis.call('INCR', KEYS[#KEYS])
return cvotes_adopt(KEYS[1], KEYS[2], ARGV[1])
