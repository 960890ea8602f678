-- register: add names to (or remove them from) a name registry, a sorted set with every score 0
-- that autocomplete reads by prefix (ZRANGE BYLEX): the users {users} or the groups {groups}.
-- KEYS[1]  the registry   KEYS[#KEYS] its revision counter
-- ARGV[1]  "add" | "rem"   ARGV[2..] names
-- Reply    the names added or removed (those that were not, or were, there).
-- Repeat   adding a name already there, or removing one already gone, changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local changed = {}
for i = 2, #ARGV do
  local n
  if ARGV[1] == 'add' then
    n = redis.call('ZADD', KEYS[1], 0, ARGV[i])
  else
    n = redis.call('ZREM', KEYS[1], ARGV[i])
  end
  if n == 1 then changed[#changed + 1] = ARGV[i] end
end
return changed
