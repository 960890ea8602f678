-- index: put a member into (or take it out of) sorted sets with absolute scores, guarded by the
-- version of the aggregate it comes from, so a late or repeated write never moves it backwards.
-- KEYS[1]  version hash (member → last applied version)   KEYS[2..] sorted sets, one hash slot
-- ARGV[1]  member   ARGV[2] version   ARGV[3] "add" | "rem"   ARGV[4..] one score per sorted set
-- Reply    1 when applied, 0 when the stored version was already as new.
-- Repeat   a second run sees its own version and does nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '-1')
if cur >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
for i = 2, #KEYS - 1 do
  if ARGV[3] == 'add' then
    redis.call('ZADD', KEYS[i], ARGV[i + 2], ARGV[1])
  else
    redis.call('ZREM', KEYS[i], ARGV[1])
  end
end
return 1
