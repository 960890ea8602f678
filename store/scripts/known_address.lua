-- known_address: remember a client address a user proved their password from (a log-in, the
-- sign-up), so that failed log-ins from elsewhere do not lock them out there (store/logins.go).
-- KEYS[1]  zset {u:<user>}:known, address → until when the account knows it (Unix ms)
-- ARGV[1]  the address   ARGV[2] now (Unix ms)   ARGV[3] how long it stays known (ms)
-- ARGV[4]  the most addresses kept: past it, those known the shortest time ahead leave
-- Reply    0
-- Repeat   a second run sets the same expiry again.
-- Revision none: never read by a response (store/scripts.go, unrevised).
local now, ttl, cap = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1]) -- first: refused when Redis is full (ratelimit.lua)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local n = redis.call('ZCARD', KEYS[1])
if n > cap then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - cap - 1) end
redis.call('PEXPIRE', KEYS[1], ttl)
return 0
