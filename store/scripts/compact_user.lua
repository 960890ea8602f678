-- compact_user: write a user's password hash in its compact encoding and the user's hash anew,
-- so that it shrinks back to a listpack (layout 2 → 3; see users.go encodeHash).
-- KEYS[1]  user hash {u:<name>}
-- ARGV[1]  the password hash as read (PHC string)   ARGV[2] the same hash, compact
-- Reply    1 when it rewrote the hash, 0 when the password hash is no longer ARGV[1] (changed
--          since it was read, or compacted already).
-- Writes   only KEYS (see create_comment for why).
-- Repeat   the second run finds the compact hash and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
if redis.call('HGET', KEYS[1], 'pass') ~= ARGV[1] then return 0 end
local all = redis.call('HGETALL', KEYS[1])
for j = 1, #all, 2 do
  if all[j] == 'pass' then all[j + 1] = ARGV[2] end
end
-- Written anew: a hash once a hashtable stays one, whatever its values become.
local ttl = redis.call('PTTL', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(all))
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
