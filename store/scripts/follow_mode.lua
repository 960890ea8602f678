-- follow_mode: record on the follower's side whether a followee's posts are pulled at read time,
-- as follower.lua decided, guarded by the same version, within the bound of the pull set.
-- KEYS[1]  zset {u:<a>}:following   KEYS[2] zset {u:<a>}:pull   KEYS[3] hash {u:<a>}:pull:ver
-- ARGV[1]  followee user key   ARGV[2] version   ARGV[3] "push" | "pull" | "none" (follower.lua's
--          reply: the followee's side as it is now)   ARGV[4] follow time ms
-- ARGV[5]  the most followees KEYS[2] may hold ("0" or absent: no bound)
-- Reply    how a's feed gets b's posts: "pull" when b is in the pull set, "force" when a follows b,
--          b's side does not push to a and the pull set is full (the caller then has b push to a
--          beyond its fan-out limit: follower.lua "force"), else ARGV[3]. A pull set holding more
--          than ARGV[5] (from before the bound) gives up b when a newer version comes ("force"),
--          so a rebuild brings it within the bound.
-- Repeat   a run whose version is not newer than the stored one changes nothing and replies as
--          above, so a repeat after a cut-off run still asks for the push it needs. A followee is
--          pulled only while it is still followed, so a late run cannot bring back an unfollowed
--          user.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local b = ARGV[1]
local followed = redis.call('ZSCORE', KEYS[1], b)
local function reply()
  if redis.call('ZSCORE', KEYS[2], b) then return 'pull' end
  if followed and ARGV[3] == 'pull' then return 'force' end
  return ARGV[3]
end
local cur = tonumber(redis.call('HGET', KEYS[3], b) or '-1')
if cur >= tonumber(ARGV[2]) then return reply() end
redis.call('HSET', KEYS[3], b, ARGV[2])
local max = tonumber(ARGV[5] or '0') or 0
if ARGV[3] == 'pull' and followed then
  local n = redis.call('ZCARD', KEYS[2])
  local has = redis.call('ZSCORE', KEYS[2], b)
  if max <= 0 or (has and n <= max) or (not has and n < max) then
    redis.call('ZADD', KEYS[2], ARGV[4], b)
  else
    redis.call('ZREM', KEYS[2], b)
  end
else
  redis.call('ZREM', KEYS[2], b)
end
return reply()
