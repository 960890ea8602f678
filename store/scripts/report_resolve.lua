-- report_resolve: mark a report resolved and take it out of the open lists.
-- KEYS[1]  hash {reports}:entries   KEYS[2] hash {reports}:by   KEYS[3] hash {reports}:counts
-- KEYS[4…] the report's open lists: of every report ("") and of each of its groups
-- ARGV[1]  the report's id   ARGV[2] the moderator's user key   ARGV[3] now (Unix ms)
-- ARGV[4]  the group the moderator's authority comes through ("" for none)
-- Reply    {1, JSON} when resolved now, {0, JSON} when it already was: the report as it is.
-- Errors   NOTFOUND when there is no such report.
-- Repeat   a second run finds it resolved and replies it unchanged (who resolved it first stays).
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local id = ARGV[1]
local cur = redis.call('HGET', KEYS[1], id)
if not cur then return redis.error_reply('NOTFOUND no such report') end
local r = cjson.decode(cur)
if r.resolved then return {0, cur} end
r.resolved = true
r.resolvedAt = ARGV[3]
r.resolvedBy = ARGV[2]
if ARGV[4] ~= '' then r.resolvedIn = ARGV[4] end
r.ver = tostring((tonumber(r.ver) or 1) + 1)
local enc = cjson.encode(r)
redis.call('HSET', KEYS[1], id, enc)
local target = r.comment or r.post
local by = r.reporter .. '\0' .. target
if redis.call('HGET', KEYS[2], by) == id then redis.call('HDEL', KEYS[2], by) end
if redis.call('HINCRBY', KEYS[3], target, -1) <= 0 then redis.call('HDEL', KEYS[3], target) end
for i = 4, #KEYS - 1 do redis.call('ZREM', KEYS[i], id) end
return {1, enc}
