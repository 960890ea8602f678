-- follow_mode: record on the follower's side whether a followee's posts are pulled at read time,
-- as follower.lua decided, guarded by the same version.
-- KEYS[1]  zset {u:<a>}:following   KEYS[2] zset {u:<a>}:pull   KEYS[3] hash {u:<a>}:pull:ver
-- ARGV[1]  followee user key   ARGV[2] version   ARGV[3] "push" | "pull" | "none"
-- ARGV[4]  follow time ms
-- Reply    1 when applied, 0 when a version as new was applied before.
-- Repeat   a second run sees its own version and does nothing. A followee is pulled only while
--          it is still followed, so a late run cannot bring back an unfollowed user.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local b = ARGV[1]
local cur = tonumber(redis.call('HGET', KEYS[3], b) or '-1')
if cur >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[3], b, ARGV[2])
if ARGV[3] == 'pull' and redis.call('ZSCORE', KEYS[1], b) then
  redis.call('ZADD', KEYS[2], ARGV[4], b)
else
  redis.call('ZREM', KEYS[2], b)
end
return 1
