-- report_release: take a report out of its reporter's open reports (resolved, or never to be
-- written because the reporter already holds another report of the target).
-- KEYS[1]  zset {u:<user>}:reports   KEYS[2] hash {u:<user>}:reports:targets
-- ARGV[1]  the report's id   ARGV[2] its target's global id
-- Reply    1.
-- Repeat   ids are never reused, so a second or late run removes nothing else.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], 'i:' .. ARGV[1])
local tf = 't:' .. ARGV[2]
local cur = redis.call('HGET', KEYS[2], tf)
if cur and cjson.decode(cur).id == ARGV[1] then redis.call('HDEL', KEYS[2], tf) end
return 1
