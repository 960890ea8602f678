-- mark_read: mark notifications of one user read, some or all, and reply with the unread count.
-- KEYS[1]  zset {n:<user>}:unread (notification id → created ms)
-- ARGV[1]  "all" | "ids"   ARGV[2..] with "ids", the notification ids (ids not unread, or not in
--          the inbox at all, are ignored)
-- Reply    the number of unread notifications left: the size of KEYS[1], read in the same step
--          as the change, so it is exact (see notify.lua).
-- Repeat   a second run finds them read already and replies with the same count.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
if ARGV[1] == 'all' then
  redis.call('DEL', KEYS[1])
else
  for i = 2, #ARGV do
    redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return redis.call('ZCARD', KEYS[1])
