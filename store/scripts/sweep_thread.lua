-- sweep_thread: drop the comment keys of a deleted post's thread, a bounded number per run, so
-- that deleting a post with a huge thread never blocks Redis for long.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] thread ids set {p:<id>}:c:ids   KEYS[3] the thread's
--          bodies {p:<id>}:c:body   KEYS[4..] seven keys per
--          comment of ARGV: its hash {p:<id>}:c:<n>, its votes bucket {p:<id>}:c:v<bucket> (see
--          lib/comment_votes), its reply orders :rt, :rs, :rb and :rc, and its votes hash of layout
--          5 :votes
-- ARGV     the numbers of the comments to drop (the caller picks them with SRANDMEMBER)
-- Reply    how many comments are left to drop; -1 when the post is live (nothing is dropped).
-- Writes   only KEYS (see create_comment for why).
-- Repeat   a number already dropped is skipped; a run with none left does nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('HGET', KEYS[1], 'deleted') ~= '1' then
  return -1
end
for i, num in ipairs(ARGV) do
  if redis.call('SREM', KEYS[2], string.format('%d', tonumber(num)), num) > 0 then -- either form (keys.go threadIDs)
    local k = 4 + 7 * (i - 1)
    -- The bucket goes whole: it holds only votes on comments of this deleted post, which take
    -- no more votes.
    redis.call('UNLINK', KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5], KEYS[k + 6])
    redis.call('HDEL', KEYS[3], (string.gsub(num, '^0+', ''))) -- its body's field: the short number (lib/comment_meta cbody)
  end
end
local left = redis.call('SCARD', KEYS[2])
if left == 0 then redis.call('UNLINK', KEYS[3]) end
return left
