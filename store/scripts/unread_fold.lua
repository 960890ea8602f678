-- unread_fold: fold an inbox of layout 5's sorted set of unread ids into its records and count
-- (the migration from layout 5; see lib/inbox_unread.lua): each unread id's record is written in
-- lower case, the field '#u' counts them, and the set is deleted.
-- KEYS[1]  hash {n:<user>}:notes (notification id → record, and '#u' → the unread count)
--          KEYS[2] zset {n:<user>}:unread (id → created ms), at most NotificationCap ids
-- Reply    how many records it marked unread.
-- An inbox that has '#u' and the set as well was written by a process of layout 5 after it was
-- folded (its unread ids in the set, its records in upper case): those are added to the count.
-- Records in layout 4's JSON (packed by the step before this one) cannot be marked: they read as
-- read. Ids of the set no longer in the hash are dropped with it.
-- Writes   only KEYS (see create_comment for why).
-- Repeat   a second run finds no set and changes nothing but the revision.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include inbox_unread
redis.call('INCR', KEYS[#KEYS])
local notes, legacy = KEYS[1], KEYS[2]
if redis.call('EXISTS', legacy) == 0 then return 0 end
local n = 0
for _, id in ipairs(redis.call('ZRANGE', legacy, 0, -1)) do
  local rec = redis.call('HGET', notes, id)
  local b = rec and string.byte(rec, 1)
  if b and b >= 65 and b <= 90 then
    redis.call('HSET', notes, id, as_unread(rec))
    n = n + 1
  end
end
if redis.call('EXISTS', notes) == 1 then redis.call('HINCRBY', notes, '#u', n) end
redis.call('DEL', legacy)
return n
