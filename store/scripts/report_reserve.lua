-- report_reserve: count a new report against its reporter's limit, on the reporter's slot, and
-- record it there before it is written in {reports} (see store/reports.go).
-- KEYS[1]  zset {u:<user>}:reports: the user's open report ids scored by when each stops
--          counting (ms)   KEYS[2] hash {u:<user>}:reports:targets: "t:<target>" → the report as
--          JSON, "i:<report id>" → its target   KEYS[3] zset {u:<user>}:reports:filed: the ids of
--          every report the user filed, scored by when each was made (ms)
-- ARGV[1]  now (Unix ms)   ARGV[2] when the new report stops counting (Unix ms)
-- ARGV[3]  the most open reports a user may hold   ARGV[4] the target's global id
-- ARGV[5]  the new report as JSON, with its id   ARGV[6] the new report's id
-- ARGV[7]  an id the caller found taken by another report ("" for none): the entry holding it is
--          given the new id instead   ARGV[8] when the new report was made (Unix ms)
-- Reply    the JSON of the user's report of the target: one recorded before (a repeat, or a
--          report still open), else the new one.
-- Errors   LIMIT when the user holds the most open reports. Members scored at or before now no
--          longer count (per-member expiry, exact at the time of the call); they are dropped.
-- Repeat   a second run finds the entry of the first and replies it.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local zs, h = KEYS[1], KEYS[2]
local function drop(id)
  local target = redis.call('HGET', h, 'i:' .. id)
  redis.call('HDEL', h, 'i:' .. id)
  if target then
    local cur = redis.call('HGET', h, 't:' .. target)
    if cur and cjson.decode(cur).id == id then redis.call('HDEL', h, 't:' .. target) end
  end
end
local over = redis.call('ZRANGEBYSCORE', zs, '-inf', ARGV[1])
for _, id in ipairs(over) do drop(id) end
if #over > 0 then redis.call('ZREMRANGEBYSCORE', zs, '-inf', ARGV[1]) end
local tf = 't:' .. ARGV[4]
local cur = redis.call('HGET', h, tf)
if cur then
  local id = cjson.decode(cur).id
  if id ~= ARGV[7] then return cur end
  redis.call('ZREM', zs, id)
  redis.call('ZREM', KEYS[3], id)
  drop(id)
end
if redis.call('ZCOUNT', zs, '(' .. ARGV[1], '+inf') >= tonumber(ARGV[3]) then
  return redis.error_reply('LIMIT you hold ' .. ARGV[3] ..
    ' open reports, the most there may be; more once the moderators resolve one')
end
redis.call('ZADD', zs, ARGV[2], ARGV[6])
redis.call('ZADD', KEYS[3], ARGV[8], ARGV[6])
redis.call('HSET', h, tf, ARGV[5], 'i:' .. ARGV[6], ARGV[4])
return ARGV[5]
