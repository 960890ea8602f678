-- unpin: take a post that left a group, or was removed or deleted, out of the group's pins. It is
-- not a moderator's action and is not logged; reads skip such a pin meanwhile.
-- KEYS[1]  the group's pins {g:<group>}:pins
-- ARGV[1]  the post's key
-- Reply    1 when it was pinned, else 0.
-- Repeat   a second run finds nothing to take out.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
return redis.call('ZREM', KEYS[1], ARGV[1])
