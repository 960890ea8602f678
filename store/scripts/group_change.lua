-- group_change: a moderator's change to a group: its page (description, title, icon, banner,
-- rules, whether only moderators post), or who moderates it.
-- KEYS[1]  hash {g:<name>}:info   KEYS[2] zset {g:<name>}:mods   KEYS[3] zset {g:<name>}:new
-- KEYS[4]  the group's moderation outbox {g:<name>}:modlog (hash action key → action JSON)
-- KEYS[5]  zset the NSFW part of its NEW ranking {g:<name>}:n:new (see store/nsfw_lists.go)
-- ARGV[1]  actor user key   ARGV[2] "1" when the actor is a site admin, else "0"
-- ARGV[3]  "page" | "addmod" | "remmod"   ARGV[4] for "page" a JSON object info field →
--          value ("" deletes the field), else the user key of the moderator added or removed   ARGV[5] now (Unix ms)
-- ARGV[6]  the most moderators a group may have   ARGV[7] the group's name
-- Reply    {changed (0|1), outbox (HGETALL)}
-- Writes   every change raises the info's ver and records one outbox entry whose key is
--          "group:<name>:<ver after the change>", so that every change has its own entry and id;
--          a change of the NSFW label (the page's nsfw field) is LABEL_GROUP or UNLABEL_GROUP,
--          keyed "<action>:<name>:<ver>" (lower case), beside the UPDATE_GROUP of the other
--          fields changed with it, if any.
-- Errors   NOTFOUND when the group does not exist (no info version and no posts), FORBIDDEN when
--          the actor neither moderates it nor is an admin (a user may always remove themselves:
--          a moderator steps down, and a repeat of that changes nothing), or when a moderator
--          removes one who is not junior to them, or takes off the NSFW label an admin put on (or
--          confirmed: the info's nsfwAdmin, which goes with the label), LIMIT when adding one
--          moderator too many.
-- Seniority the moderators are ranked in the order they became moderators (the creator first):
--          a moderator removes only those ranked after them; admins remove anyone. A moderator
--          added is scored after every one there, to the millisecond, whatever the clock of the
--          server that adds them says, so that the order is the order of the additions.
-- The first change of a group made by posts (no info version yet) makes it a lasting group; its
-- created time, when missing, is its oldest post's.
-- Repeat   a second run finds the state as asked and changes nothing; it still replies with the
--          outbox, so that its caller logs what an earlier run left unlogged.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local info, mods, outbox = KEYS[1], KEYS[2], KEYS[4]
local actor, op, arg, group = ARGV[1], ARGV[3], ARGV[4], ARGV[7]
if redis.call('HEXISTS', info, 'ver') == 0 and redis.call('ZCARD', KEYS[3]) == 0 and redis.call('ZCARD', KEYS[5]) == 0 then
  return redis.error_reply('NOTFOUND no such group')
end
local self = op == 'remmod' and arg == actor
if ARGV[2] ~= '1' and not self and not redis.call('ZSCORE', mods, actor) then
  return redis.error_reply('FORBIDDEN only the moderators of the group and the site admins may do this')
end
local function unchanged()
  return {0, redis.call('HGETALL', outbox)}
end
if op == 'check' then return unchanged() end
-- change records the change just made, of kind action on target (a global id); label names
-- the content label of a LABEL_GROUP or UNLABEL_GROUP.
local function change(action, target, label)
  if redis.call('HEXISTS', info, 'created') == 0 then
    local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')[2]
    local nsfw = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')[2]
    if nsfw and (not oldest or tonumber(nsfw) < tonumber(oldest)) then oldest = nsfw end
    redis.call('HSET', info, 'created', oldest or ARGV[5])
  end
  local ver = redis.call('HINCRBY', info, 'ver', 1)
  local rec = {a = action, m = actor, g = group, t = target, at = tonumber(ARGV[5]), l = label}
  local key = 'group:' .. group .. ':' .. ver
  if label then key = string.lower(action) .. ':' .. group .. ':' .. ver end
  redis.call('HSET', outbox, key, cjson.encode(rec))
  return {1, redis.call('HGETALL', outbox)}
end
if op == 'page' then
  local fields = cjson.decode(arg)
  -- The NSFW label an admin put on is the admins' to take off (nsfwAdmin), before any write.
  if fields.nsfw == '' and ARGV[2] ~= '1' and redis.call('HGET', info, 'nsfw') == '1' and
      redis.call('HGET', info, 'nsfwAdmin') == '1' then
    return redis.error_reply('FORBIDDEN a site admin labelled the group NSFW: only the site admins may take the label off')
  end
  if fields.nsfw == '1' and ARGV[2] == '1' then redis.call('HSET', info, 'nsfwAdmin', '1') end
  if fields.nsfw == '' then redis.call('HDEL', info, 'nsfwAdmin') end
  local changed, label = false, nil
  for field, value in pairs(fields) do
    if (redis.call('HGET', info, field) or '') ~= value then
      if field == 'nsfw' then label = value == '1' else changed = true end
      if value == '' then
        redis.call('HDEL', info, field)
      else
        redis.call('HSET', info, field, value)
      end
    end
  end
  if not changed and label == nil then return unchanged() end
  if not changed then
    return change(label and 'LABEL_GROUP' or 'UNLABEL_GROUP', 'group:' .. group, 'NSFW')
  end
  local reply = change('UPDATE_GROUP', 'group:' .. group)
  if label == nil then return reply end
  -- The label is an action of its own, under the same version.
  local ver = redis.call('HGET', info, 'ver')
  local action = label and 'LABEL_GROUP' or 'UNLABEL_GROUP'
  local rec = {a = action, m = actor, g = group, t = 'group:' .. group, at = tonumber(ARGV[5]), l = 'NSFW'}
  redis.call('HSET', outbox, string.lower(action) .. ':' .. group .. ':' .. ver, cjson.encode(rec))
  return {1, redis.call('HGETALL', outbox)}
end
local present = redis.call('ZSCORE', mods, arg)
if op == 'addmod' then
  if present then return unchanged() end
  if redis.call('ZCARD', mods) >= tonumber(ARGV[6]) then
    return redis.error_reply('LIMIT a group may have at most ' .. ARGV[6] .. ' moderators')
  end
  local score = tonumber(ARGV[5])
  local last = redis.call('ZRANGE', mods, -1, -1, 'WITHSCORES')[2]
  if last and tonumber(last) >= score then score = tonumber(last) + 1 end
  redis.call('ZADD', mods, string.format('%d', score), arg)
  return change('ADD_MODERATOR', 'user:' .. arg)
end
if op ~= 'remmod' then return redis.error_reply('INVALID unknown change ' .. op) end
if not present then return unchanged() end
if ARGV[2] ~= '1' and arg ~= actor and redis.call('ZRANK', mods, arg) <= redis.call('ZRANK', mods, actor) then
  return redis.error_reply('FORBIDDEN a moderator may remove only the moderators added after them; ask a site admin')
end
redis.call('ZREM', mods, arg)
return change('REMOVE_MODERATOR', 'user:' .. arg)
