-- block: add a user to, or take one out of, the users a user blocks.
-- KEYS[1]  zset {u:<user>}:blocks (blocked user key → when, ms)
-- ARGV[1]  the blocked user's key   ARGV[2] "add" | "rem"   ARGV[3] now (Unix ms)   ARGV[4] the
--          most users one may block
-- Reply    1 when the user is blocked after the run, 0 when not. Error "LIMIT ..." when adding to
--          a full list.
-- Repeat   adding a user already blocked keeps the first time; removing one not blocked changes
--          nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--          The responses a blocker reads record it (Blocks), so blocking makes them stale.
redis.call('INCR', KEYS[#KEYS])
if ARGV[2] == 'rem' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  return redis.error_reply('LIMIT you may block at most ' .. ARGV[4] .. ' users')
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
