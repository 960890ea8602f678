-- modlog: record one action in the moderation log.
-- KEYS[1]  {modlog}:entries (hash id → JSON)   KEYS[2] {modlog}:all (sorted set by time)
-- KEYS[3]  the log of the action's group, {modlog}:g:<group>, when it has one
-- ARGV[1]  the action's id   ARGV[2] the action as JSON   ARGV[3] its time (Unix ms)
-- Reply    1 when the action was recorded now, 0 when it already was.
-- Repeat   the id derives from the action (what it did, to what, at which version of it), so a
--          retried request finds its entry and records nothing new.
-- Revision KEYS[#KEYS] is the revision counter of {modlog}; a run that records raises it.
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('INCR', KEYS[#KEYS])
for i = 2, #KEYS - 1 do
  redis.call('ZADD', KEYS[i], ARGV[3], ARGV[1])
end
return 1
