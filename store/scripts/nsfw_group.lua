-- nsfw_group: mirror a group's NSFW label into the set of NSFW groups (see labels.go), and record
-- which change of the label the re-index of its posts now follows.
-- KEYS[1]  set {nsfw}:groups   KEYS[2] hash {nsfw}:relabel: group → the info version of the
--          label change whose re-index is the one to run (labels.go, runRelabelJob)
-- ARGV[1]  the group's name   ARGV[2] "1" when the group is labelled NSFW, "" when not
-- ARGV[3]  the info version the label was read at ("" for none: a rebuild, which re-indexes
--          every post itself)
-- Reply    1 when the set changed, 0 when it already said so.
-- Writes   when the set changed and ARGV[3] is given, KEYS[2]'s field of the group, so that the
--          re-index of an earlier change stops: this change's re-index covers every post.
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
if n == 1 then
  redis.call('INCR', KEYS[#KEYS])
  if ARGV[3] and ARGV[3] ~= '' then redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) end
end
return n
