-- karma_version: raise a user's karma version and read the karma total at the same instant, for
-- the leaderboard entry that agora rebuild writes: it wins over the entry already there and loses
-- to any karma recorded afterwards (whose version is higher).
-- KEYS[1]  hash {u:<a>}:karma (total, ver)   KEYS[2]  hash {u:<a>}, the user (field deleted)
-- ARGV[1]  optional: the version the leaderboard's guard holds for the user, read just before
--          (another slot). The version is raised past it too, so that the entry written wins over
--          one that writes this slot no longer holds left behind (a restore or failover that kept
--          the leaderboard's later writes and lost the user's).
-- Reply    {total, karma version}, or {} for a deleted account (its marker is set), whose version
--          is left alone: the rebuild writes no entry for it, and one raised past the deletion's
--          guard (ARGV[1], read after the deletion's chain took the account off the leaderboard)
--          would put it back for good.
-- Repeat   a repeat raises the version once more and reads the same total: the entry written
--          with it is as right as the first's.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
if redis.call('HGET', KEYS[2], 'deleted') == '1' then
  return {}
end
redis.call('INCR', KEYS[#KEYS])
local ver = tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')
local floor = tonumber(ARGV[1] or '') or 0
if floor > ver then ver = floor end
ver = ver + 1
redis.call('HSET', KEYS[1], 'ver', ver)
return {tonumber(redis.call('HGET', KEYS[1], 'total') or '0'), ver}
