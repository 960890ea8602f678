-- notify: put one notification into a user's inbox, unless it is there already, and keep the
-- inbox to its newest entries.
-- KEYS[1]  hash {n:<user>}:notes (notification id → record, and '#u' → the unread count)
--          KEYS[2] zset {n:<user>}:inbox (id → created ms)   KEYS[3] zset {n:<user>}:unread: an
--          inbox of layout 6's unread ids (see lib/inbox_unread.lua)
--          KEYS[4] set {n:<user>}:unannounced: ids added but not yet announced live
-- ARGV[1]  notification id (its cause: "c:17:4", "p:17", "f:bob")   ARGV[2] created (Unix ms)
-- ARGV[3]  the notification's record, packed (notifications.go pack), in upper case: it is
--          stored unread   ARGV[4] the most entries the inbox keeps
-- Reply    {added, unannounced...}: added is 1 when the notification was added and kept, 0 when
--          it was there already, or when it is older than every entry of a full inbox (it is
--          trimmed at once); then every id of the inbox still to announce, this one included when
--          it is new. The caller announces them with notify_announce.lua, which takes each out of
--          KEYS[4] as it announces it, so that an announcement cut off by a crash is made by the
--          next delivery to the same inbox, and none twice.
-- The unread count is the field '#u' of KEYS[1]. Only this script and mark_read.lua change it or
-- the records' read state, each in the same step as the records it counts, so it cannot drift from
-- them: not under retries, concurrent jobs, or a process that dies between two calls. An inbox
-- still of layout 6 is written as layout 6 did (its unread ids in KEYS[3], their count its size),
-- so that its count stays exact until the migration folds it (fold_inbox.lua).
-- Trim     the oldest entries beyond ARGV[4] leave every key together, an unread one the count too.
-- Repeat   the id is derived from the cause, so a second run finds it and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include inbox_unread
redis.call('INCR', KEYS[#KEYS])
local notes, inbox, legacy, unannounced, id = KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1]
local function reply(added)
  local out = {added}
  for _, u in ipairs(redis.call('SMEMBERS', unannounced)) do out[#out + 1] = u end
  return out
end
if redis.call('HEXISTS', notes, id) == 1 then return reply(0) end
local old = legacy_inbox(notes, legacy)
if old then
  redis.call('HSET', notes, id, ARGV[3])
  redis.call('ZADD', legacy, ARGV[2], id)
else
  local rec = as_unread(ARGV[3])
  redis.call('HSET', notes, id, rec)
  if is_unread(rec) then redis.call('HINCRBY', notes, '#u', 1) end
end
redis.call('ZADD', inbox, ARGV[2], id)
redis.call('SADD', unannounced, id)
local excess = redis.call('ZCARD', inbox) - tonumber(ARGV[4])
if excess > 0 then
  for _, gone in ipairs(redis.call('ZRANGE', inbox, 0, excess - 1)) do
    if old then
      redis.call('ZREM', legacy, gone)
    elseif is_unread(redis.call('HGET', notes, gone)) then
      redis.call('HINCRBY', notes, '#u', -1)
    end
    redis.call('ZREM', inbox, gone)
    redis.call('SREM', unannounced, gone)
    redis.call('HDEL', notes, gone)
  end
end
if redis.call('ZSCORE', inbox, id) then return reply(1) end
return reply(0)
