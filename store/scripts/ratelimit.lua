-- ratelimit: a sliding-window log of attempts (a sorted set scored by time): a user's writes,
-- failed log-ins on an account or from an address, sign-ups from an address.
-- KEYS[1]  the sorted set ({u:<user>}:rate, {u:<user>}:fails, {a:<address>}:fails,
--          {a:<address>}:signups)
-- ARGV[1]  now (Unix ms)   ARGV[2] window (ms)   ARGV[3] most attempts per window   ARGV[4] a
--          member unique to this attempt, or "" to only check whether one more would be allowed
-- Reply    0 when the attempt may proceed (and, with a member, is recorded); otherwise the
--          milliseconds until the oldest attempt in the window leaves it.
-- Repeat   the member is unique to the attempt, so a second run records nothing new.
-- Full     an attempt is recorded by ZADD first, which Redis refuses when it is full: a write
--          refused for OOM is not counted, and the log does not grow past maxmemory. (A
--          ZREMRANGEBYSCORE first would let the script write on; see OPERATIONS.md, "When Redis is
--          full".) The window is read without trimming it, and trimmed after the ZADD.
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local from = '(' .. (now - window) -- the attempts in the window: later than now - window
if ARGV[4] ~= '' then
  local at = redis.call('ZSCORE', KEYS[1], ARGV[4])
  if at and tonumber(at) > now - window then return 0 end
end
if redis.call('ZCOUNT', KEYS[1], from, '+inf') >= limit then
  local oldest = redis.call('ZRANGEBYSCORE', KEYS[1], from, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  return math.max(1, tonumber(oldest[2]) + window - now)
end
if ARGV[4] ~= '' then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
  redis.call('PEXPIRE', KEYS[1], window)
end
return 0
