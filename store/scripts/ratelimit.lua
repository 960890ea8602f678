-- ratelimit: a sliding-window log of one user's writes (a sorted set scored by time).
-- KEYS[1]  sorted set {u:<user>}:rate
-- ARGV[1]  now (Unix ms)   ARGV[2] window (ms)   ARGV[3] most writes per window   ARGV[4] a
--          member unique to this write
-- Reply    0 when the write may proceed (and is recorded); otherwise the milliseconds until the
--          oldest write in the window leaves it.
-- Repeat   the member is unique to the write, so a second run records nothing new.
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZSCORE', KEYS[1], ARGV[4]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + window - now)
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
return 0
