-- newaccount: the limits on new accounts (see newaccounts.go): an account younger than the age or
-- below the karma may make at most so many posts (or comments) per sliding window, and no post
-- with a link. The window is a sorted set of the account's recent posts (or comments) scored by
-- time, as ratelimit.lua keeps it.
-- KEYS[1]  the user's hash {u:<user>}   KEYS[2] the user's karma hash   KEYS[3] the window's
--          sorted set ({u:<user>}:new:posts or {u:<user>}:new:comments)
-- ARGV[1]  now (Unix ms)   ARGV[2] the age under which an account is new (ms; 0: none)
--          ARGV[3] the karma under which an account is new (0: none)   ARGV[4] most writes per
--          window   ARGV[5] window (ms)   ARGV[6] a member unique to this write (the same for its
--          repeats when the client gave an idempotency key), or "" to record nothing   ARGV[7] "1" when the write carries a link
-- Reply    {0, 0} when the write may proceed (recorded, for a new account); {wait ms, why}
--          otherwise: why 1 is a full window (wait: until its oldest write leaves it), 2 a link
--          (wait: until the account is no longer new by age; for one new by karma alone, the
--          window).
-- Repeat   the member is unique to the write, so a second run records nothing new.
-- Full     a write is recorded by ZADD first, which Redis refuses when it is full, as in
--          ratelimit.lua: a write refused for OOM is not counted.
local now, age, karma = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local created = tonumber(redis.call('HGET', KEYS[1], 'created') or '')
if not created then return {0, 0} end
local young = age > 0 and now < created + age
local low = false
if karma > 0 then
  low = (tonumber(redis.call('HGET', KEYS[2], 'total') or '0') or 0) < karma
end
if not young and not low then return {0, 0} end
local limit, window = tonumber(ARGV[4]), tonumber(ARGV[5])
if ARGV[7] == '1' then
  if young then return {created + age - now, 2} end
  return {window, 2}
end
local from = '(' .. (now - window) -- the writes in the window: later than now - window
if ARGV[6] ~= '' then
  local at = redis.call('ZSCORE', KEYS[3], ARGV[6])
  if at and tonumber(at) > now - window then return {0, 0} end
end
if redis.call('ZCOUNT', KEYS[3], from, '+inf') >= limit then
  local oldest = redis.call('ZRANGEBYSCORE', KEYS[3], from, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  return {math.max(1, tonumber(oldest[2]) + window - now), 1}
end
if ARGV[6] ~= '' then
  redis.call('ZADD', KEYS[3], now, ARGV[6])
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - window)
  redis.call('PEXPIRE', KEYS[3], window)
end
return {0, 0}
