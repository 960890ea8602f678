-- mark_read: mark notifications of one user read, some or all, and reply with the unread count.
-- KEYS[1]  hash {n:<user>}:notes (notification id → record, and '#u' → the unread count)
--          KEYS[2] zset {n:<user>}:unread: an inbox of layout 6's unread ids (see
--          lib/inbox_unread.lua)
-- ARGV[1]  "all" | "ids"   ARGV[2..] with "ids", the notification ids (ids not unread, or not in
--          the inbox at all, are ignored)
-- Reply    the number of unread notifications left, read in the same step as the change, so it is
--          exact (see notify.lua). With "all" it walks the whole hash: at most NotificationCap
--          records and the count.
-- Repeat   a second run finds them read already and replies with the same count.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include inbox_unread
redis.call('INCR', KEYS[#KEYS])
local notes, legacy = KEYS[1], KEYS[2]
if legacy_inbox(notes, legacy) then
  if ARGV[1] == 'all' then
    redis.call('DEL', legacy)
  else
    for i = 2, #ARGV do
      redis.call('ZREM', legacy, ARGV[i])
    end
  end
  return redis.call('ZCARD', legacy)
end
local left = tonumber(redis.call('HGET', notes, '#u') or 0)
if left == 0 then return 0 end -- none unread: nothing to walk
local read = 0
local function mark(id, rec)
  if is_unread(rec) then
    redis.call('HSET', notes, id, as_read(rec))
    read = read + 1
  end
end
if ARGV[1] == 'all' then
  local all = redis.call('HGETALL', notes)
  for i = 1, #all, 2 do
    if all[i] ~= '#u' then mark(all[i], all[i + 1]) end
  end
else
  for i = 2, #ARGV do
    if ARGV[i] ~= '#u' then mark(ARGV[i], redis.call('HGET', notes, ARGV[i])) end
  end
end
if read == 0 then return left end
return redis.call('HINCRBY', notes, '#u', -read)
