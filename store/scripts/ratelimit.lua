-- ratelimit: a sliding-window log of attempts (a sorted set scored by time): a user's writes,
-- failed log-ins on an account or from an address, sign-ups from an address.
-- KEYS[1]  the sorted set ({u:<user>}:rate, {u:<user>}:fails, {a:<address>}:fails,
--          {a:<address>}:signups)
-- ARGV[1]  now (Unix ms)   ARGV[2] window (ms)   ARGV[3] most attempts per window   ARGV[4] a
--          member unique to this attempt, or "" to only check whether one more would be allowed
-- Reply    0 when the attempt may proceed (and, with a member, is recorded); otherwise the
--          milliseconds until the oldest attempt in the window leaves it.
-- Repeat   the member is unique to the attempt, so a second run records nothing new.
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if ARGV[4] ~= '' and redis.call('ZSCORE', KEYS[1], ARGV[4]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + window - now)
end
if ARGV[4] ~= '' then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
end
return 0
