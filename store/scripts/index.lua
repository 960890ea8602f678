-- index: put a member into (or take it out of) sorted sets with absolute scores, guarded by the
-- version of the aggregate it comes from, so a late or repeated write never moves it backwards.
-- KEYS[1]  version hash (member → last applied version)   KEYS[2..] sorted sets, one hash slot
--          for "add+info", KEYS[#KEYS-1] is a group's info hash, after the sorted sets
-- ARGV[1]  member   ARGV[2] version   ARGV[3] "add" | "rem" | "add+info"   ARGV[4..] one score
--          per sorted set, "" to take the member out of that set (a post moving between the part
--          of a list that is not NSFW and the NSFW part: one call, one guard, both parts); for
--          "add+info" then the post's publish time (Unix ms)
-- "add+info" adds a post to a group's rankings and records the group's created time in its info
--          hash: the post's time, when the info holds none or a later one and the group has no
--          creator (a group made by posts is as old as the oldest post it has held). This runs
--          whatever the version, so that a rebuild or repair records it too.
-- Reply    1 when applied, 0 when the stored version was already as new.
-- Repeat   a second run sees its own version and does nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local last = #KEYS - 1
if ARGV[3] == 'add+info' then
  last = #KEYS - 2
  local info, at = KEYS[#KEYS - 1], ARGV[#ARGV]
  if redis.call('HEXISTS', info, 'creator') == 0 then
    local cur = redis.call('HGET', info, 'created')
    if not cur or tonumber(at) < tonumber(cur) then redis.call('HSET', info, 'created', at) end
  end
end
local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '-1')
if cur >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
for i = 2, last do
  if ARGV[3] == 'rem' or ARGV[i + 2] == '' then
    redis.call('ZREM', KEYS[i], ARGV[1])
  else
    redis.call('ZADD', KEYS[i], ARGV[i + 2], ARGV[1])
  end
end
return 1
