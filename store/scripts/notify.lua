-- notify: put one notification into a user's inbox, unless it is there already, and keep the
-- inbox to its newest entries.
-- KEYS[1]  hash {n:<user>}:notes (notification id → record)   KEYS[2] zset {n:<user>}:inbox
--          (id → created ms)   KEYS[3] zset {n:<user>}:unread (id → created ms)
--          KEYS[4] set {n:<user>}:unannounced: ids added but not yet announced live
-- ARGV[1]  notification id (its cause: "c:17:4", "p:17", "f:bob")   ARGV[2] created (Unix ms)
-- ARGV[3]  the notification's record, packed (notifications.go pack)   ARGV[4] the most entries the inbox keeps
-- Reply    {added, unannounced...}: added is 1 when the notification was added and kept, 0 when
--          it was there already, or when it is older than every entry of a full inbox (it is
--          trimmed at once); then every id of the inbox still to announce, this one included when
--          it is new. The caller announces them and then takes them out of KEYS[4], so that an
--          announcement cut off by a crash is made by the next delivery to the same inbox.
-- The unread count is the size of KEYS[3]. Only this script and mark_read.lua change it, each in
-- the same step as the entries it counts, so it cannot drift from them: not under retries,
-- concurrent jobs, or a process that dies between two calls.
-- Trim    the oldest entries beyond ARGV[4] leave all three keys together.
-- Repeat   the id is derived from the cause, so a second run finds it and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local notes, inbox, unread, unannounced, id = KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1]
local function reply(added)
  local out = {added}
  for _, u in ipairs(redis.call('SMEMBERS', unannounced)) do out[#out + 1] = u end
  return out
end
if redis.call('HEXISTS', notes, id) == 1 then return reply(0) end
redis.call('HSET', notes, id, ARGV[3])
redis.call('ZADD', inbox, ARGV[2], id)
redis.call('ZADD', unread, ARGV[2], id)
redis.call('SADD', unannounced, id)
local excess = redis.call('ZCARD', inbox) - tonumber(ARGV[4])
if excess > 0 then
  for _, old in ipairs(redis.call('ZRANGE', inbox, 0, excess - 1)) do
    redis.call('ZREM', inbox, old)
    redis.call('ZREM', unread, old)
    redis.call('SREM', unannounced, old)
    redis.call('HDEL', notes, old)
  end
end
if redis.call('ZSCORE', inbox, id) then return reply(1) end
return reply(0)
