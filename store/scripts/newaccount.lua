-- newaccount: the limits on new accounts (see newaccounts.go): an account younger than the age or
-- below the karma may make at most so many posts (or comments, or message requests) per sliding
-- window, and no post with a link. The window is a sorted set of the account's recent posts (or
-- comments, or requests) scored by time, as ratelimit.lua keeps it.
-- KEYS[1]  the user's hash {u:<user>}   KEYS[2] the user's karma hash   KEYS[3] the window's
--          sorted set ({u:<user>}:new:posts, …:new:comments or …:new:requests)
-- ARGV[1]  now (Unix ms)   ARGV[2] the age under which an account is new (ms; 0: none)
--          ARGV[3] the karma under which an account is new (0: none)   ARGV[4] most writes per
--          window   ARGV[5] window (ms)   ARGV[6] a member unique to this write (the same for its
--          repeats when the client gave an idempotency key), or "" to record nothing   ARGV[7] "1" when the write carries a link
--          ARGV[8] optional, "release": take the member ARGV[6] back out of the window (a
--          private message the checks counted as a request that was none: the recipient had
--          accepted the conversation), whatever the account; the other arguments are not read
-- Reply    {0, 0} when the write may proceed and nothing was recorded (the account is not new,
--          or ARGV[6] is ""); {0, 3} when it may and was recorded; {0, 4} when it may and the
--          member was in the window already (a repeat: of this run, or of the write retried
--          with its idempotency key, whose first attempt counted); {wait ms, why} otherwise:
--          why 1 is a full window (wait: until its oldest write leaves it), 2 a link (wait: until
--          the account is no longer new by age; for one new by karma alone, the window). With
--          "release", {0, 0}.
-- Repeat   the member is unique to the write, so a second run records nothing new; a second
--          release finds nothing to take out.
-- Full     a write is recorded by ZADD first, which Redis refuses when it is full, as in
--          ratelimit.lua: a write refused for OOM is not counted. A release only frees memory.
if ARGV[8] == 'release' then
  redis.call('ZREM', KEYS[3], ARGV[6])
  return {0, 0}
end
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
  if at and tonumber(at) > now - window then return {0, 4} end
end
if redis.call('ZCOUNT', KEYS[3], from, '+inf') >= limit then
  local oldest = redis.call('ZRANGEBYSCORE', KEYS[3], from, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  return {math.max(1, tonumber(oldest[2]) + window - now), 1}
end
if ARGV[6] == '' then return {0, 0} end
redis.call('ZADD', KEYS[3], now, ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - window)
redis.call('PEXPIRE', KEYS[3], window)
return {0, 3}
