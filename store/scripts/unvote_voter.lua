-- unvote_voter: take a deleted account's name off its vote on one post or comment, the vote still
-- counted (account deletion's "votes" step; see store/votes_log.go).
-- KEYS[1]  the item's votes: the post's hash {p:<id>}:votes, or the comment's bucket
--          {p:<id>}:c:v<bucket> (see lib/comment_votes)   KEYS[2], for a comment only, its votes
--          hash of layout 5 {p:<id>}:c:<number>:votes
-- ARGV[1]  the field of the user's vote in KEYS[1]: the deleted user's key for a post,
--          "<number>:<user key>" for a comment   ARGV[2], for a comment only, the user's key (its
--          field in KEYS[2])
-- Reply    1 when the item held a vote by the user, else 0.
-- Writes   only KEYS (see create_comment for why). The counts (up, down) are the item's own and
--          stay as they are.
-- Repeat   a second run finds no vote and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local n = redis.call('HDEL', KEYS[1], ARGV[1])
if #KEYS == 3 then n = n + redis.call('HDEL', KEYS[2], ARGV[2]) end
return n
