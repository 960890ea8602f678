-- move_bodies: move the bodies of some comments of a thread out of their hashes into the thread's
-- bodies, so that the hashes keep only short values (layout 2 → 3; see keys.go commentBodies).
-- KEYS[1]  the thread's bodies {p:<id>}:c:body   KEYS[2..] the comments' hashes {p:<id>}:c:<n>
-- ARGV     the comments' numbers (12 digits), in the order of KEYS[2..]
-- Reply    how many bodies moved.
-- Writes   only KEYS (see create_comment for why).
-- Repeat   a body already moved is not in its hash any more: a second run moves nothing. A body
--          in the hash is the newer one (only a binary of layout 2 writes it there, and it writes
--          no entry in the bodies), so it replaces the entry.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local moved = 0
for i, num in ipairs(ARGV) do
  local h = KEYS[i + 1]
  local body = redis.call('HGET', h, 'body')
  if body then
    redis.call('HSET', KEYS[1], num, body)
    -- The hash is written anew without its body: a hash once a hashtable stays one, whatever its
    -- values become, so HDEL alone would save nothing.
    local all, rest = redis.call('HGETALL', h), {}
    for j = 1, #all, 2 do
      if all[j] ~= 'body' then rest[#rest + 1] = all[j]; rest[#rest + 1] = all[j + 1] end
    end
    local ttl = redis.call('PTTL', h)
    redis.call('DEL', h)
    redis.call('HSET', h, unpack(rest))
    if ttl > 0 then redis.call('PEXPIRE', h, ttl) end
    moved = moved + 1
  end
end
return moved
