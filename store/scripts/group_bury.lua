-- group_bury: end the life of a group that no longer exists (store/groups.go, buryGroups): its
-- watch modes and the created time its posts gave it go, so that a group made again under the
-- name starts with neither. Its members left it before, on their own side (follow.lua "drop").
-- KEYS[1]  hash {g:<name>}:info   KEYS[2] hash {g:<name>}:watch   KEYS[3] set {g:<name>}:watch:all
-- KEYS[4]  zset {g:<name>}:new (its NEW ranking)   KEYS[5] zset its NSFW part {g:<name>}:n:new
-- KEYS[6]  the watch modes' own revision counter {g:<name>}:watch:rev (store/keys.go, ownRevision)
-- Reply    1 when the group was buried now, 0 when it exists (its info holds a version, or its
--          ranking holds posts: it came back since the caller looked) or was buried already.
-- Repeat   a second run finds nothing to take and replies 0.
-- Revision KEYS[#KEYS] is the revision counter of the group; a run that buries it raises it, and
--          KEYS[6] too: an answer may show a viewer's mode of a group it read nothing else of.
if redis.call('HEXISTS', KEYS[1], 'ver') == 1 or redis.call('ZCARD', KEYS[4]) > 0 or redis.call('ZCARD', KEYS[5]) > 0 then
  return 0
end
local n = redis.call('HDEL', KEYS[1], 'created') + redis.call('DEL', KEYS[2], KEYS[3])
if n == 0 then return 0 end
redis.call('INCR', KEYS[6])
redis.call('INCR', KEYS[#KEYS])
return 1
