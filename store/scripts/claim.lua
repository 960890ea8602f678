-- claim: bind an idempotency key to a value the first time it is seen.
-- KEYS[1]  string {u:<user>}:idem:<digest>
-- ARGV[1]  the value to bind   ARGV[2] TTL in seconds
-- Reply    the bound value: ARGV[1] the first time, the earlier value afterwards.
-- Repeat   naturally idempotent.
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return ARGV[1]
