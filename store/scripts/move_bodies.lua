-- move_bodies: move the bodies of some comments of a thread out of their hashes into the thread's
-- bodies (layout 2 → 3; see keys.go commentBodies), so that the hashes keep only short values.
-- KEYS[1]  the thread's bodies {p:<id>}:c:body   KEYS[2..] the comments' hashes {p:<id>}:c:<n>
-- ARGV     the comments' numbers, in the order of KEYS[2..]
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
    redis.call('HDEL', h, 'body')
    moved = moved + 1
  end
end
return moved
