-- follow: set or clear one relation on its authoritative side — a follow on the follower's side,
-- or a membership on the member's side (store/follows.go, store/groups.go) — and hand back a
-- version for the other side (see follower.lua).
-- KEYS[1]  zset of the relations (a follow: {u:<a>}:following, followee → follow time ms; a
--          membership: {u:<a>}:groups, group name → join time ms)
-- KEYS[2]  string, the sequence of KEYS[1] ({u:<a>}:following:seq, {u:<a>}:groups:seq)
-- KEYS[3]  zset {u:<a>}:pull   KEYS[4] zset {u:<a>}:feed   KEYS[5] hash {u:<a>}:feed:by — a
--          follow only: a membership passes KEYS[1], KEYS[2] and the revision counter alone
-- ARGV[1]  the other side (followee user key, group name)   ARGV[2] "add" | "rem" | "get"
--          (change nothing: a repair reads the relation) | "drop" (rem, but only a relation made
--          before ARGV[3]: a membership of a group that died since, store/groups.go buryGroups)
-- ARGV[3]  now (Unix ms); for "drop", the time before which a relation goes
-- ARGV[4]  the most relations KEYS[1] may hold ("0": no bound)
-- ARGV[5]  optional (a rebuild's): the version the other side's guard holds for the relation,
--          read just before; the sequence is raised past it, so that the state handed back wins
--          over a copy that writes this slot no longer holds left behind (a restore or failover
--          that kept the other side's later writes and lost this side's)
-- Reply    {present 0|1, relation time ms (0 when absent), version}. The version is the value of
--          the sequence when the state was read; the sequence rises with every change to KEYS[1],
--          so a larger version always describes a later state of the relation.
-- Errors   LIMIT when adding a relation to a full KEYS[1].
-- Removing a follow also drops the followee from the pull set and the followee's posts from the
-- feed, so nothing of theirs is left to read once this script has run.
-- Repeat   a second run changes nothing and replies with the current state and sequence.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local b = ARGV[1]
local feeds = #KEYS == 6
local t = redis.call('ZSCORE', KEYS[1], b)
if ARGV[2] == 'add' then
  if not t then
    local max = tonumber(ARGV[4] or '0')
    if max > 0 and redis.call('ZCARD', KEYS[1]) >= max then
      return redis.error_reply('LIMIT at most ' .. ARGV[4] .. ' allowed')
    end
    t = ARGV[3]
    redis.call('ZADD', KEYS[1], t, b)
    redis.call('INCR', KEYS[2])
  end
elseif t and (ARGV[2] == 'rem' or (ARGV[2] == 'drop' and tonumber(t) < tonumber(ARGV[3]))) then
  redis.call('ZREM', KEYS[1], b)
  if feeds then
    redis.call('ZREM', KEYS[3], b)
    local by = redis.call('HGETALL', KEYS[5])
    for i = 1, #by, 2 do
      if by[i + 1] == b then
        redis.call('ZREM', KEYS[4], by[i])
        redis.call('HDEL', KEYS[5], by[i])
      end
    end
  end
  redis.call('INCR', KEYS[2])
  t = false
end
local ver = tonumber(redis.call('GET', KEYS[2]) or '0')
local floor = tonumber(ARGV[5] or '')
if floor and ver <= floor then
  ver = floor + 1
  redis.call('SET', KEYS[2], ver)
end
if t then return {1, tostring(t), ver} end
return {0, '0', ver}
