-- group_change: a moderator's change to a group: its description, or who moderates it.
-- KEYS[1]  hash {g:<name>}:info   KEYS[2] zset {g:<name>}:mods   KEYS[3] zset {g:<name>}:new
-- ARGV[1]  actor user key   ARGV[2] "1" when the actor is a site admin, else "0"
-- ARGV[3]  "describe" | "addmod" | "remmod"   ARGV[4] the description ("" clears it) or the
--          user key of the moderator added or removed   ARGV[5] now (Unix ms)
-- ARGV[6]  the most moderators a group may have
-- Reply    the info version of the change, the key of its moderation-log entry; 0 when there is
--          nothing to log (a description never changed, a user who never moderated the group).
--          Every change raises the info's ver and records it: dver for the description,
--          m:<user> for that user's moderation. A request that changes nothing (a repeat)
--          replies the version recorded for the state it asks for, so that a retried request
--          logs its action once, under the same key.
-- Errors   NOTFOUND when the group does not exist (no info version and no posts), FORBIDDEN when
--          the actor neither moderates it nor is an admin (a user may always remove themselves:
--          a moderator steps down, and a repeat of that changes nothing), LIMIT when adding one
--          moderator too many.
-- The first change of a group made by posts (no info version yet) makes it a lasting group; its
-- created time, when missing, is its oldest post's.
-- Repeat   a second run changes nothing and replies the recorded version.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local info, mods = KEYS[1], KEYS[2]
if redis.call('HEXISTS', info, 'ver') == 0 and redis.call('ZCARD', KEYS[3]) == 0 then
  return redis.error_reply('NOTFOUND no such group')
end
local self = ARGV[3] == 'remmod' and ARGV[4] == ARGV[1]
if ARGV[2] ~= '1' and not self and not redis.call('ZSCORE', mods, ARGV[1]) then
  return redis.error_reply('FORBIDDEN only the moderators of the group and the site admins may do this')
end
local function recorded(field)
  return tonumber(redis.call('HGET', info, field) or '0')
end
local function change(field)
  if redis.call('HEXISTS', info, 'created') == 0 then
    local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    redis.call('HSET', info, 'created', oldest[2] or ARGV[5])
  end
  local ver = redis.call('HINCRBY', info, 'ver', 1)
  redis.call('HSET', info, field, ver)
  return ver
end
local op, arg = ARGV[3], ARGV[4]
if op == 'describe' then
  if (redis.call('HGET', info, 'description') or '') == arg then return recorded('dver') end
  if arg == '' then
    redis.call('HDEL', info, 'description')
  else
    redis.call('HSET', info, 'description', arg)
  end
  return change('dver')
end
local field = 'm:' .. arg
local present = redis.call('ZSCORE', mods, arg)
if op == 'addmod' then
  if present then return recorded(field) end
  if redis.call('ZCARD', mods) >= tonumber(ARGV[6]) then
    return redis.error_reply('LIMIT a group may have at most ' .. ARGV[6] .. ' moderators')
  end
  redis.call('ZADD', mods, ARGV[5], arg)
  return change(field)
end
if not present then return recorded(field) end
redis.call('ZREM', mods, arg)
return change(field)
