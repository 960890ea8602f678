-- feed_add: put posts of one author into a reader's home feed, if the reader follows the author,
-- and trim the feed to its newest entries.
-- KEYS[1]  zset {u:<a>}:following   KEYS[2] zset {u:<a>}:feed (post id → publish time ms)
-- KEYS[3]  hash {u:<a>}:feed:by (post id → author user key)
-- ARGV[1]  author user key   ARGV[2] the most entries the feed keeps
-- ARGV[3..] pairs: post id, publish time ms
-- Reply    how many entries were new (0 when the reader does not follow the author).
-- The follow check runs here, on the reader's slot, so a push that arrives after an unfollow
-- (which removes the author's entries in the same slot) adds nothing.
-- Repeat   adding a member with the same score changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local added = 0
for i = 3, #ARGV - 1, 2 do
  added = added + redis.call('ZADD', KEYS[2], ARGV[i + 1], ARGV[i])
  redis.call('HSET', KEYS[3], ARGV[i], ARGV[1])
end
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[2])
if excess > 0 then
  local old = redis.call('ZRANGE', KEYS[2], 0, excess - 1)
  for _, m in ipairs(old) do
    redis.call('ZREM', KEYS[2], m)
    redis.call('HDEL', KEYS[3], m)
  end
end
return added
