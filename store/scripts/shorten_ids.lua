-- shorten_ids: write the numbers of a thread's ids set as in ids ("4", not "000000000004"), so
-- that Redis keeps the set as an intset (layout 2 → 3; see keys.go threadIDs). The set is written
-- anew: a set once a hashtable stays one, whatever its members become. Its size is the thread's
-- comment count: ~1 ms for 5,000 comments, once per thread.
-- KEYS[1]  the thread's ids {p:<id>}:c:ids
-- Reply    how many numbers were shortened.
-- Writes   only KEYS (see create_comment for why).
-- Repeat   a set of short numbers has nothing to shorten: a second run changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local members = redis.call('SMEMBERS', KEYS[1])
local short, n = {}, 0
for i, m in ipairs(members) do
  local s = string.format('%d', tonumber(m))
  if s ~= m then n = n + 1 end
  short[i] = s
end
if n == 0 then return 0 end
redis.call('DEL', KEYS[1])
for i = 1, #short, 1000 do
  redis.call('SADD', KEYS[1], unpack(short, i, math.min(i + 999, #short)))
end
return n
