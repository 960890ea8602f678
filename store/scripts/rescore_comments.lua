-- rescore_comments: write a batch of comments of one thread into their parents' TOP, BEST and
-- CONTROVERSIAL reply orders from their votes (rebuild; see store/comment_orders.go): the backfill
-- of orders added after the comments were written, and a repair of any score a write left behind.
-- KEYS[1]  post hash {p:<id>}   KEYS[2..] five keys per comment of ARGV: its hash {p:<id>}:c:<n>
--          and its parent's reply orders :rt, :rs, :rb and :rc (for "0", the post's top-level
--          orders)
-- ARGV     the comments' numbers (the caller reads their parents beforehand; parents never change)
-- Reply    how many of the comments are in the tree (and were scored).
-- Writes   a comment in its parent's time order (that is, in the tree) gets its scores in the
--          other three orders; one out of it is taken out of them. Nothing on a deleted post,
--          whose thread is being dropped.
-- Repeat   the scores are absolute (see comment_scores): a second run changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include comment_scores
redis.call('INCR', KEYS[#KEYS])
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HGET', KEYS[1], 'deleted') == '1' then
  return 0
end
local n = 0
for i, num in ipairs(ARGV) do
  local k = 2 + 5 * (i - 1)
  local h, rt, rs, rb, rc = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4]
  if redis.call('ZSCORE', rt, num) then
    local net, best, con = commentScores(h)
    redis.call('ZADD', rs, net, num)
    redis.call('ZADD', rb, best, num)
    redis.call('ZADD', rc, con, num)
    n = n + 1
  else
    redis.call('ZREM', rs, num)
    redis.call('ZREM', rb, num)
    redis.call('ZREM', rc, num)
  end
end
return n
