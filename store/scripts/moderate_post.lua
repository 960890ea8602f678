-- moderate_post: a moderator removes, restores, locks or unlocks a post, and records the action
-- in the post's moderation outbox, from which the caller writes it into the moderation log.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] the post's moderation outbox {p:<id>}:modlog (hash
--          action key → action JSON)
-- ARGV[1]  the action: REMOVE_POST | RESTORE_POST | LOCK_POST | UNLOCK_POST
-- ARGV[2]  the moderator's user key   ARGV[3] via: the group the moderator's authority comes
--          through, or "*" for a site admin   ARGV[4] "1" when a reason is given, else "0"
-- ARGV[5]  the reason   ARGV[6] now (Unix ms)   ARGV[7] the post's key ("17")
-- KEYS[#KEYS - 1] the thread's bodies {p:<id>}:c:body, for the post's texts kept apart (read only;
--          see lib/post_texts.lua)
-- Reply    {changed (0|1), outbox (HGETALL), HGETALL of the post...}
-- Errors   NOTFOUND (no post, or a deleted one), FORBIDDEN (via is a group the post is no longer
--          in; or an undo through another group than the removal or lock it undoes).
-- Writes   the post's removed or locked field, with removedVia or lockedVia (the via of the
--          removal or lock: only that group's moderators and the admins undo it, so that a
--          moderator of another of its groups, say one its author made, cannot), and its version;
--          one outbox entry whose key is
--          "<action>:<post>:<version after the action>" (lower case), so that every action has
--          its own entry and id in the log.
-- Repeat   a second run finds the state already set and changes nothing; it still replies with
--          the outbox, so that its caller logs what an earlier run left unlogged.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include post_texts
redis.call('INCR', KEYS[#KEYS])
local p, outbox = KEYS[1], KEYS[2]
local action, actor, via = ARGV[1], ARGV[2], ARGV[3]
if not redis.call('HGET', p, 'author') or redis.call('HGET', p, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
local groups = redis.call('HGET', p, 'groups') or ''
local first = nil
local inVia = false
for g in string.gmatch(groups, '[^,]+') do
  if not first then first = g end
  if g == via then inVia = true end
end
if via ~= '*' and not inVia then
  return redis.error_reply('FORBIDDEN the post is no longer in group ' .. via)
end
local field, set = 'removed', true
if action == 'RESTORE_POST' then set = false
elseif action == 'LOCK_POST' then field = 'locked'
elseif action == 'UNLOCK_POST' then field, set = 'locked', false
elseif action ~= 'REMOVE_POST' then return redis.error_reply('INVALID unknown action ' .. action) end
local is = redis.call('HGET', p, field) == '1'
local by = redis.call('HGET', p, field .. 'Via')
if is and not set and via ~= '*' and by and by ~= via then
  if by == '*' then return redis.error_reply('FORBIDDEN a site admin did this: only the site admins may undo it') end
  return redis.error_reply('FORBIDDEN this was done in group ' .. by .. ': only its moderators and the site admins may undo it')
end
local changed = 0
if is ~= set then
  if set then
    redis.call('HSET', p, field, '1', field .. 'Via', via)
  else
    redis.call('HDEL', p, field, field .. 'Via')
  end
  local ver = redis.call('HINCRBY', p, 'ver', 1)
  local rec = {a = action, m = actor, t = 'post:' .. ARGV[7], at = tonumber(ARGV[6])}
  if via ~= '*' then rec.g = via elseif first then rec.g = first end
  if ARGV[4] == '1' then rec.r = ARGV[5] end
  redis.call('HSET', outbox, string.lower(action) .. ':' .. ARGV[7] .. ':' .. ver, cjson.encode(rec))
  changed = 1
end
local reply = post_reply(p, KEYS[#KEYS - 1])
table.insert(reply, 1, redis.call('HGETALL', outbox))
table.insert(reply, 1, changed)
return reply
