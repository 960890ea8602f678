-- claim: bind an idempotency key to a value the first time it is seen, and record whether the
-- request that bound it scheduled its post.
-- KEYS[1]  string {u:<user>}:idem:<digest>   KEYS[2] string {u:<user>}:idem:<digest>:s, present
--          when the binding request scheduled its post
-- ARGV[1]  the value to bind   ARGV[2] TTL in seconds   ARGV[3] a stale value to replace ("" for
--          none): when the key holds exactly this value it is bound to ARGV[1] instead
-- ARGV[4]  "s" when this request schedules its post, else ""
-- Reply    the bound value, followed by " s" when its request scheduled the post: ARGV[1] the
--          first time, the earlier value afterwards. The mark is a key of its own so that the
--          value stays a post id, which a process of an older release reads as one.
-- Repeat   naturally idempotent.
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[3] then
  if redis.call('EXISTS', KEYS[2]) == 1 then return v .. ' s' end
  return v
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
if ARGV[4] == 's' then
  redis.call('SET', KEYS[2], '1', 'EX', ARGV[2])
  return ARGV[1] .. ' s'
end
redis.call('DEL', KEYS[2])
return ARGV[1]
