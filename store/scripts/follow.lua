-- follow: set or clear one relation on the follower's side, which is the authoritative record of
-- the follow graph, and hand back a version for the followee's side (followers, see follower.lua).
-- KEYS[1]  zset {u:<a>}:following (followee → follow time ms)   KEYS[2] string {u:<a>}:following:seq
-- KEYS[3]  zset {u:<a>}:pull   KEYS[4] zset {u:<a>}:feed   KEYS[5] hash {u:<a>}:feed:by
-- ARGV[1]  followee user key   ARGV[2] "add" | "rem" | "get" (change nothing: a repair reads the
--          relation)   ARGV[3] now (Unix ms)
-- Reply    {present 0|1, follow time ms (0 when absent), version}. The version is the value of
--          the sequence when the state was read; the sequence rises with every change to a's
--          following set, so a larger version always describes a later state of the relation.
-- Removing also drops the followee from the pull set and the followee's posts from the feed, so
-- nothing of theirs is left to read once this script has run.
-- Repeat   a second run changes nothing and replies with the current state and sequence.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local b = ARGV[1]
local t = redis.call('ZSCORE', KEYS[1], b)
if ARGV[2] == 'add' then
  if not t then
    t = ARGV[3]
    redis.call('ZADD', KEYS[1], t, b)
    redis.call('INCR', KEYS[2])
  end
elseif ARGV[2] == 'rem' and t then
  redis.call('ZREM', KEYS[1], b)
  redis.call('ZREM', KEYS[3], b)
  local by = redis.call('HGETALL', KEYS[5])
  for i = 1, #by, 2 do
    if by[i + 1] == b then
      redis.call('ZREM', KEYS[4], by[i])
      redis.call('HDEL', KEYS[5], by[i])
    end
  end
  redis.call('INCR', KEYS[2])
  t = false
end
local ver = tonumber(redis.call('GET', KEYS[2]) or '0')
if t then return {1, tostring(t), ver} end
return {0, '0', ver}
