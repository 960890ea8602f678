-- fold_inbox: write an inbox of layout 6 as layout 7 keeps it (the migration from layout 6; see
-- lib/inbox_unread.lua): its sorted set of unread ids is folded into its records — each unread
-- id's record written in lower case, the field '#u' counting them — and deleted; and every record
-- drops the creation time layout 6 wrote after its kind's code ("Rmiglcddn bob" → "R bob"), which
-- the id's score in the inbox holds.
-- KEYS[1]  hash {n:<user>}:notes (notification id → record, and '#u' → the unread count)
--          KEYS[2] zset {n:<user>}:unread (id → created ms), at most NotificationCap ids
-- Reply    how many records it marked unread.
-- An inbox that has '#u' and the set as well was written by a process of layout 6 after it was
-- folded (its unread ids in the set, its records in upper case): those are added to the count.
-- Records in layout 4's JSON (packed by the step before this one) are left as they are: they read
-- as read. Ids of the set no longer in the hash are dropped with it. The walk of the records is
-- bounded: an inbox keeps at most NotificationCap.
-- Writes   only KEYS (see create_comment for why).
-- Repeat   a second run finds no set and no time to drop, and changes nothing but the revision.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include inbox_unread
redis.call('INCR', KEYS[#KEYS])
local notes, legacy = KEYS[1], KEYS[2]
local n = 0
if redis.call('EXISTS', legacy) == 1 then
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
end
local all = redis.call('HGETALL', notes)
for i = 1, #all, 2 do
  local id, rec = all[i], all[i + 1]
  local second = string.byte(rec, 2)
  if id ~= '#u' and string.byte(rec, 1) ~= 123 and second and second ~= 32 then -- "{…": JSON
    local sp = string.find(rec, ' ', 2, true)
    redis.call('HSET', notes, id, string.sub(rec, 1, 1) .. (sp and string.sub(rec, sp) or ''))
  end
end
return n
