-- follower: mirror one relation on the followee's side, guarded by the version the follower's side
-- handed out (follow.lua), and decide how the followee's posts reach the follower's feed.
-- KEYS[1]  zset {u:<b>}:followers (follower → follow time ms)   KEYS[2] hash {u:<b>}:followers:ver
-- KEYS[3]  set {u:<b>}:push (followers whose feeds receive b's posts when they are published)
-- ARGV[1]  follower user key   ARGV[2] version   ARGV[3] present 1 | 0   ARGV[4] follow time ms
-- ARGV[5]  the most members the push set may hold
-- Reply    "push" | "pull" | "none": how the follower gets b's posts, as of the newest version
--          applied. A new follower joins the push set while it has room; otherwise its feed
--          pulls b's posts at read time. An existing follower keeps its mode.
-- Repeat   a run whose version is not newer than the stored one changes nothing and replies with
--          the current mode. Versions stay stored after an unfollow, so a late "add" cannot revive
--          a relation that was removed after it.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local a = ARGV[1]
local function mode()
  if not redis.call('ZSCORE', KEYS[1], a) then return 'none' end
  if redis.call('SISMEMBER', KEYS[3], a) == 1 then return 'push' end
  return 'pull'
end
local cur = tonumber(redis.call('HGET', KEYS[2], a) or '-1')
if cur >= tonumber(ARGV[2]) then return mode() end
redis.call('HSET', KEYS[2], a, ARGV[2])
if ARGV[3] == '1' then
  local had = redis.call('ZSCORE', KEYS[1], a)
  redis.call('ZADD', KEYS[1], ARGV[4], a)
  if not had and redis.call('SCARD', KEYS[3]) < tonumber(ARGV[5]) then
    redis.call('SADD', KEYS[3], a)
  end
else
  redis.call('ZREM', KEYS[1], a)
  redis.call('SREM', KEYS[3], a)
end
return mode()
