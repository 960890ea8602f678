-- karma_version: raise a user's karma version and read the karma total at the same instant, for
-- the leaderboard entry that agora rebuild writes: it wins over the entry already there and loses
-- to any karma recorded afterwards (whose version is higher).
-- KEYS[1]  hash {u:<a>}:karma (total, ver)
-- Reply    {total, karma version}
-- Repeat   a repeat raises the version once more and reads the same total: the entry written
--          with it is as right as the first's.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local ver = redis.call('HINCRBY', KEYS[1], 'ver', 1)
return {tonumber(redis.call('HGET', KEYS[1], 'total') or '0'), ver}
