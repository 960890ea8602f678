-- group_create: make a group, its creator its first moderator.
-- KEYS[1]  hash {g:<name>}:info   KEYS[2] zset {g:<name>}:mods   KEYS[3] zset {g:<name>}:new
--          (the group's NEW ranking: a group holding posts exists already)   KEYS[4] zset its NSFW
--          part {g:<name>}:n:new (see store/nsfw_lists.go)
-- ARGV[1]  creator user key   ARGV[2] description ("" for none)   ARGV[3] now (Unix ms)
-- ARGV[4]  "1" to label the group NSFW (field nsfw, see labels.go)
-- Reply    1 when the group was made, 0 for a repeat of the creator's own creation (nothing
--          changes: the group is replied as it is).
-- Errors   CONFLICT when the group exists: its info holds a version (it was made, or changed by a
--          moderator) or its ranking holds posts. The info of a group made by posts only that lost
--          them all holds just its created time; such a group no longer exists and can be made.
-- Generation the info's "gen" counts the groups made by createGroup under this name: it survives a
--          group made by posts that died, and rises with each creation, so that what was filed
--          under an earlier group of the name (reports: store/reports.go) stays the admins'.
-- Repeat   a second run finds its own creator and replies 0.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
if redis.call('HEXISTS', KEYS[1], 'ver') == 1 or redis.call('ZCARD', KEYS[3]) > 0 or redis.call('ZCARD', KEYS[4]) > 0 then
  if redis.call('HGET', KEYS[1], 'creator') == ARGV[1] then return 0 end
  return redis.error_reply('CONFLICT the group already exists')
end
local gen = tonumber(redis.call('HGET', KEYS[1], 'gen') or '0') + 1
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[1], 'created', ARGV[3], 'creator', ARGV[1], 'ver', 1, 'gen', gen)
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'description', ARGV[2]) end
if ARGV[4] == '1' then redis.call('HSET', KEYS[1], 'nsfw', '1') end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
