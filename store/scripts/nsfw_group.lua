-- nsfw_group: mirror a group's NSFW label into the set of NSFW groups (see labels.go).
-- KEYS[1]  set {nsfw}:groups
-- ARGV[1]  the group's name   ARGV[2] "1" when the group is labelled NSFW, "" when not
-- Reply    1 when the set changed, 0 when it already said so.
-- Repeat   a second run finds the set as asked and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the set; a run that changes the set raises it,
--          so that a cached response that read the set (every response does) is known to be
--          stale; a run that changes nothing leaves it, as nothing read could be stale.
local n
if ARGV[2] == '1' then
  n = redis.call('SADD', KEYS[1], ARGV[1])
else
  n = redis.call('SREM', KEYS[1], ARGV[1])
end
if n == 1 then redis.call('INCR', KEYS[#KEYS]) end
return n
