-- claim: bind an idempotency key to a value the first time it is seen.
-- KEYS[1]  string {u:<user>}:idem:<digest>
-- ARGV[1]  the value to bind   ARGV[2] TTL in seconds   ARGV[3] a stale value to replace ("" for
--          none): when the key holds exactly this value it is bound to ARGV[1] instead
-- Reply    the bound value: ARGV[1] the first time, the earlier value afterwards.
-- Repeat   naturally idempotent.
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[3] then return v end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return ARGV[1]
