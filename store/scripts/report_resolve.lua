-- report_resolve: mark a report resolved and take it out of the open lists, and record the action
-- in the moderation outbox of {reports}, from which the caller writes it into the moderation log.
-- KEYS[1]  hash {reports}:entries   KEYS[2] hash {reports}:by   KEYS[3] hash {reports}:counts
-- KEYS[4]  the moderation outbox {reports}:modlog (hash action key → action JSON)
-- KEYS[5…] the report's open lists: of every report ("") and of each of its groups
-- ARGV[1]  the report's id   ARGV[2] the moderator's user key   ARGV[3] now (Unix ms)
-- ARGV[4]  the group the moderator's authority comes through ("" for none), logged with it
-- ARGV[5]  how it was resolved: "actioned" or "dismissed" (absent: neither said)
-- Reply    {changed (0|1), outbox (HGETALL), JSON}: 1 when resolved now, 0 when it already was;
--          the report as it is.
-- Errors   NOTFOUND when there is no such report.
-- Writes   with the resolve, one outbox entry whose key is "rr:<id>:<the report's ver after it>".
-- Repeat   a second run finds it resolved and replies it unchanged (who resolved it first stays);
--          it still replies with the outbox, so that its caller logs what an earlier run left
--          unlogged.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local id, outbox = ARGV[1], KEYS[4]
local cur = redis.call('HGET', KEYS[1], id)
if not cur then return redis.error_reply('NOTFOUND no such report') end
local r = cjson.decode(cur)
if r.resolved then return {0, redis.call('HGETALL', outbox), cur} end
r.resolved = true
r.resolvedAt = ARGV[3]
r.resolvedBy = ARGV[2]
if ARGV[5] and ARGV[5] ~= '' then r.resolution = ARGV[5] end
r.ver = tostring((tonumber(r.ver) or 1) + 1)
local enc = cjson.encode(r)
redis.call('HSET', KEYS[1], id, enc)
local target = r.comment or r.post
local by = r.reporter .. '\0' .. target
if redis.call('HGET', KEYS[2], by) == id then redis.call('HDEL', KEYS[2], by) end
if redis.call('HINCRBY', KEYS[3], target, -1) <= 0 then redis.call('HDEL', KEYS[3], target) end
for i = 5, #KEYS - 1 do redis.call('ZREM', KEYS[i], id) end
local entry = {a = 'RESOLVE_REPORT', m = ARGV[2], t = 'report:' .. id, at = tonumber(ARGV[3])}
if ARGV[4] ~= '' then entry.g = ARGV[4] end
redis.call('HSET', outbox, 'rr:' .. id .. ':' .. r.ver, cjson.encode(entry))
return {1, redis.call('HGETALL', outbox), enc}
