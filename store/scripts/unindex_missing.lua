-- unindex_missing: take out of sorted sets a post that does not belong there — its hash is gone (a
-- creation lost in a failover while its derived entries reached the new master), or its id now
-- names a post of another author or other groups — with its version guard, unless the guard
-- changed since the caller found the entry wrong.
-- KEYS[1]  version hash (member → last applied version)   KEYS[2..] sorted sets, one hash slot
-- ARGV[1]  member (post id)   ARGV[2] the guard's value when the post was found missing ("" for
--          none)
-- Reply    1 when removed, 0 when the guard changed (a write is indexing the post now).
-- Repeat   a second run finds the guard gone and its value "" ≠ the one given, or removes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local cur = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if cur ~= ARGV[2] then return 0 end
for i = 2, #KEYS - 1 do redis.call('ZREM', KEYS[i], ARGV[1]) end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
