-- rescore_comments: write a batch of comments of one thread into their parents' TOP, BEST and
-- CONTROVERSIAL reply orders from their votes (rebuild; see store/comment_orders.go): the backfill
-- of orders added after the comments were written, and a repair of any score a write left behind.
-- KEYS[1]  post hash {p:<id>}   KEYS[2..] six keys per comment of ARGV: its hash {p:<id>}:c:<n>,
--          its parent's hash (the post's for "0"), which keeps the parent's mark (see
--          reply_orders), and its parent's reply orders :rt, :rs, :rb and :rc (for "0", the post's
--          top-level orders)
-- ARGV     the comments' numbers (the caller reads their parents beforehand; parents never change)
-- Reply    how many of the comments are in the tree (and were scored).
-- Writes   a comment in its parent's time order (that is, in the tree) gets its scores in the
--          other three orders when the parent keeps them: it is marked, or has replyOrdersAt
--          replies or more, which marks it (rebuild marks what a write left unmarked); out of them
--          otherwise (the orders of a parent below replyOrdersAt that layout 5 kept). One out of
--          the tree is taken out of them. Nothing on a deleted post, whose thread is being dropped.
-- Repeat   the scores are absolute (see comment_scores): a second run changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include comment_scores
--!include reply_orders
redis.call('INCR', KEYS[#KEYS])
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HGET', KEYS[1], 'deleted') == '1' then
  return 0
end
local n = 0
for i, num in ipairs(ARGV) do
  local k = 2 + 6 * (i - 1)
  local h, mark, rt, rs, rb, rc = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5]
  local keep = ordersKept(mark)
  if not keep and redis.call('ZCARD', rt) >= replyOrdersAt then
    redis.call('HSET', mark, 'o', '1')
    keep = true
  end
  if redis.call('ZSCORE', rt, num) and keep then
    local net, best, con = commentScores(h)
    redis.call('ZADD', rs, net, num)
    redis.call('ZADD', rb, best, num)
    redis.call('ZADD', rc, con, num)
  else
    redis.call('ZREM', rs, num)
    redis.call('ZREM', rb, num)
    redis.call('ZREM', rc, num)
  end
  if redis.call('ZSCORE', rt, num) then n = n + 1 end
end
return n
