-- reply_orders: which parents keep the TOP, BEST and CONTROVERSIAL orders of their replies
-- (:rs, :rb, :rc beside the time order :rt; see store/keys.go replyOrders). A parent keeps only its
-- time order until its time order reaches replyOrdersAt replies; the script that brings it there
-- builds the other three from the replies' hashes (comment_scores) and marks the parent: field o
-- = "1" of the parent comment's hash, or of the post's hash for the top-level comments. A marked
-- parent's orders are kept by every script from then on and never dropped while it lives; an
-- unmarked one's replies are ordered by the reader (store/comment_orders.go), from their votes.
-- Scripts that include it include comment_scores first. replyOrdersAt is store.replyOrdersAt.
local replyOrdersAt = 32

-- ordersKept reports whether the parent whose mark is in hash markKey keeps its orders.
local function ordersKept(markKey)
  return redis.call('HGET', markKey, 'o') == '1'
end

-- replyKeyNum is comment number num (stored form, "000000000004", or short) as the comment's keys
-- name it: "4" (store/keys.go, layout 6); "0" stays "0".
local function replyKeyNum(num)
  return string.format('%d', tonumber(num))
end

-- replyPrefix returns the prefix of the keys of the comments of the thread of the time order rt,
-- the order of parent number parent (either form): a reply m's hash is replyPrefix(rt, parent) ..
-- replyKeyNum(m).
local function replyPrefix(rt, parent)
  return string.sub(rt, 1, #rt - #replyKeyNum(parent) - 3)
end

-- needsBuild reports whether adding one reply to the unmarked parent of time order rt brings it
-- to replyOrdersAt replies, and whether the hashes of its replies are missing from have (a set of
-- keys the caller declared): then the script replies "replies" for the caller to run it again with
-- them, before its first write.
local function needsBuild(rt, parent, have)
  if redis.call('ZCARD', rt) + 1 < replyOrdersAt then return false, false end
  local prefix = replyPrefix(rt, parent)
  for _, m in ipairs(redis.call('ZRANGE', rt, 0, -1)) do
    if not have[prefix .. replyKeyNum(m)] then return true, true end
  end
  return true, false
end

-- buildOrders scores every reply in the time order rt into rs, rb and rc and marks the parent.
local function buildOrders(rt, rs, rb, rc, parent, markKey)
  local prefix = replyPrefix(rt, parent)
  for _, m in ipairs(redis.call('ZRANGE', rt, 0, -1)) do
    local net, best, con = commentScores(prefix .. replyKeyNum(m))
    redis.call('ZADD', rs, net, m)
    redis.call('ZADD', rb, best, m)
    redis.call('ZADD', rc, con, m)
  end
  redis.call('HSET', markKey, 'o', '1')
end
