-- report_write: write a report in {reports}, after report_reserve counted it on the reporter's
-- slot (see store/reports.go).
-- KEYS[1]  hash {reports}:entries (id → JSON)   KEYS[2] hash {reports}:by ("<reporter>\0<target>"
--          → id of the open report)   KEYS[3] hash {reports}:counts (target → open reports)
-- KEYS[4]  zset {reports}:groups (group → time of its latest report)
-- KEYS[5…] the report's lists, open then any, of every report ("") and of each of its groups
-- ARGV[1]  the report's id   ARGV[2] the report as JSON   ARGV[3] the reporter's user key
-- ARGV[4]  the target's global id   ARGV[5] the report's time (Unix ms)   ARGV[6…] its groups
-- Reply    {status, id, JSON}: "new" when written now; "open" when the id already holds this
--          report (a repeat); "resolved" when it holds this report, resolved since; "other" when
--          the reporter holds another open report of the target (id and JSON are that one's);
--          "taken" (without id or JSON) when the id holds another report: the id counter lost its
--          last increments in a failover, and the caller takes the next id.
-- Repeat   a second run finds the report written by the first and replies "open".
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local id = ARGV[1]
local cur = redis.call('HGET', KEYS[1], id)
if cur then
  local r = cjson.decode(cur)
  if r.reporter ~= ARGV[3] or (r.comment or r.post) ~= ARGV[4] then return {'taken'} end
  if r.resolved then return {'resolved', id, cur} end
  return {'open', id, cur}
end
local by = ARGV[3] .. '\0' .. ARGV[4]
local other = redis.call('HGET', KEYS[2], by)
if other then
  local o = redis.call('HGET', KEYS[1], other)
  if o then return {'other', other, o} end
end
redis.call('HSET', KEYS[1], id, ARGV[2])
redis.call('HSET', KEYS[2], by, id)
redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
for i = 5, #KEYS - 1 do redis.call('ZADD', KEYS[i], ARGV[5], id) end
for i = 6, #ARGV do redis.call('ZADD', KEYS[4], ARGV[5], ARGV[i]) end
return {'new', id, ARGV[2]}
